"""Generalization: a claim proved with each softmax term replaced by an arbitrary matrix holds for the softmax.

Lin et al. (2017) expand ``\\|A A^T - I\\|_F^2`` with ``A = softmax(W_s2 tanh(W_s1 H^T))``: every step holds for
any matrix A, and comparing the sums of entries is fast for a matrix symbol A but slow for the softmax's
fractions of exponentials. :func:`generalized` replaces every softmax subterm of both sides (the same subterm
by the same fresh matrix symbol, of its shape, and Softmax(Y)ᵀ = Softmax(Yᵀ, 1) by the transpose of that
symbol) so that the entrywise strategy can try the general claim. A proof
of the general claim is a proof of the claim (its instance at the softmax), so only proofs are taken from it;
a counterexample to the general claim says nothing and is never looked for here. The proof is audited on
the original claim, as every proof is.

>>> import sympy as sp
>>> from symattn.defs.softmax import softmax
>>> X = sp.MatrixSymbol("X", 2, 3)
>>> l, r = generalized(softmax(X) * softmax(X).T, softmax(X) * softmax(X).T)
>>> l == r and not l.has(softmax(X))
True
"""

from __future__ import annotations

import sympy as sp

from ..defs.softmax import Softmax
from . import dag


def generalized(lhs, rhs):
    """(lhs, rhs) with each softmax subterm a fresh matrix symbol of its shape, or None when there is none."""
    names = {getattr(x, "name", None) for x in dag.nodes(lhs, rhs)}
    symbols: dict = {}  # (argument, 1) -> the symbol for Softmax(argument, 1)
    found: dict = {}
    for x in dag.nodes(lhs, rhs):
        if not isinstance(x, Softmax) or x in found:
            continue
        # Softmax(Y, 0) = Softmax(Yᵀ, 1)ᵀ: both orientations of one softmax get one symbol
        arg, turned = (x.arg, False) if x.axis == 1 else (sp.transpose(x.arg), True)
        if arg not in symbols:
            k = len(symbols)
            while f"_G{k}" in names:
                k += 1
            names.add(f"_G{k}")
            symbols[arg] = sp.MatrixSymbol(f"_G{k}", *arg.shape)
        found[x] = symbols[arg].T if turned else symbols[arg]
    if not found:
        return None
    return lhs.xreplace(found), rhs.xreplace(found)
