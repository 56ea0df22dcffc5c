"""Regression tests of the lowering review: positions checked at run time, in-place helpers with
broadcast batch axes, entries of matrices as coefficients, colliding input names."""

import numpy as np
import pytest
import sympy as sp

import symattn as sa
from symattn.errors import InputError, ShapeError

N, M, D, E = sa.dims("N M D E")
Q, K, V = sp.MatrixSymbol("Q", N, D), sp.MatrixSymbol("K", M, D), sp.MatrixSymbol("V", M, E)
i = sp.Symbol("i", integer=True, positive=True)
RNG = np.random.default_rng(7)


def softmax(x):
    z = np.exp(x - x.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


def _row_kernels():
    """Q_i Σ_j K_jᵀ V_j through sa.lower and through stock lambdify."""
    num = Q[i - 1:i, :] * sa.head_sum(K[sa.h - 1:sa.h, :].T * V[sa.h - 1:sa.h, :], M)
    k = sa.lower(num)
    f = sp.lambdify([Q, K, V, i], num)
    return {"lower": lambda q, kk, v, r: k(q, kk, v, i=r), "lambdify": f}


@pytest.mark.parametrize("how", ["lower", "lambdify"])
def test_position_inside_the_rows_gives_that_row(how):
    fn = _row_kernels()[how]
    q, kk, v = RNG.standard_normal((2, 4, 3)), RNG.standard_normal((2, 5, 3)), RNG.standard_normal((2, 5, 4))
    for row in (1, 2, 4):
        np.testing.assert_allclose(fn(q, kk, v, row), q[:, row - 1:row] @ kk.swapaxes(-1, -2) @ v, atol=1e-12)


@pytest.mark.parametrize("how", ["lower", "lambdify"])
@pytest.mark.parametrize("row", [-1, 0, 5, 9])
def test_position_outside_the_rows_is_an_error_naming_it(how, row):
    fn = _row_kernels()[how]
    q, kk, v = RNG.standard_normal((2, 4, 3)), RNG.standard_normal((2, 5, 3)), RNG.standard_normal((2, 5, 4))
    if how == "lambdify" and row < 1:  # stock lambdify checks its size arguments first
        with pytest.raises(InputError, match=f"i = {row}: a size or a position counts from 1"):
            fn(q, kk, v, row)
        return
    with pytest.raises(ShapeError) as err:
        fn(q, kk, v, row)
    msg = str(err.value)
    for part in ("Q", "i - 1:i", f"i = {row}", "N = 4", "1 <= i <= N"):
        assert part in msg, (part, msg)


def test_prefix_slice_longer_than_the_matrix_is_an_error():
    a = sp.Symbol("a", integer=True, positive=True)
    k = sa.lower(K[:a, :].T * V[:a, :])
    kk, v = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))
    np.testing.assert_allclose(k(kk, v, a=3), kk[:3].T @ v[:3], atol=1e-12)
    with pytest.raises(ShapeError, match="0:a"):
        k(kk, v, a=6)


def test_shift_exp_with_a_shift_of_a_larger_batch():
    k = sa.lower_theorem("blockwise_logsumexp_merge", 3, "lhs")
    S1, S2 = RNG.standard_normal((3, 1, 4, 2)), RNG.standard_normal((3, 1, 4, 3))
    c = RNG.standard_normal((1, 2, 4, 1))
    ref = np.exp(S1 - c).sum(-1, keepdims=True) + np.exp(S2 - c).sum(-1, keepdims=True)
    np.testing.assert_allclose(k(S1, S2, c), ref, atol=1e-12)


def test_rowwise_in_place_with_a_larger_batch():
    c = sp.MatrixSymbol("c", N, 1)
    A = sp.MatrixSymbol("A", N, M)
    from symattn.defs.numeric_nodes import Exp, ShiftRows

    expr = ShiftRows(Exp(A), c)
    a, cc = RNG.standard_normal((4, 3)), RNG.standard_normal((2, 4, 1))
    np.testing.assert_allclose(sa.lower(expr)(a, cc), np.exp(a) - cc, atol=1e-12)


