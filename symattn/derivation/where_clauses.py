"""Definitions given after their use in the same display: ``x = ..., \\text{where}~f(a) = ...``.

Zhang & Sennrich (2019) define RMSNorm as::

    \\bar{a}_i = \\frac{a_i}{\\mathrm{RMS}(\\mathbf{a})} g_i, \\quad
        \\text{where}~\\mathrm{RMS}(\\mathbf{a}) = \\sqrt{\\frac{1}{n} \\sum_{i=1}^{n} a_i^2}

The body of the first definition is checked when it is read, and RMS is defined only after it; read
in order, RMS(a) would be an undefined function (an uninterpreted map of a's shape). A definition
that a definition before it on the same line uses is therefore read first, as the word "where"
says. It is moved only when it does not itself depend on the definition it serves (neither its
target nor its parameters: ``MultiHead(Q, K, V) = Concat(...), where head_i = Attention(Q W_i^Q, ...)``
keeps its order, since head_i is read inside MultiHead with MultiHead's parameters).
"""

from __future__ import annotations

from . import ast
from .symbols import key_of


def _target(st):
    """(key, parameters, body) of a definition-like statement (``x := e``, or ``x = e`` and ``f(a) = e``
    of one link), or None."""
    if isinstance(st, ast.Define):
        return key_of(st.target), {p.base for p in st.params}, st.body
    if isinstance(st, ast.Chain) and len(st.links) == 1 and st.links[0][0] == "=":
        first = st.first
        if isinstance(first, ast.Name):
            return key_of(first), set(), st.links[0][2]
        if isinstance(first, ast.Call) and all(isinstance(a, ast.Name) for a in first.args):
            return key_of(first.target), {a.base for a in first.args}, st.links[0][2]
    return None


def _mentions(body) -> set[str]:
    out = set()
    for n in ast.nodes_of(body):
        if isinstance(n, ast.Name):
            out.add(key_of(n))
            out.add(n.base)
        elif isinstance(n, ast.Call):
            out.add(key_of(n.target))
    return out


def _line(st) -> int:
    return st.pos[0]


def definitions_first(stmts: list) -> list:
    """``stmts`` with each definition moved before an earlier definition of the same line that uses it
    (and that it does not use); everything else keeps its order."""
    out = list(stmts)
    k = 0
    while k < len(out):
        later = _target(out[k])
        if later is not None:
            key, _, body = later
            needs = _mentions(body)
            for j in range(k):
                earlier = _target(out[j])
                if earlier is None or _line(out[j]) != _line(out[k]):
                    continue
                e_key, e_params, e_body = earlier
                if key in _mentions(e_body) and e_key not in needs and not (e_params & needs):
                    out.insert(j, out.pop(k))
                    break
        k += 1
    return out
