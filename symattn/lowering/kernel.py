"""Kernel: a lowered expression as a callable, with its source and its provenance."""

from __future__ import annotations

import builtins
import io
import linecache
import re
import tokenize
from dataclasses import dataclass, field

import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef

from ..defs.feature_map import FeatureMap
from ..defs.heads import Binder, FamilyMember
from ..defs.permutation import PermutationSymbol
from ..defs.score import Score
from ..errors import InputError
from .layers import LayerStack, layer_weights, lowering_dimensions, placeholders
from .numpy_printer import walk_binders
from .printer import KernelPrinter, ScalarPrinter, identifier, leaf
from .targets import numpy as runtime


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


@dataclass(frozen=True)
class StackedFamily:
    """The members W_1, ..., W_H of a head-indexed family as one input array (..., H, rows, cols):
    the family is read at a bound head index (inside Σ_h, a stack or a concatenation over heads)."""

    name: str
    rows: object
    cols: object

    @property
    def shape(self):
        return (self.rows, self.cols)


@dataclass(frozen=True)
class LayerWeights(StackedFamily):
    """A weight W of a stack of layers that each layer has of its own, as one input array
    (..., L, rows, cols): layer l reads ``W[..., l - 1, :, :]`` (see :mod:`symattn.lowering.layers`)."""

    depth: object = 1


@dataclass(frozen=True)
class ScalarInput:
    """A scalar symbol of the expression that is not a dimension (a position a, a row index k)."""

    symbol: object

    @property
    def name(self) -> str:
        return self.symbol.name


@dataclass(frozen=True)
class FunctionInput:
    """An uninterpreted function of the expression (a score function f(Q, K), RoPE's θ(i), a feature
    map phi of linear attention): the kernel takes a callable, applied to arrays (batched matrices,
    or arrays of indices; phi gets (..., N, D) and returns (..., N, C))."""

    function: object
    name: str


def is_array(x) -> bool:
    return not isinstance(x, (ScalarInput, FunctionInput))


def input_leaves(expr) -> list:
    """The inputs of ``expr`` in the order of a statement (:func:`statement_order`): matrices,
    families with a head axis (:class:`StackedFamily`), scalars and functions."""
    from .numpy_printer import stacked_families

    stacked = stacked_families(expr)
    found: dict = {}
    dimsyms = set(lowering_dimensions(expr))
    weights = layer_weights(expr)
    inside = set(weights) | placeholders(expr)

    def visit(e, context):
        bound = {i for i, _ in context}
        if isinstance(e, FamilyMember) and e.family_name in stacked:
            found.setdefault(("family", e.family_name), StackedFamily(e.family_name, *stacked[e.family_name]))
        elif leaf(e) or _is_permutation(e):
            found.setdefault(("leaf", e), e)
        elif isinstance(e, AppliedUndef):
            found.setdefault(("fn", e.func), FunctionInput(e.func, e.func.__name__))
        elif isinstance(e, (Score, FeatureMap)):  # f(Q, K), phi(X): the function is a callable input
            found.setdefault(("fn", e.function), FunctionInput(e.function, e.function.name))
        elif isinstance(e, sp.Symbol) and not isinstance(e, sp.MatrixSymbol) and e not in bound \
                and e not in dimsyms and not isinstance(e, PermutationSymbol):
            found.setdefault(("scalar", e), ScalarInput(e))

    def skip_members(e, context):  # the index of a member that is its own input is no scalar
        if isinstance(e, LayerStack):  # its weights: one array each; its placeholder: bound by the stack
            for W in e.weights:
                found.setdefault(("layers", W), LayerWeights(W.name, W.rows, W.cols, e.depth))
            for part in (e.start, e.depth, e.layer):
                skip_members(part, context)
            return
        if isinstance(e, sp.MatrixSymbol) and e in inside:
            if e in weights:
                found.setdefault(("layers", e), LayerWeights(e.name, e.rows, e.cols, weights[e].depth))
            return
        if isinstance(e, (FamilyMember, sp.MatrixSymbol)):
            if isinstance(e, FamilyMember) and e.family_name in stacked:
                for x in sp.preorder_traversal(e.index):
                    visit(x, context)
            visit(e, context)
            return
        visit(e, context)
        if isinstance(e, sp.Basic) and not isinstance(e, Binder):
            for a in e.args:
                if isinstance(a, sp.Basic):
                    skip_members(a, context)
        elif isinstance(e, Binder):
            skip_members(e.count, context)
            skip_members(e.body, context + ((e.index, e.count),))

    skip_members(expr, ())
    return statement_order(found.values())


