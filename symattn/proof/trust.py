"""The trust base: every rewrite rule and axiom the proof engine relies on, listed and checked.

Each entry (a :class:`~symattn.proof.trust_check.Rule`) names the rule, the function that
implements it, its statement, and an instance family whose equality IS the rule at concrete
sizes; :func:`check_trust_base` checks each one exactly at every size combination up to 4 and
numerically at random sizes 5..12 (:mod:`symattn.proof.trust_check`). ``symattn prove --trust``
prints the table.

Every public function of the rule modules (:data:`RULE_MODULES`) is either named by an entry or
listed in :data:`DRIVERS` with the reason it is not a rule of its own (it applies rules, or
decides when to), so a new rule cannot enter the engine without an entry here
(:func:`unlisted_rule_functions`).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from . import trust_families as F
from . import trust_families_blocks as FB
from . import trust_families_entries as FE
from . import trust_families_values as FV
from .trust_check import Rule, RuleCheck, check_rule

#: The modules whose public functions are rewrite rules (or drivers of rules).
RULE_MODULES = ("symattn.proof.canon", "symattn.proof.sums", "symattn.proof.entrywise", "symattn.proof.structural")

#: Public functions of the rule modules that are not rules themselves, with the reason.
DRIVERS = {
    "symattn.proof.canon.bottom_up": "applies a rule to every node, children first",
    "symattn.proof.canon.canon": "applies the canon rules until nothing changes",
    "symattn.proof.canon.is_zero_matrix": "recognizes a zero matrix (no rewriting)",
    "symattn.proof.canon.undefined": "recognizes an undefined value, nan or zoo (no rewriting)",
    "symattn.proof.structural.same_on_the_dag": "compares normal forms on the DAG (strategy A); its rules are "
                                                "the transpose rules and the associativity and commutativity of "
                                                "distribute, whose entries name it",
    "symattn.proof.canon.same_by_rewriting": "compares canonical forms (strategy A)",
    "symattn.proof.sums.bounds": "reads index ranges for the side conditions",
    "symattn.proof.sums.in_range": "decides the side condition lo <= u <= hi",
    "symattn.proof.sums.provably_nonnegative": "decides a side condition x >= 0 from the symbols' assumptions",
    "symattn.proof.sums.simplify_sums": "applies the sum rules bottom-up",
    "symattn.proof.sums.local_rules": "applies cancel_permutation, linearize_delta, absorb_mask_scale to one node",
    "symattn.proof.sums.prenex": "composes expand, pull_sums_out and order_limits (checked with pull_sums_out)",
    "symattn.proof.entrywise.interchanged": "prenex, rename_bound and cancel of a difference (checked with them)",
    "symattn.proof.entrywise.normalize": "applies the sum and floor rules, renames, cancels",
    "symattn.proof.entrywise.same_entrywise": "compares entries (strategy B)",
    "symattn.proof.entrywise.same_fractions": "compares numerators and denominators with normalize and interchanged "
                                              "(checked with them); equal parts make equal fractions",
}


# --- the registry ----------------------------------------------------------------------------

def _rule(name, where, statement, family=None, params=(), **kw) -> Rule:
    where = (where,) if isinstance(where, str) else tuple(where)
    return Rule(name, where, statement, family, tuple(params), **kw)


C, S, E = "symattn.proof.canon", "symattn.proof.sums", "symattn.proof.entrywise"
DAG = "symattn.proof.structural.same_on_the_dag"
SMALL_INT = {"p": range(-6, 7), "q": range(1, 5), "r": range(1, 5), "n": range(-2, 3)}
LARGE_INT = {"p": range(-60, 61), "q": range(5, 13), "r": range(5, 13), "n": range(-12, 13)}

TRUST_BASE: list[Rule] = [
    # strategy A (canon.py) and the nodes' own rules
    _rule("transpose_of_product", (f"{C}.canon", "sympy Transpose.doit", DAG),
          "(AB)ᵀ = BᵀAᵀ, (ABC)ᵀ = CᵀBᵀAᵀ", F._transpose_of_product, "abc"),
    _rule("transpose_of_sum_scalar_transpose", (f"{C}.canon", "sympy Transpose.doit", DAG),
          "(A + B)ᵀ = Aᵀ + Bᵀ, (cA)ᵀ = c Aᵀ, (Aᵀ)ᵀ = A", F._transpose_of_sum, "ab"),
    _rule("transpose_of_softmax", ("symattn.defs.softmax.Softmax._eval_transpose", DAG),
          "Softmax(X, 0)ᵀ = Softmax(Xᵀ, 1) and Softmax(X, 1)ᵀ = Softmax(Xᵀ, 0)", F._transpose_of_softmax, "mn"),
    _rule("transpose_of_head_nodes", ("symattn.defs.heads.HeadStack._eval_transpose",
                                      "symattn.defs.heads.HeadConcat._eval_transpose",
                                      "symattn.defs.heads.HeadSum._eval_transpose"),
          "[e_1; ...; e_H]ᵀ = [e_1ᵀ ... e_Hᵀ], [e_1 ... e_H]ᵀ = [e_1ᵀ; ...; e_Hᵀ], (Σ_h e_h)ᵀ = Σ_h e_hᵀ",
          F._transpose_of_head_nodes, ("H", "r", "c")),
    _rule("transpose_of_block_diagonal", "symattn.defs.rope.BlockDiag._eval_transpose",
          "diag(B_1, ..., B_p)ᵀ = diag(B_1ᵀ, ..., B_pᵀ)", F._transpose_of_block_diagonal, ("p", "r", "c")),
    _rule("distribute", (f"{C}.canon", "sympy MatrixExpr.expand", DAG),
          "A(B + C) = AB + AC, (B + C)D = BD + CD, A(cB) = c AB, (AB)D = A(BD), B + B + C - C = 2B",
          F._distribute, "abc"),
    _rule("multiply_blocks", (f"{C}.canon", "sympy block_collapse"),
          "[A B][C; D] = AC + BD, [A B]ᵀ = [Aᵀ; Bᵀ], [C; D][Cᵀ Dᵀ] = [CCᵀ CDᵀ; DCᵀ DDᵀ]",
          F._multiply_blocks, ("a", "b1", "b2", "c")),
    _rule("push_into_head_sums", f"{C}.push_into_head_sums",
          "M Σ_h e_h = Σ_h M e_h, (Σ_h e_h) N = Σ_h e_h N, c Σ_h e_h = Σ_h c e_h, Σ_h (a_h + b_h) = Σ_h a_h + "
          "Σ_h b_h, for M, N, c free of h (a factor that mentions h is not moved)",
          F._push_into_head_sums, ("H", "r", "a", "c")),
    _rule("settle_floors_over_heads", f"{C}.settle_floors_over_heads",
          "over h = 1..H: floor(a h + b) = floor(a + b) when a >= 0 and a H + b < floor(a + b) + 1 "
          "(e.g. floor((h - 1)/H) + 1 = 1)", F._settle_floors, ("H", "r", "s"), exact={"s": range(0, 4)},
          numeric={"s": range(0, 13)}),
    _rule("multiply_block_diagonals", f"{C}.multiply_block_diagonals",
          "diag(A_1, ..., A_p) diag(B_1, ..., B_p) = diag(A_1 B_1, ..., A_p B_p)",
          F._multiply_block_diagonals, ("p", "a", "b", "c")),
    _rule("expand_trig_entries", f"{C}.expand_trig_entries",
          "cos(x + y) = cos x cos y - sin x sin y, sin(x + y) = sin x cos y + cos x sin y, cos(-x) = cos x, "
          "sin(-x) = -sin x, sin²x = 1 - cos²x, in explicit entries and products' coefficients "
          "(at x, y = aπ/12, bπ/12)", F._trig, "ab",
          exact={"a": range(-4, 5), "b": range(-4, 5)}, numeric={"a": range(-24, 25), "b": range(-24, 25)}),
    _rule("split_softmax_over_blocks", f"{C}.split_softmax_over_blocks",
          "Softmax([A B], 0) = [Softmax(A, 0) Softmax(B, 0)], Softmax([C; D], 1) = [Softmax(C, 1); Softmax(D, 1)], "
          "Softmax([e_1 ... e_H], 0) = [Softmax(e_1, 0) ... Softmax(e_H, 0)] and the row twin; never over the "
          "axis that crosses the blocks", F._split_softmax_over_blocks, ("m", "a", "b")),
    _rule("identity_block_diagonals", f"{C}.identity_block_diagonals",
          "diag(I_k, ..., I_k) (p blocks) = I_{kp}, diag(0, ..., 0) = 0, diag(I_a, I_b) = I_{a+b} (explicit "
          "identity blocks too)", F._identity_block_diagonals, ("p", "k")),
    _rule("canonical_binder_indices", f"{C}.canonical_binder_indices",
          "Σ_{u=1}^{H} A_u = Σ_{h=1}^{H} A_h (alpha-renaming a binder over a user's index u to the lowest "
          "canonical index not occurring in its body; also stacks and block diagonals)",
          F._canonical_binder_indices, ("H", "r", "c")),
    _rule("constant_head_sums", f"{C}.constant_head_sums",
          "Σ_{h=1}^{H} e = H e when h is not free in e (also when e binds h again)", F._constant_head_sums,
          ("H", "r", "c")),
    _rule("scalars_into_block_diagonals", f"{C}.scalars_into_block_diagonals",
          "c diag(B_1, ..., B_p) = diag(c B_1, ..., c B_p) for a scalar c free of the block index",
          F._scalars_into_block_diagonals, ("p", "r", "c")),
    _rule("ceilings_as_floors", f"{C}.ceilings_as_floors",
          "ceiling(a/r) = floor((a + r - 1)/r) for an integer a and a positive integer r", F._ceilings_as_floors,
          ("a", "r"), exact={"a": range(-8, 9)}, numeric={"a": range(-99, 100)}),
    _rule("slice_block_diagonals", f"{C}.slice_block_diagonals",
          "diag(B_1, ..., B_c)[Ra:Rb, Ca:Cb] = diag(B_{a+1}, ..., B_b) for R × C blocks and 0 <= a < b <= c "
          "(a slice on the block boundaries keeps whole blocks)", F._slice_block_diagonals, ("p", "r", "c")),
    _rule("softmax_across_blocks", f"{C}.softmax_across_blocks",
          "Softmax([B_1 ... B_c], 1) = [diag(l)⁻¹ Exp(B_1) ... diag(l)⁻¹ Exp(B_c)] with l = Σ_k Exp(B_k) 1 (one "
          "shared denominator for a row crossing side-by-side blocks), and Softmax([B_1; ...; B_r], 0) = "
          "[(diag(l)⁻¹ Exp(B_1ᵀ))ᵀ; ...] with l = Σ_k Exp(B_kᵀ) 1; not applied along the other axis",
          FB._softmax_across_blocks, ("m", "a", "b")),
    _rule("flatten_nested_blocks", (f"{C}.flatten_nested_blocks", f"{E}.merge_slices", f"{E}.entry"),
          "[[A B] C] = [A B C], [A [B C]] = [A B C], [[A; B]; C] = [A; B; C] (a block row of block rows is one "
          "block row); so [[K[:, :a] K[:, a:b]] K[:, b:]] = K", FB._flatten_nested_blocks, ("r", "a", "b")),
    _rule("split_constant_blocks", f"{C}.split_constant_blocks",
          "[A B] 1 = [A B] [1; 1] = A 1 + B 1 and 1 [C; D] = [1 1] [C; D] = 1 C + 1 D (a ones or zero matrix beside "
          "a block matrix in a product, cut along the blocks' sizes)", FB._split_constant_blocks, ("r", "a", "b")),
    _rule("power_of_block_diagonal", f"{C}.power_of_block_diagonal",
          "diag(B_1, ..., B_p)^k = diag(B_1^k, ..., B_p^k) for an integer k >= 1 (RoPE: R_a R_a = R_a², which "
          "SymPy folds into a power)", FB._power_of_block_diagonal, ("p", "r")),
    _rule("identity_block_grid", f"{C}.identity_block_grid",
          "[c I_a 0; 0 c I_b] = c I_{a+b}: a square grid of square blocks, one c·I on the diagonal and zero blocks "
          "elsewhere (repeat_kv: RᵀR = n_rep I)", FB._identity_block_grid, ("a", "b")),
    # sums.py
    _rule("eliminate_delta", f"{S}.eliminate_delta",
          "Σ_{k=lo}^{hi} [k = u] f(k) = f(u) and Σ_k [σ(k) = u] f(k) = f(σ⁻¹(u)) when lo <= u <= hi is "
          "provable (not applied when u may leave the range)", F._eliminate_delta, "n"),
    _rule("reindex_permutation", f"{S}.reindex_permutation",
          "Σ_{k=0}^{n-1} f(σ(k)) = Σ_{k=0}^{n-1} f(k) when k occurs only as σ(k)", F._reindex_permutation, "n"),
    _rule("restrict_to_visible", f"{S}.restrict_to_visible",
          "Σ_{k=lo}^{hi} f(k) exp(Visible(k, u)) = Σ_{k=lo}^{min(u, hi)} f(k) when lo <= u is provable "
          "(exp(0) = 1, exp(-oo) = 0)", F._restrict_to_visible, "n"),
    _rule("restrict_from_visible", f"{S}.restrict_from_visible",
          "Σ_{k=lo}^{hi} f(k) exp(Visible(u, k + c)) = Σ_{k=max(lo, u - c)}^{hi} f(k) when u - c <= hi + 1 is "
          "provable (the lower end of a window)", F._restrict_from_visible, "n"),
    _rule("split_into_blocks", f"{S}.split_into_blocks",
          "Σ_{k=0}^{RN-1} f(k, floor(k/R)) = Σ_{q=1}^{N} Σ_{s=0}^{R-1} f(R(q-1) + s, q - 1)",
          F._split_into_blocks, ("R", "N")),
    _rule("merge_blocks", f"{S}.merge_blocks",
          "Σ_{q=lo}^{hi} Σ_{s=0}^{R-1} f(Rq + s) = Σ_{k=R lo}^{R hi + R - 1} f(k) for hi >= lo - 1 (the blocks of R "
          "consecutive positions make up the whole range)", F._merge_blocks, ("R", "N")),
    _rule("shift_to_zero", f"{S}.shift_to_zero",
          "Σ_{k=lo}^{hi} f(k) = Σ_{m=0}^{hi-lo} f(m + lo) for an integer lo (an empty range stays empty); not "
          "applied when k occurs in a delta, mask, floor, ceiling or permutation index", F._shift_to_zero,
          ("n", "lo"), exact={"n": range(-1, 5), "lo": range(-3, 4)}, numeric={"n": range(5, 13), "lo": range(-9, 10)}),
    _rule("pull_constants_out_of_sums", (f"{S}.simplify_sum", f"{S}.simplify_sums"),
          "Σ_k (c a_k + b_k + 3) = c Σ_k a_k + Σ_k b_k + 3n; a Sum over several limits is the nested sums, "
          "innermost limit first", F._pull_constants, "n"),
    _rule("write_out_short_sums", (f"{S}.simplify_sum", f"{E}._index_sum"),
          "a sum over a concrete range of length <= 8 is its terms written out", F._write_out_short_sums, "n",
          numeric={"n": range(5, 9)}),
    _rule("cancel_permutation", f"{S}.cancel_permutation",
          "[σ(a) = σ(b)] = [a = b] and [σ⁻¹(a) = σ⁻¹(b)] = [a = b] for a, b provably in 0..n-1 (σ is "
          "injective)", F._cancel_permutation, "n"),
    _rule("linearize_delta", f"{S}.linearize_delta",
          "exp(c [a = b]) = 1 + (exp(c) - 1) [a = b] for a finite c (no mask in c)", F._linearize_delta, "ab",
          exact={"a": range(0, 4), "b": range(0, 4)}, numeric={"a": range(0, 13), "b": range(0, 13)}),
    _rule("absorb_mask_scale", f"{S}.absorb_mask_scale",
          "c Visible(k, u) = Visible(k, u) for c provably positive (Visible is 0 or -oo), so "
          "exp(c Visible(k, u)) = exp(Visible(k, u))", F._absorb_mask_scale, ("k", "u", "c"),
          exact={"k": range(0, 4), "u": range(0, 4)}, numeric={"k": range(0, 13), "u": range(0, 13)}),
    _rule("pull_sums_out", (f"{S}.pull_sums_out", f"{S}.prenex"),
          "(Σ_k a_k) b = Σ_k a_k b with k renamed fresh (no capture of a free k in b); a sum of a sum is one "
          "sum over both indices; Σ_k (a_k + b_k) = Σ_k a_k + Σ_k b_k", F._pull_sums_out, "n"),
    _rule("order_limits", f"{S}.order_limits",
          "Σ_j Σ_k f = Σ_k Σ_j f when no bound of one depends on the other (finite sums commute)",
          F._order_limits, ("n", "m")),
    # entrywise.py
    _rule("entry_of_product", f"{E}.entry",
          "(AB)_ij = Σ_k A_ik B_kj (a fresh k each time), (cA)_ij = c A_ij", FE._entry_of_product, "abc"),
    _rule("entry_of_elementwise_nodes", f"{E}.entry",
          "(A + B)_ij = A_ij + B_ij, (Aᵀ)_ij = A_ji, (A ∘ B)_ij = A_ij B_ij, I_ij = [i = j], 1_ij = 1, 0_ij = 0; "
          "a single row (column) has only index 0", FE._entry_of_elementwise, "ab"),
    _rule("entry_of_softmax", f"{E}.entry",
          "Softmax(X, 0)_ij = exp(X_ij) / Σ_k exp(X_kj), Softmax(X, 1)_ij = exp(X_ij) / Σ_k exp(X_ik)",
          FE._entry_of_softmax, "mn"),
    _rule("entry_of_slice", f"{E}.entry",
          "X[r0:r1:rs, c0:c1:cs]_ij = X_{r0 + rs i, c0 + cs j}", FE._entry_of_slice, "rc"),
    _rule("merge_slices", f"{E}.merge_slices",
          "[X[:, a:b] X[:, b:c]] = X[:, a:c], [X[a:b, :]; X[b:c, :]] = X[a:c, :], a slice over the whole "
          "matrix is the matrix", FE._merge_slices, ("r", "a", "b")),
    _rule("entry_of_head_nodes", f"{E}.entry",
          "(Σ_h e_h)_ij = Σ_h (e_h)_ij; [e_1; ...; e_H]_ij = (e_h)_{i - R(h-1), j} with h = floor(i/R) + 1; "
          "columns likewise for [e_1 ... e_H]", FE._entry_of_head_nodes, ("H", "r", "c")),
    _rule("entry_of_block_matrix", f"{E}.entry",
          "the entry of a block matrix at concrete i, j is the entry of its block; [A_11ᵀ A_21ᵀ; A_12ᵀ A_22ᵀ] "
          "= [A_11 A_12; A_21 A_22]ᵀ", FE._entry_of_blocks, "abc"),
    _rule("entry_of_masks", f"{E}.entry",
          "CausalMask(m, n, o)_kj = Visible(k, j + o), PaddingMask(m, n, L)_kj = Visible(k, L - 1), "
          "Visible(k, t) = 0 if k <= t else -oo", FE._entry_of_masks, ("m", "n", "t")),
    _rule("entry_of_permutation", f"{E}.entry",
          "(P_σ)_ij = [i = σ(j)], for every permutation σ", FE._entry_of_permutation, "n"),
    _rule("entry_of_numeric_nodes", (f"{E}.entry", "symattn.defs.numeric_nodes.Exp.entry_rule",
                                     "symattn.defs.numeric_nodes.Exp2.entry_rule",
                                     "symattn.defs.numeric_nodes.Log.entry_rule",
                                     "symattn.defs.numeric_nodes.ShiftRows.entry_rule",
                                     "symattn.defs.numeric_nodes.ScaleRows.entry_rule",
                                     "symattn.defs.numeric_nodes.DivideRows.entry_rule",
                                     "symattn.defs.numeric_nodes.RowOf.entry_rule"),
          "Exp(X)_ij = exp(X_ij), Exp2(X)_ij = 2^(X_ij) = exp(X_ij ln 2) (the exact check uses that "
          "definition; the float check is Python's 2.0 ** x), Log(X)_ij = log(X_ij), ShiftRows(X, c)_ij = "
          "X_ij - c_i, ScaleRows(d, X)_ij = d_i X_ij, DivideRows(X, d)_ij = X_ij / d_i, RowOf(X, k)_0j = X_kj",
          FE._entry_of_numeric_nodes, "mn"),
    _rule("elementwise_nodes_act_blockwise", ("symattn.defs.numeric_nodes.Exp.doit",
                                             "symattn.defs.numeric_nodes.Exp2.doit",
                                             "symattn.defs.numeric_nodes.Log.doit",
                                             "symattn.defs.numeric_nodes.ShiftRows.doit"),
          "Exp([A B]) = [Exp(A) Exp(B)], Exp2([A B]) = [Exp2(A) Exp2(B)], Log([A B]) = [Log(A) Log(B)], "
          "ShiftRows([A B], c) = [ShiftRows(A, c) ShiftRows(B, c)]", FE._numeric_nodes_blockwise, ("m", "a", "b")),
    _rule("permutation_inverse", "symattn.defs.permutation.PermIndex.eval",
          "σ(σ⁻¹(k)) = σ⁻¹(σ(k)) = k, for every permutation σ", F._permutation_inverse, "n", must_fire=True),
    _rule("visible_decided", "symattn.defs.mask.Visible.eval",
          "Visible(k, t) = 0 when t - k >= 0 is provable, -oo when t - k < 0 is provable, else left as is",
          F._visible_decided, ("k", "d"), exact={"k": range(0, 5)}, numeric={"k": range(0, 13)}),
    _rule("exp_of_a_sum", (f"{E}.normalize", "sympy expand(power_exp=True)"),
          "exp(a + b) = exp(a) exp(b), exp(k a) = exp(a)^k (the exact check splits exp atoms the same way; the "
          "float check is the independent one)", F._exp_of_a_sum, "n"),
    _rule("symmetric_input", ("symattn.defs.structured.Symmetric._eval_transpose",
                              "symattn.defs.structured.Symmetric._entry", "symattn.defs.structured.Symmetric.impose",
                              f"{E}.entry"),
          "for S = Sᵀ: Sᵀ = S, (S X)ᵀ = Xᵀ S, S_ij = S_{min(i,j), max(i,j)}, and imposing symmetry on a symmetric "
          "matrix changes nothing", FE._symmetric, "n"),
    _rule("merge_nested_floors", f"{E}.merge_nested_floors",
          "floor(floor(x)/r) = floor(x/r) for a positive integer r (x = p/q)", F._merge_nested_floors, "pqr",
          exact=SMALL_INT, numeric=LARGE_INT),
    _rule("floor_shift", ("sympy floor", f"{E}.normalize"),
          "floor(x + n) = floor(x) + n for an integer n (x = p/q)", F._floor_shift, "pqn",
          exact=SMALL_INT, numeric=LARGE_INT),
    _rule("rename_bound", f"{E}.rename_bound",
          "renaming bound indices (fresh ones first, then by depth) changes no value", F._rename_bound, "n"),
    # induction.py and the nodes over heads
    _rule("peel_last_head", ("symattn.proof.induction.peel", "symattn.defs.heads._OverHeads.peel"),
          "Σ_{h=1}^{H+1} e_h = Σ_{h=1}^{H} e_h + e_{H+1}, [S_{H+1}] = [S_H; e_{H+1}], "
          "[C_{H+1}] = [C_H e_{H+1}]", FV._peel, ("H", "r", "c")),
    _rule("heads_at_a_concrete_count", ("symattn.defs.heads._OverHeads.doit", "symattn.proof.instances.expand_heads",
                                        "symattn.defs.heads.Binder.term", "symattn.defs.heads.substitute"),
          "at a concrete H (and the base case H = 1) a node over heads is its explicit sum, stack or "
          "concatenation; the term for h = k substitutes k for the free h only (a nested binder of the same "
          "index keeps its own)", FV._heads_at_concrete_count, ("H", "r", "c")),
    _rule("induction_on_H", "symattn.proof.induction.by_induction",
          "lhs(1) = rhs(1) and (lhs - rhs)(H + 1) = (lhs - rhs)(H) for every H >= 1 give lhs(H) = rhs(H) for "
          "every H >= 1", axiom="induction on the positive integers; each of its two steps is a proof by the "
                                "rules of this table"),
    _rule("block_diagonal_at_a_concrete_count", "symattn.defs.rope.BlockDiag.doit",
          "diag(B_i, i = 1..p) at a concrete p is BlockDiagMatrix(B_1, ..., B_p)", FV._block_diag_doit,
          ("p", "r", "c")),
    _rule("softmax_of_explicit_matrix", ("symattn.defs.softmax.Softmax.doit", "symattn.defs.softmax.softmax_explicit"),
          "Softmax of an explicit matrix is computed entry by entry: exp(x_ij) / Σ_k exp(x_kj) (axis 0)",
          FV._softmax_doit, "mn"),
    _rule("causal_mask_without_masked_keys", "symattn.defs.mask.CausalMask.doit",
          "CausalMask(m, n, o) = 0 when o >= m - 1 (every key is visible to every query)",
          FV._causal_mask_doit, ("m", "n", "t"), exact={"t": range(0, 8)}, numeric={"t": range(0, 16)}),
    # moments.py
    _rule("moment_calculus", ("symattn.proof.moments.expectation", "symattn.proof.moments.reduce_expectations"),
          "independent entries with E[x] = 0, E[x²] = 1: linearity, independence, E[q_a q_b] = δ_ab, delta "
          "summation; E[qᵀk] = 0, E[(qᵀk)²] = d, Var(qᵀk) = d, ... (checked against three distributions with "
          "different third and fourth moments, expectations enumerated exactly)", FV._moment_calculus, "d"),
    _rule("exact_evaluation", "symattn.proof.evaluate.evaluate",
          "the exact evaluation that counterexamples and strategy D rest on computes each node's definition "
          "(products, transposes, Softmax on both axes, masks, nodes over heads, block diagonals, slices, "
          "entrywise products); exact check with random integer inputs", FV._exact_evaluation, ("m", "n", "d"),
          integer_entries=True),
    # certify.py and scalar.py
    _rule("interval_enclosure", ("symattn.proof.certify.enclose", "symattn.proof.certify.certify_nonzero"),
          "the interval (mpmath.iv, outward rounding) of a closed expression contains its exact value, so 0 "
          "outside it certifies a nonzero value (containment decided exactly for rational ends and values, by "
          "40-digit evaluation of the distance to each end for a transcendental value)", FV._interval_enclosure, "pq",
          exact={"p": range(-6, 7), "q": range(1, 5)}, numeric={"p": range(-40, 41), "q": range(5, 13)},
          must_fire=False),
    _rule("certify_nonzero_never_certifies_zero", "symattn.proof.certify.certify_nonzero",
          "an exactly zero difference (written as (x + y)² - x² - 2xy - y², ...) is never certified nonzero",
          FV._never_certifies_zero, "ab", exact={"a": range(len(FV._ZERO_PARTS)), "b": range(len(FV._ZERO_PARTS))},
          samples=0, must_fire=False),
    _rule("certified_floors", "symattn.proof.scalar.certify_floors",
          "⌊x⌋ of a closed number x is k when an interval enclosing x lies in [k, k + 1)", FV._certified_floors,
          "pq", exact={"p": range(-6, 7), "q": range(1, 5)}, numeric={"p": range(-99, 100), "q": range(5, 13)}),
    _rule("entrywise_functions_of_blocks", "symattn.defs.numeric_nodes._Entrywise.doit",
          "Exp, Exp2 and Log of a block matrix are the block matrix of Exp, Exp2 and Log of its blocks",
          F._entrywise_of_blocks, "nmd", exact={"n": range(1, 3), "m": range(1, 3), "d": range(1, 3)}),
    _rule("normal_forms_on_the_dag", DAG,
          "(xᵀ C y)ᵀ = yᵀ Cᵀ x for a 1 × 1 product and (xᵀ S y)ᵀ = xᵀ S y for a symmetric S, "
          "(A(BC))ᵀ = CᵀBᵀAᵀ, Cᵀ + (C + (AB)ᵀ) = Cᵀ + C + BᵀAᵀ, Softmax(AB, 0)ᵀ = Softmax(BᵀAᵀ, 1)",
          F._dag_normal_forms, "nm"),
    # trusted, not checkable by instances
    _rule("cyclic_traces", "symattn.proof.structural.cyclic_traces",
          "Trace(A_1 ... A_k) = Trace(A_2 ... A_k A_1), Trace(Mᵀ) = Trace(M), Trace(M + N) = Trace(M) + "
          "Trace(N), Trace(cM) = c Trace(M)",
          axiom="the definition Trace(M) = Σ_i M_ii: Σ_i Σ_j A_ij B_ji summed in the other order; every proof "
                "that uses it is audited at exact instances, whose evaluator computes traces from the definition"),
    _rule("order_and_residue_cases", "symattn.proof.order_cases.by_cases",
          "for the real symbols s_1..s_k of a claim and 0, the (k + 1)! orderings written with nonnegative gaps "
          "cover every real assignment; a = Q j + r, r = 0..Q-1, covers every integer a",
          axiom="each real number is above, at or below each other; division with remainder"),
    _rule("feature_map_row_by_row", "symattn.defs.feature_map.FeatureMap.doit",
          "phi([U; W]) = [phi(U); phi(W)] and phi(P X) = P phi(X) for a permutation P of the rows",
          axiom="the definition: phi is applied to every row of its argument on its own"),
    _rule("inverse_of_permutation", DAG, "P⁻¹ = Pᵀ for a permutation P",
          axiom="PᵀP = I (proved entrywise in the corpus) and a square matrix with a left inverse is invertible"),
    _rule("log_of_exp", "symattn.defs.numeric_nodes._log_entry",
          "log(exp(a)) = a for a real entry a (so Log(Exp(X)) = X and Log(Exp2(X)) = X ln 2)",
          axiom="exp is a bijection from the reals onto the positive reals and log its inverse; matrix "
                "entries are real"),
    _rule("exp_atoms_as_independent_symbols", ("symattn.proof.instances.equal_at",),
          "an identity of rational functions in independent positive symbols stays true when each symbol "
          "is specialized to exp(t) (strategy D, and the exact comparison of this check)",
          axiom="specialization of a polynomial identity; treating exp atoms as independent can miss an "
                "identity, never invent one"),
    _rule("sympy_exact_arithmetic", ("sympy expand", "sympy together", "sympy cancel", "sympy simplify"),
          "expand, together, cancel and simplify return an expression equal to their input (exact arithmetic; "
          "verify_scalar and strategy B decide 0 with them)",
          axiom="SymPy's exact polynomial arithmetic is trusted"),
]


def clear_caches() -> None:
    """Forget the symbolic rewrites the families compute once per process (e.g. after patching a rule)."""
    for obj in [*vars(F).values(), *vars(FB).values(), *vars(FE).values(), *vars(FV).values()]:
        if callable(obj) and hasattr(obj, "cache_clear"):
            obj.cache_clear()


def rule_functions() -> list[str]:
    """Qualified names of every public function defined in the rule modules."""
    out = []
    for modname in RULE_MODULES:
        mod = importlib.import_module(modname)
        for name, fn in vars(mod).items():
            if name.startswith("_") or not callable(fn) or inspect.isclass(fn):
                continue
            if getattr(fn, "__module__", None) != modname:
                continue
            out.append(f"{modname}.{name}")
    return sorted(out)


def unlisted_rule_functions(base: list[Rule] | None = None) -> list[str]:
    """Public functions of the rule modules that neither an entry nor :data:`DRIVERS` names."""
    base = TRUST_BASE if base is None else base
    named = {w for r in base for w in r.where} | set(DRIVERS)
    return [f for f in rule_functions() if f not in named]


def check_trust_base(base: list[Rule] | None = None, names=None, jobs: int | None = None) -> list[RuleCheck]:
    """Check every entry (or the named ones) of the trust base, in ``jobs`` forked processes at once
    (default: one per core; one after another where fork is not available). The checks come back in
    the order of the base, the same as one after another (each rule's instances are seeded by it)."""
    base = TRUST_BASE if base is None else base
    todo = [r for r in base if names is None or r.name in names]
    jobs = _cores() if jobs is None else jobs
    if jobs <= 1 or len(todo) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [check_rule(r) for r in todo]
    _FORKED[:] = todo  # the workers, forked from here, read the rules (with their functions) from this list
    try:
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)),
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            parts = list(pool.map(_check_forked, range(len(todo))))
    finally:
        _FORKED.clear()
    return [dataclasses.replace(c, rule=r) for c, r in zip(parts, todo)]


_FORKED: list = []


def _check_forked(k: int) -> RuleCheck:
    """In a worker: check rule k of the list forked to it; the rule itself stays behind (it holds functions)."""
    return dataclasses.replace(check_rule(_FORKED[k]), rule=None)


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def table(checks: list[RuleCheck] | None = None, base: list[Rule] | None = None) -> str:
    """The trust base as text: per rule its statement, where it lives, and how it was checked."""
    base = TRUST_BASE if base is None else base
    by_name = {c.rule.name: c for c in checks or []}
    lines = []
    for r in base:
        c = by_name.get(r.name)
        if r.family is None:
            status, how = "axiom", f"not checked by instances: {r.axiom}"
        elif c is None:
            status, how = "listed", "not checked (--no-check)"
        else:
            status = f"{'ok' if c.ok else 'FAILED'}, {c.seconds:.1f} s"
            how = c.summary()
        lines += [f"{r.name}  [{status}]", f"  statement: {r.statement}",
                  f"  where:     {'; '.join(w.replace('symattn.', '') for w in r.where)}", f"  check:     {how}"]
        if c is not None and len(c.failures) > 1:
            lines += [f"             {f}" for f in c.failures[1:]]
        lines.append("")
    return "\n".join(lines).rstrip()
