"""Lowering the feature map phi of linear attention (Katharopoulos et al. 2020): phi is a callable input
of the kernel, given the array (..., N, D) of the rows and returning (..., N, C)."""

import numpy as np
import pytest
import sympy as sp

import symattn as sa
from symattn.defs.feature_map import FeatureMap, feature_map
from symattn.errors import InputError, LoweringError, ShapeError

N, M, D, C, D_v = sa.dims("N M D C D_v")
Q, K, V = sp.MatrixSymbol("Q", N, D), sp.MatrixSymbol("K", M, D), sp.MatrixSymbol("V", M, D_v)
#: linear attention phi(Q) phi(K)ᵀ V (SymPy flattens the product: the kernel picks its order)
LINEAR = FeatureMap("phi", Q, C) * FeatureMap("phi", K, C).T * V

RNG = np.random.default_rng(20)
W_FEATURES = RNG.normal(size=(3, 7)) / 2  # D = 3 -> C = 7


def elu_plus_one(x):
    """elu(x) + 1, elementwise (C = D)."""
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def random_features(x):
    """exp(x W): a fixed random linear map then exp, D = 3 -> C = 7 (not elementwise)."""
    return np.exp(x @ W_FEATURES)


def by_hand(phi, q, k, v):
    """phi(Q) (phi(K)ᵀ V) and (phi(Q) phi(K)ᵀ) V, each matrix of the batch in a loop."""
    right = np.stack([phi(q[b]) @ (phi(k[b]).T @ v[b]) for b in range(q.shape[0])])
    left = np.stack([(phi(q[b]) @ phi(k[b]).T) @ v[b] for b in range(q.shape[0])])
    np.testing.assert_allclose(left, right, rtol=1e-10)
    return right


def _inputs(batch=(4,), n=5, m=6, d=3, dv=2):
    return RNG.normal(size=(*batch, n, d)), RNG.normal(size=(*batch, m, d)), RNG.normal(size=(*batch, m, dv))


@pytest.mark.parametrize("phi", [elu_plus_one, random_features], ids=["elu+1", "exp(xW)"])
def test_linear_attention_kernel_equals_the_hand_computation(phi):
    k = sa.lower(LINEAR)
    assert k.arg_names == ("Q", "K", "V", "phi") and k.extra_dims == []  # C is read from phi's output
    q, kk, v = _inputs()
    want = by_hand(phi, q, kk, v)
    np.testing.assert_allclose(k(q, kk, v, phi), want, rtol=1e-10)  # positionally, in statement order
    np.testing.assert_allclose(k(Q=q, K=kk, V=v, phi=phi), want, rtol=1e-10)  # by keyword
    np.testing.assert_allclose(k(q, kk, v, phi=phi), want, rtol=1e-10)
    out = np.empty_like(want)
    assert k(q, kk, v, phi, out=out) is out
    np.testing.assert_allclose(out, want, rtol=1e-10)


def test_both_parenthesizations_of_linear_attention_lower_to_the_same_values():
    """(phi(Q) phi(K)ᵀ) V and phi(Q) (phi(K)ᵀ V), the right one passed in as a computed input."""
    S = sp.MatrixSymbol("S", C, D_v)  # phi(K)ᵀ V, computed by the caller
    A = sp.MatrixSymbol("A", N, M)  # phi(Q) phi(K)ᵀ, computed by the caller
    right = sa.lower(LINEAR, inputs={FeatureMap("phi", K, C).T * V: S})
    left = sa.lower(LINEAR, inputs={FeatureMap("phi", Q, C) * FeatureMap("phi", K, C).T: A})
    assert right.arg_names == ("Q", "S", "phi") and left.arg_names == ("V", "A")
    q, kk, v = _inputs()
    s = np.swapaxes(random_features(kk), -1, -2) @ v
    a = random_features(q) @ np.swapaxes(random_features(kk), -1, -2)
    want = by_hand(random_features, q, kk, v)
    np.testing.assert_allclose(right(S=s, Q=q, phi=random_features), want, rtol=1e-10)
    np.testing.assert_allclose(left(A=a, V=v), want, rtol=1e-10)
    np.testing.assert_allclose(sa.lower(LINEAR)(q, kk, v, random_features), want, rtol=1e-10)


