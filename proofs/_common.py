"""Symbols shared by the theorem modules, named as the seeds name them."""

import sympy as sp

import symattn.defs as sa

n, m, d_model, d_k, d_v, H = sa.dims("n m d_model d_k d_v H")
h = sa.h

# seed 000, column convention: vectors are columns
Q = sp.MatrixSymbol("Q", d_model, n)
K = sp.MatrixSymbol("K", d_model, m)
V = sp.MatrixSymbol("V", d_model, m)
X = sp.MatrixSymbol("X", d_model, n)

W_Q = sa.Family("W^Q", d_k, d_model)
W_K = sa.Family("W^K", d_k, d_model)
W_V = sa.Family("W^V", d_v, d_model)
W_O = sa.Family("W^O", d_model, d_v)

f = sa.ScoreFunction("f")


