"""The classes closed by the block rules of strategy A (a softmax across blocks over one shared
denominator, nested block rows, powers of block diagonals, c·I block grids, ones beside blocks),
inverses SymPy folds while a claim is built, and the memoized shapes that keep deep claims linear."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import sympy as sp

import symattn as sa
from symattn.defs.gqa import repeat_kv_matrix
from symattn.defs.numeric_nodes import DivideRows, Exp
from symattn.defs.rope import rope
from symattn.defs.shapes import Shapes
from symattn.proof import canon, dag

os.environ.setdefault("SYMATTN_VERDICT_CACHE", "off")

n, m, d, p, m_1, m_2, d_k, d_v = sa.dims("n m d p m_1 m_2 d_k d_v")
a = sp.Symbol("a", integer=True)


def _verify(lhs, rhs, budget=20):
    return sa.verify(lhs, rhs, budget=budget)


# ----------------------------------------------------------------------------- inverses SymPy folds
def _outer():
    u, v = sp.MatrixSymbol("u", n, 1), sp.MatrixSymbol("v", n, 1)
    return u * v.T


def test_inverse_folded_into_a_power_is_proved_only_where_invertible():
    M = _outer()
    with sp.evaluate(False):
        folded = sp.Inverse(M) * M  # SymPy builds M**(-1 + 1)
    assert isinstance(folded, sp.MatPow)
    v = _verify(folded, sp.Identity(n))
    assert v.proved
    assert "assuming every inverse in the claim exists (where invertible)" in v.scope
    assert "SymPy folded a product with an inverse" in v.scope
    assert "its rank is at most 1, so its inverse exists only when n <= 1" in v.scope


def test_folded_inverse_is_audited_as_written_so_singular_instances_are_skipped():
    M = _outer()
    with sp.evaluate(False):
        folded = sp.Inverse(M) * M
    v = _verify(folded, sp.Identity(n))
    audit = [s for s in str(v).splitlines() if "audit:" in s]
    assert audit and "skipped (a singular matrix has no inverse)" in audit[0]


def test_rank_bounded_inverse_is_named_in_the_scope():
    M = _outer()
    v = _verify(sp.MatMul(sp.Inverse(M), M, evaluate=False), sp.Identity(n))
    assert v.proved and "u*vᵀ is n × n through an inner dimension 1" in v.scope


def test_an_inverse_of_full_rank_has_no_rank_note():
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    v = _verify(sp.Inverse(A * B), sp.Inverse(B) * sp.Inverse(A))
    assert v.proved and "where invertible" in v.scope and "rank" not in v.scope


# ----------------------------------------------------------------------------- the block rules
def test_row_softmax_across_side_by_side_blocks_has_one_shared_denominator():
    S_1, S_2 = sp.MatrixSymbol("S_1", n, m_1), sp.MatrixSymbol("S_2", n, m_2)
    got = canon.softmax_across_blocks(sa.softmax(sp.BlockMatrix([[S_1, S_2]]), 1))
    l = sp.MatAdd(Exp(S_1) * sp.OneMatrix(m_1, 1), Exp(S_2) * sp.OneMatrix(m_2, 1))
    assert got == sp.BlockMatrix([[DivideRows(Exp(S_1), l), DivideRows(Exp(S_2), l)]])
    # the axis that does not cross the blocks is left to split_softmax_over_blocks
    column = sa.softmax(sp.BlockMatrix([[S_1, S_2]]), 0)
    assert canon.softmax_across_blocks(column) == column


def test_rope_of_twice_the_angle_is_the_square_and_not_times_the_transpose():
    assert _verify(rope(2 * a, p), rope(a, p) * rope(a, p)).status == "proved"
    assert _verify(rope(2 * a, p), rope(a, p) * rope(a, p).T).status == "refuted"


def test_repeat_kv_matrix_RtR_is_n_rep_identity_and_RRt_is_not():
    R = repeat_kv_matrix(2, 3, d)
    assert _verify(R.T * R, 3 * sp.Identity(2 * d)).status == "proved"
    assert _verify(R * R.T, 3 * sp.Identity(6 * d)).status == "refuted"


def test_key_blocks_swap_with_their_value_blocks_and_not_alone():
    q = sp.MatrixSymbol("q", d_k, 1)
    K_1, K_2 = sp.MatrixSymbol("K_1", d_k, m_1), sp.MatrixSymbol("K_2", d_k, m_1)
    V_1, V_2 = sp.MatrixSymbol("V_1", d_v, m_1), sp.MatrixSymbol("V_2", d_v, m_1)
    K, V = sp.BlockMatrix([[K_1, K_2]]), sp.BlockMatrix([[V_1, V_2]])
    swapped_K = sp.BlockMatrix([[K_2, K_1]])
    both = _verify(sa.attention(q, K, V), sa.attention(q, swapped_K, sp.BlockMatrix([[V_2, V_1]])))
    assert both.status == "proved" and both.scope.startswith("all dimensions")
    assert _verify(sa.attention(q, K, V), sa.attention(q, swapped_K, V)).status == "refuted"


def test_cache_extended_twice_holds_all_keys():
    t = sa.dims("t")
    K, V = sp.MatrixSymbol("K", d_k, t + 2), sp.MatrixSymbol("V", d_v, t + 2)
    cache = sa.KVCache(K[:, :t], V[:, :t]).extend(K[:, t:t + 1], V[:, t:t + 1]).extend(K[:, t + 1:t + 2],
                                                                                       V[:, t + 1:t + 2])
    assert _verify(cache.keys, K).status == "proved"
    assert _verify(cache.values[:, :t + 1], V[:, 1:t + 2]).status != "proved"


# ----------------------------------------------------------------------------- memoized shapes
def _deep(L):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import deep_layers

    return deep_layers.stacks(L, d, n)


def test_memoized_shapes_equal_sympys_shapes_on_every_node_of_a_deep_stack():
    lhs, rhs = _deep(4)
    shapes = Shapes()
    checked = 0
    for x in dag.nodes(lhs, rhs):
        if getattr(x, "is_Matrix", False) and hasattr(x, "shape"):
            assert shapes(x) == tuple(x.shape), x
            checked += 1
    assert checked > 50


def test_deep_stack_of_twelve_layers_is_proved_for_all_dimensions():
    lhs, rhs = _deep(12)
    v = _verify(lhs, rhs, budget=60)
    assert v.status == "proved" and v.scope.startswith("all dimensions")
