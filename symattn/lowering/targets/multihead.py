"""Multi-head attention for PyTorch, JAX or any array-API library, from proved kernels.

    head_h = softmax((query W_h^Q + b_h^Q)(key W_h^K + b_h^K)ᵀ/sqrt(d_k) [+ causal mask]) (value W_h^V + b_h^V)
    MultiHead = [head_1 ... head_H] W^O + b^O

Three kernels, each one side of a theorem of ``proofs/rewrites.py`` lowered for the target
(``lower_theorem(..., target=...)``, which proves the claim first):

- the projections: one GEMM for Q, K and V when query, key and value are one array
  (``fused_qkv_projection``, the scale 1/sqrt(d_k) folded into W^Q and b^Q by
  ``scale_folds_into_query_projection``), otherwise each block of its right-hand side;
- the attention core softmax(Q Kᵀ [+ M]) V with the heads as a batch axis
  (``scale_folds_into_query_projection``, the scale already folded);
- the output projection after the heads are placed side by side
  (``heads_concatenate_before_output_projection``).

What is code rather than a theorem: the reshapes that put the heads on a batch axis and back.
Weights are laid out as in :func:`symattn.numeric.multihead_attention` (``query @ w_q``).
"""

from __future__ import annotations

import sympy as sp

from ...defs.softmax import Softmax
from ...errors import HeadError, ShapeError
from ..lower import lower_theorem
from . import check_target

_KERNELS: dict = {}


def _spec(name: str):
    import symattn.proofs.rewrites as R

    if name.startswith(("core", "weights")):
        # "..._lhs": the left-hand side, the scale 1/sqrt(d_k) applied to the scores (Q unscaled),
        # else the right-hand side, the scale already folded into Q
        side = "lhs" if name.endswith("_lhs") else "rhs"
        base = name.removesuffix("_lhs")
        q, k, v = R.head_inputs(True)
        if side == "lhs":
            q = R.X * R.HEAD_W["Q"] + R.ones(R.n) * R.HEAD_B["Q"]
        masked = base.endswith("_mask")
        claim = 2 if base == "core_causal" else 1 if masked else 0
        opts = {"inputs": {q: R.Q, k: R.K, v: R.V}, "args": [R.Q, R.K, R.V] + ([R.M] if masked else [])}
        if base.startswith("weights"):  # the softmax of that side: the attention weights, softmax(Q Kᵀ [+ M])
            expr = R.scale_fold_sides(R.M if masked else None, True)[side == "rhs"]
            opts["part"] = next(x for x in sp.preorder_traversal(expr) if isinstance(x, Softmax))
            opts["args"] = [R.Q, R.K] + ([R.M] if masked else [])
        return ("scale_folds_into_query_projection", claim, side, opts)
    if name in ("qkv_weights", "qkv_bias_row", "qkv_apply", "qkv_apply_bias"):  # the fused projection in two
        # steps: the scaled weights side by side, then X W_cat (+ 1 b_cat)
        W, b = R.FUSED_W, R.FUSED_B
        w_block = sp.BlockMatrix([[W["Q"] / R.ROOT, W["K"], W["V"]]])
        b_block = sp.BlockMatrix([[b["Q"] / R.ROOT, b["K"], b["V"]]])
        if name == "qkv_weights":
            return ("fused_qkv_projection", 1, "lhs", {"part": w_block})
        if name == "qkv_bias_row":
            return ("fused_qkv_projection", 0, "lhs", {"part": b_block})
        w_cat = sp.MatrixSymbol("W_cat", R.d_model, w_block.shape[1])
        if name == "qkv_apply":
            return ("fused_qkv_projection", 1, "lhs", {"inputs": {w_block: w_cat}})
        b_cat = sp.MatrixSymbol("b_cat", 1, w_block.shape[1])
        return ("fused_qkv_projection", 0, "lhs", {"inputs": {w_block: w_cat, b_block: b_cat}})
    if name.startswith("qkv"):
        return ("fused_qkv_projection", 0 if name.endswith("bias") else 1, "lhs", {})
    if name.startswith("proj"):
        part, bias = name.split("_")[1], name.endswith("bias")
        _, rhs = R.fused_sides(bias)
        return ("fused_qkv_projection", 0 if bias else 1, "rhs", {"part": rhs.blocks[0, "qkv".index(part)]})
    Z = sp.MatrixSymbol("Z", R.n, R.H * R.d_v)
    W_O = sp.MatrixSymbol("W^O", R.H * R.d_v, R.d_model)
    return ("heads_concatenate_before_output_projection", 0 if name.endswith("bias") else 1, "lhs",
            {"inputs": {R.CONCAT: Z, R.STACK_O: W_O}})


def kernel(name: str, target: str):
    """The proved kernel ``name`` lowered for ``target``, cached: qkv, qkv_bias, proj_q, ..., proj_v_bias
    (projections), qkv_weights, qkv_bias_row, qkv_apply, qkv_apply_bias (the fused projection in two
    steps: the scaled weights side by side, then X W_cat (+ 1 b_cat)), core, core_mask, core_causal
    (softmax(Q Kᵀ [+ M | + causal mask]) V), weights, weights_mask (the softmax alone: the attention
    weights), each of these five with ``_lhs`` appended (core_lhs, ..., weights_mask_lhs: the same from
    the lhs of ``scale_folds_into_query_projection``, Q unscaled and the scale 1/sqrt(d_k) applied to
    the scores), output, output_bias."""
    return _lowered(name, target)[0]


