"""``symattn.torch.MultiheadAttention`` against the real ``torch.nn.MultiheadAttention`` and SDPA.

Every comparison is with torch's own module or functions (never with symattn's code), in float64:
outputs, returned weights (averaged and per head) and the gradients of the inputs and of every
parameter agree to 1e-12.
"""

import math

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from symattn.errors import HeadError, InputError, ShapeError  # noqa: E402
from symattn.torch import MultiheadAttention, attention_mask  # noqa: E402

TOL = {"rtol": 1e-12, "atol": 1e-12}
E, H, N, L, S = 8, 2, 3, 5, 6
DT = torch.float64


def pair(seed=0, **kw):
    """(symattn's module, torch's module) with torch's parameters loaded into symattn's."""
    torch.manual_seed(seed)
    ref = torch.nn.MultiheadAttention(E, H, dtype=DT, **kw)
    with torch.no_grad():  # nonzero biases, so that a misplaced bias shows
        for name, p in ref.named_parameters():
            if "bias" in name:
                p.normal_()
    ours = MultiheadAttention(E, H, dtype=DT, **kw)
    ours.load_state_dict(ref.state_dict())
    return ours, ref


def bool_mask(shape, seed):
    g = torch.Generator().manual_seed(seed)
    m = torch.rand(shape, generator=g) < 0.4
    m[..., 0] = False  # every query keeps a key (a row with none is NaN in both)
    return m


def inputs(batch_first=False, unbatched=False, kdim=E, vdim=E, self_attn=False, seed=1):
    g = torch.Generator().manual_seed(seed)

    def make(length, width):
        shape = (length, width) if unbatched else (N, length, width) if batch_first else (length, N, width)
        return torch.randn(shape, generator=g, dtype=DT, requires_grad=True)

    q = make(L if not self_attn else S, E)
    if self_attn:
        return q, q, q
    return q, make(S, kdim), make(S, vdim)


def run_both(ours, ref, q, k, v, **kw):
    """Outputs, weights and gradients of both modules for one call (the loss reads both results)."""
    results = []
    for mod in (ours, ref):
        mod.zero_grad()
        for x in (q, k, v):
            x.grad = None
        out, w = mod(q, k, v, **kw)
        g = torch.Generator().manual_seed(7)
        loss = (out * torch.randn(out.shape, generator=g, dtype=DT)).sum()
        if w is not None:
            loss = loss + (w * torch.randn(w.shape, generator=g, dtype=DT)).sum()
        loss.backward()
        grads = {n: p.grad.clone() for n, p in mod.named_parameters()}
        grads.update({f"input{i}": x.grad.clone() for i, x in enumerate(dict.fromkeys((q, k, v)))})
        results.append((out, w, grads))
    return results


def assert_same(ours, ref, q, k, v, **kw):
    (o1, w1, g1), (o2, w2, g2) = run_both(ours, ref, q, k, v, **kw)
    torch.testing.assert_close(o1, o2, **TOL)
    assert (w1 is None) == (w2 is None)
    if w1 is not None:
        assert w1.shape == w2.shape
        torch.testing.assert_close(w1, w2, **TOL)
    assert g1.keys() == g2.keys()
    for name in g1:
        torch.testing.assert_close(g1[name], g2[name], **TOL, msg=f"gradient of {name}")


MASKS = ["none", "bool", "float", "bool3d", "float3d", "kpm_bool", "kpm_float", "both", "both3d"]


def masks(case, seed=3, unbatched=False):
    n = 1 if unbatched else N
    kw = {}
    if case in ("bool", "both"):
        kw["attn_mask"] = bool_mask((L, S), seed)
    if case == "float":
        kw["attn_mask"] = torch.randn(L, S, dtype=DT)
    if case in ("bool3d", "both3d"):
        kw["attn_mask"] = bool_mask((n * H, L, S), seed)
    if case == "float3d":
        kw["attn_mask"] = torch.randn(n * H, L, S, dtype=DT)
    if case in ("kpm_bool", "both", "both3d"):
        kpm = bool_mask((n, S), seed + 1)
        kw["key_padding_mask"] = kpm[0] if unbatched else kpm
    if case == "kpm_float":
        kpm = torch.randn(n, S, dtype=DT)
        kw["key_padding_mask"] = kpm[0] if unbatched else kpm
    return kw


