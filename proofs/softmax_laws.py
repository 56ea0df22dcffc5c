"""Softmax laws (seed 000's column Softmax, seed 002's row softmax): columns sum to one, shifts."""

import sympy as sp

import symattn.defs as sa
from symattn.statements import theorem

from ._seed002 import d_k, d_v, m, n


@theorem(
    "softmax_columns_sum_to_one",
    "1ᵀ Softmax(X) = 1ᵀ (each column sums to 1); row twin: softmax(X) 1 = 1",
)
def _():
    X = sp.MatrixSymbol("X", m, n)
    return [
        (sp.OneMatrix(1, m) * sa.softmax(X, 0), sp.OneMatrix(1, n)),
        (sa.softmax(X, 1) * sp.OneMatrix(n, 1), sp.OneMatrix(m, 1)),
    ]


@theorem(
    "softmax_shift_invariance",
    "Softmax(X + 1 cᵀ) = Softmax(X) (a constant per column); keys K + c 1ᵀ (the same c added to "
    "every key) give the same weights Softmax((K + c1ᵀ)ᵀQ/√d_k) and the same Attention; row twins",
)
def _():
    X = sp.MatrixSymbol("X", m, n)
    c_col = sp.MatrixSymbol("c", 1, n)   # one constant per column
    c_row = sp.MatrixSymbol("c", m, 1)   # one constant per row (row convention)
    Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)
    c = sp.MatrixSymbol("c", d_k, 1)     # the vector added to every key
    shifted = K + c * sp.OneMatrix(1, m)
    return [
        (sa.softmax(X + sp.OneMatrix(m, 1) * c_col, 0), sa.softmax(X, 0)),
        (sa.softmax(X + c_row * sp.OneMatrix(1, n), 1), sa.softmax(X, 1)),
        (sa.softmax(shifted.T * Q / sp.sqrt(d_k), 0), sa.softmax(K.T * Q / sp.sqrt(d_k), 0)),
        (sa.attention(Q, shifted, V), sa.attention(Q, K, V)),
        (sa.attention(Q.T, shifted.T, V.T, convention="row"), sa.attention(Q.T, K.T, V.T, convention="row")),
    ]