def _lowered(name: str, target: str):
    """(kernel, the names of the sizes it takes as keywords), cached: the names are printed from
    their SymPy symbols once, not on every call."""
    key = (name, target)
    if key not in _KERNELS:
        th, claim, side, opts = _spec(name)
        k = lower_theorem(th, claim, side, target=check_target(target), **opts)
        _KERNELS[key] = (k, tuple(str(d) for d in k.extra_dims))
    return _KERNELS[key]


def _call(name, target, sizes, **arrays):
    """Run kernel ``name`` on the arrays, with the sizes that no input axis shows."""
    k, extra = _lowered(name, target)
    return k(**arrays, **{d: sizes[d] for d in extra})


def _namespace(x, target):
    if target == "torch":
        import torch

        return torch
    if target == "jax":
        import jax.numpy as jnp

        return jnp
    from array_api_compat import array_namespace

    return array_namespace(x)


def _to_heads(xp, x, H, d):
    """(..., n, H·d) -> (..., H, n, d)."""
    x = xp.reshape(x, tuple(x.shape[:-1]) + (H, d))
    axes = list(range(x.ndim))
    axes[-3], axes[-2] = axes[-2], axes[-3]
    return xp.permute_dims(x, tuple(axes)) if hasattr(xp, "permute_dims") else x.permute(*axes)


def _from_heads(xp, z):
    """(..., H, n, d) -> (..., n, H·d)."""
    axes = list(range(z.ndim))
    axes[-3], axes[-2] = axes[-2], axes[-3]
    z = xp.permute_dims(z, tuple(axes)) if hasattr(xp, "permute_dims") else z.permute(*axes)
    return xp.reshape(z, tuple(z.shape[:-2]) + (z.shape[-2] * z.shape[-1],))


def multihead_attention(query, key, value, w_q, w_k, w_v, w_o, *, num_heads: int, b_q=None, b_k=None,
                        b_v=None, b_o=None, causal: bool = False, target: str = "torch"):
    """Multi-head attention, (..., n, d_model) -> (..., n, d_model), on ``target``'s arrays.

    query: (..., n, d_model); key, value: (..., m, d_model); w_q, w_k: (d_model, H·d_k);
    w_v: (d_model, H·d_v); w_o: (H·d_v, d_model); biases (1, width) or None (all of b_q, b_k, b_v
    or none); ``causal``: query i sees keys j <= i + m - n.
    """
    H = num_heads
    if isinstance(H, bool) or not isinstance(H, int) or H < 1:
        raise HeadError(f"num_heads must be a positive integer, got {H!r}")
    check_target(target)
    for nm, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        if w.shape[-1] % H:
            raise HeadError(f"{nm}: its {w.shape[-1]} columns do not split into num_heads = {H} heads")
    d_k, d_v = w_q.shape[-1] // H, w_v.shape[-1] // H
    if tuple(w_o.shape) != (H * d_v, query.shape[-1]):
        raise ShapeError(f"w_o should be (num_heads·d_v, d_model) = ({H * d_v}, {query.shape[-1]}), "
                         f"got {tuple(w_o.shape)}")
    given = [b is not None for b in (b_q, b_k, b_v)]
    if any(given) and not all(given):
        raise ShapeError("b_q, b_k, b_v: give all three projection biases or none")
    suffix = "_bias" if all(given) else ""
    sizes = {"H": H, "G": H, "d_k": d_k, "d_v": d_v}
    if query is key and key is value:
        # the fused projection in two steps: the scaled weights side by side, then one GEMM
        w_cat = _call("qkv_weights", target, sizes, **{"W^Q": w_q, "W^K": w_k, "W^V": w_v})
        if suffix:
            b_cat = _call("qkv_bias_row", target, sizes, **{"b^Q": b_q, "b^K": b_k, "b^V": b_v})
            qkv = _call("qkv_apply_bias", target, sizes, X=query, W_cat=w_cat, b_cat=b_cat)
        else:
            qkv = _call("qkv_apply", target, sizes, X=query, W_cat=w_cat)
        q, k, v = qkv[..., : H * d_k], qkv[..., H * d_k: 2 * H * d_k], qkv[..., 2 * H * d_k:]
    else:
        def project(part, x, w, b):
            extra = {f"b^{part.upper()}": b} if suffix else {}
            return _call(f"proj_{part}{suffix}", target, sizes, X=x, **{f"W^{part.upper()}": w}, **extra)
        q, k, v = project("q", query, w_q, b_q), project("k", key, w_k, b_k), project("v", value, w_v, b_v)
    xp = _namespace(q, target)
    heads = kernel("core_causal" if causal else "core", target)(
        _to_heads(xp, q, H, d_k), _to_heads(xp, k, H, d_k), _to_heads(xp, v, H, d_v))  # (..., H, n, d_v)
    z = _from_heads(xp, heads)                                                          # (..., n, H·d_v)
    if b_o is not None:
        return _call("output_bias", target, sizes, Z=z, **{"W^O": w_o, "b^O": b_o})
    return _call("output", target, sizes, Z=z, **{"W^O": w_o})