def _is_permutation(e) -> bool:
    from ..defs.permutation import Permutation

    return isinstance(e, Permutation)


def position_symbols(expr) -> set:
    """The symbols of slice bounds and of the offsets and lengths of masks (positions, not sizes)."""
    from ..defs.mask import CausalMask, PaddingMask

    out = set()
    for x in sp.preorder_traversal(expr):
        if isinstance(x, sp.MatrixSlice):
            for b in (*x.rowslice, *x.colslice):
                out |= sp.sympify(b).free_symbols
        elif isinstance(x, CausalMask):
            out |= x.offset.free_symbols
        elif isinstance(x, PaddingMask):
            out |= x.length.free_symbols
    return out


#: the order of a statement: queries, keys, values (and the inputs X, Y they come from), other
#: matrices, then the weights by head (W^Q, W^K, W^V, W^O of head 1, then head 2, ...), biases,
#: scalars and functions
_DATA = ("Q", "K", "V", "X", "Y", "q", "k", "v", "x", "y")
_ROLES = "QKVO"


def _order_key(x):
    if isinstance(x, ScalarInput):
        return (5, 0, 0, x.name)
    if isinstance(x, FunctionInput):
        return (6, 0, 0, x.name)
    name = x.family_name if isinstance(x, FamilyMember) else x.name
    head = sp.sympify(x.index) if isinstance(x, FamilyMember) else sp.Integer(0)
    head_key = int(head) if head.is_Integer else 10**6
    base, _, sup = name.partition("^")
    sup = sup.strip("{}")
    role = _ROLES.index(sup[0]) if sup and sup[0] in _ROLES else len(_ROLES)
    if base.startswith("W"):
        return (3, head_key, role, name)
    if base.startswith("b"):
        return (4, head_key, role, name)
    first = base.split("_")[0]
    return (1 if first in _DATA else 2, _DATA.index(first) if first in _DATA else 0, 0, name)


def statement_order(inputs) -> list:
    """The inputs in the order of a statement: Q, K, V (X, Y), other matrices, weights by head
    (W^Q, W^K, W^V, W^O), biases, scalars, functions."""
    return sorted(inputs, key=_order_key)


def bindable(leaves) -> set:
    """Dimension symbols that some input has as a whole axis (so its size binds them)."""
    return {sp.sympify(d) for x in leaves if is_array(x) for d in x.shape if isinstance(sp.sympify(d), sp.Symbol)}


def size_equations(expr, args, names) -> list:
    """(size expression, code of the array size, array name, axis name) for every axis of every input
    array, and the head axis of each stacked family (its length is the head count it is summed over)."""
    from .numpy_printer import head_count_equations

    eqs = []
    for x in args:
        if not is_array(x):
            continue
        for axis, (d, what) in enumerate(zip(x.shape, ("rows", "columns"))):
            eqs.append((sp.sympify(d), f"{names[x]}.shape[{axis - 2}]", x.name, what))
    stacked = {x.name: x for x in args if isinstance(x, StackedFamily)}
    for fam, count in head_count_equations(expr, stacked):
        eqs.append((sp.sympify(count), f"{names[stacked[fam]]}.shape[-3]", fam, "heads (axis -3)"))
    for x in args:
        if isinstance(x, LayerWeights):
            eqs.append((sp.sympify(x.depth), f"{names[x]}.shape[-3]", x.name, "layers (axis -3)"))
    return eqs


