r"""Relative position representations by a clipped distance, ``a^K_{ij} = w^K_{\mathrm{clip}(j-i,k)}``.

Shaw et al. (2018) give the edge between positions i and j a vector ``a^K_{ij}`` (declared, one for each
pair), and then say which: the learned vector ``w^K`` at the relative distance j - i clipped to [-k, k],
``\mathrm{clip}(x, k) = \max(-k, \min(k, x))``. Such a statement defines the declared vectors by a table
``w`` the file names nowhere else; it is read as that definition and shown in the report, not as a step.

The steps are checked with the vectors a_{ij} free, so a step proved holds for every choice of them, these
included. A counterexample is one of the paper's too: at a clipping distance k >= n the members
a_{i1}, ..., a_{in} at one first position i are n different members of w (``\mathrm{clip}(j - i, k) = j - i``),
any vectors. The reader reads the members of such a family at one first letter only (:mod:`.sequence_rows`).
"""

from __future__ import annotations

from . import ast
from .symbols import key_of


def _pair(sub) -> bool:
    return (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and len(sub.base) == 2
            and sub.base.isalpha() and sub.base.islower() and sub.base[0] != sub.base[1])


def is_table_definition(scope, st) -> bool:
    """``a^K_{ij} = w^K_{f(j - i, k)}`` with a^K_{ij} a declared vector and w^K named nowhere: the pair's vector
    the member of the table w at a distance of the pair's letters."""
    if not (isinstance(st, ast.Chain) and len(st.links) == 1 and st.links[0][0] == "="
            and isinstance(st.first, ast.Name) and _pair(st.first.sub) and key_of(st.first) in scope.matrices):
        return False
    body = st.links[0][2]
    if not (isinstance(body, ast.Name) and body.sub is not None and not _pair(body.sub)
            and scope.is_undefined_name(ast.Name(body.pos, body.base, None, body.sup, body.font))):
        return False
    sub = body.sub.body if isinstance(body.sub, ast.Arith) else body.sub
    letters = set(st.first.sub.base)
    used = {n.base for n in ast.names_of(sub) if n.sub is None and n.sup is None and len(n.base) == 1}
    if not letters <= used:
        return False  # w_{k} alone: the same vector for every pair, not a distance of i and j
    others = used - letters
    return all(o not in scope.matrices and o not in scope.counts for o in others)


def define_table(scope, st) -> str:
    """The report's line for ``a^K_{ij} = w^K_{\\mathrm{clip}(j-i,k)}`` (see the module's text)."""
    first, body = st.first, st.links[0][2]
    note = (f"{first.text()} = {body.text()}: the declared vectors {first.text()} are members of {body.base}"
            f"{'^' + body.sup if body.sup else ''} at a distance of {', '.join(first.sub.base)}; the steps are "
            f"checked for every {first.text()}, so for these (with the clipping distance at least the length, "
            f"the members at one position {first.sub.base[0]} are any vectors)")
    if note not in scope.notes:
        scope.notes.append(note)
    return f"{first.text()} := {body.text()}  (a table of vectors by relative position, shown)"
