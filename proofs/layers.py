"""Deep models: a stack of L residual self-attention layers, for every L (induction on the number of layers).

Layer l of the math papers' form (column convention, tokens are the columns of S, d_model × n):

    S <- S + W^V_l S Softmax((W^K_l S)ᵀ W^Q_l S)

and of the Transformer paper's form (row convention, tokens are the rows of R, n × d_model):

    R <- R + softmax_row(R W^Q_lᵀ (R W^K_lᵀ)ᵀ) R W^V_lᵀ

each layer with weights of its own. The theorem: the row stack on Xᵀ is the transpose of the column
stack on X after every number of layers L >= 1, proved by induction on L (the base case L = 1, and
the step from the claim at L as a hypothesis), not by checks at a few L.
"""

import sympy as sp

import symattn.defs as sa
from symattn.proof.layer_stack import layer_stack
from symattn.statements import theorem

from ._common import X, d_model, n

L = sa.dims("L")
W_Q, W_K, W_V = (sp.MatrixSymbol(f"W^{s}", d_model, d_model) for s in "QKV")
S_col = sp.MatrixSymbol("S_col", d_model, n)  # a column layer's input
S_row = sp.MatrixSymbol("S_row", n, d_model)  # a row layer's input
WEIGHTS = (W_Q, W_K, W_V)


def column_layer(S):
    return S + W_V * S * sa.softmax((W_K * S).T * (W_Q * S))


def row_layer(R):
    return R + sa.softmax(R * W_Q.T * (R * W_K.T).T, axis=1) * R * W_V.T


@theorem(
    "row_stack_is_transpose_of_column_stack",
    "a stack of L residual self-attention layers (each with its own W^Q_l, W^K_l, W^V_l): the row-convention "
    "stack on Xᵀ is the transpose of the column-convention stack on X, for every L >= 1 (induction on L)",
)
def _():
    col = layer_stack(column_layer(S_col), S_col, X, L, weights=WEIGHTS)
    row = layer_stack(row_layer(S_row), S_row, X.T, L, weights=WEIGHTS)
    return [(row, col.T)]


W = sp.MatrixSymbol("W", n, n)
S_lin = sp.MatrixSymbol("S", n, n)


@theorem(
    "mistake_layers_composed_in_reading_order",
    "L linear layers S <- W_l S, composed in the order they are listed: W_1 W_2 ⋯ W_L (for W_L ⋯ W_1), "
    "for every L",
    expect="refuted", budget=10.0,
    explanation="The slip: layer l acts after the layers below it, so the composite of L linear layers is "
                "W_L ⋯ W_1, the first layer's matrix rightmost. Written in reading order, W_1 W_2 ⋯ W_L, it "
                "agrees at one layer (W_1 = W_1) and is refuted at L = 2, since W_2 W_1 ≠ W_1 W_2: the "
                "induction on L finds no proof, and the claim unfolded at two layers has a counterexample.",
)
def _():
    identity = sp.Identity(n)
    composite = layer_stack(W * S_lin, S_lin, identity, L, weights=[W])       # W_L ⋯ W_2 W_1
    reading_order = layer_stack(S_lin * W, S_lin, identity, L, weights=[W])   # W_1 W_2 ⋯ W_L
    return [(reading_order, composite)]