def solve_sizes(expr, args, names, dims) -> tuple[list[str], list]:
    """Lines that bind the dimension symbols from the array shapes and check the other sizes.

    A symbol is bound from an axis that is that symbol (``n = Q.shape[-1]``), else solved from an
    axis whose size involves it and no other unknown symbol (``r = W_Q.shape[-3] / G`` for H = G·r,
    checked to be a positive integer). Returns the lines and the symbols no array shows (the kernel
    takes them as keywords)."""
    eqs = size_equations(expr, args, names)
    bound: set = set()
    lines: list[str] = []
    pending = list(eqs)
    extra: set = set()
    positions = sorted(position_symbols(expr) & set(dims), key=str)
    progress = True
    while progress:
        progress = False
        for eq in list(pending):
            d, code, arr, what = eq
            if isinstance(d, sp.Symbol) and d in dims:
                again = "" if d in bound else f"{dims[d]} = "  # a second sight only checks the size
                lines.append(f"{again}bind(bound, {str(d)!r}, {code}, {arr!r}, {what!r})")
                progress |= d not in bound
                bound.add(d)
                pending.remove(eq)
        if progress:
            continue
        for eq in list(pending):
            d, code, arr, what = eq
            unknown = (d.free_symbols & set(dims)) - bound - extra
            if len(unknown) != 1:
                continue
            (u,) = unknown
            size = sp.Dummy("size", integer=True, positive=True)
            solutions = sp.solve(sp.Eq(d, size), u)
            if len(solutions) != 1:
                continue
            printer = ScalarPrinter({**dims, size: code})
            text = sp.sstr(solutions[0].subs(size, sp.Symbol(f"({arr} {what})")))
            lines.append(f"{dims[u]} = solve_size({printer.doprint(solutions[0])}, {str(u)!r}, {text!r})")
            bound.add(u)
            pending.remove(eq)
            progress = True
            break
        if not progress:
            # a position (a slice bound t, a mask's length L) that no axis shows alone becomes a
            # keyword; the axis s + t then gives s = Q.shape[-1] - t
            stuck = set().union(*(d.free_symbols for d, *_ in pending)) if pending else set()
            choice = [x for x in positions if x in stuck and x not in bound | extra]
            if choice:
                extra.add(choice[0])
                progress = True
    extra = sorted(set(dims) - bound, key=str)
    known = bound | set(extra)
    printer = ScalarPrinter(dims)
    for d, code, arr, what in pending:
        if d.free_symbols & set(dims) <= known:
            lines.append(f"check_size({printer.doprint(d)}, {code}, {arr!r}, {what!r}, {sp.sstr(d)!r})")
    return lines, extra


def feature_sizes(expr, unknown) -> dict:
    """{size: the first feature map outside sums over heads whose number of features C is that size}, for
    the sizes in ``unknown`` (no input axis shows them): the kernel binds C from the first phi(X) it
    computes (its last axis), and checks every later phi(X) against it."""
    found: dict = {}

    def visit(e, context):
        if isinstance(e, FeatureMap) and not context and e.features in unknown:
            found.setdefault(e.features, e)

    walk_binders(expr, visit)
    return found


def unchecked_feature_sizes(expr, unknown) -> set:
    """The sizes of ``unknown`` that occur only as the number of features C of feature maps (inside sums
    over heads, where no first phi(X) binds them) and nowhere else, not in the result's shape either:
    the kernel needs no value for them (phi's output is checked on its rows only)."""
    if not unknown or not expr.has(FeatureMap):
        return set()
    used: set = set(sp.sympify(expr.rows).free_symbols | sp.sympify(expr.cols).free_symbols)

    def walk(e):
        if isinstance(e, FeatureMap):
            walk(e.arg)
            return
        if isinstance(e, sp.Symbol):
            used.add(e)
        for a in e.args:
            if isinstance(a, sp.Basic):
                walk(a)

    walk(expr)
    return {d for d in unknown if d not in used and any(isinstance(x, FeatureMap) and x.features == d
                                                        for x in sp.preorder_traversal(expr))}


