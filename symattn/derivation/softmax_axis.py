r"""The axis of an unlabelled softmax, and the one reading it refuses.

``\mathrm{softmax}(X)`` normalizes each column in the column convention (seed 000, the default:
``V \mathrm{Softmax}(K^\top Q)``) and each row in the row convention (``%: convention: row``);
``\mathrm{Softmax}_{row}`` / ``\mathrm{Softmax}_{col}`` name the axis. Many papers write column vectors
(``x \in \mathbb{R}^d``, ``\mathbf{1} x^\top``) but stack the tokens as the rows of their data matrix
(``X \in \mathbb{R}^{n \times d}``, ``X W``), and their scores as a product of rows,
``\mathrm{softmax}(A B^\top)``, whose row i holds query i's scores: they mean each row normalized. A file
that sets no convention and writes such scores is refused here rather than read column by column (that
reading normalizes over the queries, which no paper means, and it would refute the paper's true
steps). The refusal names the two ways to say the axis.

>>> from symattn.derivation import ast
>>> Q, K = ast.Name(0, "Q", None, None), ast.Name(0, "K", None, None)
>>> row_gram(ast.Mul(0, (Q, ast.T(0, K))))
True
>>> row_gram(ast.Mul(0, (ast.T(0, K), Q)))
False
"""

from __future__ import annotations

from . import ast


def row_gram(arg) -> bool:
    """Whether ``arg`` is written as a product of rows ``A B^T`` (up to a scale or a division)."""
    while isinstance(arg, (ast.Group, ast.Div)):
        arg = arg.body if isinstance(arg, ast.Group) else arg.num
    if not isinstance(arg, ast.Mul) or len(arg.factors) < 2:
        return False
    last = arg.factors[-1]
    return isinstance(last, ast.T) and not isinstance(arg.factors[0], ast.T)


def softmax_axis(scope, node) -> int:
    """0 (each column) or 1 (each row) for ``node``, a softmax call; refuses softmax(A B^T) in a LaTeX file
    that sets no convention (see the module's docstring)."""
    if node.axis is not None:
        return {"col": 0, "row": 1}[node.axis]
    if scope.convention != "column":
        return 1
    if scope.dialect == "latex" and not getattr(scope, "convention_set", False) and row_gram(node.args[0]):
        arg = node.args[0].text()
        scope.fail(node, f"softmax({arg}): the scores are a product of rows A B^T, whose row i holds query i's "
                   "scores, but the file sets no convention, and the default column convention (seed 000) "
                   "normalizes each column; the axis is not guessed",
                   f"\\mathrm{{Softmax}}_{{row}}({arg}) for each row normalized, or a line %: convention: row "
                   "(vectors are then rows)")
    return 0