@pytest.mark.parametrize("case", MASKS)
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_masks_weights_and_gradients_equal_torch(case, need_weights, average):
    ours, ref = pair()
    q, k, v = inputs()
    assert_same(ours, ref, q, k, v, need_weights=need_weights, average_attn_weights=average, **masks(case))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("self_attn", [False, True])
def test_layouts_biases_and_self_attention_equal_torch(batch_first, bias, self_attn):
    ours, ref = pair(batch_first=batch_first, bias=bias)
    q, k, v = inputs(batch_first=batch_first, self_attn=self_attn)
    kw = masks("both") if not self_attn else {"key_padding_mask": bool_mask((N, S), 5)}
    assert_same(ours, ref, q, k, v, **kw)
    assert_same(ours, ref, q, k, v, need_weights=False, **kw)


@pytest.mark.parametrize("case", ["none", "bool", "float3d", "both"])
def test_unbatched_input_equals_torch(case):
    ours, ref = pair()
    q, k, v = inputs(unbatched=True)
    for need in (True, False):
        assert_same(ours, ref, q, k, v, need_weights=need, average_attn_weights=False, **masks(case, unbatched=True))


def test_kdim_vdim_separate_projection_weights_equal_torch():
    ours, ref = pair(kdim=5, vdim=3)
    assert {"q_proj_weight", "k_proj_weight", "v_proj_weight"} <= set(ours.state_dict())
    assert "in_proj_weight" not in ours.state_dict()
    q, k, v = inputs(kdim=5, vdim=3)
    assert_same(ours, ref, q, k, v, **masks("both"))
    assert_same(ours, ref, q, k, v, need_weights=False, **masks("float"))


@pytest.mark.parametrize("kw", [{"add_bias_kv": True}, {"add_zero_attn": True},
                                {"add_bias_kv": True, "add_zero_attn": True}])
def test_bias_kv_and_zero_attention_equal_torch(kw):
    ours, ref = pair(**kw)
    q, k, v = inputs()
    for case in ("none", "both", "float3d"):
        assert_same(ours, ref, q, k, v, **masks(case))
        assert_same(ours, ref, q, k, v, need_weights=False, **masks(case))


@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("with_kpm", [False, True])
def test_is_causal_hint_equals_torch(need_weights, with_kpm):
    ours, ref = pair(batch_first=True)
    q, k, v = inputs(batch_first=True, self_attn=True)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=DT)
    kw = {"attn_mask": causal, "is_causal": True, "need_weights": need_weights}
    if with_kpm:
        kw["key_padding_mask"] = bool_mask((N, S), 9)
    assert_same(ours, ref, q, k, v, **kw)
    # the boolean causal mask (True = not allowed) as well
    kw["attn_mask"] = torch.ones(S, S, dtype=torch.bool).triu(1)
    assert_same(ours, ref, q, k, v, **kw)


def test_is_causal_without_attn_mask_is_sdpa_is_causal():
    """torch refuses is_causal without attn_mask; symattn applies the causal mask of SDPA's is_causal."""
    ours, ref = pair(batch_first=True)
    q, k, v = inputs(batch_first=True, self_attn=True)
    with pytest.raises(RuntimeError):
        ref(q, k, v, is_causal=True)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=DT)
    for need in (False, True):
        got = ours(q, k, v, is_causal=True, need_weights=need)[0]
        torch.testing.assert_close(got, ref(q, k, v, attn_mask=causal, need_weights=need)[0], **TOL)


