"""One step of autoregressive decoding with a KV cache.

The newest query is the last of the t + 1 positions, so the causal mask hides nothing from
it: softmax(q Kᵀ/sqrt(d_k) + CausalMask(1, t + 1)) V = softmax(q Kᵀ/sqrt(d_k)) V
(``kv_cache_step_needs_no_mask``). Run over positions 1..n, the steps give the rows of full
causal attention (tested).
"""

from __future__ import annotations

import numpy as np

from . import checks
from .kernels import DECODE


def kv_decode_step(query, new_key, new_value, key_cache=None, value_cache=None, *, scale=None):
    """Append the newest key and value to the cache and attend with the newest query.

    query: (..., 1, d_k); new_key: (..., 1, d_k); new_value: (..., 1, d_v); caches (..., t, d_k)
    and (..., t, d_v) or None (the first step). Heads are batch axes. Returns
    (output (..., 1, d_v), key_cache (..., t + 1, d_k), value_cache (..., t + 1, d_v)).
    """
    q = checks.array("query", query)
    k_new, v_new = checks.array("new_key", new_key), checks.array("new_value", new_value)
    for nm, a in (("query", q), ("new_key", k_new), ("new_value", v_new)):
        checks.same("kv_decode_step", f"{nm}'s number of positions", a.shape[-2], "one new position", 1)
    if (key_cache is None) != (value_cache is None):
        raise checks.InputError("kv_decode_step: give both caches or neither")
    if key_cache is None:
        K, V = k_new, v_new
    else:
        kc, vc = checks.array("key_cache", key_cache), checks.array("value_cache", value_cache)
        checks.same("kv_decode_step", "key_cache's positions", kc.shape[-2], "value_cache's positions",
                    vc.shape[-2])
        checks.same("kv_decode_step", "key_cache's d_k", kc.shape[-1], "new_key's d_k", k_new.shape[-1])
        checks.same("kv_decode_step", "value_cache's d_v", vc.shape[-1], "new_value's d_v", v_new.shape[-1])
        for cache, new in ((kc, k_new), (vc, v_new)):
            if cache.shape[:-2] != new.shape[:-2]:
                raise checks.ShapeError(f"kv_decode_step: the cache has batch axes {cache.shape[:-2]} but the "
                                        f"new position has {new.shape[:-2]}; they must be equal")
        K = np.concatenate([kc, k_new], axis=-2)
        V = np.concatenate([vc, v_new], axis=-2)
    checks.same("kv_decode_step", "query's d_k", q.shape[-1], "the keys' d_k", K.shape[-1])
    checks.batches("kv_decode_step", query=q, keys=K, values=V)
    factor = checks.scale_factor(scale, q.shape[-1])
    dtype = np.result_type(q, K, V)
    out = DECODE(q=(q * dtype.type(factor)).astype(dtype, copy=False), K=K, V=V)
    return out, K, V
