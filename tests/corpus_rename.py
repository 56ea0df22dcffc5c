"""Renaming the user objects of a claim, and the names the engine uses inside (collected, not typed).

A claim's user objects are its dimension and scalar symbols, MatrixSymbols, head-indexed
families, permutations and score functions. :func:`user_names` lists their names;
:func:`rename_claim` rebuilds the claim with a bijection on those names by replacing the leaves
that carry them (a Symbol keeps its class and assumptions, a name ``Str`` stays a ``Str``), so a
dimension stays a positive integer symbol and a family stays a family.

:func:`recording_symbol_names` records the name of every Symbol and Dummy created while it is
active (the engine's exp atoms, entry symbols, bound and summation indices);
:func:`trace_names` parses identifiers out of verdict traces; :func:`bound_index_names` walks
the definitions' binders. Together they give the pool of internal names that renamings draw
from, without any of them written into a test.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import sys

import mpmath
import sympy as sp
from sympy.core.symbol import Str

import symattn
from symattn.defs.heads import Binder, FamilyMember
from symattn.defs.permutation import Permutation
from symattn.defs.score import Score


def _name_carriers(expr):
    """(name, leaf) for every leaf of ``expr`` that carries a user object's name."""
    expr = sp.sympify(expr)
    out = []
    for x in sp.preorder_traversal(expr):
        if isinstance(x, (sp.MatrixSymbol, FamilyMember, Score)) and isinstance(x.args[0], Str):
            out.append((x.args[0].name, x.args[0]))
        elif isinstance(x, Permutation):
            out.append((x.args[0].name, x.args[0]))
    # plain Symbols anywhere, shapes of MatrixSymbols included (their free_symbols hide them),
    # except an index that is only bound (by a binder built by hand); one that is also free
    # outside its binder is the user's, and renaming it renames its bound uses alike
    bound = {x.index for x in sp.preorder_traversal(expr) if isinstance(x, Binder)} - expr.free_symbols
    for s in expr.atoms(sp.Symbol):
        if type(s) is sp.Symbol and s not in bound:
            out.append((s.name, s))
    return out


def _at_symbols(kwargs) -> list:
    return [k for values in (kwargs.get("at") or []) for k in values]


def user_names(lhs, rhs, kwargs=None) -> list[str]:
    """The names of the claim's user objects, sorted."""
    names = {nm for e in (lhs, rhs) for nm, _ in _name_carriers(e)}
    names |= {s.name for s in _at_symbols(kwargs or {})}
    return sorted(names)


def _renamed_leaf(leaf, new: str):
    if isinstance(leaf, Str):
        return Str(new)
    return type(leaf)(new, **leaf._assumptions_orig)


def rename_claim(lhs, rhs, kwargs: dict, mapping: dict[str, str]) -> tuple:
    """(lhs, rhs, kwargs) with every user name ``old`` replaced by ``mapping[old]``."""
    leaves = {leaf for e in (lhs, rhs) for _, leaf in _name_carriers(e)}
    leaves |= set(_at_symbols(kwargs))
    table = {leaf: _renamed_leaf(leaf, mapping[leaf.name]) for leaf in leaves if leaf.name in mapping}
    out = dict(kwargs)
    if kwargs.get("at") is not None:
        out["at"] = [{table.get(k, k): v for k, v in values.items()} for values in kwargs["at"]]
    return sp.sympify(lhs).xreplace(table), sp.sympify(rhs).xreplace(table), out


def family_names(lhs, rhs) -> set[str]:
    return {x.family_name for e in (lhs, rhs) for x in sp.preorder_traversal(e) if isinstance(x, FamilyMember)}


def keeps_member_names_apart(old_names, families, mapping) -> bool:
    """True when the renaming makes no name look like a member of a family (``A_2`` beside family
    ``A``) unless it did before: that would be a new collision the engine rightly refuses."""
    for fam in families:
        for nm in old_names:
            if nm == fam:
                continue
            before = nm.startswith(fam + "_")
            after = mapping[nm].startswith(mapping[fam] + "_")
            if before != after:
                return False
    return True


# ----------------------------------------------------------------------------- internal names
def _package_dir(module) -> str:
    return str(pathlib.Path(module.__file__).resolve().parent) + os.sep


_SYMATTN = _package_dir(symattn)
_PASS_THROUGH = (_package_dir(sp), _package_dir(mpmath), str(pathlib.Path(__file__).resolve()))


def made_by_symattn(frame) -> bool:
    """True when the nearest caller outside SymPy is symattn's own code (its definitions or its
    engine), not a test, a theorem module or a module being imported (SymPy defines symbols of
    its own, such as physical units, when a submodule is first imported)."""
    while frame is not None:
        path = frame.f_code.co_filename
        if "importlib" in path or path.startswith("<frozen"):
            return False
        if path.startswith(_SYMATTN):
            return True
        if not path.startswith(_PASS_THROUGH):
            return False
        frame = frame.f_back
    return False


@contextlib.contextmanager
def recording_symbol_names(into: set):
    """Record in ``into`` the name of every Symbol (of any class, Dummy included) that symattn
    creates inside the block: the engine's own symbols and the definitions' bound indices.

    Every class in the Symbol hierarchy that defines ``__new__`` is wrapped, and restored on exit.
    """
    classes, seen = [sp.Symbol], []
    while classes:
        cls = classes.pop()
        seen.append(cls)
        classes.extend(cls.__subclasses__())
    saved = {cls: cls.__dict__["__new__"] for cls in seen if "__new__" in cls.__dict__}

    def wrap(cls, original):
        fn = original.__func__ if isinstance(original, staticmethod) else original

        def __new__(kind, name=None, *args, **kwargs):
            if isinstance(name, str) and made_by_symattn(sys._getframe(1)):
                into.add(name)
                if issubclass(kind, sp.Dummy):
                    into.add("_" + name)
            return fn(kind, name, *args, **kwargs) if name is not None else fn(kind, *args, **kwargs)

        return __new__

    try:
        for cls, original in saved.items():
            cls.__new__ = wrap(cls, original)
        yield into
    finally:
        for cls, original in saved.items():
            cls.__new__ = original


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_^']*(?:\[\d+, ?\d+\])?")


def trace_names(trace) -> set[str]:
    """Identifiers in a verdict trace that look like symbol names: short words, or words with an
    underscore, a digit, a prime or an entry subscript ``X[0,0]`` (English words are left out)."""
    out = set()
    for line in trace:
        for tok in _IDENT.findall(line):
            if len(tok) <= 3 or re.search(r"[_\d'\[^]", tok):
                out.add(tok)
    return out


def bound_index_names(*exprs) -> set[str]:
    """The names of the indices bound by the definitions' binders (heads, GQA groups, RoPE blocks)."""
    return {sp.sstr(x.index) for e in exprs for x in sp.preorder_traversal(e) if isinstance(x, Binder)}


_ENTRY = re.compile(r"^(?P<base>.+)\[(?P<i>\d+), ?(?P<j>\d+)\]$")


def entry_templates(names) -> set[str]:
    """From internal names like ``X[0,0]`` (an entry symbol of matrix X), the templates ``{}[0,0]``
    to apply to whatever a matrix is renamed to."""
    out = set()
    for nm in names:
        m = _ENTRY.match(nm)
        if m:
            out.add("{}" + nm[len(m.group("base")):])
    return out


def usable(name: str) -> bool:
    """A name a user could give: non-empty, no whitespace, not absurdly long."""
    return 0 < len(name) <= 24 and not any(ch.isspace() for ch in name)