def test_state_dict_round_trip_both_ways_and_same_initialization():
    torch.manual_seed(11)
    ref = torch.nn.MultiheadAttention(E, H, add_bias_kv=True, dtype=DT)
    torch.manual_seed(11)
    ours = MultiheadAttention(E, H, add_bias_kv=True, dtype=DT)
    a, b = ours.state_dict(), ref.state_dict()
    assert list(a) == list(b)  # the same keys in the same order
    assert all(torch.equal(a[key], b[key]) for key in a)  # torch's initialization, in torch's order
    torch.manual_seed(12)
    other = MultiheadAttention(E, H, add_bias_kv=True, dtype=DT)
    ref.load_state_dict(other.state_dict())  # symattn -> torch
    q, k, v = inputs()
    torch.testing.assert_close(other(q, k, v)[0], ref(q, k, v)[0], **TOL)


def test_swapped_into_a_model_through_state_dict():
    """A model built with nn.MultiheadAttention, rebuilt with symattn's module, same state_dict."""

    class Block(torch.nn.Module):
        def __init__(self, attention):
            super().__init__()
            self.norm = torch.nn.LayerNorm(E, dtype=DT)
            self.attn = attention(E, H, batch_first=True, dtype=DT)
            self.ff = torch.nn.Linear(E, E, dtype=DT)

        def forward(self, x, mask):
            h = self.norm(x)
            return x + self.ff(self.attn(h, h, h, key_padding_mask=mask, need_weights=False)[0])

    torch.manual_seed(0)
    theirs = Block(torch.nn.MultiheadAttention)
    mine = Block(MultiheadAttention)
    mine.load_state_dict(theirs.state_dict())
    x = torch.randn(N, S, E, dtype=DT)
    mask = bool_mask((N, S), 2)
    torch.testing.assert_close(mine(x, mask), theirs(x, mask), **TOL)


def test_dropout_in_training_draws_what_torch_draws_and_eval_has_none():
    ours, ref = pair(dropout=0.3)
    q, k, v = inputs()
    for need in (True, False):
        torch.manual_seed(5)
        want = ref(q, k, v, need_weights=need)
        torch.manual_seed(5)
        got = ours(q, k, v, need_weights=need)
        torch.testing.assert_close(got[0], want[0], **TOL)
        if need:
            torch.testing.assert_close(got[1], want[1], **TOL)
    ours.eval(), ref.eval()
    torch.testing.assert_close(ours(q, k, v)[0], ref(q, k, v)[0], **TOL)


def _sdpa_gqa_reference(mod, q, k, v, mask=None):
    """GQA by hand from torch primitives: F.linear projections and SDPA with enable_gqa=True."""
    E_, Hq, G, d = mod.embed_dim, mod.num_heads, mod.num_kv_heads, mod.head_dim
    b = mod.in_proj_bias
    bq, bk, bv = b[:E_], b[E_:E_ + G * d], b[E_ + G * d:]
    Q = F.linear(q, mod.q_proj_weight, bq).view(N, -1, Hq, d).transpose(1, 2)
    K = F.linear(k, mod.k_proj_weight, bk).view(N, -1, G, d).transpose(1, 2)
    V = F.linear(v, mod.v_proj_weight, bv).view(N, -1, G, d).transpose(1, 2)
    z = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask, enable_gqa=True)
    return F.linear(z.transpose(1, 2).reshape(N, -1, E_), mod.out_proj.weight, mod.out_proj.bias)


