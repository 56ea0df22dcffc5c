"""head_h, MultiHead (block and sum forms) and the math papers' self-attention.

Seed 000, column convention, for h = 1..H:

    head_h = Attention(W_h^Q Q, W_h^K K, W_h^V V)                     ∈ M^{d_v×n}
    MultiHead(Q, K, V) = W^O [head_1; ...; head_H] = Σ_h W_h^O head_h   ∈ M^{d_model×n}

Transformer paper, row convention:

    head_h = Attention(Q W_h^Q, K W_h^K, V W_h^V)                     ∈ M^{n×d_v}
    MultiHead(Q, K, V) = [head_1 ... head_H] [W_1^O; ...; W_H^O]

Weights are given either as lists (a concrete number of heads) or as head-indexed
:class:`~symattn.defs.heads.Family` objects with a head count H (symbolic or not).
"""

from __future__ import annotations

import sympy as sp

from ..errors import ConventionError, HeadError
from .attention import attention, check_convention
from .dims import h as HEAD
from .heads import Family, head_concat, head_stack, head_sum
from .shapes import as_matrix, require_equal, same_dim

FORMS = ("block", "sum")


def _family(W, name: str, H, op: str):
    """(member(h), H) for a list of matrices, a Family, or a function of h."""
    if isinstance(W, (list, tuple)):
        if not W:
            raise HeadError(f"{op}: {name} is an empty list; give one matrix per head")
        mats = [as_matrix(w, f"{name}[{k}]", op) for k, w in enumerate(W, 1)]
        if H is not None and not (sp.sympify(H).is_Integer and int(H) == len(mats)):
            raise HeadError(f"{op}: {name} holds {len(mats)} heads but H = {H}")
        return (lambda k: mats[int(k) - 1]), sp.Integer(len(mats))
    if isinstance(W, Family) or callable(W):
        if H is None:
            raise HeadError(f"{op}: {name} is a head-indexed family; give the head count H")
        return (lambda k: W[k]) if isinstance(W, Family) else W, sp.sympify(H)
    raise HeadError(
        f"{op}: {name} must be a list of matrices (one per head), a Family, or a "
        f"function of the head index h; got {type(W).__name__}"
    )


def _head_count(families, op):
    counts = {name: H for name, (_, H) in families.items()}
    first = next(iter(counts.values()))
    if any(not same_dim(H, first) for H in counts.values()):
        listing = ", ".join(f"{k}: {v}" for k, v in counts.items())
        raise HeadError(f"{op}: the weight lists have different numbers of heads ({listing})")
    return first


def head(Q, K, V, W_Q, W_K, W_V, score=None, convention: str = "column"):
    """head_h = Attention(W_h^Q Q, W_h^K K, W_h^V V) (column) or Attention(Q W_h^Q, ...) (row)."""
    check_convention(convention)
    op = "head(Q, K, V)"
    Q, K, V = (as_matrix(x, nm, op) for x, nm in ((Q, "Q"), (K, "K"), (V, "V")))
    W_Q, W_K, W_V = (as_matrix(x, nm, op) for x, nm in ((W_Q, "W^Q"), (W_K, "W^K"), (W_V, "W^V")))
    for W, X, nm in ((W_Q, Q, "Q"), (W_K, K, "K"), (W_V, V, "V")):
        if convention == "column":
            require_equal(W.cols, X.rows, op, f"cannot form W^{nm}·{nm}", [(f"W^{nm}", W), (nm, X)])
        else:
            require_equal(X.cols, W.rows, op, f"cannot form {nm}·W^{nm}", [(nm, X), (f"W^{nm}", W)])
    if convention == "column":
        return attention(W_Q * Q, W_K * K, W_V * V, score=score)
    return attention(Q * W_Q, K * W_K, V * W_V, score=score, convention="row")


