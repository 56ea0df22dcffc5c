"""A quantity labelled by an argument in parentheses: ``A(l_1)``, ``\\tilde{A}(l_2)`` (Abnar & Zuidema 2020).

Papers name one matrix per layer by writing the layer in parentheses::

    A(l_1) = 0.5 W_{att}^{(1)} + 0.5 I, \\quad \\tilde{A}(l_2) = A(l_2)\\tilde{A}(l_1)

``A(l_1)`` is not a function applied to a value (A is typeset as a matrix, one letter or a capital Greek
letter, not as a function, \\mathrm{Concat}): ``l_1`` is declared nowhere and no definition of A
uses its parameter. Such a call is read as a name of its own, A labelled (l_1) (shown ``A^{(l_1)}``), so
``A(l_1) = ...`` defines it and ``A(l_2)`` is another matrix. A name is read that way only when every
call of it in the file has such labels as arguments (undeclared plain names, written nowhere else in the
file: not ``i`` of ``\\delta(i, j)`` that also indexes ``Q_i``, not ``D`` of ``\\mathrm{diag}(D)`` defined elsewhere)
and no definition of it uses its parameters in its body (``f(x) = x W`` stays a function of x).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import fields

from . import ast
from .symbols import VOCABULARY_ARITY


def _calls(stmts):
    for st in stmts:
        for n in ast.nodes_of(st):
            if isinstance(n, ast.Call) and isinstance(n.target, ast.Name):  # (A + B)(x) labels nothing
                yield n


def _is_matrix_letter(t) -> bool:
    """A name typeset as a matrix's, not a function's: one letter (an accent allowed, Ã) or a capital Greek
    letter (Omega), in no upright function font (\\mathrm{Concat}, \\operatorname{diag} are functions)."""
    if t.font in ("mathrm", "operatorname", "text", "textrm", "mathsf"):
        return False
    b = t.base
    return len(b) == 1 or (len(b) == 2 and unicodedata.combining(b[1]) > 0) or (b in ast.GREEK and b[0].isupper())


def _is_label(scope, a) -> bool:
    return isinstance(a, ast.Name) and a.sup is None and scope.is_undefined_name(a) and a.base not in scope.counts


def _mentions(node, params, labels) -> bool:
    """True when ``node`` mentions a name of ``params`` other than as the label of a call of ``labels``."""
    if isinstance(node, tuple):
        return any(_mentions(x, params, labels) for x in node)
    if isinstance(node, ast.Call) and node.target.base in labels:
        return False
    if isinstance(node, ast.Name) and node.base in params:
        return True
    if not isinstance(node, ast.Node):
        return False
    return any(_mentions(getattr(node, f.name), params, labels) for f in fields(node) if f.name != "pos")


def _uses_parameters(st, labels) -> bool:
    """``F(x) = body`` (or ``:=``) whose body mentions one of its parameters (not as a label)."""
    if isinstance(st, ast.Define):
        params, bodies = {p.base for p in st.params}, (st.body,)
    elif isinstance(st, ast.Chain) and isinstance(st.first, ast.Call):
        params = {a.base for a in st.first.args if isinstance(a, ast.Name)}
        bodies = tuple(e for _, _, e in st.links)
    else:
        return False
    return _mentions(bodies, params, labels)


def _defined_target(st):
    if isinstance(st, ast.Define):
        return st.target
    if isinstance(st, ast.Chain) and isinstance(st.first, ast.Call):
        return st.first.target
    return None


def labelled_names(scope, stmts) -> set[str]:
    """The bases of the names the file labels by arguments in parentheses."""
    seen, bad = set(), set()
    for c in _calls(stmts):
        t = c.target
        base = t.base
        if (t.sub is not None or t.sup is not None or base in VOCABULARY_ARITY or not _is_matrix_letter(t)
                or not scope.is_undefined_name(t)
                or not c.args or not all(_is_label(scope, a) for a in c.args)):
            bad.add(base)
        else:
            seen.add(base)
    labels = seen - bad
    counts = Counter(n.base for st in stmts for n in ast.names_of(st))  # a label is a label only
    as_label = Counter(a.base for c in _calls(stmts) if c.target.base in labels for a in c.args)
    labels -= {c.target.base for c in _calls(stmts) if c.target.base in labels
               and any(counts[a.base] > as_label[a.base] for a in c.args)}
    while True:  # a definition that uses its parameters is a function, and its name no label
        uses = {t.base for st in stmts if (t := _defined_target(st)) is not None and t.base in labels
                and _uses_parameters(st, labels)}
        if not uses:
            return labels
        labels -= uses


def _rewrite(node, names):
    if isinstance(node, tuple):
        return tuple(_rewrite(x, names) for x in node)
    if not isinstance(node, ast.Node) or isinstance(node, ast.Given):
        return node
    if isinstance(node, ast.Call) and node.target.base in names:
        t = node.target
        return ast.Name(node.pos, t.base, None, "(" + ", ".join(a.text() for a in node.args) + ")", t.font)
    kw = {f.name: (getattr(node, f.name) if f.name == "pos" else _rewrite(getattr(node, f.name), names))
          for f in fields(node)}
    return type(node)(**kw)


def rewrite_labels(scope, stmts) -> list:
    """``stmts`` with each labelled call ``A(l_1)`` read as the name A^{(l_1)}, and a note for each such name."""
    names = labelled_names(scope, stmts)
    if not names:
        return stmts
    for base in sorted(names):
        scope.notes.append(f"{base}(...) is never applied to a value the file declares: {base}(l) is read as a name "
                           f"of its own, {base} labelled (l) (a matrix per label, as for one layer l)")
    return [_rewrite(st, names) for st in stmts]
