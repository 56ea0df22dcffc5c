"""Definitions at indexed points, as papers write them for every value of their indices.

Two forms, read before the definitions are elaborated (:func:`read_indexed_definitions`):

- a function the file never declares, defined by its value at indexed arguments:
  ``a(s_{i-1}, h_j) = v_a^\\top \\tanh(W_a s_{i-1} + U_a h_j)`` (Bahdanau et al. 2015, the alignment model;
  Parikh et al. 2016 write ``F'(\\bar{a}_i, \\bar{b}_j) := F(\\bar{a}_i)^\\top F(\\bar{b}_j)``). The arguments
  are declared vectors or matrices, each with an index (a subscript): the definition holds for every
  value of the indices, so it is read as the function of parameters of those shapes, ``a(p, q) :=
  v_a^\\top \\tanh(W_a p + U_a q)``. A name (multi-letter, primed: ``F'``) is the function's own; an
  argument without an index (``a(s, h) = ...``) would define the function at one point only, and is read
  as a step as before.
- a name indexed by two or more letters, defined for every value of them: ``e_{ij} = a(s_{i-1}, h_j)``.
  Each use, ``e_{ik}`` (or ``e_{i,k}``) or ``e_{ij}`` inside a sum over j, is the definition's body with
  its letters renamed to the use's (``a(s_{i-1}, h_k)``), expanded where it is written so that a sum binds
  them; a definition whose body binds one of its letters (a sum over j) is not expanded. A name with one
  index letter (``c_i``, ``head_i``) is read by the definitions as before.
"""

from __future__ import annotations

from dataclasses import fields

from . import ast
from .symbols import VOCABULARY_ARITY, key_of


def _letters(sub):
    """The index letters of a subscript ``ij``, ``i,j`` (or one letter ``i``), or None."""
    if isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and sub.base.isalpha() \
            and sub.base.islower() and len(sub.base) <= 3:
        return tuple(sub.base)
    if isinstance(sub, ast.Labels) and all(isinstance(p, ast.Name) and p.sub is None and p.sup is None
                                           and len(p.base) == 1 and p.base.islower() for p in sub.parts):
        return tuple(p.base for p in sub.parts)
    return None


def _rebuild(node, visit):
    """``node`` with ``visit`` applied to each child (``visit`` returns the new child)."""
    if isinstance(node, tuple):
        return tuple(visit(x) for x in node)
    if not isinstance(node, ast.Node) or isinstance(node, ast.Given):
        return node
    return type(node)(**{f.name: getattr(node, f.name) if f.name == "pos" else visit(getattr(node, f.name))
                         for f in fields(node)})


def _rename_letters(node, renaming):
    """``node`` with the index letters renamed (in subscripts: h_j, s_{i-1}, e_{ij}), all at once."""
    def visit(n):
        if isinstance(n, ast.Name) and n.sub is not None:
            return ast.Name(n.pos, n.base, _rename_sub(n.sub, renaming), n.sup, n.font)
        return _rebuild(n, visit)

    return visit(node)


def _rename_sub(sub, renaming):
    if isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None:
        if sub.base in renaming:
            return ast.Name(sub.pos, renaming[sub.base], None, None, sub.font)
        if _letters(sub) and len(sub.base) > 1:
            return ast.Name(sub.pos, "".join(renaming.get(c, c) for c in sub.base), None, None, sub.font)
        return sub
    if isinstance(sub, (ast.Index, ast.Labels)):
        return _rebuild(sub, lambda x: _rename_sub(x, renaming))
    return sub


def _binds(node, letters) -> bool:
    return any(isinstance(n, ast.Sum) and n.index in letters for n in ast.nodes_of(node))


def _replace_nodes(node, table):
    """``node`` with each subtree equal to a key of ``table`` replaced by its value."""
    def visit(n):
        if isinstance(n, ast.Node) and n in table:
            return table[n]
        return _rebuild(n, visit)

    return visit(node)