@pytest.mark.parametrize("G", [1, 2])
def test_grouped_query_attention_equals_sdpa_enable_gqa(G):
    torch.manual_seed(0)
    mod = MultiheadAttention(E, 4, batch_first=True, dtype=DT, num_kv_heads=G)
    assert mod.k_proj_weight.shape == (G * 2, E) and mod.in_proj_bias.shape == (E + 2 * G * 2,)
    with torch.no_grad():
        mod.in_proj_bias.normal_(), mod.out_proj.bias.normal_()
    q, k, v = inputs(batch_first=True)
    allowed = ~bool_mask((L, S), 4)  # SDPA: True = may attend
    for mask in (None, allowed):
        got = mod(q, k, v, attn_mask=None if mask is None else ~mask, need_weights=False)[0]
        torch.testing.assert_close(got, _sdpa_gqa_reference(mod, q, k, v, mask), **TOL)
    # the weights path and its per-head weights: repeat_interleave of the key/value heads
    out, w = mod(q, k, v, average_attn_weights=False)
    torch.testing.assert_close(out, _sdpa_gqa_reference(mod, q, k, v), **TOL)
    d = mod.head_dim
    Q = F.linear(q, mod.q_proj_weight, mod.in_proj_bias[:E]).view(N, L, 4, d).transpose(1, 2)
    K = F.linear(k, mod.k_proj_weight, mod.in_proj_bias[E:E + G * d]).view(N, S, G, d).transpose(1, 2)
    want = torch.softmax(Q @ K.repeat_interleave(4 // G, dim=1).mT / math.sqrt(d), dim=-1)
    torch.testing.assert_close(w, want, **TOL)
    # gradients of the parameters through both
    grads = []
    for f in (lambda: mod(q, k, v, need_weights=False)[0], lambda: _sdpa_gqa_reference(mod, q, k, v)):
        mod.zero_grad()
        f().square().sum().backward()
        grads.append({n: p.grad.clone() for n, p in mod.named_parameters()})
    for name in grads[0]:
        torch.testing.assert_close(grads[0][name], grads[1][name], **TOL, msg=name)


def test_gqa_with_as_many_groups_as_heads_is_torch_layout():
    mod = MultiheadAttention(E, H, num_kv_heads=H)
    assert set(mod.state_dict()) == set(torch.nn.MultiheadAttention(E, H).state_dict())


def test_provenance_names_a_proved_theorem_or_says_code():
    from symattn.theorems import load_library

    mod = MultiheadAttention(E, 4, num_kv_heads=2)
    library = load_library()
    named = [s for s in mod.provenance if s.theorem]
    assert {s.theorem for s in named} >= {"fused_qkv_projection", "scale_folds_into_query_projection",
                                          "heads_concatenate_before_output_projection",
                                          "repeat_kv_head_h_reads_group_floor"}
    assert all(s.theorem in library and s.status == "proved" for s in named)
    assert any(s.theorem is None and "dropout" in s.step for s in mod.provenance)
    assert "scale_folds_into_query_projection, claim 1, rhs (proved)" in "\n".join(map(str, mod.provenance))


def test_attention_mask_conventions():
    m = torch.tensor([[True, False]])
    assert attention_mask(m, DT).tolist() == [[-math.inf, 0.0]]  # nn.MultiheadAttention: True = masked
    assert attention_mask(m, DT, true_means="attend").tolist() == [[0.0, -math.inf]]  # SDPA: True = attend
    with pytest.raises(InputError, match="dtype torch.int64"):
        attention_mask(torch.tensor([[1, 0]]), DT)


def test_errors_name_the_operand_and_its_shape():
    ours, _ = pair()
    q, k, v = inputs()
    with pytest.raises(ShapeError, match=r"attn_mask: expected shape \(5, 6\).*got \(6, 5\)"):
        ours(q, k, v, attn_mask=torch.zeros(S, L, dtype=DT))
    with pytest.raises(ShapeError, match=r"key_padding_mask: expected shape \(3, 6\)"):
        ours(q, k, v, key_padding_mask=torch.zeros(S, N, dtype=torch.bool))
    with pytest.raises(ShapeError, match=r"key: its last axis should be kdim = 8, got shape \(6, 3, 7\)"):
        ours(q, torch.zeros(S, N, 7, dtype=DT), v)
    with pytest.raises(ShapeError, match="value"):
        ours(q, k, v[:-1])
    with pytest.raises(InputError, match="attn_mask.*int"):
        ours(q, k, v, attn_mask=torch.zeros(L, S, dtype=torch.int64))
    with pytest.raises(HeadError, match="divisible"):
        MultiheadAttention(10, 3)
    with pytest.raises(HeadError, match="num_kv_heads"):
        MultiheadAttention(8, 4, num_kv_heads=3)
    with pytest.raises(ValueError):  # the same exception class as torch's for a bad size
        MultiheadAttention(0, 2)


def _compile_or_skip():
    if not hasattr(torch, "compile"):
        pytest.skip("torch.compile is not available")
    try:
        import torch._dynamo as dynamo
    except ImportError:
        pytest.skip("torch._dynamo is not available")
    if not dynamo.is_dynamo_supported():
        pytest.skip("torch.compile is not supported on this platform")


@pytest.mark.parametrize("kw", [{}, {"need_weights": False}, {"need_weights": False, "is_causal": True},
                                {"attn_mask": "bool", "key_padding_mask": "kpm", "average_attn_weights": False}])
def test_torch_compile_fullgraph(kw):
    """The whole forward in one graph (aot_eager: dynamo and AOT autograd, no C++ compiler needed)."""
    _compile_or_skip()
    torch._dynamo.reset()
    ours, ref = pair(batch_first=True)
    q, k, v = inputs(batch_first=True, self_attn=True)
    kw = dict(kw)
    if kw.get("is_causal"):
        kw["attn_mask"] = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=DT)
    if kw.get("attn_mask") == "bool":
        kw["attn_mask"], kw["key_padding_mask"] = bool_mask((S, S), 1), bool_mask((N, S), 2)
    compiled = torch.compile(ours, fullgraph=True, backend="aot_eager")
    out, w = compiled(q, k, v, **kw)
    want, want_w = ref(q, k, v, **kw)
    torch.testing.assert_close(out, want, **TOL)
    if w is not None:
        torch.testing.assert_close(w, want_w, **TOL)
    out.sum().backward()  # the backward graph traces too
    compiled(*inputs(batch_first=True, seed=4), **{x: y for x, y in kw.items() if x == "need_weights"})  # cross


def test_torch_compile_fullgraph_inductor_gqa():
    """The default backend (inductor) on the GQA module, forward and backward, float32."""
    _compile_or_skip()
    import shutil

    if shutil.which("g++") is None and shutil.which("cc") is None:
        pytest.skip("inductor needs a C++ compiler on the CPU")
    torch._dynamo.reset()
    torch.manual_seed(0)
    mod = MultiheadAttention(E, 4, num_kv_heads=2, batch_first=True)
    x = torch.randn(N, S, E, requires_grad=True)
    out = torch.compile(mod, fullgraph=True)(x, x, x, need_weights=False)[0]
    torch.testing.assert_close(out, mod(x, x, x, need_weights=False)[0], rtol=1e-5, atol=1e-6)
    out.sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()


def test_import_symattn_does_not_import_torch():
    import subprocess
    import sys

    code = "import symattn, symattn.torch, sys; assert 'torch' not in sys.modules, 'torch imported'"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_the_readme_example_runs():
    """The ```py block of docs/code.md about this module (``tests/test_readme.py`` runs the ```python blocks,
    which must run without torch)."""
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "code.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```py\n(.*?)```", readme, flags=re.S) if "symattn.torch" in b]
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/code.md symattn.torch block", "exec"), {"__name__": "readme_torch"})


