"""``symattn.jax``: ``jax.nn.dot_product_attention``'s conventions, from proved kernels.

References: ``jax.nn.dot_product_attention`` itself in float32 (it accumulates in float32), and in
float64 a direct ``jax.nn.softmax`` formula written here under ``jax.jit``; gradients by ``jax.grad``
of both; multi-head attention against ``torch.nn.MultiheadAttention`` with its own weights.
"""

import subprocess
import sys

import numpy as np
import pytest

from symattn.errors import HeadError, InputError, ShapeError

jax = pytest.importorskip("jax")
jnp = jax.numpy
sj = pytest.importorskip("symattn.jax")

B, T, S, N, H = 2, 5, 7, 4, 8


def arrays(K=N, T=T, S=S, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, T, N, H))
    k, v = rng.standard_normal((B, S, K, H)), rng.standard_normal((B, S, K, H))
    bias = rng.standard_normal((1, N, T, S))
    mask = rng.random((B, 1, T, S)) > 0.3
    return [jnp.asarray(x, dtype) for x in (q, k, v, bias)] + [jnp.asarray(mask)]


CASES = {
    "plain": {},
    "bias": {"bias": True},
    "mask": {"mask": True},
    "causal": {"is_causal": True},
    "all": {"bias": True, "mask": True, "is_causal": True},
    "scale": {"scale": 0.3},
    "window": {"local_window_size": (2, 1)},
    "lengths": {"key_value_seq_lengths": np.array([3, 7]), "query_seq_lengths": np.array([5, 4])},
}


def options(kw, bias, mask):
    out = {k: v for k, v in kw.items() if k not in ("bias", "mask")}
    if kw.get("bias"):
        out["bias"] = bias
    if kw.get("mask"):
        out["mask"] = mask
    return out


def direct(q, k, v, bias=None, mask=None, *, scale=None, is_causal=False):
    """softmax(scale q kᵀ + bias, masked) v per head, written out with jax.nn.softmax (GQA by repeat)."""
    g = q.shape[2] // k.shape[2]
    k, v = jnp.repeat(k, g, axis=2), jnp.repeat(v, g, axis=2)
    c = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = jnp.einsum("btnh,bsnh->bnts", q, k) * c
    if bias is not None:
        s = s + bias
    keep = jnp.ones(s.shape, bool)
    if mask is not None:
        keep = keep & mask
    if is_causal:
        keep = keep & jnp.tril(jnp.ones(s.shape[-2:], bool))
    s = jnp.where(keep, s, -0.7 * float(np.finfo(np.float32).max))
    return jnp.einsum("bnts,bsnh->btnh", jax.nn.softmax(s, axis=-1), v)


@pytest.mark.parametrize("K", [N, 2, 1], ids=["MHA", "GQA", "MQA"])
@pytest.mark.parametrize("case", list(CASES))
def test_float32_equals_jax_dot_product_attention(case, K):
    q, k, v, bias, mask = arrays(K)
    kw = options(CASES[case], bias, mask)
    ours = jax.jit(lambda a, b, c: sj.dot_product_attention(a, b, c, **kw))(q, k, v)
    want = jax.nn.dot_product_attention(q, k, v, **kw)
    assert ours.shape == want.shape and ours.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(ours), np.asarray(want), rtol=1e-5, atol=2e-6)


def test_causal_with_fewer_queries_than_keys_is_top_left_as_jax():
    q, k, v, _, _ = arrays(T=3, S=6)
    ours = sj.dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(jax.nn.dot_product_attention(q, k, v, is_causal=True)),
                               rtol=1e-5, atol=2e-6)


def test_unbatched_inputs_as_jax():
    q, k, v, _, _ = arrays(K=2)
    ours = sj.dot_product_attention(q[0], k[0], v[0])
    assert ours.shape == (T, N, H)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(jax.nn.dot_product_attention(q[0], k[0], v[0])),
                               rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("K", [N, 2])
