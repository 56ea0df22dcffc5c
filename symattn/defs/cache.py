"""A KV cache (seed 002's Llama code: ``cache_k[:, start_pos : start_pos + seqlen] = xk``).

Column convention: the cache after t steps holds the keys and values of positions 1..t,

    K_{≤t} = [k_1 ... k_t] ∈ M^{d_k×t},   V_{≤t} = [v_1 ... v_t] ∈ M^{d_v×t},

one decoding step appends k_{t+1}, v_{t+1}, K_{≤t+1} = [K_{≤t}  k_{t+1}], and attends with the
new query alone: z_{t+1} = Attention(q_{t+1}, K_{≤t+1}, V_{≤t+1}) (no mask is needed, since the
cache holds no future position). In the row convention the cache grows by rows.
"""

from __future__ import annotations

import sympy as sp

from .attention import attention, check_convention
from .shapes import as_matrix, require_equal


class KVCache:
    """Keys and values of positions 1..t; :meth:`extend` appends one step, :meth:`decode` attends.

    >>> import sympy as sp
    >>> from symattn import dims
    >>> t, d_k, d_v = dims("t d_k d_v")
    >>> cache = KVCache(sp.MatrixSymbol("K", d_k, t), sp.MatrixSymbol("V", d_v, t))
    >>> cache.length
    t
    >>> cache.extend(sp.MatrixSymbol("k", d_k, 1), sp.MatrixSymbol("v", d_v, 1)).length
    t + 1
    """

    def __init__(self, keys, values, convention: str = "column"):
        check_convention(convention)
        op = "KVCache(keys, values)"
        self.keys = as_matrix(keys, "keys", op)
        self.values = as_matrix(values, "values", op)
        self.convention = convention
        axis = 1 if convention == "column" else 0
        require_equal(self.keys.shape[axis], self.values.shape[axis], op,
                      "the cache needs one value per key", [("keys", self.keys), ("values", self.values)])

    @property
    def length(self):
        """t, the number of cached positions."""
        return self.keys.shape[1 if self.convention == "column" else 0]

    def extend(self, k, v) -> "KVCache":
        """The cache after one more step: [K k], [V v] (column) or [K; k], [V; v] (row)."""
        op = "KVCache.extend(k, v)"
        k, v = as_matrix(k, "k", op), as_matrix(v, "v", op)
        if self.convention == "column":
            require_equal(k.rows, self.keys.rows, op, "the new key must have d_k rows",
                          [("keys", self.keys), ("k", k)])
            require_equal(v.rows, self.values.rows, op, "the new value must have d_v rows",
                          [("values", self.values), ("v", v)])
            return KVCache(sp.BlockMatrix([[self.keys, k]]), sp.BlockMatrix([[self.values, v]]))
        require_equal(k.cols, self.keys.cols, op, "the new key must have d_k columns",
                      [("keys", self.keys), ("k", k)])
        require_equal(v.cols, self.values.cols, op, "the new value must have d_v columns",
                      [("values", self.values), ("v", v)])
        return KVCache(sp.BlockMatrix([[self.keys], [k]]), sp.BlockMatrix([[self.values], [v]]), "row")

    def decode(self, q, k, v, *, score=None):
        """One decoding step: append (k, v), then Attention(q, K_{≤t+1}, V_{≤t+1})."""
        step = self.extend(k, v)
        return attention(q, step.keys, step.values, score=score, convention=self.convention)