def test_generated_torch_kernels_compile_fullgraph():
    """The GQA kernel (heads read through an index array) and the multi-head function of
    ``targets.multihead`` trace in one graph: no builtins with keywords, no int() of a tensor."""
    _compile_or_skip()
    import sympy as sp

    import symattn as sa
    from symattn.lowering.targets.multihead import multihead_attention

    torch._dynamo.reset()
    n, d, d_k, G, r = sa.dims("n d d_k G r")
    X = sp.MatrixSymbol("X", n, d)
    fam = [sa.Family(f"W^{s}", *((d_k, d) if s == "O" else (d, d_k))) for s in "QKVO"]
    kernel = sa.lower(sa.gqa(X, X, X, *fam, H=G * r, G=G, convention="row"), target="torch")
    assert "take_heads" in kernel.source
    g = torch.Generator().manual_seed(0)
    arrays = [torch.randn(s, generator=g, dtype=DT) for s in ((5, 8), (4, 8, 3), (2, 8, 3), (2, 8, 3), (4, 3, 8))]
    compiled = torch.compile(lambda *a: kernel(*a), fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(*arrays), kernel(*arrays), **TOL)

    ours, ref = pair(batch_first=True)
    x = torch.randn(N, S, E, dtype=DT)
    w = [ref.in_proj_weight[i * E:(i + 1) * E].T for i in range(3)] + [ref.out_proj.weight.T]
    b = [ref.in_proj_bias[i * E:(i + 1) * E][None] for i in range(3)] + [ref.out_proj.bias[None]]

    def mh(x):
        return multihead_attention(x, x, x, *w, num_heads=H, b_q=b[0], b_k=b[1], b_v=b[2], b_o=b[3])

    torch.testing.assert_close(torch.compile(mh, fullgraph=True, backend="aot_eager")(x),
                               ref(x, x, x, need_weights=False)[0], **TOL)


