r"""A family of values indexed by the members of a set, ``(\cdot)_{i \in S}``, as papers write a sequence.

Child et al. (2019) write the outputs of a layer as ``\left(a(\mathbf{x}_i, S_i)\right)_{i \in \{1, \ldots,
n\}}`` and the keys a query attends to as ``K_{S_i} = \left(W_k \mathbf{x}_j\right)_{j \in S_i}``: one value per
member of the set, gathered into a matrix. How they are gathered (as the rows or as the columns of the
matrix, and in which order for a set such as S_i) is not written, and the set may be named nowhere, so the
family is refused where its subscript begins, saying what to write instead, rather than read under a
stacking the paper did not state.
"""

from __future__ import annotations

from . import ast


def refuse_family(parser, group: ast.Group, op) -> None:
    """At ``_`` after parentheses: refuse ``(\\cdot)_{i \\in S}`` by name; return otherwise."""
    if not (parser.dialect == "latex" and parser.at_op("_") and parser.at("op", "{", 1)
            and parser.at("ident", None, 2) and parser.at("cmd", "in", 3)):
        return
    letter = parser.peek(2).value
    parser.fail(f"a family ({group.body.text()})_{{{letter} \\in ...}}, one value for each member {letter} of a "
                "set, is not read: whether its values are the rows or the columns of a matrix, and in which order, "
                "is not written",
                "a declared matrix whose rows (or columns) are the values, or the value for one position "
                f"{letter} on its own", op)
