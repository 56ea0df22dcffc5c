"""``MultiheadAttention``: a drop-in ``torch.nn.MultiheadAttention`` whose forward is proved kernels.

    head_h = softmax((query W_h^Q + b_h^Q)(key W_h^K + b_h^K)ᵀ/sqrt(d_k) + M) (value W_h^V + b_h^V)
    output = [head_1 ... head_H] W^O + b^O

The steps and what justifies each (``MultiheadAttention.provenance`` lists them with the verdicts):

- the in-projection: one GEMM for Q, K and V when query, key and value are one tensor
  (``fused_qkv_projection``, lhs), else each block of its rhs; the scale 1/sqrt(d_k) folded into
  W^Q and b^Q (``scale_folds_into_query_projection``);
- the attention core softmax(Q Kᵀ [+ M]) V with the heads as an array axis: the rhs of
  ``scale_folds_into_query_projection`` (claim 0 without a mask, 1 with an additive mask M, 2 with
  the causal mask), which the torch printer lowers to one ``scaled_dot_product_attention`` call;
- where a gradient flows through the packed in-projection parameters (training), the fold is not
  made: the one GEMM takes ``in_proj_weight``ᵀ and ``in_proj_bias`` as they are and the core is the
  lhs of ``scale_folds_into_query_projection`` (the scale applied to the scores inside SDPA). The
  scaled weights would have to be packed anew on every call, and their backward joined and scaled
  again, which costs more than the fold saves; autograd then runs plain ``addmm`` and SDPA
  backwards, as for ``nn.MultiheadAttention``;
- when the weights are returned (or dropped out): the softmax of that rhs alone (its subexpression
  softmax(Q Kᵀ [+ M])), then the product with V, which is code;
- the output projection after the heads are side by side (``heads_concatenate_before_output_projection``).

What is code rather than a theorem, said plainly: the layout (batch-first or not, unbatched inputs),
the reshapes that put the heads on an axis and back, the masks (boolean to -inf, the key-padding
mask added to the attention mask, the padding for ``add_bias_kv`` and ``add_zero_attn``), the key
and value rows of ``add_bias_kv`` and ``add_zero_attn``, dropout, and for GQA the repeat of the
key/value heads (expand + reshape, as Llama's repeat_kv; that head h then reads group
floor(h / (H/G)) is ``repeat_kv_head_h_reads_group_floor``).

The kernels are lowered (their claims taken from the verdict cache, or proved) when the module is
constructed, never inside ``forward``, so ``torch.compile(module, fullgraph=True)`` traces plain
tensor code.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import HeadError, InputError, ShapeError
from . import torch_varlen as varlen
from .steps import Step
from .targets.multihead import _lowered

__all__ = ["MultiheadAttention", "Step", "attention_mask"]

_TARGET = "torch"
#: (kernel name, H, G, head_dim) -> what ``MultiheadAttention._direct`` works out (kept out of the
#: module's instances, which stay picklable)
_DIRECT: dict = {}


def _from_kernel(step: str, when: str, name: str, note: str = "") -> Step:
    p = _lowered(name, _TARGET)[0].provenance
    return Step(step, when, p.theorem, p.claim, p.side, p.status, note)


def attention_mask(mask, dtype, *, true_means: str = "masked", name: str = "attn_mask"):
    """An additive float mask (0 where a key is visible, -inf where it is not) from a boolean or
    float mask. ``true_means="masked"`` is ``nn.MultiheadAttention``'s convention for both of its
    masks (True = not allowed to attend); ``"attend"`` is ``scaled_dot_product_attention``'s (True =
    may attend). A float mask is added to the scores as it is (converted to ``dtype``). Integer and
    complex masks are refused: they say neither which keys are hidden nor what to add."""
    if mask is None:
        return None
    if true_means not in ("masked", "attend"):
        raise InputError(f"true_means must be 'masked' or 'attend', got {true_means!r}")
    if mask.dtype == torch.bool:
        hidden = mask if true_means == "masked" else ~mask
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(hidden, -math.inf)
    if not mask.is_floating_point():
        meaning = "True = masked" if true_means == "masked" else "True = attend"
        raise InputError(f"{name}: a mask is boolean ({meaning}) or floating-point (added to the scores); "
                         f"got dtype {mask.dtype}, shape {tuple(mask.shape)}")
    return mask if mask.dtype == dtype else mask.to(dtype)


def _to_heads(x, heads: int):
    """(N, L, heads·d) -> (N, heads, L, d)."""
    n, length, width = x.shape
    return x.view(n, length, heads, width // heads).transpose(1, 2)


def _from_heads(z):
    """(N, H, L, d) -> (N, L, H·d)."""
    n, heads, length, d = z.shape
    return z.transpose(1, 2).reshape(n, length, heads * d)


class MultiheadAttention(nn.Module):
    """``torch.nn.MultiheadAttention`` with the same constructor, forward, return values and
    ``state_dict`` (``load_state_dict`` works both ways), its forward made of proved kernels.

    ``num_kv_heads`` (G, default ``num_heads``): grouped-query attention, G key/value heads shared
    by H/G query heads each (G = 1 is multi-query attention); query head h reads key/value head
    floor(h / (H/G)). With G < H the key and value projections are narrower than the query's, so
    the parameters are ``q_proj_weight`` (E, E), ``k_proj_weight`` (G·head_dim, kdim),
    ``v_proj_weight`` (G·head_dim, vdim), ``in_proj_bias`` (E + 2·G·head_dim: query, key, value),
    ``out_proj`` and, with ``add_bias_kv``, ``bias_k`` and ``bias_v`` of shape (1, 1, G·head_dim).
    With G = H the parameters are exactly ``nn.MultiheadAttention``'s.

    ``provenance``: the steps of the forward, each with the theorem it is lowered from or "code".
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None, *, num_kv_heads=None):
        for what, value in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise HeadError(f"{what} must be a positive integer, got {value!r}")
        if embed_dim % num_heads:
            raise HeadError(f"embed_dim = {embed_dim} does not split into num_heads = {num_heads} heads "
                            f"(embed_dim must be divisible by num_heads)")
        kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if isinstance(kv_heads, bool) or not isinstance(kv_heads, int) or kv_heads <= 0 or num_heads % kv_heads:
            raise HeadError(f"num_kv_heads must be a positive integer that divides num_heads = {num_heads}, "
                            f"got {num_kv_heads!r}")
        if not 0.0 <= float(dropout) <= 1.0:
            raise InputError(f"dropout must be a probability in [0, 1], got {dropout!r}")
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self.num_heads, self.num_kv_heads = num_heads, kv_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        kv_width = kv_heads * self.head_dim
        # one packed in_proj_weight exactly when nn.MultiheadAttention has one
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim and kv_heads == num_heads
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = nn.Parameter(torch.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = nn.Parameter(torch.empty((kv_width, self.kdim), **factory))
            self.v_proj_weight = nn.Parameter(torch.empty((kv_width, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = nn.Parameter(torch.empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = nn.Parameter(torch.empty(embed_dim + 2 * kv_width, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        # the class torch uses, so that a quantization pass treats both modules alike
        self.out_proj = nn.modules.linear.NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = nn.Parameter(torch.empty((1, 1, kv_width), **factory))
            self.bias_v = nn.Parameter(torch.empty((1, 1, kv_width), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()
        self._bias = bool(bias)
        self.provenance = self._lower_kernels()

    def _reset_parameters(self):
        """torch's initialization, in torch's order: with the same seed both modules start equal."""
        if self._qkv_same_embed_dim:
            nn.init.xavier_uniform_(self.in_proj_weight)
        else:
            nn.init.xavier_uniform_(self.q_proj_weight)
            nn.init.xavier_uniform_(self.k_proj_weight)
            nn.init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            nn.init.constant_(self.in_proj_bias, 0.0)
            nn.init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            nn.init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            nn.init.xavier_normal_(self.bias_v)

    # -- the kernels, lowered (and their claims proved or read from the verdict cache) here -------

    def _lower_kernels(self) -> tuple:
        b = "_bias" if self._bias else ""
        steps = [
            Step("layout", "always", None, note="batch-first or sequence-first and unbatched inputs are "
                 "moved to (N, L, E) and back by transposes"),
            _from_kernel("in-projection weights side by side, [W^Q/sqrt(d_k) W^K W^V]", "query is key is value, "
                         "kdim = vdim = embed_dim, no gradient through the in-projection parameters; once per "
                         "version of the weights (on every call under torch.compile)", "qkv_weights"),
            _from_kernel("in-projection, one GEMM for query, key and value, X W_cat (+ 1 b_cat)",
                         "query is key is value, kdim = vdim = embed_dim", "qkv_apply" + b,
                         "the scale 1/sqrt(d_k) folded into W^Q and b^Q, except where a gradient flows through "
                         "the in-projection parameters: there W_cat is in_proj_weightᵀ itself and b_cat "
                         "in_proj_bias (the claim holds for every W^Q, so for W^Q/sqrt(d_k) standing for torch's "
                         "unscaled block) and the scale is left to the attention core, the theorem's lhs: "
                         "packing the scaled weights anew on every call, and its backward, would cost more "
                         "than the fold saves"),
        ]
        if self._bias:
            steps.insert(2, _from_kernel("in-projection bias row, [b^Q/sqrt(d_k) b^K b^V]", "as the weights",
                                         "qkv_bias_row"))
        steps += [_from_kernel(f"in-projection of the {part}", "query, key and value are not one tensor",
                               f"proj_{part[0]}{b}") for part in ("query", "key", "value")]
        if self.bias_k is not None or self.add_zero_attn:
            steps.append(Step("extra key/value rows", "add_bias_kv or add_zero_attn", None,
                              note="bias_k/bias_v or a zero row appended to the keys and values; the masks "
                                   "get a column of zeros"))
        steps.append(Step("heads as an array axis", "always", None,
                          note="(N, L, H·d) viewed as (N, H, L, d) and back"))
        if self.num_kv_heads != self.num_heads:
            from .lower import proved_claim

            v = proved_claim("repeat_kv_head_h_reads_group_floor", 0)
            steps.append(Step("key/value heads repeated for GQA", "num_kv_heads < num_heads",
                              "repeat_kv_head_h_reads_group_floor", 0, "both sides", v.status,
                              "code (expand + reshape, Llama's repeat_kv); the theorem says that head h then "
                              "reads group floor(h / (H/G)), GQA's definition"))
        steps += [
            Step("masks", "attn_mask or key_padding_mask", None,
                 note="boolean masks (True = not allowed) become -inf, float masks are added; the key "
                      "padding mask is added to the attention mask"),
            _from_kernel("attention core (scaled_dot_product_attention)", "no mask, weights not needed",
                         "core"),
            _from_kernel("attention core with an additive mask (scaled_dot_product_attention)",
                         "a mask, weights not needed", "core_mask"),
            _from_kernel("attention core with the causal mask (scaled_dot_product_attention)",
                         "is_causal with L = S, no key_padding_mask, weights not needed", "core_causal"),
            Step("causal mask", "is_causal with L != S, or without attn_mask where one is needed", None,
                 note="the top-left causal mask of scaled_dot_product_attention's is_causal, built by hand"),
            _from_kernel("attention weights softmax(Q Kᵀ)", "need_weights or dropout, no mask", "weights"),
            _from_kernel("attention weights softmax(Q Kᵀ + M)", "need_weights or dropout, a mask", "weights_mask"),
        ]
        steps += [_from_kernel(f"{what}, the scale applied to the scores (Q unscaled)", "as above, with a gradient "
                               "through the packed in-projection parameters", name + "_lhs")
                  for what, name in (("attention core", "core"), ("attention core with an additive mask", "core_mask"),
                                     ("attention core with the causal mask", "core_causal"),
                                     ("attention weights", "weights"), ("attention weights with a mask",
                                                                        "weights_mask"))]
        steps += [
            Step("dropout of the weights", "training with dropout > 0", None,
                 note="torch.nn.functional.dropout on the weights, as nn.MultiheadAttention"),
            Step("weights times values", "need_weights or dropout", None,
                 note="P V, the outer product of the attention core's side, written by hand so that P is kept"),
            Step("weights averaged over heads", "need_weights and average_attn_weights", None, note="mean"),
            _from_kernel("output projection after the heads are side by side", "always", "output" + b),
        ]
        for name in ("output" + b, "qkv_weights", "qkv_bias_row", "qkv_apply" + b):
            _lowered(name, _TARGET)
        return tuple(steps)

    def _direct(self, name):
        """(the compiled function of kernel ``name``, its inputs' names in order, its sizes by keyword),
        worked out once per kernel and head layout (``Kernel.__call__`` matches names on every call)."""
        key = (name, self.num_heads, self.num_kv_heads, self.head_dim)
        found = _DIRECT.get(key)
        if found is None:
            kernel, _ = _lowered(name, _TARGET)
            sizes = {"H": self.num_heads, "G": self.num_kv_heads, "d_k": self.head_dim, "d_v": self.head_dim}
            found = _DIRECT[key] = (kernel.fn, kernel.arg_names,
                                    {kernel.dims[d]: sizes[str(d)] for d in kernel.extra_dims})
        return found

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:  # checkpoints of torch 1.1, as nn.MultiheadAttention
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    # -- forward -----------------------------------------------------------------------------------

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False, *, lengths=None):
        """As ``nn.MultiheadAttention.forward``: returns (attn_output, attn_weights or None).

        query (L, N, E), key (S, N, kdim), value (S, N, vdim), or (N, L, E) ... with ``batch_first``,
        or (L, E) ... unbatched; key_padding_mask (N, S) or (S,), boolean (True = ignore the key) or
        float (added); attn_mask (L, S) or (N·num_heads, L, S), boolean (True = not allowed) or float;
        ``is_causal``: a hint that attn_mask is the causal mask, used as torch uses it (without a key
        padding mask and without weights the causal mask is applied and attn_mask ignored). Unlike
        torch, ``is_causal`` without ``attn_mask`` is accepted: the causal mask (top-left, as
        ``scaled_dot_product_attention``) is built.

        Variable-length batches (:mod:`symattn.lowering.torch_varlen`): ``lengths`` (N,) gives the
        number of valid positions at the start of each batch element's query, key and value (the
        rest is padding), or a pair (query lengths, key/value lengths) for cross-attention; the
        padding keys are masked (merged with ``key_padding_mask``) and the output and weights are 0
        at the padding queries. Nested tensors (``torch.nested``, strided or jagged, batch-first) are
        accepted too and the output is nested in the same layout (the weights, if asked for, padded).
        """
        if query.is_nested or key.is_nested or value.is_nested:
            return self._nested(query, key, value, key_padding_mask, need_weights, attn_mask,
                                average_attn_weights, is_causal, lengths)
        if (query is key and key is value and not need_weights and attn_mask is None and key_padding_mask is None
                and not is_causal and lengths is None and self.batch_first and query.dim() == 3
                and query.shape[-1] == self.embed_dim and self._plain()):
            return self._self_attention(query), None
        same = query is key and key is value
        batched = query.dim() == 3
        self._check(query, key, value, key_padding_mask, attn_mask, batched)
        query_pad = None
        if lengths is not None:
            key_padding_mask, query_pad = self._padding(lengths, query, key, key_padding_mask, batched)
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        dtype = query.dtype
        N, L, _ = query.shape
        S = key.shape[1]
        H, G = self.num_heads, self.num_kv_heads
        # (N, L, E), (N, S, G·d), (N, S, G·d); scaled: whether q carries the scale 1/sqrt(d_k)
        q, k, v, scaled = self._project(query, key, value, same)
        side = "" if scaled else "_lhs"
        attn = attention_mask(attn_mask, dtype)
        pad = attention_mask(key_padding_mask, dtype, name="key_padding_mask")
        causal_hint = is_causal and pad is None and not need_weights
        if causal_hint:
            attn = None  # torch: the hint replaces the mask
        if attn is not None:
            attn = attn.unsqueeze(0) if attn.dim() == 2 else attn.view(N, H, L, S)
        if pad is not None:
            pad = pad.view(N, 1, 1, S)
        extra = 0
        if self.bias_k is not None:
            k = torch.cat([k, self.bias_k.expand(N, 1, -1)], dim=1)
            v = torch.cat([v, self.bias_v.expand(N, 1, -1)], dim=1)
            extra += 1
        q, k, v = _to_heads(q, H), _to_heads(k, G), _to_heads(v, G)
        if self.add_zero_attn:
            zero = torch.zeros((N, G, 1, self.head_dim), dtype=k.dtype, device=k.device)
            k, v = torch.cat([k, zero], dim=2), torch.cat([v, zero], dim=2)
            extra += 1
        if extra:
            attn = None if attn is None else F.pad(attn, (0, extra))
            pad = None if pad is None else F.pad(pad, (0, extra))
        keys = S + extra
        if G != H:  # Llama's repeat_kv: head h reads key/value head floor(h / (H/G))
            r = H // G
            k = k[:, :, None].expand(N, G, r, keys, self.head_dim).reshape(N, H, keys, self.head_dim)
            v = v[:, :, None].expand(N, G, r, keys, self.head_dim).reshape(N, H, keys, self.head_dim)
        mask = attn if pad is None else pad if attn is None else attn + pad
        use_weights = need_weights or (self.training and self.dropout > 0.0)
        causal = False
        if causal_hint or (is_causal and attn_mask is None):  # the causal mask, top-left as SDPA's is_causal
            if mask is None and not use_weights and L == keys:
                causal = True  # the proved causal kernel (bottom-right aligned, the same when L = S)
            else:
                blocked = _top_left_causal(L, keys, dtype, q.device)
                mask = blocked if mask is None else mask + blocked
        if mask is not None:
            mask = mask.expand(*mask.shape[:-2], L, keys)
        if use_weights:
            weights = self._call(("weights" if mask is None else "weights_mask") + side, Q=q, K=k,
                                 **({} if mask is None else {"M": mask}))  # (N, H, L, keys)
            if self.training and self.dropout > 0.0:
                weights = F.dropout(weights, p=self.dropout)
            heads = weights @ v
        else:
            name = "core_causal" if causal else "core" if mask is None else "core_mask"
            heads = self._call(name + side, Q=q, K=k, V=v, **({} if mask is None else {"M": mask}))
            weights = None
        out = self._output(heads)
        if query_pad is not None:
            out, weights = varlen.zero_padded_queries(out, weights if need_weights else None, query_pad)
        if not batched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(dim=1)
        return out, weights.squeeze(0) if not batched else weights

    def _plain(self) -> bool:
        """Whether the forward of one tensor without masks needs no step beyond the projections, the
        core and the output: no extra key rows, G = H, packed weights, no dropout to apply."""
        return (self.bias_k is None and not self.add_zero_attn and self.num_kv_heads == self.num_heads
                and self._qkv_same_embed_dim and not (self.training and self.dropout > 0.0))

    def _self_attention(self, x):
        """The call most models make, self-attention of one batch-first tensor (N, L, E) without
        masks or weights: the general path's kernels in its order (the same result, bit for bit),
        without its branches."""
        H = self.num_heads
        q, k, v, scaled = self._project(x, x, x, True)
        heads = self._call("core" if scaled else "core_lhs", Q=_to_heads(q, H), K=_to_heads(k, H),
                           V=_to_heads(v, H))
        return self._output(heads)

    def _output(self, heads):
        """The output projection of the heads (N, H, L, d) put side by side, (N, L, H·d) W^O + 1 b^O."""
        arrays = {"Z": _from_heads(heads), "W^O": self.out_proj.weight.mT}
        if self._bias:
            arrays["b^O"] = self.out_proj.bias[None]
        return self._call("output_bias" if self._bias else "output", **arrays)

    def _padding(self, lengths, query, key, key_padding_mask, batched):
        """(the key padding mask merged with that of ``lengths``, the (N, L) padding of the queries)."""
        if not batched:
            raise ShapeError(f"lengths: needs a batched input, got an unbatched query {tuple(query.shape)}")
        seq = 1 if self.batch_first else 0
        N, L, S = query.shape[1 - seq], query.shape[seq], key.shape[seq]
        if isinstance(lengths, (tuple, list)) and len(lengths) == 2 and not isinstance(lengths[0], int):
            q_lengths, k_lengths = lengths
        elif L != S:
            raise ShapeError(f"lengths: one set of lengths is for query, key and value alike, but the query has "
                             f"{L} positions and the key {S}; give (query lengths, key lengths)")
        else:
            q_lengths = k_lengths = lengths
        q_len = varlen.lengths_tensor(q_lengths, N, L, query.device)
        k_len = q_len if k_lengths is q_lengths else varlen.lengths_tensor(k_lengths, N, S, query.device)
        pad = varlen.padding_of(k_len, S)
        return varlen.merged_key_padding(pad, key_padding_mask), varlen.padding_of(q_len, L)

    def _nested(self, query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights,
                is_causal, lengths):
        """The forward on nested tensors: padded, run with their lengths, nested again."""
        if not (query.is_nested and key.is_nested and value.is_nested):
            raise InputError("query, key and value: give all three as nested tensors or none")
        if not self.batch_first:
            raise InputError("nested tensors are batch-first (sequence i is nt[i]): construct the module with "
                             "batch_first=True, as nn.MultiheadAttention's fast path requires")
        if lengths is not None or key_padding_mask is not None:
            raise InputError("lengths and key_padding_mask: a nested tensor already says the lengths of its "
                             "sequences; give neither")
        padded_q, q_lengths = varlen.from_nested(query, "query")
        padded_k, k_lengths = (padded_q, q_lengths) if key is query else varlen.from_nested(key, "key")
        padded_v, v_lengths = (padded_k, k_lengths) if value is key else varlen.from_nested(value, "value")
        if v_lengths != k_lengths:
            raise ShapeError(f"key and value: their sequences should have the same lengths, got {k_lengths} and "
                             f"{v_lengths}")
        out, weights = self.forward(padded_q, padded_k, padded_v, None, need_weights, attn_mask, average_attn_weights,
                                    is_causal, lengths=(q_lengths, k_lengths))
        return varlen.to_nested(out, q_lengths, query.layout), weights

    def _call(self, name, **arrays):
        fn, order, sizes = self._direct(name)
        return fn(*[arrays[a] for a in order], **sizes)

    def _packed_weights(self):
        """W_cat = [W^Q/sqrt(d_k) W^K W^V] and b_cat = [b^Q/sqrt(d_k) b^K b^V] (kernels ``qkv_weights``,
        ``qkv_bias_row``), kept while the parameters keep their storage and version (an optimizer step,
        ``load_state_dict`` or ``.to`` makes them anew). Made on every call under ``torch.compile``
        (which traces them into its graph); not called when a gradient flows through the parameters
        (``_project`` then takes the parameters unscaled)."""
        params = [self.in_proj_weight] + ([self.in_proj_bias] if self._bias else [])
        keep = not torch.compiler.is_compiling() and not (
            torch.is_grad_enabled() and any(p.requires_grad for p in params))
        if keep:
            key = tuple((p._version, p.data_ptr(), p.dtype, p.device) for p in params)
            held = self.__dict__.get("_packed")
            if held is not None and held[0] == key:
                return held[2]
        (w_q, w_k, w_v), (b_q, b_k, b_v) = self._weights()
        packed = (self._call("qkv_weights", **{"W^Q": w_q, "W^K": w_k, "W^V": w_v}),
                  self._call("qkv_bias_row", **{"b^Q": b_q, "b^K": b_k, "b^V": b_v}) if self._bias else None)
        if keep:  # the detached parameters are held too, so that their storage (and address) is not reused
            self.__dict__["_packed"] = (key, [p.detach() for p in params], packed)
        return packed

    def __getstate__(self):
        state = super().__getstate__() if hasattr(super(), "__getstate__") else self.__dict__.copy()
        state = dict(state)
        state.pop("_packed", None)  # made again on the first call
        return state

    def _weights(self):
        """W^Q, W^K, W^V as (in_features, out_features) views (``x @ w``) and the bias rows."""
        widths = [self.embed_dim] + 2 * [self.num_kv_heads * self.head_dim]
        # split rather than three slices: autograd then joins the three gradients with one cat, where
        # each slice's backward would write its gradient into a zero tensor of the whole parameter
        if self._qkv_same_embed_dim:
            w = tuple(part.mT for part in self.in_proj_weight.split(widths))
        else:
            w = (self.q_proj_weight.mT, self.k_proj_weight.mT, self.v_proj_weight.mT)
        if self.in_proj_bias is None:
            return w, (None, None, None)
        return w, tuple(self.in_proj_bias[None].split(widths, dim=-1))

    def _project(self, query, key, value, same):
        """(q, k, v, whether q carries the scale 1/sqrt(d_k))."""
        b = "_bias" if self._bias else ""
        if same and self._qkv_same_embed_dim:
            params = [self.in_proj_weight] + ([self.in_proj_bias] if self._bias else [])
            scaled = not (torch.is_grad_enabled() and any(p.requires_grad for p in params))
            if scaled:
                w_cat, b_cat = self._packed_weights()
            else:  # torch's packed parameters as they are: one GEMM whose backward is a plain addmm's
                w_cat, b_cat = self.in_proj_weight.mT, self.in_proj_bias[None] if self._bias else None
            arrays = {"X": query, "W_cat": w_cat} if b_cat is None else {"X": query, "W_cat": w_cat, "b_cat": b_cat}
            qkv = self._call("qkv_apply" + b, **arrays)
            return (*qkv.split(self.embed_dim, dim=-1), scaled)  # one cat in the backward, not three slices
        (w_q, w_k, w_v), (b_q, b_k, b_v) = self._weights()
        out = []
        for part, x, w, bias in (("q", query, w_q, b_q), ("k", key, w_k, b_k), ("v", value, w_v, b_v)):
            P = part.upper()
            arrays = {"X": x, f"W^{P}": w, **({f"b^{P}": bias} if self._bias else {})}
            out.append(self._call(f"proj_{part}{b}", **arrays))
        return (*out, True)

    def _check(self, query, key, value, key_padding_mask, attn_mask, batched):
        """ShapeErrors that name the operand and its shape (torch raises AssertionError or
        RuntimeError for the same inputs)."""
        shapes = {nm: tuple(x.shape) for nm, x in (("query", query), ("key", key), ("value", value))}
        if query.dim() not in (2, 3):
            raise ShapeError(f"query: expected (L, N, E), (N, L, E) with batch_first, or (L, E) unbatched; "
                             f"got shape {shapes['query']}")
        for nm, x in (("key", key), ("value", value)):
            if x.dim() != query.dim():
                raise ShapeError(f"{nm}: a {'batched' if batched else 'unbatched'} query {shapes['query']} needs "
                                 f"a {query.dim()}-D {nm}, got shape {shapes[nm]}")
        for nm, x, width, what in (("query", query, self.embed_dim, "embed_dim"), ("key", key, self.kdim, "kdim"),
                                   ("value", value, self.vdim, "vdim")):
            if x.shape[-1] != width:
                raise ShapeError(f"{nm}: its last axis should be {what} = {width}, got shape {shapes[nm]}")
        seq = 1 if batched and self.batch_first else 0
        if key.shape[:-1] != value.shape[:-1]:
            raise ShapeError(f"key {shapes['key']} and value {shapes['value']}: they should have the same "
                             f"sequence length and batch size")
        if batched and query.shape[1 - seq] != key.shape[1 - seq]:
            raise ShapeError(f"query {shapes['query']} and key {shapes['key']}: batch sizes differ (axis "
                             f"{1 - seq})")
        L, S = query.shape[seq], key.shape[seq]
        N = query.shape[1 - seq] if batched else 1
        if key_padding_mask is not None:
            want = (N, S) if batched else (S,)
            if tuple(key_padding_mask.shape) != want:
                raise ShapeError(f"key_padding_mask: expected shape {want} (batch size, source length S), got "
                                 f"{tuple(key_padding_mask.shape)}")
        if attn_mask is not None:
            three = (N * self.num_heads, L, S)
            if tuple(attn_mask.shape) not in ((L, S), three):
                raise ShapeError(f"attn_mask: expected shape {(L, S)} (target length L, source length S) or "
                                 f"{three} (batch size · num_heads, L, S), got {tuple(attn_mask.shape)}")

    def extra_repr(self):
        gqa = f", num_kv_heads={self.num_kv_heads}" if self.num_kv_heads != self.num_heads else ""
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}{gqa}, dropout={self.dropout}, "
                f"batch_first={self.batch_first}")


def _top_left_causal(n, m, dtype, device):
    """-inf where key j > query i (``scaled_dot_product_attention``'s ``is_causal``)."""
    hidden = torch.ones((n, m), dtype=torch.bool, device=device).triu(1)
    return torch.zeros((n, m), dtype=dtype, device=device).masked_fill(hidden, -math.inf)