def test_the_packed_in_projection_weights_are_made_once_per_version_of_the_parameters():
    """Without gradients the scaled weights side by side (kernels qkv_weights, qkv_bias_row) are made
    once and reused; an optimizer's in-place step, load_state_dict, or new storage makes them anew, so
    the output always follows the parameters (compared with torch's module after the same change)."""
    import copy
    import pickle

    ours, ref = pair(batch_first=True)
    x = torch.randn(N, L, E, dtype=DT)
    with torch.no_grad():
        first = ours(x, x, x, need_weights=False)[0]
        packed = ours._packed[2][0]
        again = ours(x, x, x, need_weights=False)[0]
        assert ours._packed[2][0] is packed  # reused, not made again
        torch.testing.assert_close(again, first, rtol=0, atol=0)
        for mod in (ours, ref):  # an optimizer step: in place, the same storage
            mod.in_proj_weight.add_(0.25)
            mod.in_proj_bias.mul_(2.0)
        torch.testing.assert_close(ours(x, x, x, need_weights=False)[0], ref(x, x, x, need_weights=False)[0], **TOL)
        assert ours._packed[2][0] is not packed
        new = torch.randn_like(ref.in_proj_weight)
        ref.in_proj_weight.data = new.clone()  # new storage under the same Parameter
        ours.in_proj_weight.data = new.clone()
        torch.testing.assert_close(ours(x, x, x, need_weights=False)[0], ref(x, x, x, need_weights=False)[0], **TOL)
        ref.in_proj_weight.normal_()
        ours.load_state_dict(ref.state_dict())
        torch.testing.assert_close(ours(x, x, x, need_weights=False)[0], ref(x, x, x, need_weights=False)[0], **TOL)
    for clone in (copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):  # the cache is not carried along
        assert "_packed" not in clone.__dict__
        with torch.no_grad():
            torch.testing.assert_close(clone(x, x, x, need_weights=False)[0], ours(x, x, x, need_weights=False)[0],
                                       **TOL)


def test_the_in_projection_is_made_on_every_call_when_a_gradient_flows_through_it():
    ours, ref = pair(batch_first=True)
    x = torch.randn(N, L, E, dtype=DT)
    ours(x, x, x, need_weights=False)[0].sum().backward()
    assert "_packed" not in ours.__dict__
    ref(x, x, x, need_weights=False)[0].sum().backward()
    ours(x, x, x, need_weights=False)[0].sum().backward()  # a second backward: a graph of its own
    torch.testing.assert_close(ours.in_proj_weight.grad, 2 * ref.in_proj_weight.grad, **TOL)
    torch.testing.assert_close(ours.in_proj_bias.grad, 2 * ref.in_proj_bias.grad, **TOL)


