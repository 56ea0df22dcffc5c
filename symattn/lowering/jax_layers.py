"""JAX attention with ``jax.nn.dot_product_attention``'s conventions, its steps lowered from proved
theorems: ``symattn.jax.dot_product_attention`` and ``symattn.jax.multihead_attention``.

    head_n = softmax(scale · q_n k_{g(n)}ᵀ + bias_n [+ -large where the mask hides a key]) v_{g(n)}

Shapes as JAX's: query (B, T, N, H), key and value (B, S, K, H) (or without the batch axis), N a
multiple of K (grouped-query attention when K < N, query head n reads key/value head floor(n / (N/K))),
bias broadcastable to (B, N, T, S) and added to the logits, a boolean mask of the same layout
(True = take part in attention). The steps and what justifies each (:func:`provenance`):

- the attention core softmax(Q Kᵀ [+ M]) V, the heads an array axis: the rhs of
  ``scale_folds_into_query_projection`` (claim 0 without an additive term, 1 with one), lowered for
  JAX (``jax.numpy`` calls, max-shifted softmax);
- the scale multiplied into the query before the core (that the scale of the scores can be carried by
  the query is the same theorem: its two sides differ by where 1/sqrt(d_k) sits);
- for GQA the N/K query heads of each key/value head stacked along the query axis (code: the rows of
  a row softmax are independent), so the keys and values are not repeated in memory (that head n
  then reads key/value head floor(n / (N/K)) is ``repeat_kv_head_h_reads_group_floor``);
- in ``multihead_attention``: the projections (the blocks of the rhs of ``fused_qkv_projection``, the
  scale folded into W^Q and b^Q), and the output projection after the heads are side by side
  (``heads_concatenate_before_output_projection``).

What is code, said plainly: the layout (B, T, N, H) moved to (B, N, T, H) and back, the masks (the
boolean mask, ``is_causal`` (top-left, as JAX's), ``local_window_size`` and the sequence lengths
combined, then one additive term -0.7 · float32-max where a key is hidden, JAX's own number; a hidden
bias entry, and the query of a query that sees no key, are replaced by 0 so that, as in JAX, which
replaces hidden logits, no gradient flows through them), and the
float32 accumulation of bfloat16 and float16 inputs. The functions are pure ``jax.numpy`` code, so
``jax.jit``, ``jax.grad`` and ``jax.vmap`` apply; their gradients are JAX's autodiff of the proved
forward, or with ``vjp="proved"`` the core's proved VJPs (``lower(expr, target="jax", backward=True)``).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..errors import HeadError, InputError, ShapeError
from .steps import Step
from .targets.multihead import _lowered

__all__ = ["dot_product_attention", "multihead_attention", "provenance"]

_TARGET = "jax"


def _from_kernel(step: str, when: str, name: str, note: str = "") -> Step:
    p = _lowered(name, _TARGET)[0].provenance
    return Step(step, when, p.theorem, p.claim, p.side, p.status, note)


def provenance(function: str = "dot_product_attention") -> tuple:
    """The steps of ``function`` ("dot_product_attention" or "multihead_attention"), each with the
    theorem (claim, side, verdict) it is lowered from, or "code". Lowers the kernels (their claims
    read from the verdict cache, or proved) if they are not lowered yet."""
    from .lower import proved_claim

    if function not in ("dot_product_attention", "multihead_attention"):
        raise InputError(f"provenance: function is 'dot_product_attention' or 'multihead_attention', "
                         f"got {function!r}")
    steps = []
    if function == "multihead_attention":
        steps += [_from_kernel("in-projection, one GEMM for query, key and value", "query is key is value",
                               "qkv_bias", "the scale 1/sqrt(d_k) folded into W^Q and b^Q"),
                  _from_kernel("in-projection of the query (scale folded in)", "query, key, value not one array",
                               "proj_q_bias"),
                  _from_kernel("in-projection of the key", "query, key, value not one array", "proj_k_bias"),
                  _from_kernel("in-projection of the value", "query, key, value not one array", "proj_v_bias"),
                  Step("heads as an array axis", "always", None, note="(B, T, N·H) viewed as (B, T, N, H) and back")]
    v = proved_claim("repeat_kv_head_h_reads_group_floor", 0)
    fold = proved_claim("scale_folds_into_query_projection", 0)
    steps += [
        Step("layout", "always", None, note="(B, T, N, H) moved to (B, N, T, H) and back; a 3-D input gets B = 1"),
        Step("scale times the query", "always", "scale_folds_into_query_projection", 0, "lhs = rhs", fold.status,
             "the sides differ by where the scale sits; here it multiplies the query"),
        Step("query heads grouped over the key/value heads", "K < N (GQA, MQA)",
             "repeat_kv_head_h_reads_group_floor", 0, "both sides", v.status,
             "code: the N/K query heads of a key/value head stacked along the query axis (the rows of a row "
             "softmax are independent), nothing repeated in memory; the theorem says head n then reads "
             "key/value head floor(n / (N/K)), GQA's definition"),
        Step("masks", "mask, is_causal, local_window_size or sequence lengths", None,
             note="combined as booleans (True = attend), then -0.7·float32-max added where a key is hidden, "
                  "as jax.nn.dot_product_attention; the bias is added"),
        _from_kernel("attention core softmax(Q Kᵀ) V", "no bias and no mask", "core"),
        _from_kernel("attention core softmax(Q Kᵀ + M) V", "a bias or a mask", "core_mask"),
        Step("float32 accumulation", "bfloat16 or float16 inputs", None,
             note="the core runs in float32, the result is cast back"),
    ]
    if function == "multihead_attention":
        steps.append(_from_kernel("output projection after the heads are side by side", "always", "output_bias"))
    return tuple(steps)


def _large_negative():
    return -0.7 * float(np.finfo(np.float32).max)


def _four_d(x, name):
    x = jnp.asarray(x)
    if x.ndim == 3:
        return x[None], False
    if x.ndim != 4:
        raise ShapeError(f"{name}: expected (B, T, N, H) or (T, N, H) (batch, positions, heads, head dim), got "
                         f"shape {tuple(x.shape)}")
    return x, True


def _mask_layout(x, name, shape):
    """``x`` (bias or mask) broadcast to (B, N, T, S), or a ShapeError naming it."""
    x = jnp.asarray(x)
    if x.ndim == 3:
        x = x[None]
    try:
        return jnp.broadcast_to(x, shape)
    except ValueError as exc:
        raise ShapeError(f"{name}: shape {tuple(x.shape)} does not broadcast to (B, N, T, S) = {shape}") from exc


def _hidden(mask, is_causal, local_window_size, q_len, kv_len, shape):
    """The combined boolean mask (True = attend) of (B, N, T, S), or None when nothing is hidden."""
    B, _, T, S = shape
    keep = None

    def both(a, b):
        return b if a is None else a & b

    if mask is not None:
        mask = jnp.asarray(mask)
        if mask.dtype != jnp.bool_:
            raise InputError(f"mask: a boolean array (True = take part in attention) is expected, got dtype "
                             f"{mask.dtype}, shape {tuple(mask.shape)}; pass an additive mask as bias")
        keep = _mask_layout(mask, "mask", shape)
    t, s = jnp.arange(T)[:, None], jnp.arange(S)[None, :]
    if is_causal:
        keep = both(keep, s <= t)  # top-left, as jax.nn.dot_product_attention
    if local_window_size is not None:
        left, right = ((local_window_size, local_window_size) if isinstance(local_window_size, int)
                       else local_window_size)
        keep = both(keep, (t <= s + left) & (t >= s - right))
    if q_len is not None:
        keep = both(keep, (jnp.arange(T)[None, :, None] < jnp.asarray(q_len)[:, None, None])[:, None])
    if kv_len is not None:
        keep = both(keep, (jnp.arange(S)[None, None, :] < jnp.asarray(kv_len)[:, None, None])[:, None])
    return None if keep is None else jnp.broadcast_to(keep, shape)


def _check_shapes(q, k, v):
    B, T, N, H = q.shape
    if k.shape != v.shape:
        raise ShapeError(f"key {tuple(k.shape)} and value {tuple(v.shape)}: they should have one shape (B, S, K, H)")
    if k.shape[0] != B or k.shape[3] != H:
        raise ShapeError(f"query (B, T, N, H) = {tuple(q.shape)} and key (B, S, K, H) = {tuple(k.shape)}: the "
                         "batch sizes B and head dims H should agree")
    K = k.shape[2]
    if N % K:
        raise HeadError(f"query has N = {N} heads, key and value K = {K}: N must be a multiple of K "
                        f"(grouped-query attention reads key/value head floor(n / (N/K)))")


_PROVED_CORES: dict = {}


def _core(name: str, vjp: str):
    """The attention core kernel ``name``; with ``vjp="proved"`` the same kernel with its proved
    backward pass (a ``jax.custom_vjp``: each VJP proved by ``verify_gradient`` when first used)."""
    kernel = _lowered(name, _TARGET)[0]
    if vjp == "autodiff":
        return kernel
    if name not in _PROVED_CORES:
        from .lower import lower

        _PROVED_CORES[name] = lower(kernel.expr, args=list(kernel.args), target=_TARGET, backward=True,
                                    provenance=kernel.provenance)
    return _PROVED_CORES[name]


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False,
                          query_seq_lengths=None, key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, vjp="autodiff"):
    """``jax.nn.dot_product_attention`` from proved kernels: the same arguments, shapes and result.

    query (B, T, N, H) or (T, N, H); key, value (B, S, K, H) or (S, K, H), K dividing N; bias and
    mask broadcastable to (B, N, T, S) (mask boolean, True = attend); ``scale`` default 1/sqrt(H);
    ``is_causal``: query t sees keys s <= t; ``query_seq_lengths``, ``key_value_seq_lengths`` (B,):
    positions at or after the length are hidden; ``local_window_size``: (left, right) or one int.
    ``implementation``: None or "xla" (the only one here). Returns the shape of ``query``.
    ``vjp``: "autodiff" (JAX differentiates the proved forward) or "proved" (the attention core's
    backward is its VJPs proved by ``verify_gradient``, a ``jax.custom_vjp``; proving them takes some
    seconds at the first call in a process).
    """
    if vjp not in ("autodiff", "proved"):
        raise InputError(f"vjp: 'autodiff' or 'proved', got {vjp!r}")
    if implementation not in (None, "xla"):
        raise InputError(f"implementation: symattn's kernel is plain jax.numpy code (None or 'xla'), got "
                         f"{implementation!r}; for cuDNN call jax.nn.dot_product_attention")
    q, batched = _four_d(query, "query")
    k, _ = _four_d(key, "key")
    v, _ = _four_d(value, "value")
    _check_shapes(q, k, v)
    B, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    out_dtype = q.dtype
    work = jnp.promote_types(q.dtype, jnp.float32)  # bfloat16 / float16 accumulate in float32
    q, k, v = (x.astype(work) for x in (q, k, v))
    c = (1.0 / float(np.sqrt(H))) if scale is None else scale
    shape = (B, N, T, S)
    keep = _hidden(mask, is_causal, local_window_size, query_seq_lengths, key_value_seq_lengths, shape)
    M = None if bias is None else _mask_layout(bias, "bias", shape).astype(work)
    qt = jnp.transpose(q * c, (0, 2, 1, 3))                           # (B, N, T, H)
    if keep is not None:
        hide = jnp.where(keep, jnp.zeros((), work), jnp.asarray(_large_negative(), work))
        # as JAX's, which replaces hidden logits: no gradient flows to a hidden bias entry, nor to the
        # query and keys of a query that sees no key at all (its output is the mean of the values)
        M = hide if M is None else jnp.where(keep, M, 0) + hide
        qt = jnp.where(jnp.any(keep, axis=-1, keepdims=True), qt, 0)
    g = N // K
    # query head n = k g + j: the g query heads of key/value head k stacked along the query axis
    qh = qt.reshape(B, K, g * T, H)                                  # (B, K, g·T, H)
    kh = jnp.transpose(k, (0, 2, 1, 3))                             # (B, K, S, H)
    vh = jnp.transpose(v, (0, 2, 1, 3))                             # (B, K, S, H)
    if M is None:
        heads = _core("core", vjp)(qh, kh, vh)
    else:
        heads = _core("core_mask", vjp)(qh, kh, vh, M.reshape(B, K, g * T, S))
    out = jnp.transpose(heads.reshape(B, N, T, H), (0, 2, 1, 3)).astype(out_dtype)  # (B, T, N, H)
    if query_seq_lengths is not None:  # as JAX's: the rows of padded queries are zero
        seen = jnp.arange(T)[None, :] < jnp.asarray(query_seq_lengths)[:, None]  # (B, T)
        out = out * seen[:, :, None, None].astype(out_dtype)
    return out if batched else out[0]


def multihead_attention(query, key, value, w_q, w_k, w_v, w_o, *, num_heads, num_kv_heads=None, b_q=None,
                        b_k=None, b_v=None, b_o=None, bias=None, mask=None, scale=None, is_causal=False,
                        key_value_seq_lengths=None, vjp="autodiff"):
    """Multi-head attention with projections, (B, T, E) -> (B, T, E) (or without the batch axis).

    query (B, T, E); key (B, S, kdim), value (B, S, vdim); w_q (E, N·H), w_k (kdim, K·H), w_v (vdim, K·H),
    w_o (N·H, E) used as ``x @ w`` (a ``torch.nn.Linear`` weight is its transpose); biases of the widths
    (all of b_q, b_k, b_v or none; b_o optional); N = ``num_heads``, K = ``num_kv_heads`` (default N);
    bias, mask, scale, is_causal, key_value_seq_lengths, vjp as :func:`dot_product_attention`.
    """
    N = num_heads
    K = N if num_kv_heads is None else num_kv_heads
    for what, x in (("num_heads", N), ("num_kv_heads", K)):
        if isinstance(x, bool) or not isinstance(x, int) or x < 1:
            raise HeadError(f"{what} must be a positive integer, got {x!r}")
    if N % K:
        raise HeadError(f"num_kv_heads = {K} must divide num_heads = {N}")
    same = query is key and key is value
    query, key, value = (jnp.asarray(x) for x in (query, key, value))
    w_q, w_k, w_v, w_o = (jnp.asarray(w) for w in (w_q, w_k, w_v, w_o))
    if w_q.shape[-1] % N:
        raise HeadError(f"w_q: its {w_q.shape[-1]} columns do not split into num_heads = {N} heads")
    H = w_q.shape[-1] // N
    for nm, w in (("w_k", w_k), ("w_v", w_v)):
        if w.shape[-1] != K * H:
            raise ShapeError(f"{nm}: expected num_kv_heads · head_dim = {K} · {H} = {K * H} columns, got shape "
                             f"{tuple(w.shape)}")
    if tuple(w_o.shape) != (N * H, query.shape[-1]):
        raise ShapeError(f"w_o: expected (num_heads · head_dim, E) = ({N * H}, {query.shape[-1]}), got "
                         f"{tuple(w_o.shape)}")
    given = [b is not None for b in (b_q, b_k, b_v)]
    if any(given) and not all(given):
        raise ShapeError("b_q, b_k, b_v: give all three projection biases or none")
    sizes = {"H": N, "G": K, "d_k": H, "d_v": H}

    def call(name, **arrays):
        kernel, extra = _lowered(name, _TARGET)
        return kernel(**arrays, **{d: sizes[d] for d in extra})

    def row(b):
        return jnp.asarray(b).reshape(1, -1)

    b = "_bias" if all(given) else ""
    biases = {"b^Q": row(b_q), "b^K": row(b_k), "b^V": row(b_v)} if b else {}
    if same:
        qkv = call("qkv" + b, X=query, **{"W^Q": w_q, "W^K": w_k, "W^V": w_v}, **biases)
        q, k, v = qkv[..., :N * H], qkv[..., N * H:(N + K) * H], qkv[..., (N + K) * H:]
    else:
        q = call("proj_q" + b, X=query, **{"W^Q": w_q}, **({"b^Q": biases["b^Q"]} if b else {}))
        k = call("proj_k" + b, X=key, **{"W^K": w_k}, **({"b^K": biases["b^K"]} if b else {}))
        v = call("proj_v" + b, X=value, **{"W^V": w_v}, **({"b^V": biases["b^V"]} if b else {}))
    # the projection folded 1/sqrt(H) into the query; another scale is the ratio
    c = 1.0 if scale is None else scale * float(np.sqrt(H))
    split = lambda x, heads: x.reshape(*x.shape[:-1], heads, H)  # noqa: E731  (..., T, heads·H) -> (..., T, heads, H)
    z = dot_product_attention(split(q, N), split(k, K), split(v, K), bias, mask, scale=c, is_causal=is_causal,
                              key_value_seq_lengths=key_value_seq_lengths, vjp=vjp)
    z = z.reshape(*z.shape[:-2], N * H)                              # (..., T, N·H)
    if b_o is None:
        return call("output", Z=z, **{"W^O": w_o})
    return call("output_bias", Z=z, **{"W^O": w_o, "b^O": row(b_o)})
