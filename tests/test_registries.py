"""One registry per interpreter, one checklist per node: every node class of :mod:`symattn.defs` (and
every SymPy matrix class the package builds) has a rule, or a recorded reason for having none, in
every interpreter: the strategies' evaluator, the audit's evaluator, the trust base's evaluator, the
VJP, the readable, LaTeX and MathML printers, and the lowering's printer. ``docs/adding-a-node.md``
is the walk-through this test enforces.
"""

from __future__ import annotations

import pytest
import sympy as sp
from node_classes import defs_nodes

import symattn.defs
import symattn.proof.audit_eval  # noqa: F401  (registers the audit's rules)
import symattn.proof.evaluate  # noqa: F401
import symattn.proof.trust_eval  # noqa: F401
from symattn.grad import coverage
from symattn.lowering.numpy_printer import BatchedNumPyPrinter
from symattn.printing import ReadableLatexPrinter, ReadableMathMLPrinter, ReadablePrinter
from symattn.registry import REGISTRIES, Registry, printer_rule

#: the SymPy matrix classes symattn's definitions and proofs build (beyond the nodes of defs)
SYMPY_NODES = (sp.MatrixSymbol, sp.MatMul, sp.MatAdd, sp.Transpose, sp.HadamardProduct, sp.Identity,
               sp.ZeroMatrix, sp.OneMatrix, sp.BlockMatrix, sp.MatrixSlice, sp.ImmutableMatrix)

PRINTERS = (ReadablePrinter, ReadableLatexPrinter, ReadableMathMLPrinter, BatchedNumPyPrinter)


def _vjp_covers(cls: type) -> str | None:
    for base in cls.__mro__:
        if base in coverage.RULE_NODES:
            return "rule"
        if base in coverage.REFUSED or base in coverage.REFUSED_WRT:
            return "omitted"
    if issubclass(cls, coverage.INPUTS + coverage.CONSTANTS):
        return "input or constant"
    return None


def missing(nodes) -> dict[str, list[str]]:
    """interpreter -> the node classes it neither handles nor says it leaves out."""
    out: dict[str, list[str]] = {}
    for reg in REGISTRIES:
        gaps = [c.__name__ for c in nodes if reg.covers(c) is None]
        if gaps:
            out[reg.interpreter] = gaps
    gaps = [c.__name__ for c in nodes if not issubclass(c, sp.MatrixBase) and _vjp_covers(c) is None]
    if gaps:
        out["the VJP (symattn.grad.coverage)"] = gaps
    for printer in PRINTERS:
        gaps = [c.__name__ for c in nodes if printer_rule(printer, c) is None]
        if gaps:
            out[printer.__name__] = gaps
    return out


def test_the_interpreters_have_registries():
    names = {r.interpreter for r in REGISTRIES}
    assert {"the strategies' evaluator", "the audit's evaluator", "the trust base's evaluator"} <= names
    assert len(defs_nodes()) >= 20, "the node enumeration finds few classes; it would check little"


def test_every_node_has_a_rule_or_a_reason_in_every_interpreter():
    gaps = missing(defs_nodes() + list(SYMPY_NODES))
    assert not gaps, "nodes with no rule and no recorded reason (see docs/adding-a-node.md):\n" + "\n".join(
        f"  {who}: {', '.join(names)}" for who, names in gaps.items())


def test_a_new_node_without_rules_is_reported_by_every_interpreter():
    class Brand(sp.MatrixExpr):  # a node that no interpreter was told about
        shape = (sp.Integer(2), sp.Integer(2))

    gaps = missing([Brand])
    assert set(gaps) >= {r.interpreter for r in REGISTRIES} | {p.__name__ for p in PRINTERS}
    assert all(names == ["Brand"] for names in gaps.values())


def test_a_rule_is_found_along_the_mro_and_two_rules_for_one_class_are_refused():
    reg = Registry("a test interpreter", __name__)
    try:
        reg.add(symattn.defs.Score, len)
        assert reg.find(symattn.defs.score.Apply) is len  # Apply is a Score
        assert reg.covers(sp.MatMul) is None
        reg.omit(sp.MatMul, "not needed here")
        assert reg.covers(sp.MatMul) == "omitted: not needed here"
        with pytest.raises(ValueError, match="a second rule for Score"):
            reg.add(symattn.defs.Score, abs)
    finally:
        REGISTRIES.remove(reg)


def test_every_recorded_reason_says_something():
    for reg in REGISTRIES:
        for cls, why in reg.omitted.items():
            assert len(why) > 20, f"{reg.interpreter} leaves out {cls.__name__} without a reason"


@pytest.mark.parametrize("reg", [r for r in REGISTRIES if r.module.startswith("symattn.proof")],
                         ids=lambda r: r.interpreter)
def test_the_registry_is_the_dispatch(reg, monkeypatch):
    """Removing a rule from a registry makes its interpreter refuse that node (no second dispatch)."""
    import symattn.proof.audit_eval as audit_eval
    import symattn.proof.evaluate as evaluate
    import symattn.proof.trust_eval as trust_eval

    two = sp.Integer(2)
    X = sp.MatrixSymbol("X", two, two)
    expr = symattn.defs.softmax(X)
    monkeypatch.delitem(reg.rules, symattn.defs.Softmax)
    if reg is evaluate.EVALUATE:
        with pytest.raises(evaluate.EvaluationError, match="cannot evaluate a Softmax"):
            evaluate.evaluate(expr, {X: sp.eye(2)}, backend="exact")
    elif reg is audit_eval.AUDIT:
        from symattn.proof.audit_instance import Instance
        from symattn.proof.audit_numbers import Unevaluable

        inst = Instance.__new__(Instance)
        with pytest.raises(Unevaluable, match="cannot evaluate a Softmax"):
            audit_eval.Evaluator(inst)._matrix(expr, ())
    elif reg is trust_eval.TRUST_EVAL:
        with pytest.raises(trust_eval.NotEvaluable, match="Softmax"):
            trust_eval.matrix(expr, None)
    else:
        pytest.skip(f"no probe written for {reg.interpreter}")
