"""Which nodes :func:`symattn.vjp` covers and which it refuses, and why (a test enumerates the
node classes of :mod:`symattn.defs` against these tables).

Covered: the nodes with a rule in :mod:`symattn.grad.rules`, the inputs (leaves) and the constants
(masks, permutations, identities, ones and zeros). Refused: nodes with no rule yet; :func:`refuse`
raises :class:`~symattn.errors.GradientError` naming the node and listing the covered ones. A
refused node that does not depend on ``wrt`` is a constant and is fine.
"""

from __future__ import annotations

import sympy as sp

from ..defs.feature_map import FeatureMap
from ..defs.heads import FamilyMember, HeadConcat, HeadStack, HeadSum
from ..defs.mask import CausalMask, PaddingMask
from ..defs.numeric_nodes import DivideRows, Exp, Exp2, Log, RowOf, ScaleRows, ShiftRows
from ..defs.permutation import Permutation
from ..defs.rope import BlockDiag
from ..defs.score import Apply, Score
from ..defs.softmax import Softmax
from ..defs.structured import Symmetric
from ..errors import GradientError
from ..proof.layer_stack import LayerStack
from .rules import RULES

#: node class -> the rule that covers it
RULE_NODES = {
    sp.MatMul: "matmul", sp.MatAdd: "matadd", sp.Transpose: "transpose", sp.HadamardProduct: "hadamard",
    sp.HadamardPower: "hadamard_power", sp.Inverse: "inverse", Softmax: "softmax_columns, softmax_rows",
    Exp: "exp", Exp2: "exp2", Log: "log", ShiftRows: "shift_rows", ScaleRows: "scale_rows",
    DivideRows: "divide_rows", HeadSum: "head_sum_member, head_sum_group, head_sum_shared",
    HeadStack: "head_stack_member, head_stack_shared", HeadConcat: "head_concat_member, head_concat_shared",
}

#: inputs: the gradient flows into them (a Symmetric matrix only as a constant, see REFUSED_WRT)
INPUTS = (sp.MatrixSymbol, FamilyMember)

#: constants: no operand depends on anything (their gradient is not needed)
CONSTANTS = (CausalMask, PaddingMask, Permutation, sp.Identity, sp.ZeroMatrix, sp.OneMatrix)

#: node class -> why there is no rule yet
REFUSED = {
    Score: "an uninterpreted score function f(Q, K) would need uninterpreted partial derivatives",
    Apply: "a map g(X) the document does not define would need an uninterpreted Jacobian",
    FeatureMap: "an uninterpreted feature map would need its own uninterpreted Jacobian",
    BlockDiag: "RoPE's block diagonal over a symbolic number of blocks",
    RowOf: "a row at a symbolic index",
    sp.BlockMatrix: "no rule yet (its VJP would cut the cotangent into the blocks)",
    sp.MatrixSlice: "no rule yet (its VJP would place the cotangent in the sliced rows and columns of zeros)",
}

#: node class -> how it is differentiated without a rule of its own
UNFOLDED = {
    LayerStack: "a stack at a concrete depth is unfolded into its layers (W_1, ..., W_L) and differentiated; "
                "a symbolic depth L is refused: its backward is a loop over the layers in reverse, with no "
                "closed matrix expression",
}

#: a wrt of these classes is refused (its entries are not independent variables)
REFUSED_WRT = {Symmetric: "the entries of a symmetric matrix are not independent (S_kl = S_lk)"}


def covered_names() -> str:
    nodes = [getattr(c, "__name__", str(c)) for c in RULE_NODES] + ["masks (constants)", "inputs"]
    return ", ".join(nodes)


def refuse(node, why: str = "") -> GradientError:
    """The error for a node with no VJP rule that depends on ``wrt``."""
    name = type(node).__name__
    why = why or REFUSED.get(type(node), "no VJP rule for this node")
    return GradientError(
        f"vjp: no rule for the node {name} ({why}):\n  {sp.sstr(node)[:200]}\n"
        f"  covered: {covered_names()}; rules: {', '.join(RULES)}")
