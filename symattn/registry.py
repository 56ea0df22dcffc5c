"""One registry per interpreter: which rule handles each node class, and which classes it leaves out.

Each interpreter of the expression trees (the strategies' evaluator, the audit's evaluator, the
trust base's evaluator, the VJP, ...) keeps its rules in a :class:`Registry` and dispatches through
it, so the registry is the interpreter's own table, not a list kept beside it. A rule is found along
the node's method resolution order, the most specific class first (``Apply`` is a ``Score``, a
``Symmetric`` matrix a ``MatrixSymbol``). A class an interpreter deliberately does not handle is
registered with :meth:`Registry.omit` and the reason.

``tests/test_registries.py`` enumerates the node classes of :mod:`symattn.defs` (and the SymPy
matrix classes the package builds) against every registry in :data:`REGISTRIES` and against the
printers; a new node that misses one fails there with the list of what is missing.
``docs/adding-a-node.md`` walks through adding a node.

This module is on the ground floor: it imports nothing from symattn.
"""

from __future__ import annotations

from typing import Callable

#: every registry, in the order the interpreters' modules were imported
REGISTRIES: list["Registry"] = []


class Registry:
    """The rules of one interpreter, one per node class."""

    def __init__(self, interpreter: str, module: str):
        self.interpreter = interpreter
        self.module = module
        self.rules: dict[type, Callable] = {}
        self.omitted: dict[type, str] = {}
        REGISTRIES.append(self)

    def __repr__(self) -> str:
        return f"Registry({self.interpreter!r}: {len(self.rules)} rules, {len(self.omitted)} omitted)"

    def rule(self, *classes: type):
        """Decorator: ``fn`` is the rule for each of ``classes`` (two rules for one class is an error)."""
        def register(fn):
            for cls in classes:
                self.add(cls, fn)
            return fn

        return register

    def add(self, cls: type, fn: Callable) -> None:
        if cls in self.rules:
            raise ValueError(f"{self.interpreter}: a second rule for {cls.__name__} "
                             f"({fn.__name__}; the first is {self.rules[cls].__name__})")
        self.rules[cls] = fn

    def omit(self, cls: type, why: str) -> None:
        """Record that this interpreter does not handle ``cls``, and why."""
        self.omitted[cls] = why

    def find(self, node) -> Callable | None:
        """The rule for ``node`` (an instance or a class): the first class of its MRO with a rule."""
        cls = node if isinstance(node, type) else type(node)
        for base in cls.__mro__:
            rule = self.rules.get(base)
            if rule is not None:
                return rule
        return None

    def covers(self, cls: type) -> str | None:
        """``"rule"`` or ``"omitted: <why>"`` for ``cls``; None when the interpreter says nothing."""
        if self.find(cls) is not None:
            return "rule"
        for base in cls.__mro__:
            if base in self.omitted:
                return f"omitted: {self.omitted[base]}"
        return None


#: the classes whose printing rules are generic fallbacks, not a rule for a node (a rule for MatrixExpr
#: is skipped, not final: MatAdd is a MatrixExpr and then an Add, which printers print)
GENERIC = frozenset({"Expr", "Basic", "Printable", "EvalfMixin", "Atom", "AtomicExpr", "object"})


def printer_rule(printer: type, cls: type) -> str | None:
    """The name of the method a SymPy printer class uses for ``cls``, as SymPy's dispatch finds it
    (the node's own ``printer.printmethod``, else ``_print_<Class>`` along the MRO), or None when only
    a generic fallback (``_print_Basic``, ``_print_MatrixExpr``) would print it."""
    own = getattr(printer, "printmethod", None)
    for base in cls.__mro__:
        if base.__name__ in GENERIC:
            return None
        if base.__name__ == "MatrixExpr":
            continue
        if own and own in vars(base):
            return f"{base.__name__}.{own}"
        if hasattr(printer, f"_print_{base.__name__}"):
            return f"{printer.__name__}._print_{base.__name__}"
    return None