@pytest.mark.parametrize("case", ["plain", "bias", "mask", "causal", "all"])
def test_float64_equals_the_softmax_formula_and_so_do_the_gradients(case, K):
    with jax.enable_x64(True):
        q, k, v, bias, mask = arrays(K, dtype=np.float64, seed=1)
        kw = options(CASES[case], bias, mask)
        ours = jax.jit(lambda a, b, c: sj.dot_product_attention(a, b, c, **kw))(q, k, v)
        want = jax.jit(lambda a, b, c: direct(a, b, c, **kw))(q, k, v)
        assert ours.dtype == jnp.float64
        np.testing.assert_allclose(np.asarray(ours), np.asarray(want), rtol=1e-12, atol=1e-13)

        def loss(f):
            return lambda a, b, c: jnp.sum(jnp.tanh(f(a, b, c, **kw)))

        g_ours = jax.jit(jax.grad(loss(sj.dot_product_attention), argnums=(0, 1, 2)))(q, k, v)
        g_want = jax.grad(loss(direct), argnums=(0, 1, 2))(q, k, v)
        for a, b in zip(g_ours, g_want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


def test_float32_gradients_equal_jax_dot_product_attention_gradients():
    q, k, v, bias, mask = arrays(K=2, seed=2)

    def loss(f):
        return lambda a, b, c, m: jnp.sum(f(a, b, c, bias=m, mask=mask, is_causal=True) ** 2)

    ours = jax.jit(jax.grad(loss(sj.dot_product_attention), argnums=(0, 1, 2, 3)))(q, k, v, bias)
    want = jax.grad(loss(jax.nn.dot_product_attention), argnums=(0, 1, 2, 3))(q, k, v, bias)
    for a, b in zip(ours, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)


def test_vmap_over_a_leading_axis_equals_the_batched_call():
    q, k, v, _, _ = arrays(K=2, seed=3)
    per = jax.vmap(lambda a, b, c: sj.dot_product_attention(a, b, c, is_causal=True))(q, k, v)  # unbatched each
    np.testing.assert_allclose(np.asarray(per), np.asarray(sj.dot_product_attention(q, k, v, is_causal=True)),
                               rtol=1e-6, atol=1e-6)


def test_bfloat16_accumulates_in_float32():
    q, k, v, _, _ = arrays(seed=4)
    q16, k16, v16 = (x.astype(jnp.bfloat16) for x in (q, k, v))
    ours = sj.dot_product_attention(q16, k16, v16)
    assert ours.dtype == jnp.bfloat16
    want = jax.nn.dot_product_attention(q16, k16, v16)
    np.testing.assert_allclose(np.asarray(ours, np.float32), np.asarray(want, np.float32), rtol=2e-2, atol=2e-2)


def _torch_reference(seed, kv_heads=None):
    torch = pytest.importorskip("torch")
    E, heads, L, Sk = 8, 2, 4, 6
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(E, heads, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    x = torch.randn(2, L, E, dtype=torch.float64)
    y = torch.randn(2, Sk, E, dtype=torch.float64)
    W, b = mha.in_proj_weight.detach().numpy(), mha.in_proj_bias.detach().numpy()
    weights = dict(w_q=W[:E].T, w_k=W[E:2 * E].T, w_v=W[2 * E:].T, w_o=mha.out_proj.weight.detach().numpy().T,
                   b_q=b[:E], b_k=b[E:2 * E], b_v=b[2 * E:], b_o=mha.out_proj.bias.detach().numpy())
    return torch, mha, x, y, weights, heads


@pytest.mark.parametrize("causal", [False, True])
def test_multihead_attention_equals_torch_multihead_attention(causal):
    torch, mha, x, y, weights, heads = _torch_reference(0)
    with jax.enable_x64(True):
        w = {k: jnp.asarray(v) for k, v in weights.items()}
        if causal:
            X = jnp.asarray(x.numpy())
            ours = jax.jit(lambda a: sj.multihead_attention(a, a, a, num_heads=heads, is_causal=True, **w))(X)
            blocked = torch.ones(4, 4, dtype=torch.bool).triu(1)
            want = mha(x, x, x, attn_mask=blocked, need_weights=False)[0]
        else:
            X, Y = jnp.asarray(x.numpy()), jnp.asarray(y.numpy())
            ours = jax.jit(lambda a, b: sj.multihead_attention(a, b, b, num_heads=heads, **w))(X, Y)
            want = mha(x, y, y, need_weights=False)[0]
        np.testing.assert_allclose(np.asarray(ours), want.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_multihead_gradients_equal_torch_autograd():
    torch, mha, x, y, weights, heads = _torch_reference(1)
    with jax.enable_x64(True):
        w = {k: jnp.asarray(v) for k, v in weights.items()}
        X, Y = jnp.asarray(x.numpy()), jnp.asarray(y.numpy())

        def loss(a, b, wq):
            return jnp.sum(sj.multihead_attention(a, b, b, num_heads=heads, **{**w, "w_q": wq}) ** 2)

        gx, gy, gwq = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(X, Y, w["w_q"])
        xt, yt = x.clone().requires_grad_(), y.clone().requires_grad_()
        (mha(xt, yt, yt, need_weights=False)[0] ** 2).sum().backward()
        np.testing.assert_allclose(np.asarray(gx), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.asarray(gy), yt.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.asarray(gwq), mha.in_proj_weight.grad[:8].numpy().T, rtol=1e-10, atol=1e-12)


def test_multihead_gqa_equals_the_formula_with_repeated_heads():
    with jax.enable_x64(True):
        rng = np.random.default_rng(5)
        E, Nq, Kv, h = 8, 4, 2, 2
        x = jnp.asarray(rng.standard_normal((3, 5, E)))
        w = dict(w_q=rng.standard_normal((E, Nq * h)), w_k=rng.standard_normal((E, Kv * h)),
                 w_v=rng.standard_normal((E, Kv * h)), w_o=rng.standard_normal((Nq * h, E)))
        w = {k: jnp.asarray(v) for k, v in w.items()}
        ours = sj.multihead_attention(x, x, x, num_heads=Nq, num_kv_heads=Kv, is_causal=True, **w)
        split = lambda a, heads: a.reshape(3, 5, heads, h)  # noqa: E731
        z = direct(split(x @ w["w_q"], Nq), split(x @ w["w_k"], Kv), split(x @ w["w_v"], Kv), is_causal=True)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(z.reshape(3, 5, Nq * h) @ w["w_o"]),
                                   rtol=1e-12, atol=1e-12)


def test_provenance_names_the_theorem_of_each_step():
    steps = {s.step: s for s in sj.provenance("multihead_attention")}
    core = steps["attention core softmax(Q Kᵀ + M) V"]
    assert (core.theorem, core.claim, core.status) == ("scale_folds_into_query_projection", 1, "proved")
    assert steps["output projection after the heads are side by side"].theorem == \
        "heads_concatenate_before_output_projection"
    assert steps["masks"].theorem is None  # code, said plainly
    assert "fused_qkv_projection" in {s.theorem for s in sj.provenance("multihead_attention")}
    assert "fused_qkv_projection" not in {s.theorem for s in sj.provenance("dot_product_attention")}


def test_errors_name_the_operand_and_its_shape():
    q, k, v, _, _ = arrays()
    with pytest.raises(ShapeError, match=r"key \(2, 7, 4, 8\) and value \(2, 6, 4, 8\)"):
        sj.dot_product_attention(q, k, v[:, :6])
    with pytest.raises(HeadError, match="N = 4 heads, key and value K = 3"):
        sj.dot_product_attention(q, k[:, :, :3], v[:, :, :3])
    with pytest.raises(InputError, match="mask: a boolean array"):
        sj.dot_product_attention(q, k, v, mask=jnp.zeros((B, N, T, S)))
    with pytest.raises(ShapeError, match=r"bias: shape \(1, 3, 5, 7\) does not broadcast"):
        sj.dot_product_attention(q, k, v, bias=jnp.zeros((1, 3, T, S)))
    with pytest.raises(HeadError, match="num_kv_heads = 3 must divide num_heads = 4"):
        sj.multihead_attention(q, q, q, q, q, q, q, num_heads=4, num_kv_heads=3)


def test_import_symattn_does_not_import_jax():
    code = "import sys, symattn, symattn.jax; assert 'jax' not in sys.modules, 'jax imported'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("case", ["plain", "all"])
def test_the_proved_vjp_of_the_core_equals_jax_grad_of_the_formula(case):
    with jax.enable_x64(True):
        q, k, v, bias, mask = arrays(K=2, dtype=np.float64, seed=6)
        kw = options(CASES[case], bias, mask)

        def loss(f, **more):
            return lambda a, b, c: jnp.sum(jnp.tanh(f(a, b, c, **kw, **more)))

        ours = jax.jit(jax.grad(loss(sj.dot_product_attention, vjp="proved"), argnums=(0, 1, 2)))(q, k, v)
        want = jax.grad(loss(direct), argnums=(0, 1, 2))(q, k, v)
        for a, b in zip(ours, want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)
    from symattn.lowering.jax_layers import _core

    proved = _core("core_mask" if case == "all" else "core", "proved")
    assert [g.status for g in proved.gradients] == ["proved"] * len(proved.arg_names)
