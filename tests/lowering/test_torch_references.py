"""Cross-checks against PyTorch: nn.MultiheadAttention and F.scaled_dot_product_attention."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import symattn.numeric as sn

torch = pytest.importorskip("torch")
F = torch.nn.functional

DTYPES = {np.float32: (torch.float32, 2e-5), np.float64: (torch.float64, 1e-11)}


def torch_mha(E, H, dtype, seed):
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(E, H, batch_first=True, bias=True, dtype=dtype)
    with torch.no_grad():
        torch.nn.init.normal_(mha.in_proj_bias)
        torch.nn.init.normal_(mha.out_proj.bias)
    W = mha.in_proj_weight.detach().numpy()
    B = mha.in_proj_bias.detach().numpy()
    ours = dict(w_q=W[:E].T, w_k=W[E:2 * E].T, w_v=W[2 * E:].T, w_o=mha.out_proj.weight.detach().numpy().T,
                b_q=B[:E], b_k=B[E:2 * E], b_v=B[2 * E:], b_o=mha.out_proj.bias.detach().numpy())
    return mha, ours


shapes = st.fixed_dictionaries({
    "batch": st.lists(st.integers(1, 5), min_size=1, max_size=2).map(tuple),  # 4 or more: one item per element
    "n": st.integers(1, 9), "heads": st.sampled_from([1, 2, 4]), "d_head": st.integers(1, 4),
    "causal": st.booleans(), "self": st.booleans(), "seed": st.integers(0, 2**16),
    "dtype": st.sampled_from([np.float32, np.float64]),
})


@settings(max_examples=25, deadline=None)
@given(shapes)
# more batch elements than queries, on the path that runs whole elements as work items
@example({"batch": (2, 4), "n": 1, "heads": 1, "d_head": 1, "causal": False, "self": True, "seed": 0,
          "dtype": np.float32})
@example({"batch": (5,), "n": 2, "heads": 2, "d_head": 3, "causal": True, "self": True, "seed": 1,
          "dtype": np.float64})
def test_multihead_attention_matches_torch_multihead_attention(s):
    H, E = s["heads"], s["heads"] * s["d_head"]
    tdtype, tol = DTYPES[s["dtype"]]
    mha, w = torch_mha(E, H, tdtype, s["seed"])
    rng = np.random.default_rng(s["seed"])
    n = s["n"]
    m = n if (s["self"] or s["causal"]) else rng.integers(1, 9)
    x = rng.normal(size=s["batch"] + (n, E)).astype(s["dtype"])
    kv = x if s["self"] else rng.normal(size=s["batch"] + (m, E)).astype(s["dtype"])
    got = sn.multihead_attention(x, kv, kv, num_heads=H, causal=s["causal"], **w)
    flat = lambda a: torch.from_numpy(np.ascontiguousarray(a.reshape((-1,) + a.shape[-2:])))  # noqa: E731
    mask = torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=tdtype) if s["causal"] else None
    with torch.no_grad():
        want = mha(flat(x), flat(kv), flat(kv), need_weights=False, attn_mask=mask, is_causal=s["causal"])[0]
    assert got.dtype == s["dtype"]
    np.testing.assert_allclose(got, want.numpy().reshape(got.shape), rtol=tol, atol=tol)


@settings(max_examples=20, deadline=None)
@given(batch=st.integers(1, 6), n=st.integers(1, 8), G=st.sampled_from([1, 2]), r=st.sampled_from([1, 2, 3]),
       d_k=st.integers(1, 4), causal=st.booleans(), seed=st.integers(0, 2**16),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_grouped_query_attention_matches_torch_sdpa_with_its_own_projections(batch, n, G, r, d_k, causal,
                                                                             seed, dtype):
    H = G * r
    d_model = 6
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, n, d_model)).astype(dtype)
    w_q, w_k, w_v = (rng.normal(size=(d_model, c * d_k)).astype(dtype) for c in (H, G, G))
    w_o = rng.normal(size=(H * d_k, d_model)).astype(dtype)
    got = sn.multihead_attention(x, x, x, w_q, w_k, w_v, w_o, num_heads=H, num_kv_heads=G, causal=causal)
    t = torch.from_numpy
    heads = lambda a, c: a.reshape(batch, n, c, d_k).transpose(1, 2)  # noqa: E731
    q, k, v = heads(t(x) @ t(w_q), H), heads(t(x) @ t(w_k), G), heads(t(x) @ t(w_v), G)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    want = o.transpose(1, 2).reshape(batch, n, H * d_k) @ t(w_o)
    tol = DTYPES[dtype][1]
    np.testing.assert_allclose(got, want.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_kernel_matches_torch_sdpa_causal(dtype):
    rng = np.random.default_rng(7)
    q, k, v = (rng.normal(size=(2, 3, 40, 8)).astype(dtype) for _ in range(3))
    want = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)), is_causal=True)
    got = sn.blocked_core(q / np.sqrt(8).astype(dtype), k, v, causal=True, block_size=16, tile=12)
    tol = DTYPES[dtype][1]
    np.testing.assert_allclose(got, want.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_pool_matches_torch_multihead_attention_with_one_query(dtype):
    E, H = 16, 4
    mha, w = torch_mha(E, H, DTYPES[dtype][0], 3)
    rng = np.random.default_rng(3)
    x, q = rng.normal(size=(5, 11, E)).astype(dtype), rng.normal(size=E).astype(dtype)
    got = sn.attention_pool(x, q, num_heads=H, **w)
    with torch.no_grad():
        want = mha(torch.from_numpy(np.broadcast_to(q, (5, 1, E)).copy()), torch.from_numpy(x),
                   torch.from_numpy(x), need_weights=False)[0]
    tol = DTYPES[dtype][1]
    np.testing.assert_allclose(got, want.numpy(), rtol=tol, atol=tol)