def multihead(Q, K, V, W_Q, W_K, W_V, W_O, *, H=None, form: str = "block", score=None,
              convention: str = "column"):
    """MultiHead(Q, K, V) in the block form W^O [head_1; ...; head_H] or the sum form.

    ``W_Q, W_K, W_V, W_O`` are lists (one matrix per head) or Families with a head
    count ``H``. In the block form ``W_O`` may also be the whole matrix W^O.

    >>> import sympy as sp
    >>> from symattn import dims, Family
    >>> n, m, d_model, d_k, d_v, H = dims("n m d_model d_k d_v H")
    >>> Q, K, V = (sp.MatrixSymbol(s, d_model, c) for s, c in (("Q", n), ("K", m), ("V", m)))
    >>> W_Q, W_K = Family("W^Q", d_k, d_model), Family("W^K", d_k, d_model)
    >>> W_V, W_O = Family("W^V", d_v, d_model), Family("W^O", d_model, d_v)
    >>> multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=H, form="sum")
    HeadSum(W^O_h*W^V_h*V*Softmax(1/sqrt(d_k)*K.T*W^K_h.T*W^Q_h*Q), h=1..H)
    """
    check_convention(convention)
    if form not in FORMS:
        raise ConventionError(f"multihead: form must be 'block' or 'sum', got {form!r}")
    op = "multihead(Q, K, V)"
    fams = {nm: _family(W, nm, H, op) for nm, W in (("W^Q", W_Q), ("W^K", W_K), ("W^V", W_V))}
    whole_WO = None
    if form == "block" and not isinstance(W_O, (list, tuple, Family)) and not callable(W_O):
        whole_WO = as_matrix(W_O, "W^O", op)
    else:
        fams["W^O"] = _family(W_O, "W^O", H, op)
    count = _head_count(fams, op)
    wq, wk, wv = (fams[k][0] for k in ("W^Q", "W^K", "W^V"))

    def head_at(k):
        return head(Q, K, V, wq(k), wk(k), wv(k), score=score, convention=convention)

    col = convention == "column"
    if form == "sum":
        wo = fams["W^O"][0]
        return head_sum(lambda k: wo(k) * head_at(k) if col else head_at(k) * wo(k), count)
    heads = (head_stack if col else head_concat)(head_at, count)
    if whole_WO is None:
        wo = fams["W^O"][0]
        whole_WO = (head_concat if col else head_stack)(wo, count)
    if col:
        require_equal(whole_WO.cols, heads.rows, op, "cannot form W^O·[head_1; ...; head_H]",
                      [("W^O", whole_WO), ("[head_1; ...; head_H]", heads)])
        return whole_WO * heads
    require_equal(heads.cols, whole_WO.rows, op, "cannot form [head_1 ... head_H]·W^O",
                  [("[head_1 ... head_H]", heads), ("W^O", whole_WO)])
    return heads * whole_WO


def paper_self_attention(X, W_Q, W_K, W_V, *, H=None):
    """The math papers' self-attention with residual (seed 000):

        Attention(X) = X + Σ_{h=1}^{H} (W_h^V X) Softmax[(W_h^K X)ᵀ (W_h^Q X)]

    with the unscaled dot product. W_h^V maps back to X's dimension.
    """
    op = "paper_self_attention(X)"
    X = as_matrix(X, "X", op)
    fams = {nm: _family(W, nm, H, op) for nm, W in (("W^Q", W_Q), ("W^K", W_K), ("W^V", W_V))}
    count = _head_count(fams, op)
    wq, wk, wv = (fams[k][0] for k in ("W^Q", "W^K", "W^V"))

    def term(k):
        return head(X, X, X, wq(k), wk(k), wv(k), score="dot")

    total = head_sum(term, count)
    require_equal(total.rows, X.rows, op, "the residual X + Σ_h ... needs W_h^V to map back to X's dimension",
                  [("X", X), ("Σ_h (W_h^V X) Softmax[...]", total)])
    return X + total


__all__ = ["head", "multihead", "paper_self_attention", "HEAD"]
