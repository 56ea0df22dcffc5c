"""Claims about deep models: the engine's walks, checks and the audit follow the DAG, not the tree.

L stacked residual self-attention layers have a tree of about 4^L nodes and a DAG of about 10 L;
before the walks were memoized, L = 4 was unknown after 60 s and even building the claim with the
checks of ``symattn.softmax`` was exponential. The times are measured in
``benchmarks/deep_layers.py``, never asserted here; these tests check what is proved.
"""

import sys
from pathlib import Path

import pytest
import sympy as sp

import symattn as sa
from symattn.defs import shapes
from symattn.proof import dag

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from deep_layers import stacks  # noqa: E402

d, n = sa.dims("d n")


def tree_size(e) -> int:
    return 1 + sum(tree_size(a) for a in e.args)


def test_the_dag_of_a_deep_stack_grows_linearly_while_its_tree_explodes():
    sizes = {L: len(dag.nodes(*stacks(L, d, n))) for L in (4, 8, 16)}
    assert sizes[16] - sizes[8] == 2 * (sizes[8] - sizes[4])  # the same number of new nodes per layer
    assert tree_size(stacks(6, d, n)[1]) > 50 * len(dag.nodes(stacks(6, d, n)[1]))


def test_a_stack_deeper_than_real_models_is_proved_in_both_conventions():
    lhs, rhs = stacks(24, d, n)
    v = sa.verify(lhs, rhs)
    assert v.proved and v.general and v.method == "rewriting (A)", v.explain()
    assert any("normal forms on the DAG coincide" in t for t in v.trace)
    assert v.audit.agreed >= 1


@pytest.mark.parametrize("layer", [1, 3])
def test_a_slip_at_one_layer_of_a_deep_stack_is_not_proved(layer):
    lhs, rhs = stacks(4, d, n)
    X = sp.MatrixSymbol("X", d, n)
    # the slip: layer `layer` of the row side reads W^Q where W^K belongs
    wq, wk = sp.MatrixSymbol(f"W^Q_{layer}", d, d), sp.MatrixSymbol(f"W^K_{layer}", d, d)
    slipped = lhs.xreplace({sp.Transpose(wk): sp.Transpose(wq)})
    assert slipped != lhs and X in dag.nodes(slipped)
    assert not sa.verify(slipped, rhs, budget=4).proved


def test_shape_checks_are_memoized_by_identity_not_by_equality():
    lhs, _ = stacks(3, d, n)
    shapes._CHECKED.clear()
    shapes.check_shapes(lhs)
    assert shapes._CHECKED.get(id(lhs)) is lhs
    again, _ = stacks(3, d, n)  # equal, built apart: checked again (comparing deep trees is exponential)
    assert again == lhs and shapes._CHECKED.get(id(again)) is not again


def test_dag_free_symbols_and_has_agree_with_sympy_on_small_claims():
    A, B = sp.MatrixSymbol("A", n, d), sp.MatrixSymbol("B", d, n)
    c = sp.Symbol("c", real=True)
    k = sp.Dummy("k", integer=True)
    e = c * A * B + sp.Inverse(B * A)[0:1, 0:1].T * sp.OneMatrix(1, n) * sp.Sum(k, (k, 1, n))
    assert dag.free_symbols(e) == e.free_symbols
    assert dag.has(e, sp.Inverse) and not dag.has(A * B, sp.Inverse)
    assert dag.atoms(e, sp.MatrixSymbol) == e.atoms(sp.MatrixSymbol)
