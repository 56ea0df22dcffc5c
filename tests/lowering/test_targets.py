"""Kernels for PyTorch, JAX and Dask (``lower(expr, target=...)``) against the libraries' own attention."""

import numpy as np
import pytest
import sympy as sp

import symattn as sa
from symattn.defs.numeric_nodes import row_causal_mask
from symattn.errors import InputError, LoweringError, ShapeError
from symattn.lowering.targets.build import build_target_source

n, m, d_k, d_v = sa.dims("n m d_k d_v")
Q, K, V = sp.MatrixSymbol("Q", n, d_k), sp.MatrixSymbol("K", m, d_k), sp.MatrixSymbol("V", m, d_v)
ROW = sa.attention(Q, K, V, convention="row")


def causal_row(q, k, v):
    """softmax(Q Kᵀ/sqrt(d_k) + causal mask) V, the mask bottom-right aligned."""
    return sa.softmax(q * k.T / sp.sqrt(d_k) + row_causal_mask(q.rows, k.rows), 1) * v
TARGETS = ("array-api", "torch", "jax")


def _inputs(seed=0, batch=(2, 3), sizes=(5, 7, 4, 6), dtype=np.float64):
    rng = np.random.default_rng(seed)
    nn_, mm_, dk, dv = sizes
    return [rng.standard_normal(batch + s).astype(dtype) for s in ((nn_, dk), (mm_, dk), (mm_, dv))]


def test_array_api_kernel_equals_numpy_kernel_on_numpy_arrays():
    q, k, v = _inputs()
    got = sa.lower(ROW, args=[Q, K, V], target="array-api")(q, k, v)
    want = sa.lower(ROW, args=[Q, K, V])(q, k, v)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("target", ["array-api", "torch"])
@pytest.mark.parametrize("causal", [False, True])
def test_torch_kernel_equals_scaled_dot_product_attention(target, causal):
    torch = pytest.importorskip("torch")
    if target == "array-api":
        pytest.importorskip("array_api_compat")
    KK, VV = (sp.MatrixSymbol(x.name, n, x.cols) for x in (K, V)) if causal else (K, V)
    expr = causal_row(Q, KK, VV) if causal else ROW
    q, k, v = (torch.tensor(a) for a in _inputs(1, sizes=(6, 6, 4, 5) if causal else (5, 7, 4, 6)))
    got = sa.lower(expr, args=[Q, KK, VV], target=target)(q, k, v)
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64 and got.device == q.device
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)


def test_torch_kernel_keeps_float32_and_reads_numpy_inputs():
    torch = pytest.importorskip("torch")
    q, k, v = _inputs(2, dtype=np.float32)
    kernel = sa.lower(ROW, args=[Q, K, V], target="torch")
    got = kernel(Q=q, K=torch.tensor(k), V=torch.tensor(v))
    assert got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), sa.lower(ROW, args=[Q, K, V])(q, k, v), rtol=2e-5, atol=2e-6)


def test_torch_bottom_right_causal_mask_when_queries_are_fewer_than_keys():
    """The project's causal mask lets query i of the last n of m positions see keys j <= i + m - n."""
    torch = pytest.importorskip("torch")
    expr = causal_row(Q, K, V)
    q, k, v = (torch.tensor(a) for a in _inputs(3, sizes=(3, 7, 4, 5)))
    got = sa.lower(expr, args=[Q, K, V], target="torch")(q, k, v)
    want = sa.lower(expr, args=[Q, K, V])(q.numpy(), k.numpy(), v.numpy())
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    top_left = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert not torch.allclose(got, top_left)  # SDPA's is_causal would be a different mask


def _torch_mha(torch, d_model=8, H=2, seed=0):
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(d_model, H, batch_first=True, dtype=torch.float64)
    W, b = mha.in_proj_weight.detach(), mha.in_proj_bias.detach()
    w = [W[i * d_model:(i + 1) * d_model].T for i in range(3)] + [mha.out_proj.weight.detach().T]
    bias = [b[i * d_model:(i + 1) * d_model][None] for i in range(3)] + [mha.out_proj.bias.detach()[None]]
    return mha, w, bias


@pytest.mark.parametrize("target", ["torch", "array-api"])
@pytest.mark.parametrize("case", ["self", "cross", "causal"])
def test_generated_multihead_equals_nn_multihead_attention(target, case):
    torch = pytest.importorskip("torch")
    if target == "array-api":
        pytest.importorskip("array_api_compat")
    from symattn.lowering.targets.multihead import multihead_attention

    mha, (wq, wk, wv, wo), (bq, bk, bv, bo) = _torch_mha(torch)
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    y = torch.randn(3, 7, 8, dtype=torch.float64) if case == "cross" else x
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64) if case == "causal" else None
    want = mha(x, y, y, need_weights=False, attn_mask=mask)[0]
    got = multihead_attention(x, y, y, wq, wk, wv, wo, num_heads=2, b_q=bq, b_k=bk, b_v=bv, b_o=bo,
                              causal=case == "causal", target=target)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("causal", [False, True])
