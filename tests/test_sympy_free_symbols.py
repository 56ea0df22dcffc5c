"""symattn._sympy_speed: the free symbols of sums and products are SymPy's, found without a rebuild."""

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixElement

import symattn  # noqa: F401  (installs the property)
from symattn import _sympy_speed

i, j, k, n, m = sp.symbols("i j k n m", integer=True)
x, y = sp.symbols("x y")
f = sp.Function("f")
A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", m, n)
IB = sp.IndexedBase("w")

CASES = [
    sp.Sum(A[i, j] * B[j, i], (j, 0, m - 1)),
    sp.Sum(sp.Sum(A[i, j] * B[j, k], (j, 0, m - 1)), (i, 0, n - 1)),
    sp.Product(sp.exp(A[i, k] * x), (k, 0, m - 1)),
    sp.Sum(x * j, (j, 1, n), (k, 1, j)),
    sp.Sum(f(j) + y, (j, i, n + m)),
    sp.Sum(IB[k] * x, (IB[k], 0, 1)),  # a variable that is not a plain symbol: masked by a Dummy
    sp.Integral(x * y, (x, 0, y)),
    sp.Integral(x * y, x),  # a limit without bounds: the variable stays free
    sp.Sum(A[i, j], (j, 0, m - 1)) / sp.Sum(B[j, i], (j, 0, m - 1)),
]


def test_the_same_symbols_as_sympy_finds():
    for e in CASES:
        sums = [s for s in sp.preorder_traversal(e) if isinstance(s, sp.concrete.expr_with_limits.ExprWithLimits)]
        assert sums
        for s in sums:
            assert s.free_symbols == _sympy_speed.ORIGINAL.fget(s), s
    assert sp.Sum(A[i, j], (j, 0, m - 1)).free_symbols == {A, i, m}
    assert sp.Integral(x * y, x).free_symbols == {x, y}
    assert sp.Integral(x * y, (x, 0, y)).free_symbols == {y}


def test_no_matrix_entry_is_built_again(monkeypatch):
    """SymPy's property rebuilt every entry of the summand (``xreplace({j: j})``); this one builds none."""
    e = sp.Sum(sp.Sum(A[i, j] * B[j, k] * A[k, j], (j, 0, m - 1)), (k, 0, n - 1))
    built = []
    new = MatrixElement.__new__
    monkeypatch.setattr(MatrixElement, "__new__", lambda cls, *a: built.append(a) or new(cls, *a))
    assert e.free_symbols == {A, B, i, m, n}
    assert built == []
    assert _sympy_speed.ORIGINAL.fget(e) == {A, B, i, m, n}
    assert built  # SymPy's own did rebuild them: the test would see a regression