def build_source(expr, args, fname: str = "kernel", donated=()) -> tuple[str, dict, dict]:
    """The source of a function computing ``expr`` from the inputs ``args`` (in order).

    ``donated``: inputs the kernel may overwrite (the caller hands over a temporary)."""
    src, names, dims, _ = build_kernel_source(expr, args, fname, donated)
    return src, names, dims


@dataclass(frozen=True)
class Lambdified:
    """What :func:`lambdify_kernel` makes: sympy.lambdify's function and its source, the identifiers of
    the inputs and of the dimensions, and the dimensions the function takes as arguments."""

    fn: object
    source: str
    names: dict
    dims: dict
    extra: list


@dataclass(frozen=True)
class Preamble:
    """What the source of every target's kernel starts from (:func:`preamble`): the identifiers of the
    inputs and of the dimensions, the inputs by kind, the lines that bind and check the sizes, the sizes
    the kernel takes as keywords (``extra``) and those a feature map's output binds (``features``)."""

    names: dict
    dims: dict
    arrays: list
    inputs: dict
    scalars: dict
    stacked: dict
    lines: list
    extra: list
    features: dict

    @property
    def pairs(self) -> str:
        """The (name, array[, 3]) pairs the kernel's first line checks (3: a family's heads on axis -3)."""
        return ", ".join(f"({x.name!r}, {self.names[x]}{', 3' if isinstance(x, StackedFamily) else ''})"
                         for x in self.arrays)

    @property
    def unpack(self) -> str:
        """The left side that unpacks the checked arrays."""
        params = ", ".join(self.names[x] for x in self.arrays)
        return f"({params}{',' if len(self.arrays) == 1 else ''})" if self.arrays else "_"

    def signature(self, args) -> str:
        return signature(args, self.names, self.dims, self.extra)


def signature(args, names, dims, extra) -> str:
    """The parameters of a kernel module's function: the inputs ``args`` by their identifiers, then by
    keyword the sizes no input shows (``extra``) and ``out=None``."""
    params = ", ".join(names[x] for x in args)
    return (params + "".join([", *"] + [f", {dims[d]}" for d in extra] + [", out=None"])).lstrip(", ")


def preamble(expr, args, taken: set) -> Preamble:
    """The :class:`Preamble` of the kernel of ``expr`` from the inputs ``args``, with identifiers not in
    ``taken`` (the helpers' names); one for every target (NumPy and the others)."""
    # an input whose name is an identifier keeps it (W_Q stays W_Q beside W^Q, which becomes W_Q_2)
    own_first = {x: identifier(x.name, taken) for x in sorted(args, key=lambda x: not x.name.isidentifier())}
    names = {x: own_first[x] for x in args}
    dims = {d: identifier(f"{d}", taken) for d in lowering_dimensions(expr)}
    arrays = [x for x in args if is_array(x)]
    inputs = {x: names[x] for x in arrays if not isinstance(x, StackedFamily)}
    scalars = {x.symbol: names[x] for x in args if isinstance(x, ScalarInput)}
    scalars.update({x.function: names[x] for x in args if isinstance(x, FunctionInput)})
    stacked = {x.name: names[x] for x in arrays if isinstance(x, StackedFamily)}
    lines, extra = solve_sizes(expr, args, names, dims)
    features = feature_sizes(expr, extra)  # C of phi : R^D -> R^C, bound from phi's first output
    unchecked = unchecked_feature_sizes(expr, set(extra) - set(features))
    extra = [d for d in extra if d not in features and d not in unchecked]
    dims = {d: v for d, v in dims.items() if d not in unchecked}
    return Preamble(names, dims, arrays, inputs, scalars, stacked, lines, extra, features)


