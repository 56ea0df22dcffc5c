"""Grouped-query attention (GQA), multi-query attention (MQA) and Llama's repeat_kv (seed 002).

H query heads share G key/value heads (G divides H; n_rep = H/G query heads per group). In the
column convention of seed 000, with query head h = 1..H reading key/value group g(h):

    g(h) = floor((h - 1) / (H/G)) + 1        (0-based: head h reads group floor(h / (H/G)))
    GQA(Q, K, V) = Σ_{h=1}^{H} W_h^O Attention(W_h^Q Q, W_{g(h)}^K K, W_{g(h)}^V V)
                 = W^O [head_1; ...; head_H]

G = H is multi-head attention, G = 1 is MQA (one W^K, W^V shared by every head). Llama's
``repeat_kv(x, n_rep)`` expands the G key/value heads to H by repeating each one n_rep times in
place (``x[:, :, :, None, :].expand(...).reshape(...)``): [k_1, ..., k_1, k_2, ..., k_G].
"""

from __future__ import annotations

import sympy as sp

from ..errors import HeadError
from .attention import check_convention
from .dims import BoundIndex, check_dimension
from .heads import Family, HeadConcat, HeadStack, bind
from .multihead import multihead
from .shapes import as_matrix


def group_size(H, G):
    """n_rep = H / G, checked to be a positive integer."""
    H = check_dimension(H, "gqa: head count H: ")
    G = check_dimension(G, "gqa: group count G: ")
    r = sp.simplify(H / G)
    if not (r.is_integer and r.is_positive):
        raise HeadError(
            f"gqa: the H = {H} query heads cannot be split evenly into G = {G} key/value groups "
            f"(H/G = {r} is not known to be a positive integer)"
        )
    return r


def group_of(h, H, G):
    """g(h) = floor((h - 1) / (H/G)) + 1, the key/value group read by query head h (1-based).

    >>> [group_of(h, 8, 2) for h in range(1, 9)]
    [1, 1, 1, 1, 2, 2, 2, 2]
    """
    return sp.floor((sp.sympify(h) - 1) / group_size(H, G)) + 1


def _by_group(W, name: str, H, G):
    """member(h) = W_{g(h)} for a Family or a list of G matrices."""
    if isinstance(W, (list, tuple)):
        if not (sp.sympify(G).is_Integer and len(W) == int(G)):
            raise HeadError(f"gqa: {name} holds {len(W)} key/value heads but G = {G}")
        mats = [as_matrix(w, f"{name}[{k}]", "gqa") for k, w in enumerate(W, 1)]
        return lambda k: mats[int(group_of(k, H, G)) - 1]
    if isinstance(W, Family):
        return lambda k: W[group_of(k, H, G)]
    raise HeadError(f"gqa: {name} must be a Family or a list of G matrices, got {type(W).__name__}")


def gqa(Q, K, V, W_Q, W_K, W_V, W_O, *, H, G, form: str = "block", score=None, convention: str = "column"):
    """Grouped-query attention: query head h uses W_h^Q and the key/value weights of group g(h).

    W_Q, W_O: H heads (Family or list); W_K, W_V: G key/value heads (Family or list).

    >>> import sympy as sp
    >>> from symattn import dims, Family
    >>> n, d, d_k, G = dims("n d d_k G")
    >>> X = sp.MatrixSymbol("X", d, n)
    >>> Wq, Wk = Family("W^Q", d_k, d), Family("W^K", d_k, d)
    >>> Wv, Wo = Family("W^V", d_k, d), Family("W^O", d, d_k)
    >>> gqa(X, X, X, Wq, Wk, Wv, Wo, H=2 * G, G=G, form="sum").body
    W^O_h*W^V_(floor(h/2 - 1/2) + 1)*X*Softmax(1/sqrt(d_k)*X.T*W^K_(floor(h/2 - 1/2) + 1).T*W^Q_h*X)
    """
    group_size(H, G)
    return multihead(Q, K, V, W_Q, _by_group(W_K, "W^K", H, G), _by_group(W_V, "W^V", H, G), W_O,
                     H=H, form=form, score=score, convention=convention)


