"""Variable-length batches through ``symattn.torch.MultiheadAttention`` (``lengths`` and nested tensors).

The reference is each sequence run alone through torch's own ``nn.MultiheadAttention`` (no padding,
no mask), in float64: the valid rows of the outputs and weights and the gradients of the inputs and
of every parameter agree to 1e-12, and the padding positions of the output and weights are 0 (what
torch's fast path gives when it pads a nested result with ``to_padded_tensor(0.0)``).
"""

import pytest

torch = pytest.importorskip("torch")

from symattn.errors import InputError, ShapeError  # noqa: E402
from symattn.torch import MultiheadAttention  # noqa: E402

TOL = {"rtol": 1e-12, "atol": 1e-12}
E, H = 8, 2
DT = torch.float64
LENGTHS = [4, 6, 1]


def pair(seed=0, **kw):
    """(symattn's module, torch's module) with torch's parameters (nonzero biases) loaded into symattn's."""
    torch.manual_seed(seed)
    ref = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=DT, **kw)
    with torch.no_grad():
        for name, p in ref.named_parameters():
            if "bias" in name:
                p.normal_()
    ours = MultiheadAttention(E, H, batch_first=True, dtype=DT, **kw)
    ours.load_state_dict(ref.state_dict())
    return ours, ref


def padded(seqs, fill=3.0):
    """The sequences (L_i, E) in one (N, max L_i, E) batch, the padding filled with ``fill`` (not 0,
    so that padding that leaks into a valid row shows)."""
    out = torch.full((len(seqs), max(len(s) for s in seqs), E), fill, dtype=DT)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = s
    return out.requires_grad_(True)


def alone(ref, q, k, v, **kw):
    """Each sequence through torch's module by itself: [(output, weights)]."""
    return [ref(qi[None], ki[None], vi[None], **kw) for qi, ki, vi in zip(q, k, v)]


def grads(ref):
    return {n: p.grad.clone() for n, p in ref.named_parameters()}


@pytest.mark.parametrize("average", [True, False])
def test_self_attention_lengths_equal_each_sequence_alone(average):
    ours, ref = pair()
    g = torch.Generator().manual_seed(1)
    seqs = [torch.randn(n, E, dtype=DT, generator=g) for n in LENGTHS]
    x = padded(seqs)
    out, w = ours(x, x, x, lengths=torch.tensor(LENGTHS), average_attn_weights=average)
    (out * torch.arange(1.0, E + 1, dtype=DT)).sum().backward()  # a cotangent that is not all ones
    leaves = [s.clone().requires_grad_(True) for s in seqs]
    refs = alone(ref, leaves, leaves, leaves, average_attn_weights=average)
    sum((o * torch.arange(1.0, E + 1, dtype=DT)).sum() for o, _ in refs).backward()
    for i, (n, (o, wr)) in enumerate(zip(LENGTHS, refs)):
        torch.testing.assert_close(out[i, :n], o[0], **TOL)
        assert torch.all(out[i, n:] == 0)
        rows = w[i, :n, :n] if average else w[i, :, :n, :n]
        torch.testing.assert_close(rows, wr[0], **TOL)
        assert torch.all(w[i, ..., n:] == 0)  # padding keys have weight 0 ...
        assert torch.all((w[i, n:] if average else w[i, :, n:]) == 0)  # ... and padding queries none
        torch.testing.assert_close(x.grad[i, :n], leaves[i].grad, **TOL)
        assert torch.all(x.grad[i, n:] == 0)
    for name, p in ours.named_parameters():
        torch.testing.assert_close(p.grad, dict(ref.named_parameters())[name].grad, **TOL)


def test_cross_attention_lengths_pair_and_sequence_first_layout():
    """(query lengths, key lengths), the key/value sequences longer than the queries, in torch's
    default (L, N, E) layout, with a causal attn_mask on top."""
    torch.manual_seed(2)
    ref = torch.nn.MultiheadAttention(E, H, dtype=DT)
    ours = MultiheadAttention(E, H, dtype=DT)
    ours.load_state_dict(ref.state_dict())
    q_len, k_len = [3, 1, 4], [5, 2, 6]
    g = torch.Generator().manual_seed(3)
    qs = [torch.randn(n, E, dtype=DT, generator=g) for n in q_len]
    ks = [torch.randn(n, E, dtype=DT, generator=g) for n in k_len]
    vs = [torch.randn(n, E, dtype=DT, generator=g) for n in k_len]
    q, k, v = (padded(t).transpose(0, 1) for t in (qs, ks, vs))  # (L, N, E)
    mask = torch.ones(4, 6, dtype=torch.bool).triu(1)
    out, w = ours(q, k, v, attn_mask=mask, lengths=(q_len, torch.tensor(k_len)))
    for i, (n, m) in enumerate(zip(q_len, k_len)):
        o, wr = ref(qs[i][:, None], ks[i][:, None], vs[i][:, None], attn_mask=mask[:n, :m])
        torch.testing.assert_close(out[:n, i], o[:, 0], **TOL)
        torch.testing.assert_close(w[i, :n, :m], wr[0], **TOL)
        assert torch.all(out[n:, i] == 0) and torch.all(w[i, :, m:] == 0)