def kernel_printer(expr, args, donated=()) -> tuple:
    """The printer of the kernel of ``expr`` (a :class:`~symattn.lowering.printer.KernelPrinter`, whose
    ``cse`` is the CSE to pass to lambdify), the parameters of the function (the inputs ``args`` in
    order, then the sizes no input shows, then ``out``, as SymPy symbols named by their identifiers),
    the identifiers of the inputs and of the dimensions, and those sizes."""
    taken = {"np", "numpy", "math", "dtype", "bound", "out", "kernel", "_lambdifygenerated"} | {
        n for n in dir(runtime) if not n.startswith("__")} | set(dir(builtins))  # float(...), slice, ...
    pre = preamble(expr, args, taken)
    names, dims, arrays, extra, features = pre.names, pre.dims, pre.arrays, pre.extra, pre.features
    statements = [(f"{pre.unpack}, dtype", f"as_inputs([{pre.pairs}])"), ("bound", "{}")]
    for x in donated:  # overwritten in place: writeable, and sharing no memory with another input
        others = ", ".join(f"({y.name!r}, {names[y]})" for y in arrays if y != x)
        statements.append(("_", f"check_donated({names[x]}, {x.name!r}, [{others}])"))
    for line in pre.lines:  # ``n = bind(...)``, ``d = solve_size(...)`` or ``check_size(...)``
        left, sep, right = line.partition(" = ")
        statements.append((left, right) if sep and left.isidentifier() else ("_", line))
    size = ScalarPrinter(dims)
    rows, cols = (size.doprint(sp.sympify(d)) for d in expr.shape)
    batch = ", ".join(names[x] + ("[..., 0, :, :]" if isinstance(x, StackedFamily) else "") for x in arrays)
    statements.append(("_", f"out is None or check_out(out, dtype, batch_of({batch}) + ({rows}, {cols}))"))
    # a size that phi's output binds (C of phi : R^D -> R^C) is known only after phi first runs: the
    # lines that use it (the check of out, checks of other sizes) come after that application
    late = [st for st in statements if any(re.search(rf"\b{dims[d]}\b", st[1]) for d in features)]
    statements = [st for st in statements if st not in late]
    printer = KernelPrinter(pre.inputs, dims, donated, scalars=pre.scalars, stacked=pre.stacked,
                            statements=statements, features=[(node, dims[d], str(d)) for d, node in features.items()],
                            late=late)
    params = [sp.Symbol(names[x]) for x in args] + [sp.Symbol(dims[d]) for d in extra] + [sp.Symbol("out")]
    return printer, params, names, dims, extra


def without_unused_sizes(src: str) -> str:
    """``src`` with each ``n = bind(...)`` or ``n = solve_size(...)`` whose name nothing else reads made a
    call (the size is still checked; a module's reader, and ruff, see no unused variable)."""
    reads: dict = {}
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.NAME:
            reads[tok.string] = reads.get(tok.string, 0) + 1
    out = []
    for line in src.split("\n"):
        m = re.match(r"(\s+)([A-Za-z_]\w*) = ((?:bind|solve_size)\()", line)
        out.append(m.group(1) + line[m.end(2) + 3:] if m and reads.get(m.group(2)) == 1 else line)
    return "\n".join(out)