def test_batch_axes_broadcast_and_phi_sees_the_whole_batch():
    seen = []

    def phi(x):
        seen.append(x.shape)
        return random_features(x)

    q, kk, v = _inputs(batch=(2, 3))
    got = sa.lower(LINEAR)(q, kk[:1], v[0], phi)  # K with batch (1, 3), V without batch axes
    assert got.shape == (2, 3, 5, 2)
    assert seen == [(2, 3, 5, 3), (1, 3, 6, 3)]  # one call per phi(X), on the batched array
    want = np.array([[random_features(q[a, c]) @ (random_features(kk[0, c]).T @ v[0, c]) for c in range(3)]
                     for a in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_float32_inputs_give_float32_even_when_phi_promotes():
    q, kk, v = (a.astype(np.float32) for a in _inputs())
    got = sa.lower(LINEAR)(q, kk, v, random_features)  # W_FEATURES is float64
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, by_hand(random_features, q.astype(float), kk.astype(float), v.astype(float)),
                               rtol=1e-4)


def test_a_phi_of_the_wrong_shape_is_an_error_naming_phi_and_the_shapes():
    k = sa.lower(LINEAR)
    q, kk, v = _inputs()
    with pytest.raises(ShapeError, match=r"phi\(Q\): the feature map phi returned shape \(4, 4, 7\) for the rows "
                                         r"of \(4, 5, 3\); expected \(4, 5, C\)"):
        k(q, kk, v, lambda x: random_features(x)[..., 1:, :])
    widths = iter((7, 6))  # phi(Q) has 7 features, phi(K) 6: C differs

    def inconsistent(x):
        return random_features(x)[..., :next(widths)]

    with pytest.raises(ShapeError, match=r"phi\(K\): the feature map phi returned shape \(4, 6, 6\) for the rows "
                                         r"of \(4, 6, 3\); expected \(4, 6, 7\) .*C = 7"):
        k(q, kk, v, inconsistent)
    with pytest.raises(InputError, match=r"the feature map phi must be a callable .*got ndarray"):
        k(q, kk, v, np.ones((3, 7)))
    with pytest.raises(InputError, match=r"missing input\(s\) phi"):
        k(q, kk, v)


def test_a_known_feature_count_is_checked_before_and_after():
    """With C shown by an input (W: C × D_v), phi's output is checked against it."""
    Wc = sp.MatrixSymbol("W", C, D_v)
    k = sa.lower(FeatureMap("phi", Q, C) * Wc)
    q = RNG.normal(size=(2, 5, 3))
    np.testing.assert_allclose(k(q, RNG.normal(size=(7, 2)) * 0 + 1, random_features),
                               random_features(q) @ np.ones((7, 2)), rtol=1e-12)
    with pytest.raises(ShapeError, match=r"expected \(2, 5, 4\)"):
        k(q, np.ones((4, 2)), random_features)


def test_phi_of_a_column_vector_is_the_column_of_its_features():
    """feature_map on a column x (D × 1, the paper's Q_i) is phi(xᵀ)ᵀ: the similarity phi(x)ᵀ phi(y)."""
    x, y = sp.MatrixSymbol("x", D, 1), sp.MatrixSymbol("y", D, 1)
    sim = feature_map("phi", x, C, D=D).T * feature_map("phi", y, C, D=D)
    xv, yv = RNG.normal(size=(4, 3, 1)), RNG.normal(size=(4, 3, 1))
    want = np.stack([random_features(xv[b].T) @ random_features(yv[b].T).T for b in range(4)])
    np.testing.assert_allclose(sa.lower(sim)(xv, yv, random_features), want, rtol=1e-12)
    np.testing.assert_allclose(sp.lambdify([x, y, sp.Symbol("phi")], sim)(xv, yv, random_features), want, rtol=1e-12)
    col = sa.lower(feature_map("phi", x, C, D=D))(xv, random_features)
    assert col.shape == (4, 7, 1)
    np.testing.assert_allclose(col, np.swapaxes(random_features(np.swapaxes(xv, -1, -2)), -1, -2), rtol=1e-12)


def test_stock_lambdify_takes_phi_as_an_argument_or_from_modules():
    q, kk, v = _inputs()
    want = by_hand(elu_plus_one, q, kk, v)
    as_argument = sp.lambdify([Q, K, V, sp.Symbol("phi")], LINEAR)
    np.testing.assert_allclose(as_argument(q, kk, v, elu_plus_one), want, rtol=1e-10)
    as_function = sp.lambdify([Q, K, V, sp.Function("phi")], LINEAR)
    np.testing.assert_allclose(as_function(q, kk, v, elu_plus_one), want, rtol=1e-10)
    from_modules = sp.lambdify([Q, K, V], LINEAR, modules=[{"phi": elu_plus_one}, "numpy"])
    np.testing.assert_allclose(from_modules(q, kk, v), want, rtol=1e-10)
    with pytest.raises(ShapeError, match=r"phi\(Q\): the feature map phi returned shape \(4, 2, 3\) for the rows "
                                         r"of \(4, 5, 3\)"):
        as_argument(q, kk, v, lambda x: x[..., :2, :])


def test_a_feature_map_in_a_sum_over_heads_gets_the_head_axis():
    """Σ_h phi(X W_h) phi(X W_h)ᵀ: phi receives (..., H, N, D) and acts on the last axis."""
    d, H = sa.dims("d H")
    X, W = sp.MatrixSymbol("X", N, d), sa.Family("W", d, D)
    total = sa.head_sum(FeatureMap("phi", X * W[sa.h], C) * FeatureMap("phi", X * W[sa.h], C).T, H)
    x, w = RNG.normal(size=(2, 5, 4)), RNG.normal(size=(3, 4, 3))
    want = sum(random_features(x @ w[j]) @ np.swapaxes(random_features(x @ w[j]), -1, -2) for j in range(3))
    k = sa.lower(total)
    assert k.extra_dims == []  # C is needed nowhere but in phi's output: not asked for
    np.testing.assert_allclose(k(x, w, random_features), want, rtol=1e-10)
    pytest.importorskip("array_api_compat")
    np.testing.assert_allclose(sa.lower(total, target="array-api")(x, w, random_features), want, rtol=1e-10)
    f = sp.lambdify([X, W[sa.h], sp.Symbol("phi")], total)
    np.testing.assert_allclose(f(x, w, random_features), want, rtol=1e-10)


def test_array_api_target_lowers_phi_with_the_inputs_arrays():
    pytest.importorskip("array_api_compat")
    k = sa.lower(LINEAR, target="array-api")
    q, kk, v = _inputs()
    np.testing.assert_allclose(k(q, kk, v, random_features), by_hand(random_features, q, kk, v), rtol=1e-10)
    with pytest.raises(ShapeError, match=r"phi\(Q\): the feature map phi returned shape \(4, 2, 3\)"):
        k(q, kk, v, lambda x: x[..., :2, :])
    widths = iter((7, 6))
    with pytest.raises(ShapeError, match=r"phi\(K\).*C = 7"):
        k(q, kk, v, lambda x: random_features(x)[..., :next(widths)])


def test_torch_target_lowers_phi_on_tensors():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    k = sa.lower(LINEAR, target="torch")
    q, kk, v = _inputs()
    w = torch.tensor(W_FEATURES)
    seen = []

    def phi(x):
        seen.append(type(x))
        return torch.exp(x @ w)

    got = k(torch.tensor(q), torch.tensor(kk), torch.tensor(v), phi)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64 and seen == [torch.Tensor, torch.Tensor]
    np.testing.assert_allclose(got.numpy(), by_hand(random_features, q, kk, v), rtol=1e-10)
    elu = sa.lower(LINEAR, target="torch")(torch.tensor(q), torch.tensor(kk), torch.tensor(v),
                                           lambda x: torch.nn.functional.elu(x) + 1)
    np.testing.assert_allclose(elu.numpy(), by_hand(elu_plus_one, q, kk, v), rtol=1e-10)


def test_at_concrete_sizes_phi_stays_one_callable():
    """Fixing every size (lower(expr, at=...)) keeps phi(X) whole; a feature map built at concrete sizes
    (the explicit matrix of its coordinate functions phi[c](row)) is folded back into phi(X)."""
    q, kk, v = _inputs()
    want = by_hand(random_features, q, kk, v)
    fixed = sa.lower(LINEAR, at={"N": 5, "M": 6, "D": 3, "C": 7, "D_v": 2})
    assert fixed.arg_names == ("Q", "K", "V", "phi")
    np.testing.assert_allclose(fixed(q, kk, v, random_features), want, rtol=1e-10)
    with pytest.raises(ShapeError, match=r"expected \(4, 5, 7\)"):
        fixed(q, kk, v, elu_plus_one)  # C = 7 is fixed: elu + 1 gives 3 features
    Qc, S = sp.MatrixSymbol("Q", 5, 3), sp.MatrixSymbol("S", 7, 2)
    concrete = FeatureMap("phi", Qc, 7) * S
    assert not concrete.has(FeatureMap)  # SymPy's explicit matrix of phi[0](Q[0, 0], ...), ...
    s = RNG.normal(size=(7, 2))
    for f in (sa.lower(concrete), sp.lambdify([Qc, S, sp.Symbol("phi")], concrete)):
        np.testing.assert_allclose(f(q, s, random_features), random_features(q) @ s, rtol=1e-12)
    x = sp.MatrixSymbol("x", 3, 1)
    xv = RNG.normal(size=(4, 3, 1))
    col = np.swapaxes(random_features(np.swapaxes(xv, -1, -2)), -1, -2)
    phi_x = feature_map("phi", x, 7, D=3)
    for f in (sa.lower(phi_x), sp.lambdify([x, sp.Symbol("phi")], phi_x)):
        np.testing.assert_allclose(f(xv, random_features), col, rtol=1e-12)


def test_a_feature_map_multiplied_out_at_concrete_sizes_is_refused_naming_it():
    Qc, Kc = sp.MatrixSymbol("Q", 5, 3), sp.MatrixSymbol("K", 6, 3)
    product = FeatureMap("phi", Qc, 7) * FeatureMap("phi", Kc, 7).T  # SymPy multiplies the two matrices out
    with pytest.raises(LoweringError, match=r"cannot lower the FeatureMap phi at concrete sizes: .*lower\(expr, at="):
        sa.lower(product)


def test_an_explicit_matrix_of_entries_reads_each_matrix_of_the_batch():
    X = sp.MatrixSymbol("X", 2, 2)
    e = sp.ImmutableMatrix([[X[0, 0], X[1, 1]]]) * X
    x = RNG.normal(size=(3, 2, 2))
    want = np.stack([np.array([[a[0, 0], a[1, 1]]]) @ a for a in x])
    np.testing.assert_allclose(sa.lower(e)(x), want, rtol=1e-12)


def test_codegen_self_test_data_instantiates_phi_for_every_target():
    """The self-test of a generated module calls phi(x)_c = 1 + x_{c mod D}² (an index and arithmetic, so
    it runs on every array library) and compares with the other side evaluated with the same map, exactly."""
    from symattn.lowering.codegen import self_test_data

    other = FeatureMap("phi", Q, C) * (FeatureMap("phi", K, C).T * V)
    data = self_test_data(sa.lower(LINEAR), other, 0)
    phi = eval(data["functions"]["phi"], {"np": np})  # the module's own source of phi
    np.testing.assert_allclose(sa.lower(LINEAR)(**data["inputs"], phi=phi), data["expected"], rtol=1e-12)
    q, kk, v = (data["inputs"][s] for s in "QKV")
    np.testing.assert_allclose(data["expected"], by_hand(phi, q[None], kk[None], v[None])[0], rtol=1e-12)
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    got = sa.lower(LINEAR, target="torch")(*(torch.tensor(a) for a in (q, kk, v)), phi)
    np.testing.assert_allclose(got.numpy(), data["expected"], rtol=1e-12)


def test_jax_target_lowers_phi_on_jax_arrays():
    jnp = pytest.importorskip("jax.numpy")
    q, kk, v = _inputs()
    got = sa.lower(LINEAR, target="jax")(q, kk, v, lambda x: jnp.exp(x @ jnp.asarray(W_FEATURES, dtype=x.dtype)))
    want = by_hand(random_features, q, kk, v)
    np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-4 if got.dtype == jnp.float32 else 1e-10)


