"""The identity matrix written without its size, ``\\mathbf{I}`` or ``I``, as a term of a sum.

Papers write ``\\mathbf{W} (\\mathbf{I} - \\beta \\phi(k) \\phi(k)^\\top)`` (Schlag et al. 2021) and leave the
size to the other terms: in a sum, an undeclared ``I`` is the identity of the size that gives its term
the shape of the sum's other terms (here d_dot × d_dot). A file that declares or defines I keeps its own
I; an identity that no other term sizes, or a term that is not square where the identity stands, is
refused. ``\\mathrm{Id}`` is the identity operator of :mod:`.operators` and is not touched here.
"""

from __future__ import annotations

from dataclasses import fields

import sympy as sp

from ..defs.shapes import same_dim
from ..errors import DerivationError
from . import ast
from .symbols import is_matrix


def is_identity_name(scope, n) -> bool:
    """``\\mathbf{I}`` or ``I`` that the file neither declares nor defines."""
    return (isinstance(n, ast.Name) and n.base == "I" and n.sub is None and n.sup is None
            and n.font in ("", "mathbf", "mathrm", "boldsymbol", "bm", "mathbb")
            and "I" not in scope.matrices and "I" not in scope.defs)


def has_bare_identity(scope, node) -> bool:
    return any(is_identity_name(scope, n) for n in ast.nodes_of(node))


def _with_identity(scope, node, size):
    """``node`` with every bare I replaced by the identity of ``size`` (a given value)."""
    if isinstance(node, tuple):
        return tuple(_with_identity(scope, x, size) for x in node)
    if is_identity_name(scope, node):
        return ast.Given(node.pos, sp.Identity(size))
    if not isinstance(node, ast.Node) or isinstance(node, (ast.Given, ast.Name)):
        return node
    return type(node)(**{f.name: getattr(node, f.name) if f.name == "pos" else _with_identity(
        scope, getattr(node, f.name), size) for f in fields(node)})


def sized_identity_term(scope, term, L, terms):
    """The value of ``term`` with its bare I the identity of the size the sum's other terms give it."""
    usage = ("a term beside the identity whose shape fixes its size, or I_n declared "
             "(I_n \\in \\mathbb{R}^{n \\times n})")
    others = [u for u in terms if u is not term and not has_bare_identity(scope, u)]
    ref = scope._expr(others[0], L) if others else None
    if not is_matrix(ref):
        scope.fail(term, f"the identity I without its size in {term.text()}, and no other term of the sum fixes it",
                   usage)
    fits = []
    for size in dict.fromkeys((ref.rows, ref.cols)):
        try:
            v = scope._expr(_with_identity(scope, term, size), L)
        except DerivationError:
            continue
        if is_matrix(v) and same_dim(v.rows, ref.rows) and same_dim(v.cols, ref.cols):
            fits.append((size, v))
    if len(fits) > 1:  # the shapes do not decide the size: never guess it
        scope.fail(term, f"the identity I without its size in {term.text()}: both {sp.sstr(fits[0][0])} and "
                   f"{sp.sstr(fits[1][0])} fit", usage)
    if fits:
        size, v = fits[0]
        note = (f"I in {term.text()} is the {sp.sstr(size)} × {sp.sstr(size)} identity: the size that gives the "
                f"term the shape of {others[0].text()}")
        if note not in scope.notes:
            scope.notes.append(note)
        return v
    scope.fail(term, f"the identity I without its size in {term.text()}: no size gives the term the shape of "
               f"{others[0].text()} ({sp.sstr(ref.rows)} × {sp.sstr(ref.cols)})", usage)
