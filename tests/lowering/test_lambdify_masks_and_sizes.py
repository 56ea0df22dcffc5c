"""Stock ``sympy.lambdify`` on symattn's expressions: a boolean array where an additive mask is read
is refused (it used to be added as 0/1, a silently wrong answer); sizes that no input shows, and
matrix names lambdify cannot use, are errors that say what to pass."""

import numpy as np
import pytest
import sympy as sp

import symattn as sa
from symattn.errors import InputError, LoweringError

n, m, d, d_k = sa.dims("n m d d_k")
Q, K, V = (sp.MatrixSymbol(s, d, r) for s, r in (("Q", n), ("K", m), ("V", m)))
M = sp.MatrixSymbol("M", m, n)
RNG = np.random.default_rng(0)
q, k, v = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 6)), RNG.standard_normal((4, 6))
HIDDEN = RNG.random((6, 5)) < 0.4
HIDDEN[0] = False  # every query keeps a key


def masked_by_hand(hidden):
    """V softmax(KᵀQ/sqrt(d) + M) in NumPy, M = -inf where hidden (the column convention)."""
    s = k.T @ q / np.sqrt(4) + np.where(hidden, -np.inf, 0.0)
    p = np.exp(s - s.max(axis=0))
    return v @ (p / p.sum(axis=0))


def test_boolean_mask_under_stock_lambdify_is_refused_not_added_as_0_1():
    f = sp.lambdify([Q, K, V, M], sa.masked_attention(Q, K, V, M))
    np.testing.assert_allclose(f(q, k, v, np.where(HIDDEN, -np.inf, 0.0)), masked_by_hand(HIDDEN), rtol=1e-12)
    with pytest.raises(InputError, match=r"M: got dtype bool.*-inf where it is hidden.*numpy.where"):
        f(q, k, v, HIDDEN)
    row = sa.masked_attention(Q.T, K.T, V.T, M, convention="row")
    g = sp.lambdify([Q, K, V, M], row)
    with pytest.raises(InputError, match="M: got dtype bool"):
        g(q, k, v, HIDDEN)


def test_boolean_mask_is_refused_by_lower_with_the_same_advice():
    kernel = sa.lower(sa.masked_attention(Q, K, V, M))
    with pytest.raises(InputError, match=r"M: got dtype bool \(boolean\).*True means attend"):
        kernel(q, k, v, HIDDEN)


def test_boolean_tensor_is_refused_by_torch_kernels():
    torch = pytest.importorskip("torch")
    kernel = sa.lower(sa.masked_attention(Q, K, V, M), target="torch")
    t = [torch.tensor(a) for a in (q, k, v)]
    with pytest.raises(InputError, match="M: got dtype torch.bool.*masked_fill"):
        kernel(*t, torch.tensor(HIDDEN))


def test_a_size_no_input_shows_is_named_with_how_to_pass_it():
    t = sp.Symbol("t", integer=True, positive=True)
    Qs, Ks, Vs = (sp.MatrixSymbol(s, d, n) for s in "QKV")
    expr = Vs * sa.Softmax(sa.PaddingMask(n, n, t) + Ks.T * Qs / sp.sqrt(d), 0)
    x = RNG.standard_normal((4, 5))
    f = sp.lambdify([Qs, Ks, Vs], expr)
    with pytest.raises(InputError, match=r"the size t is shown by no input's shape.*sympy.lambdify\(\[\.\.\., t\]"):
        f(x, x, x)
    g = sp.lambdify([Qs, Ks, Vs, t], expr)
    want = sa.lower(expr)(x, x, x, t=3)
    np.testing.assert_allclose(g(x, x, x, 3), want, rtol=1e-12)
    with pytest.raises(InputError, match="t = 0: a size or a position counts from 1"):
        g(x, x, x, 0)


def test_gqa_with_a_fixed_head_count_lowers_under_lambdify():
    X = sp.MatrixSymbol("X", d, n)
    fam = {s: sa.Family(f"W{s}", *((d, d_k) if s == "O" else (d_k, d))) for s in "QKVO"}
    expr = sa.gqa(X, X, X, fam["Q"], fam["K"], fam["V"], fam["O"], H=4, G=2)
    kernel = sa.lower(expr)
    f = sp.lambdify(list(kernel.args), expr)
    sizes = {d: 8, n: 5, d_k: 3}
    arrays = [RNG.standard_normal((2, *(sizes.get(s, s) for s in a.shape))) for a in kernel.args]
    np.testing.assert_allclose(f(*arrays), kernel(*arrays), rtol=1e-12, atol=1e-12)


def test_a_matrix_name_lambdify_cannot_use_is_an_error_saying_what_to_do():
    X = sp.MatrixSymbol("X", d, n)
    fam = {s: sa.Family(f"W^{s}", *((d, d_k) if s == "O" else (d_k, d))) for s in "QKVO"}
    expr = sa.gqa(X, X, X, fam["Q"], fam["K"], fam["V"], fam["O"], H=4, G=2)
    with pytest.raises(LoweringError, match=r"W\^\w_1: .*Python identifier \(W_\w_1, not W\^\w_1\).*symattn.lower"):
        sp.lambdify([X], expr)
    H = sa.dims("H")
    heads = sa.multihead(X, X, X, fam["Q"], fam["K"], fam["V"], fam["O"], H=H)
    with pytest.raises(LoweringError, match=r"W\^\w_h: .*Python identifier"):
        sp.lambdify([X] + [fam[s][sa.h] for s in "QKVO"], heads)
