"""Functions named with a subscript: a label (``\\mathrm{FFN}_{\\mathrm{SwiGLU}}``) or a parameter
(``\\mathrm{Swish}_\\beta``), as Shazeer (2020) writes them::

    \\mathrm{Swish}_\\beta(x) = x \\sigma(\\beta x), \\quad
    \\mathrm{FFN}_{\\mathrm{SwiGLU}}(x, W, V, W_2) = (\\mathrm{Swish}_1(xW) \\otimes xV) W_2

A definition ``F_s(p_1, ..., p_k) = body`` whose subscript ``s`` is an undeclared letter that its body
uses defines a function of s and the p's: every call ``F_e(a_1, ..., a_k)`` is read as ``F(e, a_1, ..., a_k)``
(``\\mathrm{Swish}_1(xW)`` is the body with beta = 1). A subscript the body does not use is part of the
name (``FFN_SwiGLU``), and the calls with that subscript call that function.
"""

from __future__ import annotations

from dataclasses import fields, replace

from . import ast
from .symbols import key_of


def _definitions(scope, stmts):
    """(base, font) -> "param" | "label" for the functions defined with a subscript."""
    out = {}
    for st in stmts:
        if not (isinstance(st, ast.Chain) and st.links[0][0] == "=" and isinstance(st.first, ast.Call)):
            continue
        t, args = st.first.target, st.first.args
        s = t.sub
        if not (isinstance(s, ast.Name) and s.sub is None and s.sup is None and t.sup is None and args
                and all(isinstance(a, ast.Name) and a.sub is None and a.sup is None for a in args)):
            continue
        if not scope.is_undefined_name(s) or not scope.is_undefined_name(ast.Name(t.pos, key_of(t), None, None)):
            continue
        body = st.links[0][2]
        labels = {id(n.sub) for n in ast.names_of(body) if isinstance(n, ast.Name) and n.sub is not None
                  and key_of(n) in scope.matrices}  # h_t declared as it is written: t labels it (Luong et al.)
        uses = any(isinstance(n, ast.Name) and n.base == s.base and n.sub is None and id(n) not in labels
                   for n in ast.names_of(body))
        out[t.base] = ("param", s.base) if uses and len(s.base) == 1 or uses and s.base.isalpha() else ("label", s)
    return out


def _rewrite(node, defs):
    if isinstance(node, tuple):
        return tuple(_rewrite(x, defs) for x in node)
    if not isinstance(node, ast.Node) or isinstance(node, ast.Given):
        return node
    if isinstance(node, ast.Call) and node.target.base in defs and node.target.sub is not None:
        kind, what = defs[node.target.base]
        t = node.target
        args = _rewrite(node.args, defs)
        if kind == "param":
            return replace(node, target=ast.Name(t.pos, t.base, None, t.sup, t.font), args=(t.sub,) + args)
        if t.sub == what:
            return replace(node, target=ast.Name(t.pos, key_of(t), None, t.sup, t.font), args=args)
        return replace(node, args=args)
    kw = {f.name: (getattr(node, f.name) if f.name == "pos" else _rewrite(getattr(node, f.name), defs))
          for f in fields(node)}
    return type(node)(**kw)


def rewrite_subscripted_functions(scope, stmts) -> list:
    """``stmts`` with every call of a function defined with a subscript read as described above."""
    defs = _definitions(scope, stmts)
    if not defs:
        return stmts
    for base, (kind, what) in sorted(defs.items()):
        if kind == "param":
            scope.notes.append(f"{base}_{what}(...) is a function of its subscript {what} too: {base}_e(a) is read as "
                               f"its definition with {what} = e")
    return [_rewrite(st, defs) for st in stmts]
