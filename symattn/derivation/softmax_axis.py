r"""The axis of an unlabelled softmax, and the mixed conventions of row scores with column vectors.

``\mathrm{softmax}(X)`` normalizes each column in the column convention (seed 000, the default:
``V \mathrm{Softmax}(K^\top Q)``) and each row in the row convention (``%: convention: row``);
``\mathrm{Softmax}_{row}`` / ``\mathrm{Softmax}_{col}`` name the axis. Many papers write column vectors
(``x \in \mathbb{R}^d``, ``\mathbf{1} x^\top``) but stack the tokens as the rows of their data matrix
(``X \in \mathbb{R}^{n \times d}``, ``X W``), and their scores as a product of rows,
``\mathrm{softmax}(A B^\top)``, whose row i holds query i's scores: they mean each row normalized (the
column reading would normalize over the queries, which no paper means, and refute the paper's true
steps). In a LaTeX file that sets no convention, such a softmax is read row by row, and the report says
so in a note; a convention line or ``\mathrm{Softmax}_{col}`` says otherwise.

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
    """0 (each column) or 1 (each row) for ``node``, a softmax call; softmax(A B^T) in a LaTeX file that sets
    no convention is read row by row, with a note (see the module's docstring)."""
    if node.axis is not None:
        return {"col": 0, "row": 1}[node.axis]
    if scope.convention != "column":
        return 1
    if scope.dialect == "latex" and not getattr(scope, "convention_set", False) and row_gram(node.args[0]):
        note = (f"softmax({node.args[0].text()}) is read as each row normalized: the scores are a product of rows "
                "A B^T, row i holding query i's scores, in a file that sets no convention (mixed conventions: "
                "column vectors, tokens as the rows of the data)")
        if note not in scope.notes:
            scope.notes.append(note)
        return 1
    return 0