def _backward_nodes(t):
    """The names of the autograd nodes behind t."""
    seen, todo, names = set(), [t.grad_fn], []
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        names.append(type(fn).__name__)
        todo += [nxt for nxt, _ in fn.next_functions]
    return names


def test_with_gradients_the_backward_is_two_addmms_and_sdpas_own():
    """Training: the graph of the self-attention forward holds two GEMMs (in- and out-projection), the
    fused attention's own backward, a split, and views; no packing of scaled weights (cat, mul), no
    slices whose backward zero-fills, no copies."""
    for bias in (True, False):
        ours, ref = pair(batch_first=True, bias=bias)
        x = torch.randn(N, L, E, dtype=DT, requires_grad=True)
        names = _backward_nodes(ours(x, x, x, need_weights=False)[0])
        views = ("View", "UnsafeView", "Transpose", "Unsqueeze", "AccumulateGrad")
        work = sorted(nm for nm in names if not nm.startswith(views))
        gemm = "AddmmBackward0" if bias else "MmBackward0"
        assert len(work) == 4 and work[:2] == [gemm] * 2 and work[3] == "SplitBackward0", work
        assert "ScaledDotProduct" in work[2], work
        assert names.count("AccumulateGrad") == len(list(ours.parameters())) + 1  # and x


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("grad", [True, False])
def test_self_attention_without_masks_takes_the_short_path_with_the_general_paths_result(monkeypatch, bias, grad):
    """One batch-first tensor, no mask, no weights: the short path runs, and its output and gradients
    are the general path's bit for bit (the same kernels in the same order) and torch's to 1e-12."""
    ours, ref = pair(batch_first=True, bias=bias)
    x = inputs(batch_first=True, self_attn=True)[0]
    taken = []
    short = MultiheadAttention._self_attention
    monkeypatch.setattr(MultiheadAttention, "_self_attention", lambda self, q: taken.append(1) or short(self, q))

    def run(plain):
        monkeypatch.setattr(MultiheadAttention, "_plain", lambda self: plain)
        ours.zero_grad(set_to_none=True)
        x.grad = None
        with torch.set_grad_enabled(grad):
            out = ours(x, x, x, need_weights=False)[0]
        if not grad:
            return out, None
        out.sum().backward()
        return out, [x.grad.clone()] + [p.grad.clone() for p in ours.parameters()]

    (fast, fast_grads), (general, general_grads) = run(True), run(False)
    assert taken == [1], "the short path was not taken (or taken where it should not be)"
    assert torch.equal(fast, general)
    if grad:
        assert all(torch.equal(a, b) for a, b in zip(fast_grads, general_grads))
    with torch.no_grad():
        torch.testing.assert_close(fast, ref(x, x, x, need_weights=False)[0], **TOL)


@pytest.mark.parametrize("kw", [{"need_weights": True}, {"key_padding_mask": "kpm"}, {"is_causal": True},
                                {"other_key": True}])
def test_the_short_path_is_not_taken_where_a_step_beyond_it_is_needed(monkeypatch, kw):
    ours, ref = pair(batch_first=True)
    x = inputs(batch_first=True, self_attn=True)[0]
    monkeypatch.setattr(MultiheadAttention, "_self_attention", lambda self, q: pytest.fail("short path taken"))
    kw = dict(kw, need_weights=kw.get("need_weights", False))
    key = x.detach().clone() if kw.pop("other_key", False) else x
    if kw.get("key_padding_mask") == "kpm":
        kw["key_padding_mask"] = bool_mask((N, S), 3)
    if kw.get("is_causal"):
        kw["attn_mask"] = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=DT)
    torch.testing.assert_close(ours(x, key, key, **kw)[0], ref(x, key, key, **kw)[0], **TOL)
