"""For every node class of symattn.defs, the shape SymPy reports is the shape of the matrix it
evaluates to, at every size (a strided slice once reported 1 × 1 for a 1 × 2 result, and a claim
was "proved" on the wrong shape).

Each example is evaluated at sizes Hypothesis draws by the audit's own evaluator, which compares the
reported shape of every subexpression with the shape of its value and raises ``Malformed`` when
they differ, and by the strategies' evaluator, whose result must have the reported shape too.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from node_classes import defs_nodes

import symattn as sa
import symattn.defs
from symattn.defs.feature_map import FeatureMap
from symattn.defs.numeric_nodes import DivideRows, Exp, Exp2, Log, RowOf, ScaleRows, ShiftRows
from symattn.proof.audit_eval import Evaluator
from symattn.proof.audit_instance import Instance
from symattn.proof.audit_numbers import Malformed

n, m, d, H, p, L = sa.dims("n m d H p L")
X, c = sp.MatrixSymbol("X", m, n), sp.MatrixSymbol("c", m, 1)
Q, K, V = sp.MatrixSymbol("Q", d, n), sp.MatrixSymbol("K", d, m), sp.MatrixSymbol("V", d, m)
WV = sa.Family("WV", d, d)
Xd = sp.MatrixSymbol("Xd", d, n)
k_, a_ = sp.Symbol("k", integer=True), sp.Symbol("a", integer=True)
h = sa.h

#: node class -> an expression holding it (sizes are drawn; k is a row index below m)
EXAMPLES = {
    sa.Softmax: lambda: sa.attention(Q, K, V),
    Exp: lambda: Exp(X),
    Exp2: lambda: Exp2(X),
    Log: lambda: Log(sa.softmax(X)),
    ShiftRows: lambda: ShiftRows(X, c),
    ScaleRows: lambda: ScaleRows(c, X),
    DivideRows: lambda: DivideRows(X, Exp(c)),
    RowOf: lambda: RowOf(X, k_),
    sa.CausalMask: lambda: sa.softmax(X + sa.CausalMask(m, n, offset=1)),
    sa.PaddingMask: lambda: sa.PaddingMask(m, n, L),
    sa.Permutation: lambda: X * sa.Permutation("P", n),
    sa.Symmetric: lambda: sa.Symmetric("S", m) * X,
    sa.Score: lambda: sa.attention(Q, K, V, score=sa.ScoreFunction("f")),
    symattn.defs.Apply: lambda: symattn.defs.Apply("g", X),
    sa.FamilyMember: lambda: WV[2] * Xd,
    sa.HeadSum: lambda: sa.multihead(Xd, Xd, Xd, WV, WV, WV, WV, H=H, form="sum"),
    sa.HeadStack: lambda: sa.head_stack(WV[h] * Xd, H),
    sa.HeadConcat: lambda: sa.head_concat(WV[h] * Xd, H),
    sa.BlockDiag: lambda: sa.rope(a_, p) * sp.MatrixSymbol("x", 2 * p, n),
    FeatureMap: lambda: FeatureMap("phi", X, d),
}


def test_every_node_class_has_an_example():
    missing = [cls.__name__ for cls in defs_nodes() if cls not in EXAMPLES]
    assert not missing, f"add an example for {missing} to EXAMPLES"


def _subexpressions_of(expr, cls):
    return [e for e in sp.preorder_traversal(expr) if isinstance(e, cls)]


@pytest.mark.parametrize("cls", list(EXAMPLES), ids=lambda c: c.__name__)
@settings(max_examples=12, deadline=None, derandomize=True)
@given(sizes=st.fixed_dictionaries({s: st.integers(1, 4) for s in (n, m, d, H, p, L)}),
       k=st.integers(0, 3), a=st.integers(-3, 3), seed=st.integers(0, 2**16))
def test_the_reported_shape_is_the_evaluated_shape(cls, sizes, k, a, seed):
    expr = EXAMPLES[cls]()
    assert _subexpressions_of(expr, cls), f"the example of {cls.__name__} does not hold one"
    sizes = dict(sizes)
    base = {**sizes, k_: min(k, sizes[m] - 1), a_: a}
    ev = Evaluator(Instance(random.Random(seed), base))
    try:
        value = ev.matrix(expr)
    except Malformed as exc:  # the audit's shape check: reported and evaluated shapes differ
        pytest.fail(f"{cls.__name__} at {sizes}: {exc}")
    want = tuple(int(sp.sympify(x).subs(base)) for x in expr.shape)
    got = (len(value), len(value[0]) if value else 0)
    assert got == want or 0 in want, f"{cls.__name__} at {sizes}: evaluated {got}, reported {want}"


@pytest.mark.parametrize("cls", [c for c in EXAMPLES if c not in (sa.Score, symattn.defs.Apply, FeatureMap)],
                         ids=lambda c: c.__name__)
@settings(max_examples=8, deadline=None, derandomize=True)
@given(sizes=st.fixed_dictionaries({s: st.integers(1, 3) for s in (n, m, d, H, p, L)}), k=st.integers(0, 2))
def test_the_strategies_evaluator_gives_the_reported_shape(cls, sizes, k):
    """The strategies' evaluator (a different interpreter) agrees on the shape; uninterpreted
    functions are left out (it takes them as callables)."""
    from symattn.proof.evaluate import evaluate

    sizes = dict(sizes)
    base = {**sizes, k_: min(k, sizes[m] - 1), a_: 1}
    concrete = EXAMPLES[cls]().subs(base).doit()
    rng = np.random.default_rng(0)
    env = {}
    for x in sp.preorder_traversal(concrete):
        if isinstance(x, (sp.MatrixSymbol, sa.FamilyMember)) and not isinstance(x, sa.Permutation):
            r, c_ = (int(s) for s in x.shape)
            v = rng.standard_normal((r, c_))
            env[x] = (v + v.T) / 2 if isinstance(x, sa.Symmetric) else v
        if isinstance(x, sa.Permutation):
            env[x] = np.eye(int(x.shape[0]))
    value = evaluate(concrete, env, backend="float")
    want = tuple(int(s) for s in concrete.shape)
    assert np.shape(value) == want, f"{cls.__name__} at {sizes}: evaluated {np.shape(value)}, reported {want}"


def test_the_property_can_fail(monkeypatch):
    """A node whose reported shape is wrong (here Exp reporting one row more) is caught."""
    monkeypatch.setattr(Exp, "shape", property(lambda self: (self.args[0].shape[0] + 1, self.args[0].shape[1])))
    ev = Evaluator(Instance(random.Random(0), {m: 2, n: 3}))
    with pytest.raises(Malformed, match="Exp"):
        ev.matrix(Exp(X))
