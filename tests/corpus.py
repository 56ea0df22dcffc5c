"""An adversarial corpus of claims about the seeds' definitions, each with its expected truth.

Every entry is built lazily by a function returning ``(lhs, rhs)`` or ``(lhs, rhs, kwargs)``
(kwargs for :func:`symattn.verify`, e.g. ``at=``), so that a construction error in one entry
cannot break the import of the others. ``expect`` is the truth of the claim as verify reads
it: for every value of its dimension symbols (and of its scalar symbols), and at every
dimension listed in ``at``. A false claim given ``at=`` lists dimensions where it is false, so
"proved at dims" for it would be unsound too.

Traps are marked in the entry's ``family`` and name: true only at dimension 1, only for H = 1,
only when d_k = d_v, off by 10^-15 (exact Rationals), the same claim with explicit entries, user
names that collide with names the engine uses inside, and nested binders. Entries whose two
sides hold two different objects that print alike, or a mask where it is undefined, may be
refused with a ClaimError or ShapeError (``refusable=True``); that is an acceptable outcome for
them, and for them only.

:func:`decide` runs one entry and returns its outcome: "proved general", "proved at dims",
"refuted", "unknown" or "refused".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import sympy as sp

import symattn as sa
from symattn.defs.gqa import group_of, repeat_kv, repeat_kv_heads
from symattn.defs.rope import apply_rope, rope, rotation
from symattn.errors import ClaimError, ShapeError
from symattn.proof.scalar import is_scalar_claim, verify_scalar

#: The per-claim time budget (seconds) of the corpus run. The engine shares it among its strategies,
#: so on a loaded machine a claim that needs 3 s of entrywise work can run out at 4 s; at 10 s the
#: true claims that ended unknown that way are decided (tests/proof/test_corpus.py allows 3% unknown).
BUDGET = 10.0

OUTCOMES = ("proved general", "proved at dims", "refuted", "unknown", "refused")


@dataclass(frozen=True)
class Entry:
    """One claim: its name, expected truth, builder, family and whether a refusal is acceptable."""

    name: str
    expect: bool
    build: Callable
    family: str
    refusable: bool = False
    note: str = ""
    #: the verdict depends on printed names on purpose (a collision trap): renaming would change it
    names_matter: bool = False
    kwargs: dict = field(default_factory=dict)

    def claim(self) -> tuple:
        """(lhs, rhs, kwargs) of the claim; kwargs always holds a budget."""
        out = self.build()
        lhs, rhs = out[0], out[1]
        kwargs = {"budget": BUDGET, **self.kwargs, **(out[2] if len(out) > 2 else {})}
        return lhs, rhs, kwargs


CORPUS: list[Entry] = []


def claim(name: str, expect: bool, family: str, *, refusable: bool = False, note: str = "",
          names_matter: bool = False, **kwargs):
    """Register the decorated builder as an entry of the corpus."""

    def register(build):
        if any(e.name == name for e in CORPUS):
            raise ValueError(f"corpus entry {name!r} is registered twice")
        CORPUS.append(Entry(name, expect, build, family, refusable, note, names_matter, kwargs))
        return build

    return register


def run(lhs, rhs, kwargs) -> sa.Verdict:
    """verify, or verify_scalar for a claim whose two sides are scalars."""
    if is_scalar_claim(lhs, rhs):
        return verify_scalar(lhs, rhs, budget=kwargs.get("budget", BUDGET))
    return sa.verify(lhs, rhs, **kwargs)


def outcome_of(v: sa.Verdict) -> str:
    if v.status == "proved":
        return "proved general" if v.general else "proved at dims"
    return v.status


def decide(entry: Entry) -> tuple[str, sa.Verdict | None, str]:
    """(outcome, verdict or None, message of a refusal) for one entry."""
    try:
        lhs, rhs, kwargs = entry.claim()
        v = run(lhs, rhs, kwargs)
    except (ClaimError, ShapeError) as exc:  # a claim verify will not decide, with the reason
        return "refused", None, f"{type(exc).__name__}: {exc}"
    return outcome_of(v), v, ""


def is_failure(entry: Entry, outcome: str) -> bool:
    """A false claim proved (general or at dims), a true claim refuted, or a refusal not allowed."""
    if outcome == "refused":
        return not entry.refusable
    if entry.expect:
        return outcome == "refuted"
    return outcome.startswith("proved")


# ----------------------------------------------------------------------------- symbols
n, m, d_k, d_v, d_model, H, N, d, t, G, r, p, L = sa.dims("n m d_k d_v d_model H N d t G r p L")
a, b = sp.symbols("a b", integer=True)
x, y = sp.symbols("x y", real=True)
c = sp.Symbol("c", real=True)
f = sa.ScoreFunction("f")
theta = sp.Function("theta")
EPS = sp.Rational(1, 10**15)


def qkv(rows_q=None, cols_q=None, cols_k=None, rows_v=None, convention="column"):
    """Q (d_k × n), K (d_k × m), V (d_v × m) of seed 000, or their row-convention transposes."""
    rq, cq = rows_q if rows_q is not None else d_k, cols_q if cols_q is not None else n
    ck, rv = cols_k if cols_k is not None else m, rows_v if rows_v is not None else d_v
    Q, K, V = sp.MatrixSymbol("Q", rq, cq), sp.MatrixSymbol("K", rq, ck), sp.MatrixSymbol("V", rv, ck)
    if convention == "row":
        return (sp.MatrixSymbol("Q", cq, rq), sp.MatrixSymbol("K", ck, rq), sp.MatrixSymbol("V", ck, rv))
    return Q, K, V


def families(dk=None, dv=None):
    """W_h^Q, W_h^K (d_k × d_model), W_h^V (d_v × d_model), W_h^O (d_model × d_v)."""
    dk = d_k if dk is None else dk
    dv = d_v if dv is None else dv
    return (sa.Family("W^Q", dk, d_model), sa.Family("W^K", dk, d_model), sa.Family("W^V", dv, d_model),
            sa.Family("W^O", d_model, dv))


def mh_inputs():
    return (sp.MatrixSymbol("Q", d_model, n), sp.MatrixSymbol("K", d_model, m), sp.MatrixSymbol("V", d_model, m))


SCORES = (("scaled", None), ("dot", "dot"), ("f", f))

# ----------------------------------------------------------------------------- attention, scores
for _label, _score in SCORES:
    @claim(f"attention_linear_in_values_{_label}", True, "attention")
    def _(score=_score):
        Q, K, V = qkv()
        W = sp.MatrixSymbol("W", d_v, m)
        return sa.attention(Q, K, V + W, score=score), sa.attention(Q, K, V, score=score) + sa.attention(
            Q, K, W, score=score)

    @claim(f"attention_not_linear_in_queries_{_label}", False, "attention")
    def _(score=_score):
        Q, K, V = qkv()
        Q2 = sp.MatrixSymbol("Q'", d_k, n)
        return sa.attention(Q + Q2, K, V, score=score), sa.attention(Q, K, V, score=score) + sa.attention(
            Q2, K, V, score=score)

    @claim(f"attention_output_projection_moves_inside_{_label}", True, "attention")
    def _(score=_score):
        Q, K, V = qkv()
        W = sp.MatrixSymbol("W", d_model, d_v)
        return W * sa.attention(Q, K, V, score=score), sa.attention(Q, K, W * V, score=score)

    @claim(f"attention_column_row_transpose_{_label}", True, "conventions")
    def _(score=_score):
        Q, K, V = qkv()
        return sa.attention(Q.T, K.T, V.T, score=score, convention="row"), sa.attention(Q, K, V, score=score).T

    @claim(f"attention_row_equals_column_without_transpose_{_label}", False, "conventions")
    def _(score=_score):
        Q, K, V = qkv(d_k, n, n, n)
        return sa.attention(Q.T, K.T, V.T, score=score, convention="row"), sa.attention(Q, K, V, score=score)

    @claim(f"attention_query_permutation_equivariant_{_label}", True, "permutations")
    def _(score=_score):
        Q, K, V = qkv()
        P = sa.Permutation("P", n)
        return sa.attention(Q * P, K, V, score="dot" if score == "dot" else None), sa.attention(
            Q, K, V, score="dot" if score == "dot" else None) * P

    @claim(f"attention_keys_permuted_alone_{_label}", False, "permutations")
    def _(score=_score):
        Q, K, V = qkv()
        P = sa.Permutation("P", m)
        return sa.attention(Q, K * P, V, score=score), sa.attention(Q, K, V, score=score)

    @claim(f"attention_scaled_queries_{_label}", False, "attention")
    def _(score=_score):
        Q, K, V = qkv()
        return sa.attention(2 * Q, K, V, score=score), sa.attention(Q, K, V, score=score)

    @claim(f"attention_off_by_1e-15_{_label}", False, "off by 10^-15")
    def _(score=_score):
        Q, K, V = qkv()
        return sa.attention(Q, K, V, score=score), (1 + EPS) * sa.attention(Q, K, V, score=score)


@claim("attention_definition_scaled", True, "attention")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V), V * sa.softmax(K.T * Q / sp.sqrt(d_k))


@claim("attention_definition_f", True, "attention")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V, score=f), V * sa.softmax(f(Q, K))


@claim("attention_scores_transposed", False, "attention")
def _():
    Q, K, V = qkv(d_k, n, n, d_v)
    return sa.attention(Q, K, V), V * sa.softmax(Q.T * K / sp.sqrt(d_k))


@claim("attention_dot_equals_scaled_only_at_d_k_1", False, "true only at dimension 1")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V, score="dot"), sa.attention(Q, K, V)


@claim("attention_dot_equals_scaled_at_d_k_1", True, "true only at dimension 1")
def _():
    Q, K, V = qkv(1, n, m, d_v)
    return sa.attention(Q, K, V, score="dot"), sa.attention(Q, K, V)


@claim("attention_dot_equals_scaled_at_dims_where_false", False, "true only at dimension 1")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V, score="dot"), sa.attention(Q, K, V), {"at": [{n: 2, m: 2, d_k: 2, d_v: 1}]}


@claim("attention_prescaled_queries_equal_dot", True, "attention")
def _():
    Q, K, V = qkv()
    return sa.attention(Q / sp.sqrt(d_k), K, V, score="dot"), sa.attention(Q, K, V)


@claim("attention_projection_moves_to_keys", True, "attention")
def _():
    Q, K, V = qkv()
    M = sp.MatrixSymbol("M", d_k, d_k)
    return sa.attention(M * Q, K, V, score="dot"), sa.attention(Q, M.T * K, V, score="dot")


@claim("attention_projection_moves_to_keys_untransposed", False, "attention")
def _():
    Q, K, V = qkv()
    M = sp.MatrixSymbol("M", d_k, d_k)
    return sa.attention(M * Q, K, V, score="dot"), sa.attention(Q, M * K, V, score="dot")


@claim("attention_f_arguments_swapped", False, "attention")
def _():
    Q, K, V = qkv(d_k, n, n, d_v)
    return V * sa.softmax(f(Q, K)), V * sa.softmax(f(K, Q))


@claim("attention_f_is_not_the_dot_product", False, "attention")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V, score=f), sa.attention(Q, K, V, score="dot")


@claim("attention_scaled_by_d_v_only_when_d_k_equals_d_v", False, "true only when d_k = d_v")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V), V * sa.softmax(K.T * Q / sp.sqrt(d_v))


@claim("attention_scaled_by_d_v_with_d_v_equal_d_k", True, "true only when d_k = d_v")
def _():
    Q, K, V = qkv(d_k, n, m, d_k)
    return sa.attention(Q, K, V), V * sa.softmax(K.T * Q / sp.sqrt(V.rows))


@claim("attention_single_key_returns_the_value", True, "true only at dimension 1")
def _():
    Q, K, V = qkv(d_k, n, 1, d_v)
    return sa.attention(Q, K, V), V * sp.OneMatrix(1, n)


@claim("attention_returns_the_value_for_any_number_of_keys", False, "true only at dimension 1")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V), V * sp.OneMatrix(m, n) / m


@claim("attention_exact_rational_shift_is_harmless", True, "off by 10^-15")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V), (sp.Rational(10**15 + 1, 10**15) - EPS) * sa.attention(Q, K, V)


@claim("attention_scale_off_by_1e-15", False, "off by 10^-15")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V), V * sa.softmax(K.T * Q * (1 / sp.sqrt(d_k) + EPS))


@claim("attention_values_off_by_1e-20", False, "off by 10^-15")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V), sa.attention(Q, K, V + sp.Rational(1, 10**20) * sp.OneMatrix(d_v, m))


# ----------------------------------------------------------------------------- softmax, both axes
X_ = ("X", m, n)


def X_mat(rows=m, cols=n, name="X"):
    return sp.MatrixSymbol(name, rows, cols)


@claim("softmax_transpose_flips_axis", True, "softmax")
def _():
    X = X_mat()
    return sa.softmax(X).T, sa.softmax(X.T, axis=1)


@claim("softmax_transpose_keeps_axis", False, "softmax")
def _():
    X = X_mat()
    return sa.softmax(X).T, sa.softmax(X.T)


@claim("softmax_columns_sum_to_one", True, "softmax")
def _():
    X = X_mat()
    return sp.OneMatrix(1, m) * sa.softmax(X), sp.OneMatrix(1, n)


@claim("softmax_rows_sum_to_one_with_column_axis", False, "softmax")
def _():
    X = X_mat()
    return sa.softmax(X) * sp.OneMatrix(n, 1), sp.OneMatrix(m, 1)


@claim("softmax_row_axis_rows_sum_to_one", True, "softmax")
def _():
    X = X_mat()
    return sa.softmax(X, axis=1) * sp.OneMatrix(n, 1), sp.OneMatrix(m, 1)


@claim("softmax_column_shift_invariance", True, "softmax")
def _():
    X, u = X_mat(), sp.MatrixSymbol("u", n, 1)
    return sa.softmax(X + sp.OneMatrix(m, 1) * u.T), sa.softmax(X)


@claim("softmax_row_shift_breaks_column_softmax", False, "softmax")
def _():
    X, u = X_mat(), sp.MatrixSymbol("u", m, 1)
    return sa.softmax(X + u * sp.OneMatrix(1, n)), sa.softmax(X)


@claim("softmax_row_shift_invariance_row_axis", True, "softmax")
def _():
    X, u = X_mat(), sp.MatrixSymbol("u", m, 1)
    return sa.softmax(X + u * sp.OneMatrix(1, n), axis=1), sa.softmax(X, axis=1)


@claim("softmax_constant_shift_by_1e-15", True, "off by 10^-15")
def _():
    X = X_mat()
    return sa.softmax(X + EPS * sp.OneMatrix(m, n)), sa.softmax(X)


@claim("softmax_scale_invariance", False, "softmax")
def _():
    X = X_mat()
    return sa.softmax(2 * X), sa.softmax(X)


@claim("softmax_is_additive", False, "softmax")
def _():
    X, Y = X_mat(), X_mat(name="Y")
    return sa.softmax(X + Y), sa.softmax(X) + sa.softmax(Y)


@claim("softmax_of_zero_is_uniform_over_rows", True, "softmax")
def _():
    return sa.softmax(sp.ZeroMatrix(m, n)), sp.OneMatrix(m, n) / m


@claim("softmax_of_zero_uniform_over_the_wrong_count", False, "softmax")
def _():
    return sa.softmax(sp.ZeroMatrix(m, n)), sp.OneMatrix(m, n) / n


@claim("softmax_row_axis_of_zero", True, "softmax")
def _():
    return sa.softmax(sp.ZeroMatrix(m, n), axis=1), sp.OneMatrix(m, n) / n


@claim("softmax_single_row_is_all_ones", True, "true only at dimension 1")
def _():
    X = X_mat(1, n)
    return sa.softmax(X), sp.OneMatrix(1, n)


@claim("softmax_is_all_ones_for_any_rows", False, "true only at dimension 1")
def _():
    X = X_mat()
    return sa.softmax(X), sp.OneMatrix(m, n)


@claim("softmax_is_all_ones_at_dims_where_false", False, "true only at dimension 1")
def _():
    X = X_mat()
    return sa.softmax(X), sp.OneMatrix(m, n), {"at": [{m: 2, n: 1}]}


@claim("softmax_identity_both_axes", True, "softmax")
def _():
    return sa.softmax(sp.Identity(n)), sa.softmax(sp.Identity(n), axis=1)


@claim("softmax_identity_is_identity", False, "softmax")
def _():
    return sa.softmax(sp.Identity(n)), sp.Identity(n)


@claim("softmax_side_by_side_blocks_column_axis", True, "softmax")
def _():
    A, B = X_mat(m, n, "A"), X_mat(m, d, "B")
    return sa.softmax(sp.BlockMatrix([[A, B]])), sp.BlockMatrix([[sa.softmax(A), sa.softmax(B)]])


@claim("softmax_side_by_side_blocks_row_axis", False, "softmax")
def _():
    A, B = X_mat(m, n, "A"), X_mat(m, d, "B")
    return sa.softmax(sp.BlockMatrix([[A, B]]), axis=1), sp.BlockMatrix([[sa.softmax(A, 1), sa.softmax(B, 1)]])


@claim("softmax_stacked_blocks_row_axis", True, "softmax")
def _():
    A, B = X_mat(m, n, "A"), X_mat(d, n, "B")
    return sa.softmax(sp.BlockMatrix([[A], [B]]), axis=1), sp.BlockMatrix([[sa.softmax(A, 1)], [sa.softmax(B, 1)]])


@claim("softmax_stacked_blocks_column_axis", False, "softmax")
def _():
    A, B = X_mat(m, n, "A"), X_mat(d, n, "B")
    return sa.softmax(sp.BlockMatrix([[A], [B]])), sp.BlockMatrix([[sa.softmax(A)], [sa.softmax(B)]])


@claim("softmax_commutes_with_row_permutation", True, "permutations")
def _():
    X, P = X_mat(), sa.Permutation("P", m)
    return sa.softmax(P.T * X), P.T * sa.softmax(X)


@claim("softmax_commutes_with_column_permutation", True, "permutations")
def _():
    X, P = X_mat(), sa.Permutation("P", n)
    return sa.softmax(X * P), sa.softmax(X) * P


@claim("softmax_ignores_column_permutation", False, "permutations")
def _():
    X, P = X_mat(), sa.Permutation("P", n)
    return sa.softmax(X * P), sa.softmax(X)


@claim("softmax_twice_is_softmax", False, "softmax")
def _():
    X = X_mat()
    return sa.softmax(sa.softmax(X)), sa.softmax(X)


@claim("softmax_off_by_1e-15", False, "off by 10^-15")
def _():
    X = X_mat()
    return sa.softmax(X), sa.softmax(X) + EPS * sp.OneMatrix(m, n)


# ----------------------------------------------------------------------------- heads and MultiHead
for _label, _score in SCORES:
    @claim(f"multihead_block_equals_sum_{_label}", True, "multihead")
    def _(score=_score):
        WQ, WK, WV, WO = families()
        return (sa.multihead(*mh_inputs(), WQ, WK, WV, WO, H=H, score=score),
                sa.multihead(*mh_inputs(), WQ, WK, WV, WO, H=H, form="sum", score=score))

    @claim(f"multihead_row_is_transpose_{_label}", True, "conventions")
    def _(score=_score):
        WQ, WK, WV, WO = families()
        Q, K, V = mh_inputs()
        return (sa.multihead(Q.T, K.T, V.T, WQ.T, WK.T, WV.T, WO.T, H=H, score=score, convention="row"),
                sa.multihead(Q, K, V, WQ, WK, WV, WO, H=H, score=score).T)

    @claim(f"multihead_one_output_weight_for_every_head_{_label}", False, "true only for H = 1")
    def _(score=_score):
        WQ, WK, WV, WO = families()
        Q, K, V = mh_inputs()
        return (sa.multihead(Q, K, V, WQ, WK, WV, WO, H=H, form="sum", score=score),
                sa.head_sum(lambda k: WO[1] * sa.attention(WQ[k] * Q, WK[k] * K, WV[k] * V, score=score), H))


@claim("multihead_sum_of_heads", True, "multihead")
def _():
    WQ, WK, WV, WO = families()
    Q, K, V = mh_inputs()
    return (sa.multihead(Q, K, V, WQ, WK, WV, WO, H=H),
            sa.head_sum(lambda k: WO[k] * sa.head(Q, K, V, WQ[k], WK[k], WV[k]), H))


@claim("multihead_block_is_concat_times_stack", True, "multihead")
def _():
    WQ, WK, WV, WO = families()
    Q, K, V = mh_inputs()
    return (sa.multihead(Q, K, V, WQ, WK, WV, WO, H=H),
            sa.head_concat(lambda k: WO[k], H) * sa.head_stack(lambda k: sa.head(Q, K, V, WQ[k], WK[k], WV[k]), H))


@claim("multihead_sum_with_unscaled_heads", False, "multihead")
def _():
    WQ, WK, WV, WO = families()
    Q, K, V = mh_inputs()
    return (sa.multihead(Q, K, V, WQ, WK, WV, WO, H=H, form="sum"),
            sa.head_sum(lambda k: WO[k] * sa.attention(WQ[k] * Q, WK[k] * K, WV[k] * V, score="dot"), H))


@claim("multihead_query_and_key_weights_swapped", False, "multihead")
def _():
    WQ, WK, WV, WO = families()
    Q, K, V = mh_inputs()
    return (sa.multihead(Q, K, V, WQ, WK, WV, WO, H=H, form="sum"),
            sa.multihead(Q, K, V, WK, WQ, WV, WO, H=H, form="sum"))


@claim("multihead_at_H_1_is_one_attention", True, "true only for H = 1")
def _():
    WQ, WK, WV, WO = families()
    Q, K, V = mh_inputs()
    return (sa.multihead(Q, K, V, WQ, WK, WV, WO, H=H).subs(H, 1),
            WO[1] * sa.attention(WQ[1] * Q, WK[1] * K, WV[1] * V))


@claim("multihead_is_one_attention_for_every_H", False, "true only for H = 1")
def _():
    WQ, WK, WV, WO = families()
    Q, K, V = mh_inputs()
    return (sa.multihead(Q, K, V, WQ, WK, WV, WO, H=H, form="sum"),
            sa.head_sum(lambda k: WO[1] * sa.attention(WQ[1] * Q, WK[1] * K, WV[1] * V), H))


@claim("multihead_is_H_times_first_head", False, "true only for H = 1")
def _():
    WQ, WK, WV, WO = families()
    Q, K, V = mh_inputs()
    return (sa.multihead(Q, K, V, WQ, WK, WV, WO, H=H, form="sum"),
            H * (WO[1] * sa.attention(WQ[1] * Q, WK[1] * K, WV[1] * V)))


@claim("multihead_two_heads_lists_block_equals_sum", True, "multihead")
def _():
    Q, K, V = mh_inputs()
    W = {s: [sp.MatrixSymbol(f"W{s}{k}", r_, c_) for k in (1, 2)]
         for s, r_, c_ in (("q", d_k, d_model), ("k", d_k, d_model), ("v", d_v, d_model), ("o", d_model, d_v))}
    return (sa.multihead(Q, K, V, W["q"], W["k"], W["v"], W["o"]),
            sa.multihead(Q, K, V, W["q"], W["k"], W["v"], W["o"], form="sum"))


@claim("multihead_two_heads_output_weights_swapped", False, "multihead")
def _():
    Q, K, V = mh_inputs()
    W = {s: [sp.MatrixSymbol(f"W{s}{k}", r_, c_) for k in (1, 2)]
         for s, r_, c_ in (("q", d_k, d_model), ("k", d_k, d_model), ("v", d_v, d_model), ("o", d_model, d_v))}
    return (sa.multihead(Q, K, V, W["q"], W["k"], W["v"], W["o"]),
            sa.multihead(Q, K, V, W["q"], W["k"], W["v"], W["o"][::-1], form="sum"))


@claim("multihead_identity_projections_single_head", True, "multihead")
def _():
    Q, K, V = qkv(d_k, n, m, d_k)
    eye = sp.Identity(d_k)
    return sa.multihead(Q, K, V, [eye], [eye], [eye], [eye]), sa.attention(Q, K, V)


@claim("multihead_block_with_sliced_output_weight", True, "multihead")
def _():
    Q, K, V = mh_inputs()
    WQ, WK, WV, _ = families()
    WO = sp.MatrixSymbol("W^O", d_model, H * d_v)
    heads = sa.head_stack(lambda k: sa.head(Q, K, V, WQ[k], WK[k], WV[k]), H)
    return WO * heads, sa.head_sum(lambda k: WO[:, (k - 1) * d_v:k * d_v] * sa.head(Q, K, V, WQ[k], WK[k], WV[k]), H)


@claim("paper_residual_form_is_multihead_plus_x", True, "residual")
def _():
    WQ, WK, WV, WO = families()
    X = sp.MatrixSymbol("X", d_model, n)
    paper = sa.paper_self_attention(X, lambda k: WQ[k] / sp.sqrt(d_k), WK, lambda k: WO[k] * WV[k], H=H)
    return X + sa.multihead(X, X, X, WQ, WK, WV, WO, H=H, form="sum"), paper


@claim("paper_residual_form_without_the_scale", False, "residual")
def _():
    WQ, WK, WV, WO = families()
    X = sp.MatrixSymbol("X", d_model, n)
    paper = sa.paper_self_attention(X, WQ, WK, lambda k: WO[k] * WV[k], H=H)
    return X + sa.multihead(X, X, X, WQ, WK, WV, WO, H=H, form="sum"), paper


@claim("paper_residual_form_without_the_residual", False, "residual")
def _():
    WQ, WK, WV, WO = families()
    X = sp.MatrixSymbol("X", d_model, n)
    paper = sa.paper_self_attention(X, lambda k: WQ[k] / sp.sqrt(d_k), WK, lambda k: WO[k] * WV[k], H=H)
    return sa.multihead(X, X, X, WQ, WK, WV, WO, H=H, form="sum"), paper


@claim("paper_residual_form_ov_in_the_wrong_order", False, "residual")
def _():
    WQ, WK, _, _ = families()
    WV, WO = sa.Family("W^V", d_model, d_model), sa.Family("W^O", d_model, d_model)
    X = sp.MatrixSymbol("X", d_model, n)
    good = sa.paper_self_attention(X, WQ, WK, lambda k: WO[k] * WV[k], H=H)
    bad = sa.paper_self_attention(X, WQ, WK, lambda k: WV[k] * WO[k], H=H)
    return good, bad


# ----------------------------------------------------------------------------- nested binders
def _AB():
    return sa.Family("A", n, m), sa.Family("B", m, n)


@claim("nested_head_sums_factor", True, "nested binders")
def _():
    A, B = _AB()
    return (sa.head_sum(lambda h: sa.head_sum(lambda h2: A[h] * B[h2], H), H),
            sa.head_sum(lambda h: A[h], H) * sa.head_sum(lambda h: B[h], H))


@claim("nested_head_sums_are_the_diagonal", False, "nested binders")
def _():
    A, B = _AB()
    return (sa.head_sum(lambda h: sa.head_sum(lambda h2: A[h] * B[h2], H), H),
            sa.head_sum(lambda h: A[h] * B[h], H))


@claim("nested_head_sums_are_the_diagonal_at_H_2", False, "nested binders")
def _():
    A, B = _AB()
    return (sa.head_sum(lambda h: sa.head_sum(lambda h2: A[h] * B[h2], H), H),
            sa.head_sum(lambda h: A[h] * B[h], H), {"at": [{n: 2, m: 2, H: 2}]})


@claim("nested_head_sums_factor_at_H_2", True, "nested binders")
def _():
    A, B = _AB()
    return (sa.head_sum(lambda h: sa.head_sum(lambda h2: A[h] * B[h2], 2), 2),
            sa.head_sum(lambda h: A[h], 2) * sa.head_sum(lambda h: B[h], 2))


@claim("nested_head_sums_diagonal_at_concrete_H_2", False, "nested binders")
def _():
    A, B = _AB()
    return (sa.head_sum(lambda h: sa.head_sum(lambda h2: A[h] * B[h2], 2), 2),
            sa.head_sum(lambda h: A[h] * B[h], 2))


@claim("nested_sum_inner_index_shadows_outer", True, "nested binders")
def _():
    A, B = _AB()
    return (sa.head_sum(lambda h: sa.head_sum(lambda h2: A[h2] * B[h2], H), H),
            H * sa.head_sum(lambda h: A[h] * B[h], H))


@claim("nested_stack_of_concats_is_outer_product", True, "nested binders")
def _():
    A, B = _AB()
    return (sa.head_stack(lambda h: sa.head_concat(lambda h2: A[h] * B[h2], H), H),
            sa.head_stack(lambda h: A[h], H) * sa.head_concat(lambda h: B[h], H))


@claim("nested_stack_of_concats_transposed_blocks", False, "nested binders")
def _():
    A, B = sa.Family("A", n, n), sa.Family("B", n, n)
    return (sa.head_stack(lambda h: sa.head_concat(lambda h2: A[h] * B[h2], H), H),
            sa.head_stack(lambda h: sa.head_concat(lambda h2: A[h2] * B[h], H), H))


@claim("nested_sum_with_symattn_h_outside", True, "nested binders")
def _():
    A, B = _AB()
    return (sa.head_sum(sa.head_sum(lambda h2: A[sa.h] * B[h2], H), H),
            sa.head_sum(lambda h: A[h], H) * sa.head_sum(lambda h: B[h], H))


# ----------------------------------------------------------------------------- pooling
def _pool_syms():
    X = sp.MatrixSymbol("X", d, N)
    q = sp.MatrixSymbol("q_pool", d, 1)
    W_p, W_K = sp.MatrixSymbol("W_p", d_k, d), sp.MatrixSymbol("W^K", d_k, d)
    W_V = sp.MatrixSymbol("W^V", d_v, d)
    return X, q, W_p, W_K, W_V


@claim("mean_pool_is_zero_score_attention_pool", True, "pooling")
def _():
    X = sp.MatrixSymbol("X", d, N)
    return sa.mean_pool(X), sa.attention_pool(X, sp.ZeroMatrix(N, 1))


@claim("mean_pool_is_constant_score_attention_pool", True, "pooling")
def _():
    X = sp.MatrixSymbol("X", d, N)
    return sa.mean_pool(X), sa.attention_pool(X, c * sp.OneMatrix(N, 1))


@claim("attention_pool_is_mean_pool_for_any_scores", False, "pooling")
def _():
    X = sp.MatrixSymbol("X", d, N)
    return sa.attention_pool(X, sp.MatrixSymbol("s", N, 1)), sa.mean_pool(X)


@claim("mean_pool_forgetting_1_over_N", False, "true only at dimension 1")
def _():
    X = sp.MatrixSymbol("X", d, N)
    return sa.mean_pool(X), X * sp.OneMatrix(N, 1)


@claim("mean_pool_of_one_feature_is_the_feature", True, "true only at dimension 1")
def _():
    X = sp.MatrixSymbol("X", d, 1)
    return sa.mean_pool(X), X


@claim("mean_pool_ignores_order", True, "pooling")
def _():
    X = sp.MatrixSymbol("X", d, N)
    return sa.mean_pool(X * sa.Permutation("P", N)), sa.mean_pool(X)


@claim("attention_pool_weighted_sum", True, "pooling")
def _():
    X, s = sp.MatrixSymbol("X", d, N), sp.MatrixSymbol("s", N, 1)
    return sa.attention_pool(X, s), X * sa.softmax(s)


@claim("attention_pool_with_row_softmax", False, "pooling")
def _():
    X, s = sp.MatrixSymbol("X", d, N), sp.MatrixSymbol("s", N, 2)
    return X * sa.softmax(s), X * sa.softmax(s, axis=1)


@claim("query_pool_is_cross_attention_with_one_query", True, "pooling")
def _():
    X, q, W_p, W_K, W_V = _pool_syms()
    return sa.query_attention_pool(X, q, W_p, W_K, W_V), sa.cross_attention(q, X, W_p, W_K, W_V)


@claim("query_pool_query_and_key_weights_swapped", False, "pooling")
def _():
    X, q, W_p, W_K, W_V = _pool_syms()
    return sa.query_attention_pool(X, q, W_p, W_K, W_V), sa.query_attention_pool(X, q, W_K, W_p, W_V)


@claim("query_pool_ignores_order", True, "pooling")
def _():
    X, q, W_p, W_K, W_V = _pool_syms()
    P = sa.Permutation("P", N)
    return sa.query_attention_pool(X * P, q, W_p, W_K, W_V), sa.query_attention_pool(X, q, W_p, W_K, W_V)


@claim("query_pool_row_is_transpose", True, "pooling")
def _():
    X, q, W_p, W_K, W_V = _pool_syms()
    return (sa.query_attention_pool(X.T, q.T, W_p.T, W_K.T, W_V.T, "row"),
            sa.query_attention_pool(X, q, W_p, W_K, W_V).T)


def _pool_families():
    return (sa.Family("W_p", d_k, d_model), sa.Family("W^K", d_k, d_model), sa.Family("W^V", d_v, d_model),
            sa.Family("W^O", d_model, d_v))


@claim("multihead_pool_block_equals_sum", True, "pooling")
def _():
    X, q = sp.MatrixSymbol("X", d_model, N), sp.MatrixSymbol("q_pool", d_model, 1)
    F = _pool_families()
    return sa.multihead_pool(X, q, *F, H=H), sa.multihead_pool_sum(X, q, *F, H=H)


@claim("multihead_pool_is_multihead_with_one_query", True, "pooling")
def _():
    X, q = sp.MatrixSymbol("X", d_model, N), sp.MatrixSymbol("q_pool", d_model, 1)
    Fp, FK, FV, FO = _pool_families()
    return sa.multihead_pool(X, q, Fp, FK, FV, FO, H=H), sa.multihead(q, X, X, Fp, FK, FV, FO, H=H)


@claim("multihead_pool_is_its_first_head_for_every_H", False, "true only for H = 1")
def _():
    X, q = sp.MatrixSymbol("X", d_model, N), sp.MatrixSymbol("q_pool", d_model, 1)
    Fp, FK, FV, FO = _pool_families()
    return (sa.multihead_pool_sum(X, q, Fp, FK, FV, FO, H=H),
            sa.head_sum(lambda k: FO[1] * sa.query_attention_pool(X, q, Fp[1], FK[1], FV[1]), H))


@claim("multihead_pool_ignores_order", True, "pooling")
def _():
    X, q = sp.MatrixSymbol("X", d_model, N), sp.MatrixSymbol("q_pool", d_model, 1)
    F = _pool_families()
    P = sa.Permutation("P", N)
    return sa.multihead_pool_sum(X * P, q, *F, H=H), sa.multihead_pool_sum(X, q, *F, H=H)


# ----------------------------------------------------------------------------- self- and cross-attention
def _proj():
    return (sp.MatrixSymbol("W^Q", d_k, d_model), sp.MatrixSymbol("W^K", d_k, d_model),
            sp.MatrixSymbol("W^V", d_v, d_model))


@claim("self_attention_is_cross_attention_with_itself", True, "self/cross")
def _():
    X = sp.MatrixSymbol("X", d_model, n)
    return sa.self_attention(X, *_proj()), sa.cross_attention(X, X, *_proj())


@claim("cross_attention_definition", True, "self/cross")
def _():
    X, Y = sp.MatrixSymbol("X", d_model, n), sp.MatrixSymbol("Y", d_model, m)
    WQ, WK, WV = _proj()
    return sa.cross_attention(X, Y, WQ, WK, WV), sa.attention(WQ * X, WK * Y, WV * Y)


@claim("cross_attention_is_symmetric", False, "self/cross")
def _():
    X, Y = sp.MatrixSymbol("X", d_model, n), sp.MatrixSymbol("Y", d_model, n)
    return sa.cross_attention(X, Y, *_proj()), sa.cross_attention(Y, X, *_proj())


@claim("cross_attention_queries_from_the_context", False, "self/cross")
def _():
    X, Y = sp.MatrixSymbol("X", d_model, n), sp.MatrixSymbol("Y", d_model, n)
    WQ, WK, WV = _proj()
    return sa.cross_attention(X, Y, WQ, WK, WV), sa.attention(WQ * Y, WK * X, WV * X)


@claim("self_attention_permutation_equivariant", True, "permutations")
def _():
    X, P = sp.MatrixSymbol("X", d_model, n), sa.Permutation("P", n)
    return sa.self_attention(X * P, *_proj()), sa.self_attention(X, *_proj()) * P


@claim("self_attention_permutation_invariant", False, "permutations")
def _():
    X, P = sp.MatrixSymbol("X", d_model, n), sa.Permutation("P", n)
    return sa.self_attention(X * P, *_proj()), sa.self_attention(X, *_proj())


@claim("self_attention_row_is_transpose", True, "conventions")
def _():
    X = sp.MatrixSymbol("X", d_model, n)
    WQ, WK, WV = _proj()
    return sa.self_attention(X.T, WQ.T, WK.T, WV.T, convention="row"), sa.self_attention(X, WQ, WK, WV).T


@claim("cross_attention_context_order_irrelevant", True, "permutations")
def _():
    X, Y = sp.MatrixSymbol("X", d_model, n), sp.MatrixSymbol("Y", d_model, m)
    return sa.cross_attention(X, Y * sa.Permutation("P", m), *_proj()), sa.cross_attention(X, Y, *_proj())


# ----------------------------------------------------------------------------- permutations
@claim("permutation_is_orthogonal_PPt", True, "permutations")
def _():
    P = sa.Permutation("P", n)
    return P * P.T, sp.Identity(n)


@claim("permutation_is_orthogonal_PtP", True, "permutations")
def _():
    P = sa.Permutation("P", n)
    return P.T * P, sp.Identity(n)


@claim("permutation_is_an_involution", False, "permutations")
def _():
    P = sa.Permutation("P", n)
    return P * P, sp.Identity(n)


@claim("permutation_is_symmetric", False, "permutations")
def _():
    P = sa.Permutation("P", n)
    return P, P.T


@claim("joint_key_value_permutation", True, "permutations")
def _():
    Q, K, V = qkv()
    P = sa.Permutation("P", m)
    return sa.attention(Q, K * P, V * P), sa.attention(Q, K, V)


@claim("value_permutation_inverse_on_keys", False, "permutations")
def _():
    Q, K, V = qkv()
    P = sa.Permutation("P", m)
    return sa.attention(Q, K * P, V * P.T), sa.attention(Q, K, V)


# ----------------------------------------------------------------------------- GQA, MQA, repeat_kv
def _gqa_args():
    Q, K, V = mh_inputs()
    return (Q, K, V, *families())


@claim("gqa_G_equal_H_is_multihead", True, "gqa")
def _():
    args = _gqa_args()
    return sa.gqa(*args, H=H, G=H, form="sum"), sa.multihead(*args, H=H, form="sum")


@claim("gqa_one_group_is_mqa", True, "gqa")
def _():
    Q, K, V, WQ, WK, WV, WO = _gqa_args()
    return (sa.gqa(Q, K, V, WQ, WK, WV, WO, H=H, G=1, form="sum"),
            sa.mqa(Q, K, V, WQ, WK[1], WV[1], WO, H=H, form="sum"))


@claim("gqa_block_equals_sum", True, "gqa")
def _():
    args = _gqa_args()
    return sa.gqa(*args, H=G * r, G=G), sa.gqa(*args, H=G * r, G=G, form="sum")


@claim("gqa_is_multihead_for_every_group_size", False, "gqa")
def _():
    args = _gqa_args()
    return sa.gqa(*args, H=G * r, G=G, form="sum"), sa.multihead(*args, H=G * r, form="sum")


@claim("gqa_head_reads_group_h_mod_G", False, "gqa")
def _():
    Q, K, V, WQ, WK, WV, WO = _gqa_args()
    wrong = sa.multihead(Q, K, V, WQ, lambda k: WK[sp.Mod(k - 1, G) + 1], lambda k: WV[sp.Mod(k - 1, G) + 1],
                         WO, H=G * r, form="sum")
    return sa.gqa(Q, K, V, WQ, WK, WV, WO, H=G * r, G=G, form="sum"), wrong


@claim("gqa_H4_G2_lists_equal_repeat_kv_multihead", True, "gqa")
def _():
    Q, K, V, WQ, WK, WV, WO = _gqa_args()
    wq, wo = [WQ[k] for k in range(1, 5)], [WO[k] for k in range(1, 5)]
    wk, wv = [WK[1], WK[2]], [WV[1], WV[2]]
    return sa.gqa(Q, K, V, wq, wk, wv, wo, H=4, G=2), sa.multihead(Q, K, V, wq, repeat_kv(wk, 2), repeat_kv(wv, 2), wo)


@claim("gqa_H4_G2_interleaved_groups", False, "gqa")
def _():
    Q, K, V, WQ, WK, WV, WO = _gqa_args()
    wq, wo = [WQ[k] for k in range(1, 5)], [WO[k] for k in range(1, 5)]
    wk, wv = [WK[1], WK[2]], [WV[1], WV[2]]
    return sa.gqa(Q, K, V, wq, wk, wv, wo, H=4, G=2), sa.multihead(Q, K, V, wq, wk * 2, wv * 2, wo)


@claim("gqa_row_is_transpose", True, "gqa")
def _():
    Q, K, V, WQ, WK, WV, WO = _gqa_args()
    return (sa.gqa(Q.T, K.T, V.T, WQ.T, WK.T, WV.T, WO.T, H=G * r, G=G, form="sum", convention="row"),
            sa.gqa(Q, K, V, WQ, WK, WV, WO, H=G * r, G=G, form="sum").T)


@claim("mqa_is_multihead_with_shared_weights", True, "gqa")
def _():
    Q, K, V, WQ, _, _, WO = _gqa_args()
    WK, WV = sp.MatrixSymbol("W^K", d_k, d_model), sp.MatrixSymbol("W^V", d_v, d_model)
    return (sa.mqa(Q, K, V, WQ, WK, WV, WO, H=H, form="sum"),
            sa.head_sum(lambda k: WO[k] * sa.attention(WQ[k] * Q, WK * K, WV * V), H))


@claim("mqa_is_one_head_times_H", False, "true only for H = 1")
def _():
    Q, K, V, WQ, _, _, WO = _gqa_args()
    WK, WV = sp.MatrixSymbol("W^K", d_k, d_model), sp.MatrixSymbol("W^V", d_v, d_model)
    return (sa.mqa(Q, K, V, WQ, WK, WV, WO, H=H, form="sum"),
            H * (WO[1] * sa.attention(WQ[1] * Q, WK * K, WV * V)))


@claim("repeat_kv_heads_reads_group_floor", True, "gqa")
def _():
    FK = sa.Family("W^K", d_k, d_model)
    K = sp.MatrixSymbol("K", d_model, m)
    return (repeat_kv_heads(lambda g: FK[g] * K, G, r),
            sa.head_stack(lambda k: FK[group_of(k, G * r, G)] * K, G * r))


@claim("repeat_kv_heads_reads_group_ceil", False, "gqa")
def _():
    FK = sa.Family("W^K", d_k, d_model)
    K = sp.MatrixSymbol("K", d_model, m)
    return (repeat_kv_heads(lambda g: FK[g] * K, G, r),
            sa.head_stack(lambda k: FK[sp.Mod(k - 1, G) + 1] * K, G * r))


@claim("repeat_kv_list_reads_consecutive", True, "gqa")
def _():
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    return sp.BlockMatrix([[w] for w in repeat_kv([A, B], 2)]), sp.BlockMatrix([[A], [A], [B], [B]])


@claim("repeat_kv_list_interleaves", False, "gqa")
def _():
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    return sp.BlockMatrix([[w] for w in repeat_kv([A, B], 2)]), sp.BlockMatrix([[A], [B], [A], [B]])


# ----------------------------------------------------------------------------- masks
@claim("causal_column_t_is_prefix_attention", True, "masks")
def _():
    Q, K, V = qkv(d_k, t + L, t + L, d_v)
    return sa.causal_attention(Q, K, V)[:, t - 1:t], sa.attention(Q[:, t - 1:t], K[:, :t], V[:, :t])


@claim("causal_column_t_sees_one_key_too_many", False, "masks")
def _():
    Q, K, V = qkv(d_k, t + L, t + L, d_v)
    return sa.causal_attention(Q, K, V)[:, t - 1:t], sa.attention(Q[:, t - 1:t], K[:, :t + 1], V[:, :t + 1])


@claim("causal_attention_is_full_attention", False, "true only at dimension 1")
def _():
    Q, K, V = qkv(d_k, n, n, d_v)
    return sa.causal_attention(Q, K, V), sa.attention(Q, K, V)


@claim("causal_attention_one_token_is_full_attention", True, "true only at dimension 1")
def _():
    Q, K, V = qkv(d_k, 1, 1, d_v)
    return sa.causal_attention(Q, K, V), sa.attention(Q, K, V)


@claim("causal_last_column_is_full_attention", True, "masks")
def _():
    Q, K, V = qkv(d_k, n, n, d_v)
    return sa.causal_attention(Q, K, V)[:, n - 1:n], sa.attention(Q, K, V)[:, n - 1:n]


@claim("causal_first_column_is_full_attention", False, "masks")
def _():
    Q, K, V = qkv(d_k, n + 1, n + 1, d_v)
    return sa.causal_attention(Q, K, V)[:, :1], sa.attention(Q, K, V)[:, :1]


@claim("causal_first_column_is_first_value", True, "masks")
def _():
    Q, K, V = qkv(d_k, n, n, d_v)
    return sa.causal_attention(Q, K, V)[:, :1], V[:, :1]


@claim("causal_row_convention_is_transpose", True, "masks")
def _():
    Q, K, V = qkv(d_k, n, n, d_v)
    return sa.causal_attention(Q.T, K.T, V.T, convention="row"), sa.causal_attention(Q, K, V).T


@claim("causal_mask_untransposed_in_row_convention", False, "masks")
def _():
    Q, K, V = qkv(d_k, n, n, d_v, convention="row")
    return (sa.causal_attention(Q, K, V, convention="row"),
            sa.softmax(Q * K.T / sp.sqrt(d_k) + sa.CausalMask(n), axis=1) * V)


@claim("causal_full_offset_is_no_mask", True, "masks")
def _():
    Q, K, V = qkv(d_k, n, n, d_v)
    return sa.causal_attention(Q, K, V, offset=n - 1), sa.attention(Q, K, V)


@claim("causal_offset_one_short_is_no_mask", False, "masks")
def _():
    Q, K, V = qkv(d_k, n + 1, n + 1, d_v)
    return sa.causal_attention(Q, K, V, offset=n - 1), sa.attention(Q, K, V)


@claim("causal_is_permutation_equivariant", False, "masks")
def _():
    X, P = sp.MatrixSymbol("X", d_k, n), sa.Permutation("P", n)
    return sa.causal_attention(X * P, X * P, X * P), sa.causal_attention(X, X, X) * P


@claim("padding_full_length_is_no_mask", True, "masks")
def _():
    Q, K, V = qkv()
    return sa.masked_attention(Q, K, V, sa.PaddingMask(m, n, m)), sa.attention(Q, K, V)


@claim("padding_is_prefix_attention", True, "masks")
def _():
    Q = sp.MatrixSymbol("Q", d_k, n)
    K, V = sp.MatrixSymbol("K", d_k, L + p), sp.MatrixSymbol("V", d_v, L + p)
    return sa.masked_attention(Q, K, V, sa.PaddingMask(L + p, n, L)), sa.attention(Q, K[:, :L], V[:, :L])


@claim("padding_ignored", False, "masks")
def _():
    Q = sp.MatrixSymbol("Q", d_k, n)
    K, V = sp.MatrixSymbol("K", d_k, L + p), sp.MatrixSymbol("V", d_v, L + p)
    return sa.masked_attention(Q, K, V, sa.PaddingMask(L + p, n, L)), sa.attention(Q, K, V)


@claim("padding_length_one_returns_first_value", True, "masks")
def _():
    Q, K, V = qkv()
    return sa.masked_attention(Q, K, V, sa.PaddingMask(m, n, 1)), V[:, :1] * sp.OneMatrix(1, n)


@claim("mask_scaled_inside_softmax", True, "masks")
def _():
    S = sp.MatrixSymbol("S", n, n)
    M = sa.CausalMask(n)
    return sa.softmax(2 * (S + M)), sa.softmax(2 * S + M)


@claim("mask_dropped_inside_softmax", False, "masks")
def _():
    S = sp.MatrixSymbol("S", n + 1, n + 1)
    return sa.softmax(S + sa.CausalMask(n + 1)), sa.softmax(S)


# ----------------------------------------------------------------------------- KV cache
def _cache_seq():
    return qkv(d_k, t + 1, t + 1, d_v)


@claim("kv_cache_extend_holds_all_keys", True, "kv cache")
def _():
    Q, K, V = _cache_seq()
    return sa.KVCache(K[:, :t], V[:, :t]).extend(K[:, t:t + 1], V[:, t:t + 1]).keys, K


@claim("kv_cache_decode_is_last_causal_column", True, "kv cache")
def _():
    Q, K, V = _cache_seq()
    cache = sa.KVCache(K[:, :t], V[:, :t])
    return cache.decode(Q[:, t:t + 1], K[:, t:t + 1], V[:, t:t + 1]), sa.causal_attention(Q, K, V)[:, t:t + 1]


@claim("kv_cache_decode_without_the_new_key", False, "kv cache")
def _():
    Q, K, V = _cache_seq()
    return sa.attention(Q[:, t:t + 1], K[:, :t], V[:, :t]), sa.causal_attention(Q, K, V)[:, t:t + 1]


@claim("kv_cache_decode_off_by_one_column", False, "kv cache")
def _():
    Q, K, V = qkv(d_k, t + 2, t + 2, d_v)
    cache = sa.KVCache(K[:, :t + 1], V[:, :t + 1])
    return (cache.decode(Q[:, t + 1:t + 2], K[:, t + 1:t + 2], V[:, t + 1:t + 2]),
            sa.causal_attention(Q, K, V)[:, t:t + 1])


@claim("kv_cache_row_decode_is_last_causal_row", True, "kv cache")
def _():
    Q, K, V = _cache_seq()
    rows = sa.KVCache(K[:, :t].T, V[:, :t].T, convention="row")
    return (rows.decode(Q[:, t:t + 1].T, K[:, t:t + 1].T, V[:, t:t + 1].T),
            sa.causal_attention(Q.T, K.T, V.T, convention="row")[t:t + 1, :])


@claim("kv_cache_values_swapped_with_keys", False, "kv cache")
def _():
    Q, K, V = qkv(d_k, t + 1, t + 1, d_k)
    cache = sa.KVCache(K[:, :t], V[:, :t])
    return cache.extend(K[:, t:t + 1], V[:, t:t + 1]).values, K


# ----------------------------------------------------------------------------- RoPE
def _qk_rope():
    return sp.MatrixSymbol("q", 2 * p, 1), sp.MatrixSymbol("k", 2 * p, 1)


for _label, _th in (("llama", None), ("theta", theta)):
    @claim(f"rope_relative_position_{_label}", True, "rope")
    def _(th=_th):
        return rope(a, p, th).T * rope(b, p, th), rope(b - a, p, th)

    @claim(f"rope_relative_position_wrong_sign_{_label}", False, "rope")
    def _(th=_th):
        return rope(a, p, th).T * rope(b, p, th), rope(a - b, p, th)

    @claim(f"rope_scores_shift_invariant_{_label}", True, "rope")
    def _(th=_th):
        q, k = _qk_rope()
        s = sp.Symbol("s", integer=True)
        return (rope(a + s, p, th) * q).T * (rope(b + s, p, th) * k), (rope(a, p, th) * q).T * (rope(b, p, th) * k)

    @claim(f"rope_scores_ignore_positions_{_label}", False, "rope")
    def _(th=_th):
        q, k = _qk_rope()
        return (rope(a, p, th) * q).T * (rope(b, p, th) * k), q.T * k

    @claim(f"rope_composes_additively_{_label}", True, "rope")
    def _(th=_th):
        return rope(a, p, th) * rope(b, p, th), rope(a + b, p, th)

    @claim(f"rope_composes_multiplicatively_{_label}", False, "rope")
    def _(th=_th):
        return rope(a, p, th) * rope(b, p, th), rope(a * b, p, th)


@claim("rope_at_position_zero_is_identity", True, "rope")
def _():
    return rope(0, p), sp.Identity(2 * p)


@claim("rope_is_symmetric", False, "rope")
def _():
    return rope(a, p).T, rope(a, p)


@claim("rope_single_pair_is_rotation", True, "rope")
def _():
    return rope(a, 1, theta), sp.BlockDiagMatrix(rotation(a * theta(1))).as_explicit()


@claim("rotation_angle_addition", True, "rope")
def _():
    return rotation(x) * rotation(y), rotation(x + y)


@claim("rotation_transpose_is_itself", False, "rope")
def _():
    return rotation(x).T, rotation(x)


@claim("rope_row_convention", True, "rope")
def _():
    q, k = _qk_rope()
    return apply_rope(q.T, a, p, theta, "row") * apply_rope(k.T, b, p, theta, "row").T, q.T * rope(b - a, p, theta) * k


# ----------------------------------------------------------------------------- circuits
def _circuit():
    X = sp.MatrixSymbol("X", d_model, n)
    WQ, WK = sp.MatrixSymbol("W^Q", d_k, d_model), sp.MatrixSymbol("W^K", d_k, d_model)
    WV, WO = sp.MatrixSymbol("W^V", d_v, d_model), sp.MatrixSymbol("W^O", d_model, d_v)
    return X, WQ, WK, WV, WO


@claim("circuits_ov_qk", True, "circuits")
def _():
    X, WQ, WK, WV, WO = _circuit()
    return (WO * sa.attention(WQ * X, WK * X, WV * X),
            (WO * WV) * X * sa.softmax(X.T * (WQ.T * WK).T * X / sp.sqrt(d_k)))


@claim("circuits_qk_untransposed", False, "circuits")
def _():
    X, WQ, WK, WV, WO = _circuit()
    return (WO * sa.attention(WQ * X, WK * X, WV * X),
            (WO * WV) * X * sa.softmax(X.T * (WQ.T * WK) * X / sp.sqrt(d_k)))


@claim("circuits_ov_transposed", False, "circuits")
def _():
    X, WQ, WK, WV, WO = _circuit()
    WV2 = sp.MatrixSymbol("W^V", d_model, d_model)
    WO2 = sp.MatrixSymbol("W^O", d_model, d_model)
    return (WO2 * sa.attention(WQ * X, WK * X, WV2 * X),
            (WV2.T * WO2.T) * X * sa.softmax(X.T * WK.T * WQ * X / sp.sqrt(d_k)))


@claim("circuits_gauge_invariance", True, "circuits")
def _():
    X, WQ, WK, WV, WO = _circuit()
    M = sp.MatrixSymbol("M", d_v, d_v)
    return ((WO * M) * sa.attention(WQ * X, WK * X, (M.inverse() * WV) * X),
            WO * sa.attention(WQ * X, WK * X, WV * X))


@claim("circuits_gauge_on_queries_without_inverse_transpose", False, "circuits")
def _():
    X, WQ, WK, WV, WO = _circuit()
    M = sp.MatrixSymbol("M", d_k, d_k)
    return (sa.attention((M * WQ) * X, (M.inverse() * WK) * X, WV * X),
            sa.attention(WQ * X, WK * X, WV * X))


@claim("circuits_gauge_on_queries_with_inverse_transpose", True, "circuits")
def _():
    X, WQ, WK, WV, WO = _circuit()
    M = sp.MatrixSymbol("M", d_k, d_k)
    return (sa.attention((M * WQ) * X, (M.inverse().T * WK) * X, WV * X),
            sa.attention(WQ * X, WK * X, WV * X))


# ----------------------------------------------------------------------------- explicit entries
@claim("explicit_softmax_transpose_flips_axis", True, "explicit entries")
def _():
    X = sp.MatrixSymbol("X", 2, 3)
    return sa.softmax(X).T.as_explicit(), sa.softmax(X.T, axis=1).as_explicit()


@claim("explicit_softmax_transpose_keeps_axis", False, "explicit entries")
def _():
    X = sp.MatrixSymbol("X", 2, 2)
    return sa.softmax(X).T.as_explicit(), sa.softmax(X.T).as_explicit()


@claim("explicit_matrix_of_elements_is_the_matrix", True, "explicit entries")
def _():
    A = sp.MatrixSymbol("A", 2, 2)
    return sp.ImmutableMatrix(2, 2, lambda i, j: A[i, j]), A


@claim("explicit_matrix_of_elements_transposed", False, "explicit entries")
def _():
    A = sp.MatrixSymbol("A", 2, 2)
    return sp.ImmutableMatrix(2, 2, lambda i, j: A[j, i]), A


@claim("explicit_transpose_of_product", True, "explicit entries")
def _():
    A, B = sp.MatrixSymbol("A", 2, 2), sp.MatrixSymbol("B", 2, 2)
    return (A * B).T.as_explicit(), B.T * A.T


@claim("explicit_transpose_keeps_order", False, "explicit entries")
def _():
    A, B = sp.MatrixSymbol("A", 2, 2), sp.MatrixSymbol("B", 2, 2)
    return (A * B).T.as_explicit(), (A.T * B.T).as_explicit()


@claim("explicit_bilinear_form_forgets_transpose", False, "explicit entries")
def _():
    A, B = sp.MatrixSymbol("A", 2, 2), sp.MatrixSymbol("B", 2, 2)
    u, v = sp.MatrixSymbol("x", 2, 1), sp.MatrixSymbol("y", 2, 1)
    return (A * u).T * (B * v), u.T * A * B * v


@claim("explicit_bilinear_form_with_transpose", True, "explicit entries")
def _():
    A, B = sp.MatrixSymbol("A", 2, 2), sp.MatrixSymbol("B", 2, 2)
    u, v = sp.MatrixSymbol("x", 2, 1), sp.MatrixSymbol("y", 2, 1)
    return (A * u).T * (B * v), u.T * A.T * B * v


@claim("explicit_attention_at_two_tokens", True, "explicit entries")
def _():
    Q, K, V = qkv(2, 2, 2, 1)
    return sa.attention(Q, K, V).as_explicit(), V * sa.softmax(K.T * Q / sp.sqrt(2))


@claim("explicit_attention_forgetting_scale", False, "explicit entries")
def _():
    Q, K, V = qkv(2, 2, 2, 1)
    return sa.attention(Q, K, V).as_explicit(), (V * sa.softmax(K.T * Q)).as_explicit()


@claim("explicit_softmax_off_by_1e-15", False, "off by 10^-15")
def _():
    X = sp.MatrixSymbol("X", 2, 2)
    return sa.softmax(X).as_explicit(), sa.softmax(X).as_explicit() + EPS * sp.ones(2, 2)


@claim("explicit_columns_sum_to_one", True, "explicit entries")
def _():
    X = sp.MatrixSymbol("X", 3, 2)
    return sp.ones(1, 3) * sa.softmax(X).as_explicit(), sp.ones(1, 2)


# ----------------------------------------------------------------------------- colliding names
def _sym(name, **kw):
    return sp.Symbol(name, **kw)


@claim("collide_e0_softmax_entries", False, "colliding names", names_matter=True)
def _():
    X = sp.MatrixSymbol("X", 2, 1)
    e0, e1 = _sym("_e0", positive=True), _sym("_e1", positive=True)
    return sa.softmax(X), sp.ImmutableMatrix([[e0 / (e0 + e1)], [e1 / (e0 + e1)]]), {"at": [{}]}


@claim("collide_e0_symbolic_dims", False, "colliding names", names_matter=True)
def _():
    X = sp.MatrixSymbol("X", m, n)
    e0 = _sym("_e0", positive=True)
    return sa.softmax(X), sa.softmax(X) * e0, {"at": [{m: 2, n: 1}]}


@claim("collide_e0_scalar_scales_attention", True, "colliding names")
def _():
    Q, K, V = qkv()
    e0 = _sym("_e0", positive=True)
    return sa.attention(Q, K, e0 * V), e0 * sa.attention(Q, K, V)


@claim("collide_e1_scalar_inside_scores", False, "colliding names")
def _():
    Q, K, V = qkv()
    e1 = _sym("_e1", positive=True)
    return sa.attention(e1 * Q, K, V), sa.attention(Q, K, V), {"at": [{n: 2, m: 2, d_k: 1, d_v: 1}]}


@claim("collide_entry_symbol_name", False, "colliding names", names_matter=True)
def _():
    X = sp.MatrixSymbol("X", 2, 2)
    s = _sym("X[0,0]")
    return X, sp.ImmutableMatrix([[s, X[0, 1]], [X[1, 0], X[1, 1]]]), {"at": [{}]}


@claim("collide_entry_symbol_as_scalar_at_size_1", False, "colliding names", names_matter=True)
def _():
    X = sp.MatrixSymbol("X", m, n)
    s = _sym("X[0,0]")
    return X, s * sp.OneMatrix(m, n), {"at": [{m: 1, n: 1}]}


@claim("collide_entry_symbol_shift_is_harmless", True, "colliding names")
def _():
    X = sp.MatrixSymbol("X", m, n)
    s = _sym("X[0,0]", real=True)
    return sa.softmax(X + s * sp.OneMatrix(m, n)), sa.softmax(X), {"at": [{m: 2, n: 2}]}


@claim("collide_entry_symbol_scale_is_not", False, "colliding names", names_matter=True)
def _():
    X = sp.MatrixSymbol("X", 2, 1)
    s = _sym("X[1,0]", real=True)
    return sa.softmax(X).as_explicit(), sa.softmax(sp.ImmutableMatrix([[X[0, 0]], [s]])).as_explicit(), {"at": [{}]}


@claim("collide_family_member_and_matrix_W_2", False, "colliding names", refusable=True, names_matter=True)
def _():
    A = sa.Family("A", n, n)
    return A[H], sp.MatrixSymbol("A_2", n, n), {"at": [{n: 2, H: 2}]}


@claim("collide_family_member_and_matrix_in_multihead", False, "colliding names", refusable=True,
       names_matter=True)
def _():
    WQ, WK, WV, WO = families()
    Q, K, V = mh_inputs()
    W2 = sp.MatrixSymbol("W^O_2", d_model, d_v)
    return (sa.multihead(Q, K, V, WQ, WK, WV, WO, H=H + 1, form="sum"),
            sa.head_sum(lambda k: WO[k] * sa.head(Q, K, V, WQ[k], WK[k], WV[k]), H)
            + W2 * sa.head(Q, K, V, WQ[H + 1], WK[H + 1], WV[H + 1]),
            {"at": [{n: 1, m: 1, d_model: 1, d_k: 1, d_v: 1, H: 1}]})


@claim("collide_concrete_member_and_matrix", False, "colliding names", refusable=True, names_matter=True)
def _():
    A = sa.Family("A", n, n)
    return A[2] * A[2], sp.MatrixSymbol("A_2", n, n) * A[2]


@claim("collide_permutation_and_matrix_same_name", False, "colliding names", refusable=True, names_matter=True)
def _():
    X = sp.MatrixSymbol("X", n, n)
    return X * sa.Permutation("P", n), X * sp.MatrixSymbol("P", n, n)


@claim("collide_score_function_named_like_a_matrix", True, "colliding names", refusable=True,
       names_matter=True)
def _():
    Q, K, V = qkv()
    fq = sa.ScoreFunction("Q")
    return sa.attention(Q, K, V, score=fq), V * sa.softmax(fq(Q, K))


@claim("collide_score_function_named_like_a_matrix_false", False, "colliding names", refusable=True,
       names_matter=True)
def _():
    Q, K, V = qkv()
    fq = sa.ScoreFunction("K")
    return sa.attention(Q, K, V, score=fq), sa.attention(Q, K, V, score="dot")


@claim("collide_two_score_functions", False, "colliding names")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V, score=sa.ScoreFunction("f")), sa.attention(Q, K, V, score=sa.ScoreFunction("g"))


@claim("collide_dimension_named_h_as_head_count", True, "colliding names")
def _():
    hh = sa.dims("h")
    WQ, WK, WV, WO = families()
    Q, K, V = mh_inputs()
    return (sa.multihead(Q, K, V, WQ, WK, WV, WO, H=hh),
            sa.multihead(Q, K, V, WQ, WK, WV, WO, H=hh, form="sum"))


@claim("collide_dimension_named_h_in_family_shape", True, "colliding names")
def _():
    hh = sa.dims("h")
    A = sa.Family("A", n, hh)
    Xh = sp.MatrixSymbol("X", hh, n)
    return sa.head_sum(lambda k: A[k] * Xh, H), sa.head_concat(lambda k: A[k], H) * sa.head_stack(lambda k: Xh, H)


@claim("collide_scalar_h_scales_heads", True, "colliding names")
def _():
    hs = _sym("h", integer=True, positive=True)
    A = sa.Family("A", n, n)
    return sa.head_sum(lambda k: hs * A[k], H), hs * sa.head_sum(lambda k: A[k], H)


@claim("collide_scalar_h_is_not_the_head_index", False, "colliding names")
def _():
    hs = _sym("h", integer=True, positive=True)
    A = sa.Family("A", n, n)
    return sa.head_sum(lambda k: hs * A[k], H), sa.head_sum(lambda k: k * A[k], H)


@claim("collide_scalar_j_in_repeat_kv", True, "colliding names")
def _():
    js = _sym("j", integer=True, positive=True)
    FK = sa.Family("W^K", d_k, d_model)
    K = sp.MatrixSymbol("K", d_model, m)
    return (repeat_kv_heads(lambda g: js * (FK[g] * K), G, r),
            sa.head_stack(lambda k: js * (FK[group_of(k, G * r, G)] * K), G * r))


@claim("collide_scalar_g_in_repeat_kv", True, "colliding names")
def _():
    gs = _sym("g", integer=True, positive=True)
    FK = sa.Family("W^K", d_k, d_model)
    K = sp.MatrixSymbol("K", d_model, m)
    return (repeat_kv_heads(lambda g: gs * (FK[g] * K), G, r),
            sa.head_stack(lambda k: gs * (FK[group_of(k, G * r, G)] * K), G * r))


@claim("collide_scalar_j_in_repeat_kv_false", False, "colliding names")
def _():
    js = _sym("j", integer=True, positive=True)
    FK = sa.Family("W^K", d_k, d_model)
    K = sp.MatrixSymbol("K", d_model, m)
    return (repeat_kv_heads(lambda g: js * (FK[g] * K), G, r),
            sa.head_stack(lambda k: FK[group_of(k, G * r, G)] * K, G * r))


@claim("collide_dimensions_named_g_and_j", True, "colliding names")
def _():
    gd, jd = sa.dims("g j")
    FK = sa.Family("W^K", d_k, d_model)
    K = sp.MatrixSymbol("K", d_model, m)
    return (repeat_kv_heads(lambda g: FK[g] * K, gd, jd),
            sa.head_stack(lambda k: FK[group_of(k, gd * jd, gd)] * K, gd * jd))


@claim("collide_scalar_i_in_rope_frequencies", True, "colliding names")
def _():
    iu = _sym("i", integer=True, positive=True)
    return rope(a, p, lambda k: iu * theta(k)).T * rope(b, p, lambda k: iu * theta(k)), rope(
        b - a, p, lambda k: iu * theta(k))


@claim("collide_scalar_i_rope_wrong_sign", False, "colliding names")
def _():
    iu = _sym("i", integer=True, positive=True)
    return rope(iu, p, theta).T * rope(b, p, theta), rope(iu - b, p, theta)


@claim("collide_scalar_k_scales_values", True, "colliding names")
def _():
    ks = _sym("k", integer=True)
    Q, K, V = qkv()
    return sa.attention(Q, K, ks * V), ks * sa.attention(Q, K, V)


@claim("collide_scalar_b0_scales_values", True, "colliding names")
def _():
    bs = _sym("_b0", integer=True)
    Q, K, V = qkv()
    return sa.attention(Q, K, bs * V), bs * sa.attention(Q, K, V)


@claim("collide_scalar_b0_inside_scores", False, "colliding names")
def _():
    bs = _sym("_b0", integer=True, positive=True)
    Q, K, V = qkv()
    return sa.attention(bs * Q, K, V), sa.attention(Q, K, V)


@claim("collide_dimension_named_b0", True, "colliding names")
def _():
    bd = sa.dims("_b0")
    Q, K, V = qkv(d_k, n, bd, d_v)
    return sp.OneMatrix(1, bd) * sa.softmax(K.T * Q), sp.OneMatrix(1, n)


@claim("collide_dimension_named_i_and_j", True, "colliding names")
def _():
    di, dj = sa.dims("i j")
    X = sp.MatrixSymbol("X", di, dj)
    return sa.softmax(X).T, sa.softmax(X.T, axis=1)


@claim("collide_dimension_named_i_and_j_false", False, "colliding names")
def _():
    di, dj = sa.dims("i j")
    X = sp.MatrixSymbol("X", di, dj)
    return sa.softmax(X) * sp.OneMatrix(dj, 1), sp.OneMatrix(di, 1)


@claim("collide_matrix_named_h", False, "colliding names")
def _():
    Hm = sp.MatrixSymbol("h", n, n)
    A = sa.Family("A", n, n)
    return sa.head_sum(lambda k: A[k] * Hm, H), sa.head_sum(lambda k: A[k], H)


@claim("collide_matrix_named_h_true", True, "colliding names")
def _():
    Hm = sp.MatrixSymbol("h", n, n)
    A = sa.Family("A", n, n)
    return sa.head_sum(lambda k: A[k] * Hm, H), sa.head_sum(lambda k: A[k], H) * Hm


# ----------------------------------------------------------------------------- scalar claims
@claim("scalar_worked_example_scale", True, "scalar")
def _():
    return sp.Integer(112) / sp.sqrt(64), sp.Integer(14)


@claim("scalar_worked_example_rounding_is_not_equality", False, "scalar")
def _():
    return sp.exp(2) / (1 + sp.exp(2)), sp.Rational(88, 100)


@claim("scalar_softmax_two_entries", True, "scalar")
def _():
    return sp.exp(14) / (sp.exp(14) + sp.exp(12)), sp.E**2 / (1 + sp.E**2)


@claim("scalar_sqrt2_off_by_1e-17", False, "off by 10^-15")
def _():
    return sp.sqrt(2), sp.Rational(14142135623730951, 10**16)


@claim("scalar_exp_off_by_1e-15", False, "off by 10^-15")
def _():
    return sp.exp(1), sp.E + EPS


@claim("scalar_binomial_square", True, "scalar")
def _():
    return (x + y) ** 2, x**2 + 2 * x * y + y**2


@claim("scalar_freshman_square", False, "scalar")
def _():
    return (x + y) ** 2, x**2 + y**2


@claim("scalar_sqrt_of_square_for_dimensions", True, "scalar")
def _():
    return sp.sqrt(d_k**2), d_k


@claim("scalar_dimension_square_is_itself", False, "true only at dimension 1")
def _():
    return d_k**2, d_k


@claim("scalar_e0_symbol_is_not_e", False, "colliding names")
def _():
    return sp.exp(x), _sym("_e0", positive=True)


# ----------------------------------------------------------------------------- collisions behind tiny differences
@claim("collide_e0_behind_a_1e-20_difference", False, "colliding names", names_matter=True)
def _():
    X = sp.MatrixSymbol("X", 2, 1)
    e0 = _sym("_e0", positive=True)
    lhs = sa.softmax(X).as_explicit()
    return lhs, lhs + sp.Rational(1, 10**20) * (e0 - sp.exp(X[0, 0])) * sp.ones(2, 1), {"at": [{}]}


@claim("collide_e0_behind_a_1e-20_difference_symbolic", False, "colliding names", names_matter=True)
def _():
    X = sp.MatrixSymbol("X", m, n)
    e0 = _sym("_e0", positive=True)
    return sa.softmax(X), sa.softmax(X) * (1 + sp.Rational(1, 10**20) * (e0 - 1)), {"at": [{m: 2, n: 1}]}


@claim("collide_entry_symbol_behind_a_1e-20_difference", False, "colliding names", names_matter=True)
def _():
    X = sp.MatrixSymbol("X", 2, 2)
    s = _sym("X[0,0]")
    return X, X + sp.Rational(1, 10**20) * (s - X[0, 0]) * sp.ones(2, 2), {"at": [{}]}


@claim("collide_family_member_behind_concrete_H", False, "colliding names", refusable=True, names_matter=True)
def _():
    A = sa.Family("A", n, n)
    X = sp.MatrixSymbol("X", n, n)
    return sa.head_sum(lambda k: A[k] * X, H), A[1] * X + sp.MatrixSymbol("A_2", n, n) * X, {"at": [{n: 2, H: 2}]}


@claim("nested_head_sum_three_levels", True, "nested binders")
def _():
    A, B, C = sa.Family("A", n, n), sa.Family("B", n, n), sa.Family("C", n, n)
    return (sa.head_sum(lambda u: sa.head_sum(lambda v: sa.head_sum(lambda w: A[u] * B[v] * C[w], H), H), H),
            sa.head_sum(lambda u: A[u], H) * sa.head_sum(lambda v: B[v], H) * sa.head_sum(lambda w: C[w], H))


@claim("nested_head_sum_three_levels_middle_index_reused", False, "nested binders")
def _():
    A, B, C = sa.Family("A", n, n), sa.Family("B", n, n), sa.Family("C", n, n)
    return (sa.head_sum(lambda u: sa.head_sum(lambda v: sa.head_sum(lambda w: A[u] * B[v] * C[w], H), H), H),
            sa.head_sum(lambda u: sa.head_sum(lambda v: A[u] * B[v] * C[v], H), H) * H)


@claim("nested_head_sum_over_different_counts", True, "nested binders")
def _():
    A, B = _AB()
    return (sa.head_sum(lambda h: sa.head_sum(lambda h2: A[h] * B[h2], G), H),
            sa.head_sum(lambda h: A[h], H) * sa.head_sum(lambda h: B[h], G))


@claim("nested_head_sum_over_different_counts_swapped", False, "nested binders")
def _():
    A, B = _AB()
    return (sa.head_sum(lambda h: sa.head_sum(lambda h2: A[h] * B[h2], G), H),
            sa.head_sum(lambda h: A[h], G) * sa.head_sum(lambda h: B[h], H))


@claim("nested_head_sum_substituted_H_agrees_with_concrete", True, "nested binders")
def _():
    A, B = _AB()
    return (sa.head_sum(lambda h: sa.head_sum(lambda h2: A[h] * B[h2], H), H).subs(H, 2),
            sa.head_sum(lambda h: sa.head_sum(lambda h2: A[h] * B[h2], 2), 2))


# ----------------------------------------------------------------------------- closed claims with numbers
def _col(*xs):
    return sp.ImmutableMatrix([[v] for v in xs])


@claim("closed_softmax_worked_example", True, "closed numbers")
def _():
    return sa.softmax(_col(14, 12)), _col(sp.E**2 / (1 + sp.E**2), 1 / (1 + sp.E**2))


@claim("closed_softmax_worked_example_rounded", False, "closed numbers")
def _():
    return sa.softmax(_col(14, 12)), _col(sp.Rational(88, 100), sp.Rational(12, 100))


@claim("closed_softmax_of_huge_scores", True, "closed numbers", note="floats overflow: exp(1000)")
def _():
    return sa.softmax(_col(1000, 999)), _col(1 / (1 + sp.exp(-1)), sp.exp(-1) / (1 + sp.exp(-1)))


@claim("closed_softmax_of_huge_scores_swapped", False, "closed numbers")
def _():
    return sa.softmax(_col(1000, 999)), _col(sp.exp(-1) / (1 + sp.exp(-1)), 1 / (1 + sp.exp(-1)))


@claim("closed_softmax_minus_infinity_drops_a_key", True, "closed numbers")
def _():
    return sa.softmax(_col(0, -sp.oo)), _col(1, 0)


@claim("closed_ramanujan_constant_is_an_integer", False, "off by 10^-15",
       note="exp(pi sqrt(163)) - (640320^3 + 744) is about -7.5e-13, relative 3e-30")
def _():
    return sp.ImmutableMatrix([[sp.exp(sp.pi * sp.sqrt(163))]]), sp.ImmutableMatrix([[640320**3 + 744]])


@claim("closed_ramanujan_constant_scalar", False, "off by 10^-15")
def _():
    return sp.exp(sp.pi * sp.sqrt(163)), sp.Integer(640320**3 + 744)


@claim("closed_exp_pi_minus_pi_is_20", False, "closed numbers")
def _():
    return sp.exp(sp.pi) - sp.pi, sp.Integer(20)


@claim("closed_pi_is_355_over_113", False, "closed numbers")
def _():
    return sp.ImmutableMatrix([[sp.pi]]), sp.ImmutableMatrix([[sp.Rational(355, 113)]])


@claim("closed_exp_of_log_sum", True, "closed numbers")
def _():
    return sp.exp(sp.log(2) + sp.log(3)), sp.Integer(6)


@claim("closed_sin_is_shifted_cos", True, "closed numbers")
def _():
    return sp.sin(sp.pi / 7), sp.cos(5 * sp.pi / 14)


@claim("closed_floor_of_sqrt2_scaled", True, "closed numbers")
def _():
    return sp.floor(sp.sqrt(2) * 10**15), sp.Integer(1414213562373095)


@claim("closed_floor_of_sqrt2_scaled_off_by_one", False, "closed numbers")
def _():
    return sp.floor(sp.sqrt(2) * 10**15), sp.Integer(1414213562373096)


@claim("closed_softmax_shift_by_1e-15_inside_exp", False, "off by 10^-15")
def _():
    X = sp.MatrixSymbol("X", 2, 2)
    return sa.softmax(X + EPS * sp.ImmutableMatrix([[1, 0], [0, 0]])), sa.softmax(X)


@claim("softmax_diagonal_shift_by_1e-15", False, "off by 10^-15")
def _():
    X = sp.MatrixSymbol("X", n + 1, n + 1)
    return sa.softmax(X + EPS * sp.Identity(n + 1)), sa.softmax(X)


@claim("attention_scale_with_d_k_off_by_1e-15", False, "off by 10^-15")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V), V * sa.softmax(K.T * Q / sp.sqrt(d_k + EPS))


@claim("attention_huge_value_scale", True, "attention")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, 10**30 * V), 10**30 * sa.attention(Q, K, V)


# ----------------------------------------------------------------------------- rules and their false neighbours
@claim("mask_scaled_by_positive_symbol", True, "masks")
def _():
    S = sp.MatrixSymbol("S", n, n)
    cp = sp.Symbol("c", positive=True)
    return sa.softmax(cp * (S + sa.CausalMask(n))), sa.softmax(cp * S + sa.CausalMask(n))


@claim("mask_scaled_by_symbol_of_unknown_sign", False, "masks", refusable=True,
       note="false for c <= 0; c (S + M) with c of unknown sign may be refused as undefined")
def _():
    S = sp.MatrixSymbol("S", n + 1, n + 1)
    cr = sp.Symbol("c", real=True)
    return sa.softmax(cr * (S + sa.CausalMask(n + 1))), sa.softmax(cr * S + sa.CausalMask(n + 1))


@claim("padding_longer_than_keys_is_no_mask", True, "masks")
def _():
    Q, K, V = qkv()
    return sa.masked_attention(Q, K, V, sa.PaddingMask(m, n, m + 1)), sa.attention(Q, K, V)


@claim("two_permutations_cancel", False, "permutations")
def _():
    P, P2 = sa.Permutation("P", n), sa.Permutation("R", n)
    return P * P2.T, sp.Identity(n)


@claim("permutation_transpose_cancels_on_the_left", False, "permutations")
def _():
    P, P2 = sa.Permutation("P", n), sa.Permutation("R", n)
    return P2.T * P, sp.Identity(n)


@claim("permutation_product_transpose", True, "permutations")
def _():
    P, P2 = sa.Permutation("P", n), sa.Permutation("R", n)
    return (P * P2).T * (P * P2), sp.Identity(n)


@claim("rope_first_blocks_of_a_larger_rope", True, "rope")
def _():
    return rope(a, p + 1, theta)[:2 * p, :2 * p], rope(a, p, theta)


@claim("rope_last_blocks_are_shifted_frequencies", True, "rope")
def _():
    return rope(a, p + 1, theta)[2:, 2:], rope(a, p, lambda k: theta(k + 1))


@claim("rope_last_blocks_with_the_same_frequencies", False, "rope")
def _():
    return rope(a, p + 1, theta)[2:, 2:], rope(a, p, theta)


@claim("head_sum_of_a_constant_rope", True, "rope")
def _():
    return sa.head_sum(lambda k: rope(a, p, theta), H), H * rope(a, p, theta)


@claim("head_sum_of_rotating_ropes_is_not_H_times_one", False, "rope")
def _():
    return sa.head_sum(lambda k: rope(k * a, p, theta), H), H * rope(a, p, theta)


@claim("rope_full_turn_with_unit_frequencies", True, "rope")
def _():
    # a full turn: position 1 at the frequency 2 pi (positions are whole numbers, as RoPE's are)
    return rope(1, p, lambda k: 2 * sp.pi), sp.Identity(2 * p)


@claim("blockdiag_of_twice_identity_is_identity", False, "rope")
def _():
    return sa.BlockDiag(2 * sp.Identity(2), sa.h, p), sp.Identity(2 * p)


@claim("gqa_sum_form_reads_floor_groups", True, "gqa")
def _():
    Q, K, V, WQ, WK, WV, WO = _gqa_args()
    return (sa.gqa(Q, K, V, WQ, WK, WV, WO, H=G * r, G=G, form="sum"),
            sa.head_sum(lambda k: WO[k] * sa.attention(WQ[k] * Q, WK[group_of(k, G * r, G)] * K,
                                                       WV[group_of(k, G * r, G)] * V), G * r))


@claim("gqa_sum_form_reads_groups_off_by_one", False, "gqa")
def _():
    Q, K, V, WQ, WK, WV, WO = _gqa_args()
    return (sa.gqa(Q, K, V, WQ, WK, WV, WO, H=G * r, G=G, form="sum"),
            sa.head_sum(lambda k: WO[k] * sa.attention(WQ[k] * Q, WK[sp.floor(k / r) + 1] * K,
                                                       WV[sp.floor(k / r) + 1] * V), G * r))


@claim("gqa_sum_form_reads_ceiling_groups_true", True, "gqa")
def _():
    Q, K, V, WQ, WK, WV, WO = _gqa_args()
    return (sa.gqa(Q, K, V, WQ, WK, WV, WO, H=G * r, G=G, form="sum"),
            sa.head_sum(lambda k: WO[k] * sa.attention(WQ[k] * Q, WK[sp.ceiling(k / r)] * K,
                                                       WV[sp.ceiling(k / r)] * V), G * r))


# ----------------------------------------------------------------------------- names SymPy would parse
@claim("name_E_is_a_scalar_not_euler", False, "colliding names")
def _():
    Es = _sym("E", positive=True)
    Q, K, V = qkv()
    return sa.attention(Q, K, Es * V), sp.E * sa.attention(Q, K, V)


@claim("name_E_scalar_commutes", True, "colliding names")
def _():
    Es = _sym("E", positive=True)
    Q, K, V = qkv()
    return sa.attention(Q, K, Es * V), Es * sa.attention(Q, K, V)


@claim("name_I_is_a_scalar_not_the_imaginary_unit", False, "colliding names")
def _():
    Is = _sym("I", real=True)
    X = X_mat()
    return (Is**2 + 1) * sa.softmax(X), sp.ZeroMatrix(m, n)


@claim("name_pi_scalar_scales_values", False, "colliding names")
def _():
    ps = _sym("pi", positive=True)
    Q, K, V = qkv()
    return sa.attention(Q, K, ps * V), sp.pi * sa.attention(Q, K, V)


@claim("matrix_named_lambda_and_gamma", True, "colliding names")
def _():
    A, B = sp.MatrixSymbol("lambda", n, n), sp.MatrixSymbol("gamma", n, n)
    return (A * B).T, B.T * A.T


@claim("matrix_named_oo_and_dimension_named_N", False, "colliding names")
def _():
    A = sp.MatrixSymbol("oo", N, N)
    return sa.softmax(A), sa.softmax(A.T)


@claim("scalar_primed_like_a_nested_index", True, "colliding names")
def _():
    hp = _sym("h'", integer=True, positive=True)
    A, B = _AB()
    return (sa.head_sum(lambda u: sa.head_sum(lambda v: hp * (A[u] * B[v]), H), H),
            hp * (sa.head_sum(lambda u: A[u], H) * sa.head_sum(lambda v: B[v], H)))


@claim("scalar_primed_like_a_nested_index_false", False, "colliding names")
def _():
    hp = _sym("h'", integer=True, positive=True)
    A, B = _AB()
    return (sa.head_sum(lambda u: sa.head_sum(lambda v: hp * (A[u] * B[v]), H), H),
            sa.head_sum(lambda u: sa.head_sum(lambda v: v * (A[u] * B[v]), H), H))


@claim("dimension_primed_like_a_nested_index", True, "colliding names")
def _():
    Hp = sa.dims("h'")
    A, B = _AB()
    return (sa.head_sum(lambda u: sa.head_sum(lambda v: A[u] * B[v], Hp), Hp),
            sa.head_sum(lambda u: A[u], Hp) * sa.head_sum(lambda v: B[v], Hp))


# ----------------------------------------------------------------------------- binders built by hand
u_, v_ = sp.symbols("u v", integer=True, positive=True)


@claim("hand_bound_head_sum_alpha", True, "nested binders")
def _():
    A, X = sa.Family("A", n, n), sp.MatrixSymbol("X", n, n)
    return sa.HeadSum(A[u_] * X, u_, H), sa.HeadSum(A[v_] * X, v_, H)


@claim("hand_bound_head_sum_index_also_free_outside", True, "nested binders")
def _():
    A, X = sa.Family("A", n, n), sp.MatrixSymbol("X", n, n)
    return u_ * sa.HeadSum(A[u_] * X, u_, H), u_ * sa.HeadSum(A[v_] * X, v_, H)


@claim("hand_bound_head_sum_outer_scalar_captured", False, "nested binders")
def _():
    A, X = sa.Family("A", n, n), sp.MatrixSymbol("X", n, n)
    return u_ * sa.HeadSum(A[u_] * X, u_, H), sa.HeadSum(v_ * A[v_] * X, v_, H)


@claim("hand_bound_head_sum_rebinding_its_index", True, "nested binders")
def _():
    A, X = sa.Family("A", n, n), sp.MatrixSymbol("X", n, n)
    return sa.HeadSum(sa.HeadSum(A[u_] * X, u_, H), u_, H), H * sa.HeadSum(A[u_] * X, u_, H)


@claim("hand_bound_head_sum_rebinding_read_as_one_sum", False, "nested binders")
def _():
    A, X = sa.Family("A", n, n), sp.MatrixSymbol("X", n, n)
    return sa.HeadSum(sa.HeadSum(A[u_] * X, u_, H), u_, H), sa.HeadSum(A[u_] * X, u_, H)


@claim("hand_bound_blockdiag_alpha", True, "nested binders")
def _():
    return sa.BlockDiag(rotation(x * theta(u_)), u_, p), sa.BlockDiag(rotation(x * theta(v_)), v_, p)


@claim("hand_bound_blockdiag_outer_scalar_captured", False, "nested binders")
def _():
    return u_ * sa.BlockDiag(rotation(x * theta(u_)), u_, p), sa.BlockDiag(v_ * rotation(x * theta(v_)), v_, p)


@claim("hand_bound_blockdiag_scalar_moves_inside", True, "nested binders")
def _():
    return u_ * sa.BlockDiag(rotation(x * theta(v_)), v_, p), sa.BlockDiag(u_ * rotation(x * theta(v_)), v_, p)


@claim("head_sum_after_substituting_the_head_index", True, "nested binders")
def _():
    A, X = sa.Family("A", n, n), sp.MatrixSymbol("X", n, n)
    return sa.head_sum(lambda k: A[k] * X, H).subs(sa.h, 2), sa.head_sum(lambda k: A[k] * X, H)


@claim("one_score_function_at_two_input_shapes", False, "attention")
def _():
    Q, K = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m)
    Q2, K2 = sp.MatrixSymbol("Q2", d_v, n), sp.MatrixSymbol("K2", d_v, m)
    return sa.softmax(f(Q, K)), sa.softmax(f(Q2, K2))


@claim("two_families_one_name_different_shapes", False, "colliding names", refusable=True, names_matter=True)
def _():
    W1, W2 = sa.Family("W", n, n), sa.Family("W", n, m)
    return W1[1], W2[1] * sp.MatrixSymbol("C", m, n)


# ----------------------------------------------------------------------------- more d_k = d_v traps
@claim("paper_form_scaled_by_d_v", False, "true only when d_k = d_v")
def _():
    WQ, WK, WV, WO = families()
    X = sp.MatrixSymbol("X", d_model, n)
    paper = sa.paper_self_attention(X, lambda k: WQ[k] / sp.sqrt(d_v), WK, lambda k: WO[k] * WV[k], H=H)
    return X + sa.multihead(X, X, X, WQ, WK, WV, WO, H=H, form="sum"), paper


@claim("paper_form_scaled_by_d_v_with_d_v_equal_d_k", True, "true only when d_k = d_v")
def _():
    WQ, WK, WV, WO = families(d_k, d_k)
    X = sp.MatrixSymbol("X", d_model, n)
    paper = sa.paper_self_attention(X, lambda k: WQ[k] / sp.sqrt(WV[k].rows), WK, lambda k: WO[k] * WV[k], H=H)
    return X + sa.multihead(X, X, X, WQ, WK, WV, WO, H=H, form="sum"), paper


@claim("head_with_value_scale_sqrt_d_v_over_d_k", False, "true only when d_k = d_v")
def _():
    Q, K, V = qkv()
    return sa.attention(Q, K, V), sp.sqrt(d_v) / sp.sqrt(d_k) * sa.attention(Q, K, V)


@claim("hand_bound_plain_h_around_head_sum", True, "nested binders", refusable=True, names_matter=True,
       note="B_h under the hand-built binder and B_h under head_sum print alike and may be refused")
def _():
    A, B = _AB()
    hu = _sym("h", integer=True, positive=True)
    return (sa.HeadSum(sa.head_sum(lambda k: A[k] * B[hu], H), hu, H),
            sa.head_sum(lambda k: A[k], H) * sa.head_sum(lambda k: B[k], H))


@claim("hand_bound_symattn_h_around_head_sum", True, "nested binders")
def _():
    A, B = _AB()
    return (sa.HeadSum(sa.head_sum(lambda k: A[k] * B[sa.h], H), sa.h, H),
            sa.head_sum(lambda k: A[k], H) * sa.head_sum(lambda k: B[k], H))


@claim("hand_bound_symattn_h_around_head_sum_diagonal", False, "nested binders")
def _():
    A, B = _AB()
    return sa.HeadSum(sa.head_sum(lambda k: A[k] * B[sa.h], H), sa.h, H), sa.head_sum(lambda k: A[k] * B[k], H)


# the classes an outside set found and traps of our own, in a module of their own (registered here)
import corpus_classes  # noqa: E402, F401
import corpus_traps  # noqa: E402, F401