def test_in_place_helpers_broadcast():
    from symattn.lowering.targets import numpy as runtime

    x, c = np.zeros((1, 3, 2)), np.ones((2, 3, 1))
    assert runtime.shift_exp_(x.copy(), c).shape == (2, 3, 2)
    assert runtime.ufunc_(np.subtract, x.copy(), c).shape == (2, 3, 2)
    y = np.zeros((2, 3, 2))
    assert runtime.ufunc_(np.add, y, c) is y


n = sa.dims("n")
Qn, Kn = sp.MatrixSymbol("Q", n, n), sp.MatrixSymbol("K", n, n)
q_, k_ = RNG.standard_normal((2, 3, 3)), RNG.standard_normal((2, 3, 3))
c01 = q_[:, 0, 1, None, None]
ENTRY_CASES = {
    "coefficient": (Qn[0, 1] * sa.Softmax(Kn, axis=1), c01 * softmax(k_)),
    "inside softmax": (sa.Softmax(Qn[0, 1] * Kn, axis=1), softmax(c01 * k_)),
    "inside exp": (sa.Exp(Qn[1, 1] * Kn), np.exp(q_[:, 1, 1, None, None] * k_)),
    "divisor": (sa.Softmax(Kn, axis=1) / Qn[0, 1], softmax(k_) / c01),
    "sum of entries": ((Qn[0, 1] + Qn[1, 0]) * sa.Softmax(Kn, axis=1), (c01 + q_[:, 1, 0, None, None]) * softmax(k_)),
    "chain": (Qn[0, 1] * Qn * sa.Softmax(Kn, axis=1) * Kn, c01 * q_ @ softmax(k_) @ k_),
}


@pytest.mark.parametrize("case", sorted(ENTRY_CASES))
@pytest.mark.parametrize("how", ["lower", "lambdify"])
def test_entry_as_coefficient_is_one_number_per_batch_element(case, how):
    expr, ref = ENTRY_CASES[case]
    fn = sa.lower(expr, args=[Qn, Kn]) if how == "lower" else sp.lambdify([Qn, Kn], expr)
    np.testing.assert_allclose(fn(q_, k_), ref, atol=1e-12)
    expr_k0 = fn(q_, k_[0])  # K without batch axes: the coefficient still has Q's batch
    assert expr_k0.shape == (2, 3, 3)
    np.testing.assert_allclose(fn(q_[1], k_[1]), ref[1], atol=1e-12)


def test_two_matrices_of_one_name_are_declared_twice():
    Y, Y2 = sp.MatrixSymbol("Y", N, D), sp.MatrixSymbol("Y", D, D)
    X = sp.MatrixSymbol("X", N, D)
    with pytest.raises(sa.errors.LoweringError, match=r"Y is declared twice: the matrix Y \(D x D\) and the matrix Y"):
        sa.lower(X * Y2 + Y)


def test_a_feature_map_named_as_a_matrix_is_declared_twice():
    from symattn.defs.feature_map import FeatureMap

    C = sa.dims("C")
    P = sp.MatrixSymbol("phi", N, C)
    with pytest.raises(sa.errors.LoweringError, match="phi is declared twice: the matrix phi .* the function phi"):
        sa.lower(FeatureMap("phi", Q, C) + P)


def test_an_input_named_out_is_refused_naming_out():
    out = sp.MatrixSymbol("out", N, D)
    with pytest.raises(sa.errors.LoweringError, match="named out.*out="):
        sa.lower(sa.attention(out, K, V, convention="row"))


@pytest.mark.parametrize("name", ["float", "numpy", "slice", "len"])
@pytest.mark.parametrize("how", ["lower-pos", "lower-kw", "lambdify"])
def test_inputs_named_like_builtins_or_numpy(name, how):
    Qx = sp.MatrixSymbol(name, N, D)
    expr = sa.attention(Qx, K, V, convention="row")
    q, kk, v = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 5, 4)), RNG.standard_normal((2, 5, 2))
    ref = softmax(q @ kk.swapaxes(-1, -2) / 2.0) @ v
    if how == "lower-pos":
        got = sa.lower(expr, args=[Qx, K, V])(q, kk, v)
    elif how == "lower-kw":
        got = sa.lower(expr, args=[Qx, K, V])(**{name: q, "K": kk, "V": v})
    else:
        got = sp.lambdify([Qx, K, V], expr)(q, kk, v)
    np.testing.assert_allclose(got, ref, atol=1e-12)