def mqa(Q, K, V, W_Q, W_K, W_V, W_O, *, H, form: str = "block", score=None, convention: str = "column"):
    """Multi-query attention: every query head h uses the same W^K and W^V (single matrices)."""
    W_K, W_V = as_matrix(W_K, "W^K", "mqa"), as_matrix(W_V, "W^V", "mqa")
    return multihead(Q, K, V, W_Q, lambda k: W_K, lambda k: W_V, W_O, H=H, form=form, score=score,
                     convention=convention)


def repeat_kv(heads, n_rep: int) -> list:
    """Llama's repeat_kv on a list of G key/value heads: each repeated n_rep times in place.

    It follows the tensor code: a new axis of length n_rep after the head axis, then a row-major
    reshape of (G, n_rep) into G·n_rep heads.

    >>> repeat_kv(["k1", "k2"], 2)
    ['k1', 'k1', 'k2', 'k2']
    """
    if int(n_rep) < 1:
        raise HeadError(f"repeat_kv: n_rep must be >= 1, got {n_rep}")
    grid = [[x] * int(n_rep) for x in heads]          # (G, n_rep): expand along a new axis
    return [x for row in grid for x in row]            # reshape (G, n_rep) -> (G·n_rep,)


def repeat_kv_heads(K, G, n_rep, convention: str = "column"):
    """Llama's repeat_kv on the G stacked key (or value) heads K_1, ..., K_G, for symbolic G and n_rep.

    ``x[:, :, :, None, :].expand(bs, slen, G, n_rep, d).reshape(bs, slen, G * n_rep, d)``: a new
    axis of n_rep copies after the head axis, read in row-major order, is the nested stack

        [[K_1; ...; K_1]; ...; [K_G; ...; K_G]]      (column convention, heads stacked)
        [[K_1 ... K_1] ... [K_G ... K_G]]            (row convention, heads side by side)

    ``K`` is a Family or a function of the group index g.

    >>> from symattn import dims, Family
    >>> G, r, d_k, m = dims("G r d_k m")
    >>> repeat_kv_heads(Family("K", d_k, m), G, r)
    HeadStack(HeadStack(K_g, j=1..r), g=1..G)
    """
    check_convention(convention)
    G = check_dimension(G, "repeat_kv_heads: G: ")
    n_rep = check_dimension(n_rep, "repeat_kv_heads: n_rep: ")
    node = HeadStack if convention == "column" else HeadConcat

    def repeated(g):
        block = K[g] if isinstance(K, Family) else as_matrix(K(g), "K_g", "repeat_kv_heads")
        return bind(node, lambda j: block, n_rep, base="j", kind=BoundIndex, op="repeat_kv_heads")

    return bind(node, repeated, G, base="g", kind=BoundIndex, op="repeat_kv_heads")


def repeat_kv_matrix(G: int, n_rep: int, d):
    """repeat_kv as a linear map on stacked key/value heads: R = I_G ⊗ (1_{n_rep} ⊗ I_d), an
    (H·d) × (G·d) block matrix of identity and zero blocks, so R [k_1; ...; k_G] repeats each k_g.

    >>> R = repeat_kv_matrix(2, 2, 1)
    >>> sp.Matrix(R.as_explicit())
    Matrix([
    [1, 0],
    [1, 0],
    [0, 1],
    [0, 1]])
    """
    d = check_dimension(d, "repeat_kv_matrix: ")
    eye, zero = sp.Identity(d), sp.ZeroMatrix(d, d)
    column_of_eyes = [eye] * int(n_rep)                  # 1_{n_rep} ⊗ I_d
    rows = []
    for g in range(int(G)):                              # I_G ⊗ (...): block-diagonal placement
        for block in column_of_eyes:
            rows.append([block if c == g else zero for c in range(int(G))])
    return sp.BlockMatrix(rows)
