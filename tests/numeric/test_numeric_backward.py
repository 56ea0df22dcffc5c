"""The NumPy backward of multi-head attention: proved line by line, equal to torch autograd, blocked.

- every statement of ``symattn.numeric.backward_proofs`` is proved (general) by the prover here, and
  a slip in one (D dropped from dS) is refuted, so the check is not vacuous;
- ``multihead_attention_backward`` against torch autograd of ``nn.MultiheadAttention`` (its weights
  set from ours) and of ``F.scaled_dot_product_attention`` with projections: float64 to 1e-10
  (relative to the largest entry of each gradient), float32 to 2e-4; biases, causal and additive
  masks, GQA/MQA, batch axes, block sizes that do and do not divide m;
- masked scores get exactly zero gradient; the forward's saved log-sum-exp is right on the
  shifted path too;
- memory: at n = m = 4096 the backward's peak (tracemalloc) stays far below one (heads, n, m)
  array of scores.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest

import symattn.numeric as sn
from symattn.errors import InputError, ShapeError
from symattn.numeric import backward_proofs as bp

torch = pytest.importorskip("torch")
F = torch.nn.functional


# --- the proofs -----------------------------------------------------------------------------------


def test_every_line_is_backed_by_statements_that_exist():
    backed = {name for names in bp.LINES.values() for name in names}
    assert backed <= set(bp.STATEMENTS)
    assert set(bp.STATEMENTS) == set(bp.claims()) == backed


@pytest.mark.parametrize("name", sorted(bp.STATEMENTS))
def test_statement_is_proved(name):
    v = bp.prove(name)
    assert v.status == "proved", (name, v.status, v.trace)
    assert v.general, (name, v.scope)


def test_a_slip_is_refuted():
    """dS without the D term (the dropped diagonal of the softmax Jacobian) is no VJP."""
    import sympy as sp

    import symattn as sa

    n, m, d, e = sa.dims("n m d e")
    Qs, Ks, Vs = sp.MatrixSymbol("Q", n, d), sp.MatrixSymbol("K", m, d), sp.MatrixSymbol("V", m, e)
    Gs = sp.MatrixSymbol("G", n, e)
    P = sa.softmax(Qs * Ks.T / sp.sqrt(d), axis=1)
    wrong = sp.HadamardProduct(P, Gs * Vs.T) * Ks / sp.sqrt(d)
    assert sa.verify_gradient(P * Vs, Qs, wrong, Gs).status == "refuted"


# --- against torch autograd ------------------------------------------------------------------------


def _weights(rng, E, H, G, d, dtype, biased):
    W = {"w_q": rng.normal(size=(E, H * d)) / np.sqrt(E), "w_k": rng.normal(size=(E, G * d)) / np.sqrt(E),
         "w_v": rng.normal(size=(E, G * d)) / np.sqrt(E), "w_o": rng.normal(size=(H * d, E)) / np.sqrt(H * d)}
    widths = {"b_q": H * d, "b_k": G * d, "b_v": G * d, "b_o": E}
    b = {nm: rng.normal(size=w) if biased else None for nm, w in widths.items()}
    cast = {nm: None if a is None else a.astype(dtype) for nm, a in {**W, **b}.items()}
    return {nm: cast[nm] for nm in W}, {nm: cast[nm] for nm in b}


def _sdpa_reference(xq, xk, xv, W, b, H, G, dout, causal=False, mask=None):
    """out and the gradients by torch autograd of SDPA with the projections."""
    t = {nm: torch.tensor(a, requires_grad=True) for nm, a in
         {"query": xq, "key": xk, "value": xv, **W, **{k: v for k, v in b.items() if v is not None}}.items()}

    def project(x, w, bias, heads):
        y = t[x] @ t[w] + (t[bias] if bias in t else 0)
        return y.unflatten(-1, (heads, -1)).transpose(-2, -3)

    q, k, v = project("query", "w_q", "b_q", H), project("key", "w_k", "b_k", G), project("value", "w_v", "b_v", G)
    n, m = q.shape[-2], k.shape[-2]
    if causal and n != m:  # symattn's causal mask is aligned bottom-right (j <= i + m - n), torch's top-left
        mask, causal = np.where(np.arange(m)[None, :] <= np.arange(n)[:, None] + m - n, 0.0, -np.inf), False
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else torch.tensor(mask),
                                       is_causal=causal, enable_gqa=G != H)
    out = o.transpose(-2, -3).flatten(-2) @ t["w_o"] + (t["b_o"] if "b_o" in t else 0)
    out.backward(torch.tensor(dout))
    return out.detach().numpy(), {nm: a.grad.numpy() for nm, a in t.items()}


def _close(g, want, tol):
    for name, ref in want.items():
        got = getattr(g, name)
        scale = max(1.0, float(np.abs(ref).max()))
        err = float(np.abs(got - ref).max()) / scale
        assert err <= tol, (name, err)
    for name in ("b_q", "b_k", "b_v", "b_o"):
        if name not in want:
            assert getattr(g, name) is None


CASES = [  # (batch, n, m, d_model, H, G, causal, block_size, biased)
    ((2,), 7, 7, 16, 4, 4, False, None, False),
    ((2,), 9, 9, 16, 4, 2, True, 4, True),            # GQA, causal, blocks of 4 (9 = 2·4 + 1)
    ((1,), 300, 300, 32, 2, 1, True, 64, True),       # MQA, several blocks, 300 not a multiple of 64
    ((2, 3), 5, 11, 8, 2, 2, False, 3, True),          # two batch axes, cross-attention, n != m
    ((), 33, 70, 24, 3, 3, True, 16, True),            # no batch axis, causal with m > n
]


@pytest.mark.parametrize("case", CASES)
def test_float64_matches_sdpa_autograd(case):
    lead, n, m, E, H, G, causal, block, biased = case
    rng = np.random.default_rng(hash(case) % 2**32)
    d = 8 if E % (8 * H) == 0 else E // H
    xq, xk, xv = rng.normal(size=lead + (n, E)), rng.normal(size=lead + (m, E)), rng.normal(size=lead + (m, E))
    W, b = _weights(rng, E, H, G, d, np.float64, biased)
    opts = dict(num_heads=H, num_kv_heads=G, causal=causal, block_size=block, **b)
    out, saved = sn.multihead_attention(xq, xk, xv, **W, return_saved=True, **opts)
    dout = rng.normal(size=out.shape)
    g = sn.multihead_attention_backward(dout, saved, xq, xk, xv, **W, **opts)
    want_out, want = _sdpa_reference(xq, xk, xv, W, b, H, G, dout, causal=causal)
    np.testing.assert_allclose(out, want_out, atol=1e-10)
    _close(g, want, 1e-10)


def test_float64_additive_and_boolean_masks_match_sdpa_autograd():
    rng = np.random.default_rng(5)
    lead, n, m, E, H = (2,), 12, 17, 16, 2
    xq, xk, xv = rng.normal(size=lead + (n, E)), rng.normal(size=lead + (m, E)), rng.normal(size=lead + (m, E))
    W, b = _weights(rng, E, H, H, E // H, np.float64, True)
    additive = rng.normal(size=lead + (H, n, m))
    additive[..., 3] = -np.inf  # key 3 removed for every query
    keep = rng.random((n, m)) > 0.3
    keep[:, 0] = True
    for mask, ref_mask in ((additive, additive), (keep, np.where(keep, 0.0, -np.inf))):
        for block in (None, 5):
            out, saved = sn.multihead_attention(xq, xk, xv, **W, **b, num_heads=H, mask=mask, block_size=block,
                                                return_saved=True)
            dout = rng.normal(size=out.shape)
            g = sn.multihead_attention_backward(dout, saved, xq, xk, xv, **W, **b, num_heads=H, mask=mask,
                                                block_size=block)
            want_out, want = _sdpa_reference(xq, xk, xv, W, b, H, H, dout, mask=ref_mask)
            np.testing.assert_allclose(out, want_out, atol=1e-10)
            _close(g, want, 1e-10)
    # a key that every query's mask removes gets exactly zero gradient (key and value rows)
    out, saved = sn.multihead_attention(xq, xk, xv, **W, num_heads=H, mask=additive, return_saved=True)
    g = sn.multihead_attention_backward(np.ones_like(out), saved, xq, xk, xv, **W, num_heads=H, mask=additive)
    assert np.all(g.key[..., 3, :] == 0) and np.all(g.value[..., 3, :] == 0)


def test_float64_matches_nn_multihead_attention():
    rng = np.random.default_rng(7)
    B, n, E, H = 3, 20, 32, 4
    mha = torch.nn.MultiheadAttention(E, H, bias=True, batch_first=True, dtype=torch.float64)
    x = rng.normal(size=(B, n, E))
    Wi, bi = mha.in_proj_weight.detach().numpy(), mha.in_proj_bias.detach().numpy()
    W = {"w_q": Wi[:E].T.copy(), "w_k": Wi[E:2 * E].T.copy(), "w_v": Wi[2 * E:].T.copy(),
         "w_o": mha.out_proj.weight.detach().numpy().T.copy()}
    b = {"b_q": bi[:E], "b_k": bi[E:2 * E], "b_v": bi[2 * E:], "b_o": mha.out_proj.bias.detach().numpy()}
    causal = np.triu(np.full((n, n), -np.inf), 1)
    for mask in (None, causal):
        xt = torch.tensor(x, requires_grad=True)
        mha.zero_grad()
        yt, _ = mha(xt, xt, xt, need_weights=False, attn_mask=None if mask is None else torch.tensor(mask))
        dout = rng.normal(size=yt.shape)
        yt.backward(torch.tensor(dout))
        kw = dict(num_heads=H, causal=mask is not None, block_size=7, **b)
        out, saved = sn.multihead_attention(x, x, x, **W, return_saved=True, **kw)
        np.testing.assert_allclose(out, yt.detach().numpy(), atol=1e-10)
        g = sn.multihead_attention_backward(dout, saved, x, x, x, **W, **kw)
        gw, gb = mha.in_proj_weight.grad.numpy(), mha.in_proj_bias.grad.numpy()
        want = {"w_q": gw[:E].T, "w_k": gw[E:2 * E].T, "w_v": gw[2 * E:].T, "w_o": mha.out_proj.weight.grad.numpy().T,
                "b_q": gb[:E], "b_k": gb[E:2 * E], "b_v": gb[2 * E:], "b_o": mha.out_proj.bias.grad.numpy()}
        _close(g, want, 1e-10)
        np.testing.assert_allclose(g.query + g.key + g.value, xt.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("block", [None, 48])
def test_float32_matches_sdpa_autograd(block):
    rng = np.random.default_rng(11)
    lead, n, E, H, G = (2,), 130, 64, 4, 2
    x = rng.normal(size=lead + (n, E)).astype(np.float32)
    W, b = _weights(rng, E, H, G, E // H, np.float32, True)
    opts = dict(num_heads=H, num_kv_heads=G, causal=True, block_size=block, **b)
    out, saved = sn.multihead_attention(x, x, x, **W, return_saved=True, **opts)
    assert saved.lse.dtype == np.float32
    dout = rng.normal(size=out.shape).astype(np.float32)
    g = sn.multihead_attention_backward(dout, saved, x, x, x, **W, **opts)
    assert g.w_q.dtype == np.float32 and g.query.dtype == np.float32
    _, want = _sdpa_reference(x.astype(np.float64), x.astype(np.float64), x.astype(np.float64),
                              {k: a.astype(np.float64) for k, a in W.items()},
                              {k: a.astype(np.float64) for k, a in b.items()}, H, G, dout.astype(np.float64),
                              causal=True)
    _close(g, want, 2e-4)


def test_saved_lse_on_the_shifted_path():
    """Scores large enough that the forward's unshifted tiles fall back to the row max: the saved
    L is still log Σ exp(s), and the gradients still match."""
    rng = np.random.default_rng(3)
    n, E, H = 40, 16, 2
    x = rng.normal(size=(1, n, E))
    W, b = _weights(rng, E, H, H, E // H, np.float64, False)
    W["w_q"] *= 400.0
    for block in (None, 9):
        out, saved = sn.multihead_attention(x, x, x, **W, num_heads=H, block_size=block, return_saved=True)
        q = (x @ W["w_q"]).reshape(1, n, H, -1).transpose(0, 2, 1, 3) / np.sqrt(E // H)
        k = (x @ W["w_k"]).reshape(1, n, H, -1).transpose(0, 2, 1, 3)
        s = q @ k.swapaxes(-1, -2)
        top = s.max(-1)
        np.testing.assert_allclose(saved.lse, top + np.log(np.exp(s - top[..., None]).sum(-1)), rtol=1e-12)
        assert saved.lse.max() > 710  # exp(S) alone overflows in float64: the shifted path ran
        dout = rng.normal(size=out.shape)
        g = sn.multihead_attention_backward(dout, saved, x, x, x, **W, num_heads=H, block_size=block)
        _, want = _sdpa_reference(x, x, x, W, b, H, H, dout)
        _close(g, want, 1e-9)


def test_errors_name_the_operands():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 8))
    w = rng.normal(size=(8, 8))
    out, saved = sn.multihead_attention(x, x, x, w, w, w, w, num_heads=2, return_saved=True)
    with pytest.raises(ShapeError, match="grad_output"):
        sn.multihead_attention_backward(out[:, :4], saved, x, x, x, w, w, w, w, num_heads=2)
    with pytest.raises(InputError, match="saved"):
        sn.multihead_attention_backward(out, saved.lse, x, x, x, w, w, w, w, num_heads=2)
    with pytest.raises(ShapeError, match="saved.lse"):
        sn.multihead_attention_backward(out, saved, x, x, x, w, w, w, w, num_heads=4)


def test_default_forward_is_unchanged_by_return_saved():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 16, 8)).astype(np.float32)
    w = rng.normal(size=(8, 8)).astype(np.float32)
    plain = sn.multihead_attention(x, x, x, w, w, w, w, num_heads=2)
    out, _ = sn.multihead_attention(x, x, x, w, w, w, w, num_heads=2, return_saved=True)
    np.testing.assert_allclose(out, plain, rtol=1e-5, atol=1e-6)


# --- memory ------------------------------------------------------------------------------------------


def test_backward_never_holds_every_heads_scores():
    """n = m = 4096, 2 heads, float32, blocks of 256 keys: one (heads, n, m) array of scores would
    be 2 · 4096² · 4 = 128 MiB; the backward's peak stays under 1/8 of it (measured here 10.5 MiB:
    per thread a step's P and dP, about 1 MiB each, and the linear arrays, the heads' copies and
    the gradients)."""
    rng = np.random.default_rng(2)
    n, E, H = 4096, 32, 2
    x = rng.normal(size=(1, n, E)).astype(np.float32)
    W, b = _weights(rng, E, H, H, E // H, np.float32, False)
    out, saved = sn.multihead_attention(x, x, x, **W, num_heads=H, causal=True, block_size=256, return_saved=True)
    dout = np.ones_like(out)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        sn.multihead_attention_backward(dout, saved, x, x, x, **W, num_heads=H, causal=True, block_size=256)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    if time.perf_counter() - start > 10:
        pytest.skip("too slow here for the memory check")
    dense = H * n * n * 4
    assert peak < dense / 8, (peak, dense)