def test_lengths_merge_with_a_key_padding_mask():
    """A key hidden by key_padding_mask stays hidden inside a sequence's lengths: the same as the
    sequence alone with its part of the mask."""
    ours, ref = pair(seed=4)
    g = torch.Generator().manual_seed(5)
    seqs = [torch.randn(n, E, dtype=DT, generator=g) for n in LENGTHS]
    x = padded(seqs)
    kpm = torch.zeros(3, 6, dtype=torch.bool)
    kpm[1, 2] = True
    for given in (kpm, torch.zeros(3, 6, dtype=DT).masked_fill(kpm, float("-inf"))):
        out, _ = ours(x, x, x, key_padding_mask=given, lengths=LENGTHS, need_weights=False)
        for i, n in enumerate(LENGTHS):
            s = seqs[i][None]
            o, _ = ref(s, s, s, key_padding_mask=kpm[i:i + 1, :n], need_weights=False)
            torch.testing.assert_close(out[i, :n], o[0], **TOL)


@pytest.mark.parametrize("layout", ["strided", "jagged"])
def test_nested_tensors_equal_each_sequence_alone_with_gradients(layout):
    ours, ref = pair(seed=6)
    g = torch.Generator().manual_seed(7)
    seqs = [torch.randn(n, E, dtype=DT, generator=g).requires_grad_(True) for n in LENGTHS]
    nt = torch.nested.as_nested_tensor(seqs, layout=getattr(torch, layout))
    out, w = ours(nt, nt, nt, need_weights=False)
    assert out.is_nested and out.layout == nt.layout and w is None
    parts = out.unbind()
    ours_g = torch.autograd.grad(sum(p.sum() for p in parts), seqs)
    refs = alone(ref, seqs, seqs, seqs, need_weights=False)
    ref_g = torch.autograd.grad(sum(o.sum() for o, _ in refs), seqs)
    for p, (o, _), a, b in zip(parts, refs, ours_g, ref_g):
        torch.testing.assert_close(p, o[0], **TOL)
        torch.testing.assert_close(a, b, **TOL)


def test_nested_input_equals_torch_fast_path():
    """torch's own module takes a (strided) nested tensor on its inference fast path: the same output."""
    ours, ref = pair(seed=8)
    g = torch.Generator().manual_seed(9)
    nt = torch.nested.nested_tensor([torch.randn(n, E, dtype=DT, generator=g) for n in LENGTHS])
    ours.eval(), ref.eval()
    with torch.no_grad():
        mine, theirs = ours(nt, nt, nt, need_weights=False)[0], ref(nt, nt, nt, need_weights=False)[0]
    for a, b in zip(mine.unbind(), theirs.unbind()):
        torch.testing.assert_close(a, b, **TOL)


def test_lengths_errors_name_what_is_wrong():
    ours, _ = pair()
    x = torch.randn(3, 6, E, dtype=DT)
    with pytest.raises(ShapeError, match=r"lengths: expected one length per batch element, shape \(3,\)"):
        ours(x, x, x, lengths=[4, 6])
    with pytest.raises(InputError, match=r"each must be in 1\.\.6"):
        ours(x, x, x, lengths=[4, 0, 2])
    with pytest.raises(InputError, match=r"each must be in 1\.\.6"):
        ours(x, x, x, lengths=[4, 7, 2])
    with pytest.raises(InputError, match="lengths: expected integers"):
        ours(x, x, x, lengths=torch.tensor([4.0, 6.0, 1.0]))
    y = torch.randn(3, 4, E, dtype=DT)
    with pytest.raises(ShapeError, match=r"give \(query lengths, key lengths\)"):
        ours(y, x, x, lengths=[4, 4, 4])
    with pytest.raises(ShapeError, match="lengths: needs a batched input"):
        ours(x[0], x[0], x[0], lengths=[6])
    nt = torch.nested.nested_tensor([torch.randn(n, E, dtype=DT) for n in LENGTHS])
    with pytest.raises(InputError, match="give neither"):
        ours(nt, nt, nt, lengths=LENGTHS)
    other = torch.nested.nested_tensor([torch.randn(n, E, dtype=DT) for n in (6, 4, 1)])
    with pytest.raises(ShapeError, match="the same lengths"):
        ours(nt, nt, other)
    with pytest.raises(InputError, match="all three as nested tensors or none"):
        ours(nt, x, x)
    seq_first = MultiheadAttention(E, H, dtype=DT)
    with pytest.raises(InputError, match="batch_first=True"):
        seq_first(nt, nt, nt)


def test_lengths_trace_in_one_graph():
    """``torch.compile(fullgraph=True)`` with a lengths tensor: the same output and a backward."""
    if not hasattr(torch, "compile"):
        pytest.skip("torch.compile is not available")
    import torch._dynamo as dynamo

    if not dynamo.is_dynamo_supported():
        pytest.skip("torch.compile is not supported on this platform")
    dynamo.reset()
    ours, _ = pair(seed=10)
    x = torch.randn(3, 6, E, dtype=DT, requires_grad=True)
    lengths = torch.tensor(LENGTHS)
    compiled = torch.compile(lambda t, n: ours(t, t, t, lengths=n, need_weights=False)[0], fullgraph=True,
                             backend="aot_eager")
    got = compiled(x, lengths)
    torch.testing.assert_close(got, ours(x, x, x, lengths=lengths, need_weights=False)[0], **TOL)
    assert torch.all(got[2, 1:] == 0)
    got.sum().backward()
    assert x.grad is not None and torch.all(x.grad[2, 1:] == 0)
