"""Symbols shared by the seed-002 theorem modules (pooling, equivariance, GQA, causal, RoPE)."""

import sympy as sp

import symattn.defs as sa

n, m, N, d, d_k, d_v, d_model, H = sa.dims("n m N d d_k d_v d_model H")

# features / tokens, column convention (seed 000): the columns of X
X = sp.MatrixSymbol("X", d_model, N)
q_pool = sp.MatrixSymbol("q_pool", d_model, 1)

# one head's projections
W_p = sp.MatrixSymbol("W_p", d_k, d_model)
W_Q = sp.MatrixSymbol("W^Q", d_k, d_model)
W_K = sp.MatrixSymbol("W^K", d_k, d_model)
W_V = sp.MatrixSymbol("W^V", d_v, d_model)

# head-indexed families
F_p = sa.Family("W_p", d_k, d_model)
F_Q = sa.Family("W^Q", d_k, d_model)
F_K = sa.Family("W^K", d_k, d_model)
F_V = sa.Family("W^V", d_v, d_model)
F_O = sa.Family("W^O", d_model, d_v)