def lambdify_kernel(expr, args, donated=()) -> Lambdified:
    """The kernel of ``expr`` as stock ``sympy.lambdify`` makes it with symattn's printer and CSE:

        sympy.lambdify(params, expr, modules=[namespace()], printer=printer, cse=printer.cse,
                       dummify=False, docstring_limit=1000)

    (``printer, params, ... = kernel_printer(expr, args, donated)``): the parameters are the inputs
    in the order of ``args``, the sizes no input shows and ``out``."""
    printer, params, names, dims, extra = kernel_printer(expr, args, donated)
    ns = namespace()
    fn = sp.lambdify(params, expr, modules=[ns], printer=printer, cse=printer.cse, dummify=False,
                     docstring_limit=1000)
    # lambdify also puts every symbol of the expression into the function's globals under its name;
    # a dimension named like a helper (mm, chain) must not hide the helper
    fn.__globals__.update(ns)
    # lambdify's source, as inspect.getsource(fn) gives it (lambdify keeps it in linecache, where the
    # function is the whole file; read directly, without inspect's tokenizer)
    source = "".join(linecache.getlines(fn.__code__.co_filename))
    return Lambdified(fn, source, names, dims, extra)


def build_kernel_source(expr, args, fname: str = "kernel", donated=()) -> tuple[str, dict, dict, list]:
    """:func:`build_source`, and the dimension symbols the kernel takes as keywords: the source of
    :func:`lambdify_kernel` under the name ``fname``, with a signature of keywords (the sizes no input
    shows, and ``out=None``) and a docstring, for a module of its own (``symattn codegen``)."""
    lam = lambdify_kernel(expr, args, donated)
    sig = signature(args, lam.names, lam.dims, lam.extra)
    note = f" Overwrites {', '.join(x.name for x in donated)}." if donated else ""
    head = [f"def {fname}({sig}):",
            f'    """{sp.sstr(expr)} (arrays: batch axes first, matrices in the last two).{note}"""']
    body = lam.source.split("\n", 1)[1]
    return without_unused_sizes("\n".join(head) + "\n" + body), lam.names, lam.dims, lam.extra


def namespace() -> dict:
    """The globals of a kernel: NumPy, math and the runtime helpers."""
    ns = {"np": np, "numpy": np, "math": __import__("math")}
    ns.update({k: v for k, v in vars(runtime).items() if not k.startswith("__")})
    return ns


@dataclass
class Kernel:
    """A NumPy kernel lowered from a matrix expression: :attr:`fn` is the function ``sympy.lambdify``
    made with symattn's printer and CSE (:func:`lambdify_kernel`), :attr:`source` its source.

    Call it with arrays, by keyword (the symbol's name, e.g. ``**{"W^Q": w}``, or its Python
    identifier ``W_Q``) or positionally in the order of :attr:`args` (the order of a statement:
    Q, K, V, then the weights by head). A family read at a bound head index (W_h^Q in Σ_h) is one
    array with the heads on axis -3, ``(..., H, d_k, d_model)``, passed under the family's name
    (``W^Q``); scalars (a position a) are numbers; uninterpreted functions (a score function f,
    RoPE's θ) are callables; a feature map phi (``sa.FeatureMap``) is a callable taking the rows
    (..., N, D) and returning (..., N, C), its C read from its output. float32 inputs give a float32
    result; mixed inputs follow NumPy's promotion.
    """

    expr: object
    args: tuple
    source: str
    fn: object
    names: dict
    provenance: Provenance | None = None
    dims: dict = field(default_factory=dict)
    extra: list | None = None  # sizes taken as keywords (default: the dimensions no axis shows)

    @property
    def arg_names(self) -> tuple:
        return tuple(x.name for x in self.args)

    def __post_init__(self):
        # an input's own name wins over another input's identifier (W_Q is the matrix named W_Q, not W^Q)
        self._by_name = {self.names[x]: x for x in self.args} | {x.name: x for x in self.args}
        extra = set(self.dims) - bindable(self.args) if self.extra is None else self.extra
        self._extra = sorted(extra, key=str)
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
    """The function ``fname`` defined by ``src`` (a module written by :func:`build_kernel_source`)."""
    code = compile(src, f"<symattn kernel {fname}>", "exec")
    ns = namespace()
    exec(code, ns)  # the source is generated by the printer from a SymPy tree, never user text
    return ns[fname]
