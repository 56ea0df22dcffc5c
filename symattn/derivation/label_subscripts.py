"""Subscripts that mix a label and an index, read as one label of a name of its own.

Papers name per-head weights with a label and the head's index in one subscript: Dong et al. write
``W_{Q,h}``, ``b_{V,h}`` for head h's query weights and value bias. The grammar reads ``{Q,h}`` (an
upper-case label, then a letter) as a label and a position, the form of Su et al.'s rotation
``R^d_{\\Theta,m}``. Where no rotation of that name is defined but the file declares the whole name
``W_{Q,h}`` (as it declares ``W_{k,E}``), the subscript is the name's label: ``W_{Q,h}`` is a matrix of
its own, as the paper declares it, not the h-th member of a family. A function named with a word below,
``K_{\\mathrm{gauss}}(x, y) = ...``, is defined by the file as ``f(x, y) = ...`` is (:func:`word_label`).

>>> from symattn.derivation import ast
>>> n = ast.Name(0, "W", ast.ParamIndex(0, ast.Name(0, "Q", None, None), ast.Name(0, "h", None, None)), None)
>>> as_labels(n).sub.text()
'Q,h'
"""

from __future__ import annotations

from . import ast
from .symbols import key_of


def word_label(sub) -> bool:
    """Whether the subscript ``sub`` is a word or a mark, a label such as ``gauss`` in Choromanski et al.'s kernel
    ``K_{\\mathrm{gauss}}(x, y)``: a function so named is the file's own function (defined as ``f(x, y)`` is),
    while a subscript letter (``F_h``, ``f_q``) stays an index or a one-letter label."""
    return (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None
            and (len(sub.base) > 1 or not sub.base.isalnum()))  # gauss, or an arrow: Att_{\leftrightarrow}


def new_labelled_name(el, t: ast.Name) -> bool:
    """Whether nothing declares or defines the whole name ``t`` (``K_{gauss}``, the base K may be a matrix)."""
    k = key_of(t)
    return not any(k in table for table in (el.matrices, el.scalars, el.dims, el.defs, el.functions, el.partitions))


def as_labels(node: ast.Name) -> ast.Name:
    """``node`` with its label-and-position subscript ``{Q,h}`` read as the compound label ``{Q,h}``."""
    sub = node.sub
    return ast.Name(node.pos, node.base, ast.Labels(sub.pos, (sub.label, sub.index)), node.sup, node.font)


def labelled_name(el, node: ast.Name) -> ast.Name:
    """``W_{Q,h}`` as the declared name ``W_{Q,h}`` (a compound label); refuse it where the file declares no
    such name, since ``{label,position}`` is otherwise read only for a rotation defined by its pmatrix."""
    named = as_labels(node)
    k = el.resolve(key_of(named))
    if any(k in table for table in (el.matrices, el.scalars, el.dims, el.defs, el.partitions)):
        return named
    el.fail(node, f"{node.text()}: a subscript with a label and a position is read only for a rotation defined by "
            f"its pmatrix, or as a name of its own that the file declares ({node.text()} is not declared)",
            f"a declaration {node.text()} \\in \\mathbb{{R}}^{{...}}, or "
            "R^d_{\\Theta,m} = \\begin{pmatrix} ... \\end{pmatrix} before its use")
