"""Strict shape checking for matrix expressions with symbolic dimensions.

SymPy accepts ``A(d×a) · X((a+1)×n)`` when the dimensions are symbols, because it
cannot prove them different. symattn rejects every product, sum or block whose
dimensions are not *provably equal*, and names the operation, the operands and
their shapes.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..errors import NotAMatrixError, ShapeError
from .dims import check_dimension


def same_dim(a, b) -> bool:
    """True when the dimensions ``a`` and ``b`` are provably equal."""
    if a is b or a == b:  # dimensions are small expressions: equal ones need no expansion
        return True
    return sp.expand(sp.sympify(a) - sp.sympify(b)) == 0


#: SymPy's own definitions of the shapes read from the arguments (checked by identity below, so a
#: class whose ``shape`` is patched or overridden is asked for its own)
_SYMPY_SHAPES = {sp.MatMul: sp.MatMul.shape, sp.MatAdd: sp.MatAdd.shape, sp.HadamardProduct: sp.HadamardProduct.shape,
                 sp.Transpose: sp.Transpose.shape}


def _known_definition(e) -> type | None:
    """The class whose shape definition ``e`` uses, when it is one read from the arguments: a SymPy
    class of :data:`_SYMPY_SHAPES`, or a node that names its ``shape`` property in
    ``shape_of_first_argument`` (still the same property object: not patched or overridden)."""
    cls = type(e)
    prop = cls.shape
    marker = getattr(cls, "shape_of_first_argument", None)
    if marker is not None and prop is marker:
        return object
    for c in cls.__mro__:
        if c in _SYMPY_SHAPES:
            return c if prop is _SYMPY_SHAPES[c] else None
    return None


def _derived_shape(e, of):
    """The shape of ``e`` from its arguments' memoized shapes, exactly as its own definition reads it
    (a product: first rows, last columns; a sum, a Hadamard product, a node declaring
    ``shape_of_first_argument``: the first argument's; a transpose: reversed); None for any other
    node, or one whose shape property is not that definition (it is asked for its own)."""
    kind = _known_definition(e)
    if kind is None:
        return None
    if kind is sp.MatMul:
        mats = [a for a in e.args if isinstance(a, (MatrixExpr, sp.MatrixBase))]
        return (of(mats[0])[0], of(mats[-1])[1]) if mats else None
    if kind is sp.Transpose:
        r, c = of(e.arg)
        return (c, r)
    return of(e.args[0])


class Shapes:
    """Shapes of matrix nodes, each computed once (by identity, the object kept so that its id stays
    its own). SymPy's ``shape`` of a sum or a product asks its first argument, which asks its own,
    so asking every node of a deep model for its shape costs the depth each time (quadratic in the
    number of layers or worse); here a node whose shape is its arguments' reads their memoized
    shapes, and any other node is asked once."""

    def __init__(self, limit: int = 100_000):
        self.memo: dict = {}
        self.limit = limit

    def __call__(self, e):
        hit = self.memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        if len(self.memo) >= self.limit:
            self.memo.clear()
        stack = [(e, False)]  # arguments first; a node already known is not entered again
        while stack:
            x, ready = stack.pop()
            if id(x) in self.memo:
                continue
            if not ready:
                stack.append((x, True))
                stack.extend((a, False) for a in x.args
                             if isinstance(a, (MatrixExpr, sp.MatrixBase)) and id(a) not in self.memo)
                continue
            shape = _derived_shape(x, self)
            self.memo[id(x)] = (x, tuple(x.shape) if shape is None else shape)
        return self.memo[id(e)][1]


#: the shapes of the nodes checked so far (see :class:`Shapes`)
shape_of = Shapes()


def show(expr, limit: int = 70) -> str:
    """A short readable name for an operand, with ᵀ for transposes."""
    s = sp.sstr(expr).replace(".T", "ᵀ")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def show_shape(expr) -> str:
    r, c = expr.shape
    return f"{sp.sstr(r)} × {sp.sstr(c)}"


def is_matrix(x) -> bool:
    return isinstance(x, (MatrixExpr, sp.MatrixBase))


def as_matrix(x, what: str, op: str):
    """Return ``x`` as an immutable SymPy matrix expression, or raise NotAMatrixError."""
    if isinstance(x, sp.MatrixBase):
        x = sp.ImmutableMatrix(x)
    if isinstance(x, sp.Mul) and sum(isinstance(a, MatrixExpr) for a in x.args) == 1:
        # SymPy's scalar routines (factor_terms inside cancel) rebuild c·X as a commutative Mul
        x = sp.MatMul(*x.args).doit(deep=False)
    if not isinstance(x, MatrixExpr) and not isinstance(x, sp.MatrixBase):
        raise NotAMatrixError(
            f"{op}: {what} must be a matrix expression (for example "
            f"sympy.MatrixSymbol('{what}', d_k, n)), got {type(x).__name__}: {x!r}"
        )
    check_shapes(x, op)
    return x


def _operands(op: str, named: list[tuple[str, object]]) -> str:
    width = max(len(n) for n, _ in named)
    return "\n".join(f"  {n.ljust(width)}: {show_shape(e)}" for n, e in named)


def require_equal(a, b, op: str, what: str, named: list[tuple[str, object]]):
    """Raise a ShapeError unless dimensions ``a`` and ``b`` are provably equal."""
    if not same_dim(a, b):
        raise ShapeError(
            f"{op}: {what}.\n{_operands(op, named)}\n"
            f"  the dimensions {sp.sstr(a)} and {sp.sstr(b)} are not known to be equal"
        )


def check_shapes(expr, op: str | None = None) -> None:
    """Check every product, sum and block in ``expr``; raise ShapeError on the first misfit.

    >>> from symattn import dims
    >>> d, a, n = dims("d a n")
    >>> A, X = sp.MatrixSymbol("A", d, a), sp.MatrixSymbol("X", a + 1, n)
    >>> check_shapes(A * X)
    Traceback (most recent call last):
    ...
    symattn.errors.ShapeError: product A*X: cannot form A·X.
      A: d × a
      X: a + 1 × n
      the dimensions a and a + 1 are not known to be equal
    """
    if isinstance(expr, sp.MatrixBase):
        return
    if not isinstance(expr, MatrixExpr) or _CHECKED.get(id(expr)) is expr:
        return
    for arg in expr.args:
        if isinstance(arg, MatrixExpr):
            check_shapes(arg, op)
    _check_node(expr, op)
    if len(_CHECKED) >= _CHECKED_MAX:
        _CHECKED.clear()
    _CHECKED[id(expr)] = expr


#: the objects whose shapes were checked and fit, by identity (id -> the object, kept so that its id
#: stays its own): a subexpression shared by many nodes (a layer's input used four times by the next
#: layer) is checked once, so a deep model costs its DAG, not its tree. By identity, not equality:
#: comparing two equal deep trees built apart walks their whole trees.
_CHECKED: dict = {}
_CHECKED_MAX = 100_000


def _check_node(expr, op) -> None:
    """Check the node ``expr`` itself, its arguments being checked already."""
    where = f"{op}: " if op else ""
    if isinstance(expr, sp.MatrixSymbol):
        for d in expr.shape:
            check_dimension(d, f"{where}matrix {expr.name}: ")
        return
    if isinstance(expr, sp.MatrixSlice):
        check_slice(expr, where)
        return
    if _fits(expr):
        return  # the operands are printed only to report a misfit: printing costs more than checking
    kind = {sp.MatMul: "product", sp.MatAdd: "sum", sp.HadamardProduct: "Hadamard product"}
    ctx = op or f"{kind.get(type(expr), 'block matrix')} {show(expr)}"
    if isinstance(expr, sp.MatMul):
        mats = [a for a in expr.args if isinstance(a, (MatrixExpr, sp.MatrixBase))]
        for left, right in zip(mats, mats[1:]):
            require_equal(
                left.cols, right.rows, ctx, f"cannot form {show(left, 30)}·{show(right, 30)}",
                [(show(left, 30), left), (show(right, 30), right)],
            )
    elif isinstance(expr, (sp.MatAdd, sp.HadamardProduct)):
        first = expr.args[0]
        verb = "add" if isinstance(expr, sp.MatAdd) else "multiply entrywise"
        for other in expr.args[1:]:
            for k, dim in enumerate(("rows", "columns")):
                require_equal(
                    first.shape[k], other.shape[k], ctx,
                    f"cannot {verb} {show(first, 30)} and {show(other, 30)} (their {dim} differ)",
                    [(show(first, 30), first), (show(other, 30), other)],
                )
    elif isinstance(expr, (sp.MatPow, sp.Inverse)):
        base = expr.args[0]
        require_equal(base.rows, base.cols, ctx, f"{show(base, 30)} must be square to take a power or inverse",
                      [(show(base, 30), base)])
    elif isinstance(expr, sp.BlockMatrix):
        blocks = expr.blocks
        for i in range(blocks.rows):
            for j in range(1, blocks.cols):
                a, b = blocks[i, 0], blocks[i, j]
                require_equal(
                    a.rows, b.rows, ctx,
                    f"blocks in block row {i + 1} have different heights",
                    [(show(a, 30), a), (show(b, 30), b)],
                )
        for j in range(blocks.cols):
            for i in range(1, blocks.rows):
                a, b = blocks[0, j], blocks[i, j]
                require_equal(
                    a.cols, b.cols, ctx,
                    f"blocks in block column {j + 1} have different widths",
                    [(show(a, 30), a), (show(b, 30), b)],
                )


def slice_length(start, stop, step):
    """The number of indices start, start + step, ... below stop (NumPy's and SymPy's
    ``as_explicit``): ceiling((stop - start) / step)."""
    return sp.ceiling((sp.sympify(stop) - start) / step)


def check_slice(expr, where: str = "") -> None:
    """Refuse a strided slice whose shape SymPy gets wrong.

    SymPy gives ``X[a:b:s]`` floor((b - a) / s) rows where it has ceiling((b - a) / s) (NumPy and
    ``as_explicit`` agree on the latter): ``X[:, ::2]`` of a 1 × 3 matrix is 1 × 1 to SymPy and
    1 × 2 in fact. The two agree exactly when s divides b - a; a slice where that is not provable
    is refused, since every step about it would be about the wrong shape.

    >>> X = sp.MatrixSymbol("X", 1, 3)
    >>> check_slice(X[:, 0:3:2])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    symattn.errors.ShapeError: the slice X[:, ::2] of X (1 × 3) takes 2 columns, but SymPy gives it 1 ...
    """
    for axis, (start, stop, step), dim in ((0, expr.rowslice, "rows"), (1, expr.colslice, "columns")):
        if step == 1:
            continue
        if sp.sympify((sp.sympify(stop) - start) / step).is_integer is True:
            continue
        true = slice_length(start, stop, step)
        raise ShapeError(
            f"{where}the slice {show(expr)} of {show(expr.parent, 30)} ({show_shape(expr.parent)}) takes "
            f"{sp.sstr(true)} {dim}, but SymPy gives it {sp.sstr(expr.shape[axis])} (it rounds (stop - start) / step "
            "down); symattn checks a strided slice only where the step provably divides stop - start: choose "
            f"the stop so that it does (stop = start + step · count), or write the {dim} you mean as blocks of "
            "unit-step slices")


def _fits(expr) -> bool:
    """True when the product, sum, power or block matrix ``expr`` itself (not its arguments) has
    provably equal dimensions wherever :func:`check_shapes` requires them; prints nothing."""
    if isinstance(expr, sp.MatMul):
        mats = [a for a in expr.args if isinstance(a, (MatrixExpr, sp.MatrixBase))]
        return all(same_dim(shape_of(left)[1], shape_of(right)[0]) for left, right in zip(mats, mats[1:]))
    if isinstance(expr, (sp.MatAdd, sp.HadamardProduct)):
        first = shape_of(expr.args[0])
        return all(same_dim(first[k], shape_of(other)[k]) for other in expr.args[1:] for k in (0, 1))
    if isinstance(expr, (sp.MatPow, sp.Inverse)):
        base = expr.args[0]
        return same_dim(base.rows, base.cols)
    if isinstance(expr, sp.BlockMatrix):
        blocks = expr.blocks
        rows = all(same_dim(blocks[i, 0].rows, blocks[i, j].rows)
                   for i in range(blocks.rows) for j in range(1, blocks.cols))
        return rows and all(same_dim(blocks[0, j].cols, blocks[i, j].cols)
                            for j in range(blocks.cols) for i in range(1, blocks.rows))
    return True