def _function_at_points(scope, first, body):
    """``f(x_i, y_j) = body`` as the definition f(p, q) := body, or None where it is not that form."""
    if not isinstance(first, ast.Call) or first.axis is not None or not first.args:
        return None
    t = first.target
    if (t.sub is not None or t.sup is not None or t.base in VOCABULARY_ARITY or t.base in ("exp", "log")
            or not scope.is_undefined_name(t) or key_of(t) in scope.features):
        return None
    args = first.args
    if not all(isinstance(a, ast.Name) and a.sub is not None and not scope.is_undefined_name(a) for a in args):
        return None
    if len(set(args)) != len(args):
        return None
    indices = {n.base for a in args for n in ast.names_of(a.sub)}
    if _binds(body, indices):  # f(h_j) = sum_j h_j: the body's j is not the argument's
        return None
    params = tuple(ast.Name(a.pos, a.text()) for a in args)
    return ast.Define(first.pos, t, params, _replace_nodes(body, dict(zip(args, params))))


def read_indexed_definitions(scope, stmts) -> list:
    """The statements with each function defined at indexed points a definition of that function, and each
    use ``e_{ik}`` of a name defined as ``e_{ij} = ...`` that definition with its letters renamed."""
    out, defined = [], set()  # a function defined once: a later f(x_i, y_j) = ... is a claim about it
    for k, st in enumerate(stmts):
        if isinstance(st, ast.Chain) and st.links and st.links[0][0] == "=" and not st.bind:
            d = _function_at_points(scope, st.first, st.links[0][2])
            if d is not None and key_of(d.target) not in defined:
                defined.add(key_of(d.target))
                out.append(d)
                if len(st.links) > 1:
                    out.append(ast.Chain(st.links[1][1], st.first, st.links[1:], st.shape))
                continue
        nxt = stmts[k + 1] if k + 1 < len(stmts) else None
        if (isinstance(st, ast.Define) and not st.params and isinstance(nxt, ast.Chain) and nxt.first == st.target
                and nxt.links and nxt.links[0][0] == "="):  # e := F'(a_i, b_j) := body (the parser's split)
            d = _function_at_points(scope, st.body, nxt.links[0][2])
            if d is not None and key_of(d.target) not in defined:
                defined.add(key_of(d.target))
                out.append(d)
        out.append(st)
    return _rename_indexed_uses(scope, out)


def _indexed_definitions(scope, stmts) -> dict:
    """(base, sup, number of letters) -> (letters, body) of each ``e_{ij} = body`` (or ``:=``)."""
    found = {}
    for st in stmts:
        if isinstance(st, ast.Define) and not st.params:
            target, body = st.target, st.body
        elif isinstance(st, ast.Chain) and st.links and st.links[0][0] == "=" and isinstance(st.first, ast.Name):
            target, body = st.first, st.links[0][2]
            if not scope.is_undefined_name(target):
                continue
        else:
            continue
        if isinstance(body, ast.Cases):  # M_{ij} = \begin{cases} ...: a mask, read where it is used (positions)
            continue
        letters = _letters(target.sub) if isinstance(target, ast.Name) else None
        if not letters or len(letters) < 2 or len(set(letters)) != len(letters) or _binds(body, letters):
            continue  # one index letter (c_i, head_i, o_t) is read by the definitions as before
        found.setdefault((target.base, target.sup, len(letters)), (letters, body, target))
    return found


def _rename_indexed_uses(scope, stmts) -> list:
    """Every use of a name defined as ``e_{ij} = body`` (other than the definition's own left side) replaced by
    the body with its letters renamed to the use's: ``e_{ik}`` is body[j := k], and ``e_{ij}`` inside a sum
    over j is the body at that sum's j (expanding it where it is written, so the sum binds its letters)."""
    defs = _indexed_definitions(scope, stmts)
    if not defs:
        return stmts
    targets = {id(t) for _, _, t in defs.values()}

    def visit(n, depth=0):
        if isinstance(n, ast.Name) and n.sub is not None and id(n) not in targets:
            letters = _letters(n.sub)
            entry = defs.get((n.base, n.sup, len(letters))) if letters else None
            if (entry is not None and len(set(letters)) == len(letters) and depth < 20
                    and scope.is_undefined_name(n)):  # a name the file declares (W_{kq}) is its own
                own, body, _ = entry
                return ast.Group(n.pos, visit(_rename_letters(body, dict(zip(own, letters))), depth + 1))
            return n
        if (isinstance(n, ast.Call) and n.axis is None and len(n.args) == 1 and not n.extra
                and isinstance(target := visit(n.target, depth), ast.Group)):  # alpha_{ij} (x_j W^V): a product
            return ast.Mul(n.pos, (target, ast.Group(n.args[0].pos, visit(n.args[0], depth))))
        return _rebuild(n, lambda x: visit(x, depth))

    return [visit(st) for st in stmts]
