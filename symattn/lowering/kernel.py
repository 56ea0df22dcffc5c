"""Kernel: a lowered expression as a callable, with its source and its provenance."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

import numpy as np
import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..errors import InputError
from . import runtime
from .printer import BatchedPrinter, identifier, leaf


@dataclass(frozen=True)
class Provenance:
    """Where a kernel comes from: the theorem, which claim and side, and the verdict."""

    theorem: str
    statement: str
    claim: int
    side: str
    status: str
    general: bool
    scope: str
    method: str
    substituted: tuple = ()

    def describe(self) -> str:
        verdict = self.status + (", general" if self.general else "")
        sub = "".join(f"\n  input {name} stands for {expr}" for expr, name in self.substituted)
        return (f"theorem {self.theorem} (claim {self.claim}, {self.side}): {self.statement}\n"
                f"  verdict: {verdict}; scope: {self.scope}; method: {self.method}{sub}")


def input_leaves(expr) -> list:
    """The matrix symbols (and family members) of ``expr``, sorted by name."""
    found = {x for x in sp.preorder_traversal(expr) if leaf(x)}
    return sorted(found, key=lambda x: x.name)


def bindable(leaves) -> set:
    """Dimension symbols that some input has as a whole axis (so its size binds them)."""
    return {sp.sympify(d) for x in leaves for d in x.shape if isinstance(sp.sympify(d), sp.Symbol)}


def _dimension_binding(leaves, names, dims) -> list[str]:
    """Lines that bind every dimension symbol from the array shapes and check the others."""
    lines, later = [], []
    for x in leaves:
        for axis, (d, what) in enumerate(zip(x.shape, ("rows", "columns"))):
            d = sp.sympify(d)
            ax = axis - 2
            if isinstance(d, sp.Symbol):
                lines.append(f"{dims[d]} = bind(bound, {str(d)!r}, {names[x]}.shape[{ax}], "
                             f"{x.name!r}, {what!r})")
            else:
                later.append((x, d, ax, what))
    printer = BatchedPrinter({}, dims)
    for x, d, ax, what in later:
        if d.free_symbols <= set(dims):
            lines.append(f"check_size({printer.dim(d)}, {names[x]}.shape[{ax}], {x.name!r}, "
                         f"{what!r}, {sp.sstr(d)!r})")
    return lines


def build_source(expr, args, fname: str = "kernel", donated=()) -> tuple[str, dict, dict]:
    """The source of a function computing ``expr`` from the arrays ``args`` (symbols, in order).

    ``donated``: inputs the kernel may overwrite (the caller hands over a temporary)."""
    taken = {"np", "math", "dtype", "bound", "out", fname} | {
        n for n in dir(runtime) if not n.startswith("__")}
    names = {x: identifier(x.name, taken) for x in args}
    dimsyms = set()
    for x in sp.preorder_traversal(expr):
        if isinstance(x, MatrixExpr):
            for d in x.shape:
                dimsyms |= sp.sympify(d).free_symbols
    dims = {d: identifier(f"{d}", taken) for d in sorted(dimsyms, key=str)}
    body, out = BatchedPrinter(names, dims, donated).doprint(expr)
    extra = sorted(set(dims) - bindable(args), key=str)  # sizes no input axis shows: keywords
    params = ", ".join(names[x] for x in args)
    pairs = ", ".join(f"({x.name!r}, {names[x]})" for x in args)
    sig = params + "".join([", *"] + [f", {dims[d]}" for d in extra] + [", out=None"])
    body = _write_into_out(body, out)
    note = f" Overwrites {', '.join(x.name for x in donated)}." if donated else ""
    head = [f"def {fname}({sig}):",
            f'    """{sp.sstr(expr)} (arrays: batch axes first, matrices in the last two).{note}"""',
            f"    ({params}{',' if len(args) == 1 else ''}), dtype = as_inputs([{pairs}])",
            "    bound = {}"]
    lines = _dimension_binding(args, names, dims)
    shape_printer = BatchedPrinter(names, dims)
    rows, cols = (shape_printer.dim(d) for d in expr.shape)
    lines.append(f"if out is not None:  # the result's exact shape and dtype\n"
                 f"        check_out(out, dtype, batch_of({', '.join(names[x] for x in args)}) + ({rows}, {cols}))")
    src = "\n".join(head + ["    " + ln for ln in lines + body] + [f"    return into({out}, out)", ""])
    return src, names, dims


_UFUNCS = {"+": "np.add", "-": "np.subtract", "*": "np.multiply", "/": "np.divide"}


def _write_into_out(body: list, result: str) -> list:
    """When the result is first made by a product (``tK = mm(A, B)``) or by one elementwise
    operation of two names (``tK = U / l``), make it there: ``mm(A, B, out=out)``,
    ``np.divide(U, l, out=out)``; the in-place steps after it keep it there."""
    first = next((k for k, ln in enumerate(body) if ln.startswith(f"{result} = ")), None)
    if first is None:
        return body
    code, sep, comment = body[first].partition("  #")
    rhs = code[len(f"{result} = "):].strip()
    if rhs.startswith("mm("):
        code = code.rstrip()[:-1] + ", out=out)"
    else:
        m = re.fullmatch(r"(\w+) ([-+*/]) (\w+)", rhs)
        if m is None:
            return body
        code = f"{result} = {_UFUNCS[m.group(2)]}({m.group(1)}, {m.group(3)}, out=out)"
    return body[:first] + [code + sep + comment] + body[first + 1:]


@dataclass
class Kernel:
    """A NumPy kernel lowered from a matrix expression.

    Call it with arrays, by keyword (the symbol's name, e.g. ``**{"W^Q": w}``, or its Python
    identifier ``W_Q``) or positionally in the order of :attr:`args`. float32 inputs give a
    float32 result; mixed inputs follow NumPy's promotion.
    """

    expr: object
    args: tuple
    source: str
    fn: object
    names: dict
    provenance: Provenance | None = None
    dims: dict = field(default_factory=dict)

    @property
    def arg_names(self) -> tuple:
        return tuple(x.name for x in self.args)

    def __post_init__(self):
        self._by_name = {x.name: x for x in self.args} | {self.names[x]: x for x in self.args}
        self._extra = sorted(set(self.dims) - bindable(self.args), key=str)
        self._extra_names = [(str(d), self.dims[d]) for d in self._extra]

    def __call__(self, *arrays, out=None, **named):
        """The result, written into ``out`` (an array of its shape and dtype) when given."""
        if len(arrays) > len(self.args):
            raise InputError(f"kernel takes {len(self.args)} arrays ({', '.join(self.arg_names)}), "
                             f"got {len(arrays)}")
        values = dict(zip(self.args, arrays))
        sizes = {d: named.pop(d) for d, _ in self._extra_names if d in named}
        missing_dims = [d for d, _ in self._extra_names if d not in sizes]
        if missing_dims:
            raise InputError(f"kernel needs the size(s) {', '.join(missing_dims)} as keywords "
                             f"(no input axis shows them)")
        by_name = self._by_name
        for key, value in named.items():
            if key not in by_name:
                raise InputError(f"kernel has no input {key!r}; inputs: {', '.join(self.arg_names)}")
            if by_name[key] in values:
                raise InputError(f"input {key!r} given twice")
            values[by_name[key]] = value
        missing = [x.name for x in self.args if x not in values]
        if missing:
            raise InputError(f"missing input(s) {', '.join(missing)} of {sp.sstr(self.expr)[:80]}")
        kw = {ident: sizes[d] for d, ident in self._extra_names}
        return self.fn(*[values[x] for x in self.args], out=out, **kw)

    @property
    def extra_dims(self) -> list:
        """Dimension symbols that no input axis shows: the kernel takes them as keywords."""
        return list(self._extra)

    def __repr__(self):
        prov = f", from {self.provenance.theorem}" if self.provenance else ""
        return f"Kernel({sp.sstr(self.expr)[:60]}, args={list(self.arg_names)}{prov})"


def compile_source(src: str, fname: str = "kernel"):
    namespace = {"np": np, "math": __import__("math")}
    namespace.update({k: v for k, v in vars(runtime).items() if not k.startswith("__")})
    code = compile(src, f"<symattn kernel {fname}>", "exec")
    exec(code, namespace)  # the source is generated by the printer from a SymPy tree, never user text
    return namespace[fname]


def runtime_source() -> str:
    """The source of the runtime helpers (copied into generated standalone modules)."""
    return inspect.getsource(runtime)