def test_lambdify_printer_gives_the_kernel_of_a_feature_map_at_concrete_sizes():
    from symattn.lowering import kernel_namespace, lambdify_printer

    Qc, S = sp.MatrixSymbol("Q", 5, 3), sp.MatrixSymbol("S", 7, 2)
    concrete = FeatureMap("phi", Qc, 7) * S  # the explicit matrix of phi's coordinate functions, times S
    printer, params = lambdify_printer(concrete)
    assert [str(p) for p in params] == ["Q", "S", "phi", "out"]
    f = sp.lambdify(params, concrete, modules=[kernel_namespace()], printer=printer, cse=printer.cse)
    q, s = RNG.normal(size=(2, 5, 3)), RNG.normal(size=(7, 2))
    np.testing.assert_allclose(f(q, s, random_features, None), random_features(q) @ s, rtol=1e-12)


def test_linear_attention_as_sums_over_the_rows_lowers_with_a_row_axis():
    """V'_i = phi(Q_i)ᵀ Σ_j phi(K_j) V_jᵀ / phi(Q_i)ᵀ Σ_j phi(K_j) (Katharopoulos et al., eq. 5), rows as
    slices K[j-1:j, :] inside a sum over j = 1..M: the rows become an axis of the array."""
    j, i = sa.h, sp.Symbol("i", integer=True, positive=True)
    phi_q = FeatureMap("phi", Q[i - 1:i, :], C)
    numerator = phi_q * sa.head_sum(FeatureMap("phi", K[j - 1:j, :], C).T * V[j - 1:j, :], M)
    denominator = phi_q * sa.head_sum(FeatureMap("phi", K[j - 1:j, :], C).T, M)
    q, kk, v = _inputs()
    for k in (sa.lower(numerator), sa.lower(denominator)):
        assert k.extra_dims == [i]  # the row i is a position: a keyword
    pk = elu_plus_one(kk)
    for row in (1, 3, 5):
        pq = elu_plus_one(q[:, row - 1:row, :])
        np.testing.assert_allclose(sa.lower(numerator)(q, kk, v, elu_plus_one, i=row),
                                   pq @ np.swapaxes(pk, -1, -2) @ v, rtol=1e-10)
        np.testing.assert_allclose(sa.lower(denominator)(q, kk, elu_plus_one, i=row),
                                   pq @ pk.sum(-2)[..., :, None], rtol=1e-10)
    pytest.importorskip("array_api_compat")
    np.testing.assert_allclose(sa.lower(numerator, target="array-api")(q, kk, v, elu_plus_one, i=2),
                               elu_plus_one(q[:, 1:2, :]) @ np.swapaxes(pk, -1, -2) @ v, rtol=1e-10)


def test_a_sum_of_columns_times_rows_over_a_bound_index_is_the_product():
    """Σ_{j=1}^{M} A[:, j-1:j] B[j-1:j, :] = A B: a one-wide column or row slice at the bound index."""
    A, B = sp.MatrixSymbol("A", N, M), sp.MatrixSymbol("B", M, D)
    total = sa.head_sum(A[:, sa.h - 1:sa.h] * B[sa.h - 1:sa.h, :], M)
    a, b = RNG.normal(size=(3, 4, 6)), RNG.normal(size=(6, 2))
    np.testing.assert_allclose(sa.lower(total)(a, b), a @ b, rtol=1e-12)
    np.testing.assert_allclose(sp.lambdify([A, B], total)(a, b), a @ b, rtol=1e-12)
    H = sa.dims("H")
    with pytest.raises(LoweringError, match=r"the head index h occurs where no head axis is set up"):
        sa.lower(sa.head_sum(A[:, sa.h - 1:sa.h] * B[sa.h - 1:sa.h, :], H))  # H columns of A: not known to exist
