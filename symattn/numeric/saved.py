"""What the multi-head forward keeps for its backward (``multihead_attention(..., return_saved=True)``).

All of it is linear in the sequence length: the log-sum-exp L of every query row and head (from
which the backward recomputes P = exp(S - L 1ᵀ), block by block), the projections and the heads
before W^O. No n × m array is kept.

>>> import numpy as np, symattn.numeric as sn
>>> x = np.random.default_rng(0).normal(size=(5, 8))
>>> w = np.eye(8)
>>> out, saved = sn.multihead_attention(x, x, x, w, w, w, w, num_heads=2, return_saved=True)
>>> saved.lse.shape, saved.q.shape, saved.heads.shape
((2, 5), (5, 8), (5, 8))
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Saved(NamedTuple):
    """The forward's saved statistics and intermediates, for :func:`multihead_attention_backward`.

    - ``lse``: (..., H, n), L_hi = log Σ_j exp(s_hij), s the masked scaled scores of head h
      (-inf for a row that sees no key);
    - ``q``: (..., n, H·d_k), the query projection already scaled, (query W^Q + b^Q)/sqrt(d_k);
    - ``k``: (..., m, G·d_k) and ``v``: (..., m, G·d_v), the key and value projections;
    - ``heads``: (..., n, H·d_v), [head_1 ... head_H] before W^O (the O of each head).
    """

    lse: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    heads: np.ndarray
