"""Hand-written NumPy references for the tests: independent of symattn's own evaluator.

Matrices are the last two axes; leading axes are batch axes.
"""

import numpy as np


def softmax_columns(S):
    z = S - S.max(axis=-2, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-2, keepdims=True)


def softmax_rows(S):
    z = S - S.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def attention_columns(Q, K, V, scale=True):
    """V Softmax(Kᵀ Q / sqrt(d_k)), seed 000."""
    S = np.swapaxes(K, -1, -2) @ Q
    if scale:
        S = S / np.sqrt(Q.shape[-2])
    return V @ softmax_columns(S)


def multihead_columns(Q, K, V, WQ, WK, WV, WO):
    """Σ_h W_h^O Attention(W_h^Q Q, W_h^K K, W_h^V V), heads looped one by one."""
    out = 0.0
    for wq, wk, wv, wo in zip(WQ, WK, WV, WO):
        out = out + wo @ attention_columns(wq @ Q, wk @ K, wv @ V)
    return out


def multihead_rows(Q, K, V, WQ, WK, WV, WO):
    """Concat(head_1, ..., head_H) W^O with head_h = softmax(Q W_h^Q (K W_h^K)ᵀ / sqrt(d_k)) V W_h^V."""
    heads = []
    for wq, wk, wv in zip(WQ, WK, WV):
        q, k, v = Q @ wq, K @ wk, V @ wv
        heads.append(softmax_rows(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])) @ v)
    return np.concatenate(heads, axis=-1) @ np.concatenate(WO, axis=-2)
