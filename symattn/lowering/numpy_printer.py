"""The batched expression printer: SymPy's ``NumPyPrinter`` taught symattn's nodes and batched matrices.

Matrices are the last two axes of every array; leading axes are batch axes and broadcast. Inside a
sum, stack or concatenation over heads h = 1..H (and a block diagonal over i = 1..p), a value that
depends on the bound index carries a *head axis* of length H just before its matrix axes:
(..., H, rows, cols). A family W_h^Q whose members are read at h is one input array of shape
(..., H, d_k, d_model); Σ_h W_h^O head_h is a sum over that axis; H is read from the arrays.

One method per node (``_print_<Node>``), as in SymPy's printers:

- MatMul: ``numpy.matmul`` (two factors), the cheapest parenthesization from the shapes when they
  are numbers, else ``matmul_chain`` (the order chosen at run time from the array shapes);
- Transpose: ``numpy.swapaxes(x, -1, -2)`` (SymPy's ``.T`` and ``numpy.transpose`` break batches);
- Softmax: ``softmax_of(x, axis)``, max-shifted; masks: 0 and -inf arrays;
- HeadSum / HeadStack / HeadConcat / BlockDiag: the body with a head axis, then ``heads_sum``,
  ``heads_stack``, ``heads_concat``, ``block_diagonal``;
- family members W_{g(h)}: ``take_heads`` with the index array g(1..H) (GQA's shared groups);
- slices, explicit matrices, RowOf, Score (a callable), permutations (an input matrix);
- FeatureMap phi(X): a callable input named as the map, given the array (..., N, D) of X and
  returning (..., N, C) (``apply_feature_map`` checks the shape).

>>> import numpy as np, sympy as sp, symattn as sa
>>> n, d, d_v, H = sa.dims("n d d_v H")
>>> X = sp.MatrixSymbol("X", d, n)
>>> W_V, W_O = sa.Family("WV", d_v, d), sa.Family("WO", d, d_v)
>>> total = sa.head_sum(W_O[sa.h] * W_V[sa.h] * X, H)           # Σ_h W_h^O W_h^V X
>>> print(BatchedNumPyPrinter().doprint(total))
heads_sum(matmul_chain(WO_h[..., :WO_h.shape[-3], :, :], WV_h[..., :WO_h.shape[-3], :, :], (X)[..., None, :, :]))
>>> g = sp.lambdify([X, W_V[sa.h], W_O[sa.h]], total)            # the families: (H, rows, cols)
>>> float(g(np.ones((4, 3)), np.ones((5, 2, 4)), np.ones((5, 4, 2)))[0, 0])  # H = 5 heads of 2·4 ones
40.0

Stock ``sympy.lambdify`` reaches this printer through the ``_numpycode`` methods installed by
:func:`install` (SymPy's ``printmethod`` protocol): a symattn node, or a SymPy matrix expression
holding one, prints its whole subtree with this printer. Subclasses (other array libraries) override
``_module_format`` (the array namespace), :attr:`runtime_module` (the helpers), ``dtype`` and the
``_print_<Node>`` methods; :meth:`call` (a function of the array library) and :meth:`helper` (a
helper function) are the two places where a function name is written.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixElement, MatrixExpr
from sympy.printing.numpy import NumPyPrinter

from ..defs.heads import Binder, FamilyMember
from ..errors import LoweringError
from .layers import placeholders, stacks_of
from .targets.common import chain_order

#: the module of the helper functions (``softmax_of``, ``heads_sum``, ...); lambdify imports them
RUNTIME = "symattn.lowering.targets.numpy"


def walk_binders(expr, visit, context=()):
    """Call ``visit(node, context)`` on every node, ``context`` the (index, count) of the binders
    around it, outermost first."""
    visit(expr, context)
    if isinstance(expr, Binder):
        walk_binders(expr.count, visit, context)
        walk_binders(expr.body, visit, context + ((expr.index, expr.count),))
        return
    for a in expr.args:
        if isinstance(a, sp.Basic):
            walk_binders(a, visit, context)


def stacked_families(expr) -> dict:
    """{family name: (rows, cols)} of the families with a member read at a bound head index: each is
    one input array with a head axis."""
    found: dict = {}

    def visit(e, context):
        if isinstance(e, FamilyMember) and e.index.free_symbols & {i for i, _ in context}:
            found[e.family_name] = e.shape

    walk_binders(expr, visit)
    return found


def head_count_equations(expr, stacked) -> list:
    """(family, count expression) pairs: a family read at h (or at a group g(h) that simplifies to a
    polynomial at h = count) over a binder of that count holds that many heads on its axis -3."""
    eqs: list = []

    def visit(e, context):
        if not (isinstance(e, FamilyMember) and e.family_name in stacked):
            return
        bound = [(i, c) for i, c in context if i in e.index.free_symbols]
        if len(bound) != 1:
            return
        index, count = bound[0]
        last = sp.simplify(e.index.subs(index, count)) if e.index != index else count
        if not last.has(sp.floor, sp.ceiling) and (e.family_name, last) not in eqs:
            eqs.append((e.family_name, last))

    walk_binders(expr, visit)
    return eqs


def has_symattn_node(expr) -> bool:
    """True when a node of ``expr`` is one of symattn's classes (or a coordinate function of a feature
    map, which an explicit matrix holds at concrete sizes)."""
    return any((type(x).__module__ or "").startswith("symattn.")
               or getattr(type(x), "symattn_feature_map", False) is True for x in sp.preorder_traversal(expr))


def has_entries(c) -> bool:
    """Whether the scalar ``c`` reads an entry of a matrix (Q[0, 1]): a number per batch element."""
    return isinstance(c, sp.Basic) and c.has(MatrixElement)


def _lift(code: str, have: tuple, want: tuple) -> str:
    """Insert length-1 head axes so that an array with head axes ``have`` lines up with ``want``."""
    if have == want:
        return code
    spec = ", ".join(":" if w in have else "None" for w in want)
    return f"({code})[..., {spec}, :, :]"


def _valid_range(start, stop, size) -> str:
    """The positions p at which a slice p + a:p + b of an axis of ``size`` lies inside it
    ('1 <= i <= N' for i - 1:i of N rows); '' when the bounds are not of that form."""
    positions = (start.free_symbols | stop.free_symbols) - sp.sympify(size).free_symbols
    if len(positions) != 1:
        return ""
    p = positions.pop()
    a, b = sp.expand(start - p), sp.expand(stop - p)
    if p in a.free_symbols or p in b.free_symbols:
        return ""
    return f"{sp.sstr(-a)} <= {p} <= {sp.sstr(sp.expand(size - b))}"


class BatchedNumPyPrinter(NumPyPrinter):
    """Print a matrix expression as one batched NumPy expression.

    ``dims``: {dimension symbol: code of its size}; None reads each from an input array's shape.
    ``names``: {input matrix, scalar symbol or function: code}; by default, the name.
    ``stacked``: {family name: code of its array with a head axis}; by default ``<family>_h``
    (``Family("WQ", ...)[sa.h]`` as a lambdify argument) for the families read at a bound h.
    ``known``: {subexpression: code} computed elsewhere; ``dtype``: code of the result dtype.
    """

    _default_settings = {**NumPyPrinter._default_settings, "allow_unknown_functions": True}
    #: where the helpers live (lambdify imports them from here; a subclass names its own runtime)
    runtime_module = RUNTIME
    #: the names under which the code calls NumPy and Python's float (stock lambdify's printer uses
    #: aliases of the runtime, so that an argument named numpy or float does not hide them)
    numpy_name = "numpy"
    float_name = "float"

    def __init__(self, settings=None, *, dims=None, names=None, stacked=None, known=None, dtype="float"):
        super().__init__(settings)
        self.printmethod = "_symattn_numpycode"  # never bounce back into the hooks of install()
        self.dims = dims
        self.names = dict(names or {})
        self.stacked = stacked
        self.known = dict(known or {})
        self.dtype = dtype
        self.heads: list = []  # the binders around the node being printed: (index, count)
        self._scalar_axes: tuple | None = None
        self._layer_level = 0  # how many stacks of layers enclose the node being printed

    # -- entry points --------------------------------------------------------------------
    def print_root(self, expr) -> str:
        """The code of ``expr``; dimensions and stacked families are found first when not given."""
        if self.stacked is None:
            self.stacked = {}
            for fam, (rows, cols) in stacked_families(expr).items():
                self.stacked[fam] = sp.sstr(FamilyMember(fam, sp.Symbol("h"), rows, cols))
        if self.dims is None:
            self.dims = self._dims_from_shapes(expr)
        return self._print(expr)

    def doprint(self, expr, assign_to=None):
        if self.dims is None or self.stacked is None:
            self.print_root(expr)  # finds the dimensions; the code is printed again below
        return super().doprint(expr, assign_to)

    def _dims_from_shapes(self, expr) -> dict:
        dims: dict = {}
        for fam, count in head_count_equations(expr, self.stacked):
            if isinstance(count, sp.Symbol):
                dims.setdefault(count, f"{self.stacked[fam]}.shape[-3]")

        inside = placeholders(expr)
        for stack in stacks_of(expr):
            if isinstance(stack.depth, sp.Symbol) and stack.weights:
                dims.setdefault(stack.depth, f"{self.layer_weight(stack.weights[0])}.shape[-3]")

        def visit(e, context):
            if isinstance(e, FamilyMember) and e.family_name in self.stacked:
                code = self.stacked[e.family_name]
            elif e in inside:  # a layer's input: bound by its stack
                return
            elif self._is_leaf(e):
                code = self._leaf(e)
            else:
                return
            for axis, d in enumerate(e.shape):
                d = sp.sympify(d)
                if isinstance(d, sp.Symbol):
                    dims.setdefault(d, f"{code}.shape[{axis - 2}]")

        walk_binders(expr, visit)
        return dims

    # -- names -----------------------------------------------------------------------------
    def helper(self, name: str) -> str:
        """A helper of :mod:`symattn.lowering.targets.numpy` (registered for lambdify's imports)."""
        self.module_imports[self.runtime_module].add(name)
        return name

    def call(self, fqn: str, *args) -> str:
        """``numpy.<fn>(args)``: a function of the array library."""
        return f"{self._module_format(fqn)}({', '.join(str(a) for a in args)})"

    def _module_format(self, fqn, register=True):
        short = super()._module_format(fqn, register)  # registers the import for lambdify
        if not fqn.startswith("numpy."):
            return short
        if self.numpy_name == "numpy":
            return fqn
        return self.helper(self.numpy_name) + fqn[len("numpy"):]

    def _is_leaf(self, e) -> bool:
        from ..defs.permutation import Permutation

        if isinstance(e, FamilyMember):
            return e.family_name not in (self.stacked or {})
        return isinstance(e, (sp.MatrixSymbol, Permutation))

    def _leaf(self, e) -> str:
        if e in self.names:
            return self.names[e]
        return str(e.name)

    # -- head axes ---------------------------------------------------------------------------
    def _axes(self, e) -> tuple:
        """The binders around the node whose index occurs free in ``e``, outermost first."""
        if not self.heads:
            return ()
        free = e.free_symbols if isinstance(e, sp.Basic) else set()
        return tuple(lab for lab in self.heads if lab[0] in free)

    def _aligned(self, e, want: tuple) -> str:
        return _lift(self._print(e), self._axes(e), want)

    def _scalar(self, e, want: tuple = (), trailing: int = 0) -> str:
        """A scalar expression as code; a bound index in it is an integer array over the head axes
        ``want`` followed by ``trailing`` length-1 axes."""
        saved = self._scalar_axes
        self._scalar_axes = (want, trailing)
        try:
            return self._print(sp.sympify(e))
        finally:
            self._scalar_axes = saved

    def dim(self, d) -> str:
        return self._scalar(d)

    def _print(self, expr, **kwargs):
        # a known value was computed outside every binder: inside one, the same tree may read the
        # bound index (W_h with h bound here, free there), so it is known only without head axes
        if self.known and isinstance(expr, sp.Basic) and expr in self.known and not self._axes(expr):
            return self.known[expr]
        return super()._print(expr, **kwargs)

    # -- scalars -------------------------------------------------------------------------------
    def _print_Symbol(self, s):
        for k, (index, count) in enumerate(self._scalar_axes[0] if self._scalar_axes else ()):
            if s == index:
                want, trailing = self._scalar_axes
                return self.helper("head_positions") + f"({self.dim(count)}, {k}, {len(want) + trailing})"
        if any(s == index for index, _ in self.heads):
            raise LoweringError(f"the head index {s} occurs where no head axis is set up")
        if self.dims and s in self.dims:
            return self.dims[s]
        if s in self.names:
            return self.names[s]
        return super()._print_Dummy(s) if isinstance(s, sp.Dummy) else super()._print_Symbol(s)

    _print_Dummy = _print_Symbol  # a size or head index made by symattn (a Dummy) is bound like any other

    def _print_AppliedUndef(self, e):
        fn = self.names.get(e.func, e.func.__name__)
        return f"{fn}({', '.join(self._print(a) for a in e.args)})"

    def _print_floor(self, e):
        num, den = sp.fraction(sp.together(e.args[0]))
        if den != 1 and num.is_integer and den.is_integer:
            return f"(({self._print(num)}) // ({self._print(den)}))"  # exact on integer arrays
        return self.call("numpy.floor", self._print(e.args[0]))

    def _print_Visible(self, e):
        k, t = (self._print(a) for a in e.args)
        return self.call("numpy.where", f"({k}) <= ({t})", "0.0", f"-{self._module_format('numpy.inf')}")

    def _print_PermIndex(self, e):
        sigma, _, k, inverse = e.args
        s = self._print(sigma)
        if inverse:
            s = self.call("numpy.argsort", s)
        return f"({s})[{self._print(k)}]"

    def _coeff(self, c, want) -> str:
        if has_entries(c):
            return self.entry_coeff(c, want)
        if not self._axes(c):
            return f"{self._float()}({self._scalar(c)})"
        return self._scalar(c, want, 2)

    def _float(self) -> str:
        return self.float_name if self.float_name == "float" else self.helper(self.float_name)

    def entry_coeff(self, c, want=()) -> str:
        """A coefficient that reads entries of matrices (Q[0, 1] K): one number per batch element, an
        array (..., 1, 1) (with a length-1 axis for each head axis ``want`` of the product)."""
        if self._axes(c):
            raise LoweringError(f"cannot lower the coefficient {sp.sstr(c)[:60]}: it reads entries at a head index")
        return f"({self._scalar(c)})[..., {', '.join(['None'] * (len(want) + 2))}]"

    # -- leaves -----------------------------------------------------------------------------
    def _print_MatrixSymbol(self, e):
        return self._leaf(e)

    def _print_Permutation(self, e):
        return self._leaf(e)

    def _print_FamilyMember(self, e):
        if e.family_name not in self.stacked:
            return self._leaf(e)
        code = self.stacked[e.family_name]
        labels = self._axes(e.index)
        if len(labels) == 1 and e.index == labels[0][0]:
            return f"{code}[..., :{self.dim(labels[0][1])}, :, :]"
        index = self._scalar(e.index, labels, 0)
        return self.helper("take_heads") + f"({code}, {index}, {e.family_name!r}, {sp.sstr(e.index)!r})"

    def _constant(self, fn, e) -> str:
        shape = f"({self.dim(e.rows)}, {self.dim(e.cols)})"
        return self.call(f"numpy.{fn}", shape, f"dtype={self.dtype}")

    def _print_ZeroMatrix(self, e):
        return self._constant("zeros", e)

    def _print_OneMatrix(self, e):
        return self._constant("ones", e)

    def _print_Identity(self, e):
        return self.call("numpy.eye", self.dim(e.rows), f"dtype={self.dtype}")

    def _print_MatrixBase(self, e):
        want = self._axes(e)
        rows = ", ".join("[" + ", ".join(self._scalar(e[i, j], want, 0) for j in range(e.cols)) + "]"
                         for i in range(e.rows))
        return self.helper("explicit_matrix") + f"([{rows}], {self.dtype})"

    def _print_MatrixElement(self, e):
        """X[i, j] (an entry of an explicit matrix): the entry of every matrix of the batch (and head)."""
        return f"({self._print(e.parent)})[..., {self._scalar(e.i)}, {self._scalar(e.j)}]"

    def _print_CausalMask(self, e):
        m, n = e.shape
        return self.helper("column_causal_mask") + (
            f"({self.dim(m)}, {self.dim(n)}, {self._scalar(e.offset)}, {self.dtype})")

    def _print_PaddingMask(self, e):
        m, n = e.shape
        return self.helper("column_padding_mask") + (
            f"({self.dim(m)}, {self.dim(n)}, {self.dim(e.length)}, {self.dtype})")

    # -- products and sums ------------------------------------------------------------------------
    def _print_MatMul(self, e):
        c, mats = e.as_coeff_matrices()
        want = self._axes(e)
        codes = [self._aligned(m, want) for m in mats]
        if len(codes) == 1:
            prod = codes[0]
        elif len(codes) == 2:
            prod = self.call("numpy.matmul", *codes)
        elif not want and all(sp.sympify(d).is_Integer for m in mats for d in m.shape):
            prod = self._parenthesize(chain_order([tuple(int(d) for d in m.shape) for m in mats]), codes)
        else:
            prod = self.helper("matmul_chain") + f"({', '.join(codes)})"
        return prod if c == 1 else f"{self._coeff(c, want)} * {prod}"

    def _parenthesize(self, order, codes) -> str:
        if isinstance(order, int):
            return codes[order]
        return self.call("numpy.matmul", *(self._parenthesize(o, codes) for o in order))

    def _print_MatAdd(self, e):
        want = self._axes(e)
        return "(" + " + ".join(self._aligned(t, want) for t in e.args) + ")"

    def _print_HadamardProduct(self, e):
        want = self._axes(e)
        return "(" + " * ".join(self._aligned(t, want) for t in e.args) + ")"

    def _print_Transpose(self, e):
        return self.call("numpy.swapaxes", self._print(e.arg), -1, -2)

    def _print_Inverse(self, e):
        return self.call("numpy.linalg.inv", self._print(e.arg))

    def _print_MatPow(self, e):
        return self.call("numpy.linalg.matrix_power", self._print(e.base), self._scalar(e.exp))

    def _print_BlockMatrix(self, e):
        want = self._axes(e)
        B = e.blocks
        rows = ", ".join("[" + ", ".join(self._aligned(B[i, j], want) for j in range(B.cols)) + "]"
                         for i in range(B.rows))
        return self.helper("batched_block") + f"([{rows}])"

    def _print_MatrixSlice(self, e):
        rows_over_heads = self._slices_over_heads(e)
        if rows_over_heads is not None:
            return rows_over_heads
        parts = []
        for bounds, size, length, axis in ((e.rowslice, e.parent.rows, e.rows, "rows"),
                                           (e.colslice, e.parent.cols, e.cols, "columns")):
            start, stop, step = bounds
            if self._checked_bounds(start, stop, step, size):
                parts.append(self._checked_slice(e, bounds, size, length, axis))
                continue
            step = "" if step == 1 else f":{self._scalar(step)}"
            parts.append(f"{self._scalar(start)}:{self._scalar(stop)}{step}")
        return f"({self._print(e.parent)})[..., {parts[0]}, {parts[1]}]"

    def _checked_bounds(self, start, stop, step, size) -> bool:
        """Whether a slice's bounds are checked when the kernel runs (``slice_bounds``): one step, and a
        bound that is neither a number nor the whole axis (0:N of N rows) nor read at a bound head index."""
        if step != 1:
            return False
        start, stop = sp.sympify(start), sp.sympify(stop)
        if self._axes(start) or self._axes(stop):
            return False
        return not (start.is_Integer and (stop.is_Integer or stop == sp.sympify(size)))

    def _checked_slice(self, e, bounds, size, length, axis) -> str:
        """``slice_bounds(...)``: the slice of ``axis`` of ``e``, its bounds checked at run time against
        the matrix's size and the length the expression's shape says (a ShapeError otherwise)."""
        start, stop, _ = (sp.sympify(b) for b in bounds)
        symbols = sorted(start.free_symbols | stop.free_symbols | sp.sympify(size).free_symbols, key=str)
        values = "{" + ", ".join(f"{sp.sstr(s)!r}: {self._scalar(s)}" for s in symbols) + "}"
        text = f"{sp.sstr(start)}:{sp.sstr(stop)}"
        return (f"{self.helper('slice_bounds')}({self._scalar(start)}, {self._scalar(stop)}, {self.dim(size)}, "
                f"{self.dim(length)}, {sp.sstr(e.parent)[:40]!r}, {axis!r}, {text!r}, {values}, "
                f"{_valid_range(start, stop, size)!r})")

    def _slices_over_heads(self, e):
        """Row h + c of X (X[h + c - 1:h + c, :]) inside a sum over h = 1..H, X read outside it: the rows
        c..c + H - 1 as a head axis, (..., H, 1, cols); the same for a column X[:, h + c - 1:h + c],
        (..., H, rows, 1). None for every other slice."""
        labels = self._axes(e)
        if len(labels) != 1 or self._axes(e.parent):
            return None
        index, count = labels[0]
        (r0, r1, rs), (c0, c1, cs) = e.rowslice, e.colslice

        def unit(a, b, step):  # a one-wide slice starting at index + constant
            a, b = sp.sympify(a), sp.sympify(b)
            return step == 1 and sp.expand(b - a) == 1 and sp.expand(a - index).free_symbols.isdisjoint({index})

        def fixed(a, b, step):
            return all(index not in sp.sympify(x).free_symbols for x in (a, b, step))

        def span(a, b, step):
            return f"{self._scalar(a)}:{self._scalar(b)}" + ("" if step == 1 else f":{self._scalar(step)}")

        def inside(a, size):  # the slices at h = 1..count lie inside the matrix (a slice past its end is shorter)
            start = sp.sympify(a).subs(index, 1)
            return bool(start.is_nonnegative) and bool(sp.expand(size - start - count).is_nonnegative)

        parent = self._print(e.parent)
        if unit(r0, r1, rs) and fixed(c0, c1, cs) and inside(r0, e.parent.rows):
            first = self._scalar(sp.sympify(r0).subs(index, 1))
            return f"({parent})[..., {first}:{first} + {self.dim(count)}, {span(c0, c1, cs)}][..., :, None, :]"
        if unit(c0, c1, cs) and fixed(r0, r1, rs) and inside(c0, e.parent.cols):
            first = self._scalar(sp.sympify(c0).subs(index, 1))
            cols = f"({parent})[..., {span(r0, r1, rs)}, {first}:{first} + {self.dim(count)}]"
            return f"({self.call('numpy.swapaxes', cols, -1, -2)})[..., :, :, None]"
        return None

    # -- symattn's nodes -------------------------------------------------------------------------
    def _print_Softmax(self, e):
        return self.helper("softmax_of") + f"({self._print(e.arg)}, {-2 if e.axis == 0 else -1})"

    def _print_Exp(self, e):
        return self.call("numpy.exp", self._print(e.args[0]))

    def _print_Exp2(self, e):
        return self.call("numpy.exp2", self._print(e.args[0]))

    def _print_Log(self, e):
        return self.call("numpy.log", self._print(e.args[0]))

    def _rowwise(self, e, x, col, op):
        want = self._axes(e)
        a, b = self._aligned(x, want), self._aligned(col, want)
        return f"({b} {op} {a})" if op == "*" else f"({a} {op} {b})"

    def _print_ShiftRows(self, e):
        return self._rowwise(e, e.args[0], e.args[1], "-")

    def _print_ScaleRows(self, e):
        return self._rowwise(e, e.args[1], e.args[0], "*")

    def _print_DivideRows(self, e):
        return self._rowwise(e, e.args[0], e.args[1], "/")

    def _print_RowOf(self, e):
        k = self._scalar(e.args[1])
        if type(self).helper is BatchedNumPyPrinter.helper:  # NumPy's runtime: a row outside the matrix is
            # an error, not an empty row (printers of other array libraries have helpers of their own)
            return f"{self.helper('row_of')}({self._print(e.args[0])}, {k})"
        return f"({self._print(e.args[0])})[..., {k}:{k} + 1, :]"

    def _print_Score(self, e):
        want = self._axes(e)
        fn = self.names.get(e.function, str(e.function))
        return f"{fn}({self._aligned(e.args[1], want)}, {self._aligned(e.args[2], want)})"

    def _print_Apply(self, e):
        """g(X), a map the document does not define: the callable input named as the map, of X's array."""
        want = self._axes(e)
        fn = self.names.get(e.function, str(e.function))
        return f"{fn}({self._aligned(e.argument, want)})"

    def _print_FeatureMap(self, e):
        """phi(X): the callable input named as the map, applied to the array of X (..., N, D) and
        checked to give (..., N, C) (C when its size is known here); a head axis of X passes through."""
        return self.feature_map_call(e, self._print(e.arg), self._feature_count(e))

    def _feature_count(self, e) -> str:
        C = sp.sympify(e.features)
        return self.dim(C) if C.free_symbols <= set(self.dims or {}) else "None"

    def feature_map_call(self, e, x: str, features: str) -> str:
        """The call applying the feature map of ``e`` to the array code ``x`` (``features``: code of C,
        or None when the size is not known before the map runs)."""
        fn = self.names.get(e.function, str(e.function))
        dtype = "None" if self.dtype == "float" else self.dtype  # stock lambdify keeps phi's dtype
        return (f"{self.helper('apply_feature_map')}({fn}, {x}, {str(e.function)!r}, {features}, "
                f"{sp.sstr(e)[:60]!r}, {dtype})")

    def _over(self, e, reduce: str) -> str:
        label = (e.index, e.count)
        self.heads.append(label)
        try:
            body = self._print(e.body)
            have = self._axes(e.body)
        finally:
            self.heads.pop()
        if label not in have:  # (..., outer head axes, H, r, c): the new axis is the innermost
            body = self.helper("repeat_head") + f"({body}, {self.dim(e.count)})"
        return self.helper(reduce) + f"({body})"

    def _print_HeadSum(self, e):
        return self._over(e, "heads_sum")

    def _print_HeadStack(self, e):
        return self._over(e, "heads_stack")

    def _print_HeadConcat(self, e):
        return self._over(e, "heads_concat")

    def _print_BlockDiag(self, e):
        return self._over(e, "block_diagonal")

    # -- stacks of layers -----------------------------------------------------------------------
    def layer_weight(self, W) -> str:
        """The array of a stack's weight W, its layers on axis -3."""
        return self.stacked[W.name] if self.stacked and W.name in self.stacked else self._leaf(W)

    def _print_LayerStack(self, e):
        if self._axes(e):
            raise LoweringError(f"cannot lower a stack of layers that reads a head index: {sp.sstr(e)[:80]}")
        level = self._layer_level
        # the lambda's parameters: named apart from every name the body may read (a user matrix _S0)
        taken = {str(getattr(x, "name", x)) for x in e.atoms(sp.Symbol, sp.MatrixSymbol)}
        taken |= {str(v) for v in (*self.names.values(), *(self.dims or {}).values(), *(self.stacked or {}).values())}
        S, layer = f"_S{level}", f"_l{level}"
        while S in taken or layer in taken:
            S, layer = S + "_", layer + "_"
        start, depth = self._print(e.start), self.dim(e.depth)
        names, known = self.names, self.known
        self.names = {**names, e.placeholder: S,
                      **{W: f"{self.layer_weight(W)}[..., {layer}, :, :]" for W in e.weights}}
        self.known, self._layer_level = {}, level + 1  # inside a layer, nothing outside is the same value
        try:
            body = self._print(e.layer)
        finally:
            self.names, self.known, self._layer_level = names, known, level
        return self.helper("layers") + f"(lambda {S}, {layer}: {body}, {start}, {depth})"

    def emptyPrinter(self, expr):
        if isinstance(expr, MatrixExpr):
            raise LoweringError(f"cannot lower a {type(expr).__name__} node to NumPy: {sp.sstr(expr)[:80]}")
        return super().emptyPrinter(expr)