n2 = sa.dims("n2")
S2, V2 = sp.MatrixSymbol("S", n2, n2), sp.MatrixSymbol("V", n2, n2)


def test_read_only_out_is_refused_naming_out():
    k = sa.lower(sa.Softmax(S2, axis=1) * V2)
    out = np.broadcast_to(np.zeros((4, 4)), (2, 4, 4))
    with pytest.raises(sa.errors.InputError, match="out: the array is read-only"):
        k(np.ones((2, 4, 4)), np.ones((2, 4, 4)), out=out)


def test_read_only_or_aliased_donated_input_is_refused_naming_it():
    k = sa.lower(sa.Softmax(S2, axis=1) * V2, donate=[S2])
    a, b = RNG.standard_normal((2, 4, 4)), RNG.standard_normal((2, 4, 4))
    with pytest.raises(sa.errors.InputError, match="S: the kernel overwrites this donated input.*read-only"):
        k(S=np.broadcast_to(a[0], (2, 4, 4)), V=b)
    c = a.copy()
    with pytest.raises(sa.errors.InputError, match="S: .*shares memory with the input V"):
        k(S=c, V=c)
    np.testing.assert_allclose(k(S=a.copy(), V=b), softmax(a) @ b, atol=1e-12)


@pytest.mark.parametrize("how", ["lower", "lambdify"])
def test_feature_map_returning_complex_values_is_refused(how):
    from symattn.defs.feature_map import FeatureMap

    C = sa.dims("C")
    expr = FeatureMap("phi", Q, C) * FeatureMap("phi", Q, C).T
    fn = sa.lower(expr) if how == "lower" else sp.lambdify([Q, sp.Symbol("phi")], expr)
    with pytest.raises(sa.errors.InputError, match="phi returned dtype complex128"):
        fn(np.ones((2, 3, 4)), lambda x: x + 1j)


@pytest.mark.parametrize("target", ["array-api", "torch"])
def test_position_outside_the_rows_is_an_error_on_other_targets(target):
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    num = Q[i - 1:i, :] * sa.head_sum(K[sa.h - 1:sa.h, :].T * V[sa.h - 1:sa.h, :], M)
    k = sa.lower(num, target=target)
    q, kk, v = (torch.from_numpy(RNG.standard_normal(s)) for s in ((2, 4, 3), (2, 5, 3), (2, 5, 4)))
    ref = q[:, 2:3] @ kk.transpose(-1, -2) @ v
    assert torch.allclose(k(q, kk, v, i=3), ref)
    for row in (0, 5):
        with pytest.raises(ShapeError, match=f"i = {row}.*1 <= i <= N"):
            k(q, kk, v, i=row)


@pytest.mark.parametrize("target", ["array-api", "torch"])
@pytest.mark.parametrize("case", ["coefficient", "inside softmax", "chain"])
def test_entry_as_coefficient_on_other_targets(target, case):
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    expr, ref = ENTRY_CASES[case]
    k = sa.lower(expr, args=[Qn, Kn], target=target)
    got = k(torch.from_numpy(q_), torch.from_numpy(k_))
    np.testing.assert_allclose(got.numpy(), ref, atol=1e-12)
    assert tuple(k(torch.from_numpy(q_), torch.from_numpy(k_[0])).shape) == (2, 3, 3)


def test_a_chain_of_one_operand_is_written_into_out():
    from symattn.lowering.targets import numpy as runtime

    a = np.arange(12.0).reshape(3, 4)
    for coeff in (1, 2.5):
        out = np.zeros((3, 4))
        assert runtime.chain(coeff, a, out=out) is out
        np.testing.assert_array_equal(out, coeff * a)