def test_jax_kernel_equals_jax_dot_product_attention(causal):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    expr = causal_row(Q, K, V) if causal else ROW
    q, k, v = (jnp.asarray(a) for a in _inputs(4, batch=(2,), sizes=(6, 6, 4, 4) if causal else (5, 7, 4, 4)))
    kernel = sa.lower(expr, args=[Q, K, V], target="jax")
    got = kernel(q, k, v)
    # jax.nn.dot_product_attention takes (batch, length, heads, dim)
    want = jax.nn.dot_product_attention(*(a[:, :, None, :] for a in (q, k, v)), is_causal=causal)[:, :, 0, :]
    assert got.dtype == jnp.float64
    # jax.nn.dot_product_attention always takes its softmax in float32 (its source says so), so
    # agreement with it is float32's; float64's is checked against jax.nn.softmax in float64
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    scores = q @ jnp.swapaxes(k, -1, -2) / 2.0 + (jnp.where(jnp.triu(jnp.ones((6, 6)), 1) > 0, -jnp.inf, 0.0)
                                                   if causal else 0.0)
    exact = jax.nn.softmax(scores, axis=-1) @ v
    np.testing.assert_allclose(np.asarray(got), np.asarray(exact), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.asarray(jax.jit(kernel.fn)(q, k, v)), np.asarray(exact), rtol=1e-10, atol=1e-10)


def test_array_api_kernel_on_dask_is_lazy_and_equals_numpy():
    da = pytest.importorskip("dask.array")
    pytest.importorskip("array_api_compat")
    q, k, v = _inputs(5, batch=(6,))
    lazy = [da.from_array(a, chunks=(2,) + a.shape[1:]) for a in (q, k, v)]
    got = sa.lower(ROW, args=[Q, K, V], target="array-api")(*lazy)
    assert isinstance(got, da.Array) and got.chunks[0] == (2, 2, 2)
    np.testing.assert_allclose(got.compute(), sa.lower(ROW, args=[Q, K, V])(q, k, v), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("target", TARGETS)
def test_target_kernels_of_a_block_matrix_sum_and_column_convention(target):
    """Nodes beyond attention: a block matrix, a transposed product chain, a bias row, column softmax."""
    pytest.importorskip({"torch": "torch", "jax": "jax", "array-api": "array_api_compat"}[target])
    if target == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
    A, B = sp.MatrixSymbol("A", n, d_k), sp.MatrixSymbol("B", n, d_k)
    W = sp.MatrixSymbol("W", d_k, d_v)
    b = sp.MatrixSymbol("b", 1, d_v)
    expr = sp.BlockMatrix([[A, B]]) * sp.BlockMatrix([[W], [W]]) / 3 + sp.OneMatrix(n, 1) * b
    expr = sa.softmax(expr.T, 0).T + sa.attention(A.T, B.T, (A * W).T).T
    rng = np.random.default_rng(6)
    arrays = {"A": rng.standard_normal((2, 4, 3)), "B": rng.standard_normal((4, 3)),
              "W": rng.standard_normal((3, 5)), "b": rng.standard_normal((1, 5))}
    want = sa.lower(expr)(**arrays)
    got = sa.lower(expr, target=target)(**arrays)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_target_errors_name_the_operand():
    torch = pytest.importorskip("torch")
    kernel = sa.lower(ROW, args=[Q, K, V], target="torch")
    q, k, v = _inputs()
    with pytest.raises(InputError, match="K: attention kernels work on real floating-point"):
        kernel(q, k.astype(np.int64), v)
    with pytest.raises(ShapeError, match="dimension m: K has 7 rows but V has 6 rows"):
        kernel(q, k, v[..., :6, :])
    with pytest.raises(InputError, match="array-API kernels return a new array"):
        kernel(q, k, v, out=torch.empty(1))
    with pytest.raises(LoweringError, match="unknown target 'cupy'"):
        sa.lower(ROW, args=[Q, K, V], target="cupy")


def test_a_node_with_only_a_numpy_lowering_is_refused_for_a_target():
    """A printer method that emits NumPy code cannot silently reach a torch or JAX kernel."""
    from symattn.lowering.targets import build as targets

    class Leaky(targets.TargetPrinter):
        def _print_Softmax(self, e):
            return self.emit(e, f"np.exp({self._print(e.arg)[0]})")

    old = targets.TargetPrinter
    targets.TargetPrinter = Leaky
    try:
        with pytest.raises(LoweringError, match="has only a NumPy lowering"):
            build_target_source(ROW, [Q, K, V], "jax")
    finally:
        targets.TargetPrinter = old
