"""The value of a function at one point, declared as papers declare it: ``\\phi(\\mathbf{k}^{(i)}) \\in
\\mathbb{R}^{d_{\\text{dot}}}`` (Schlag et al. 2021).

The file gives the value's shape and nothing else: the function is never defined and its argument never
declared. Such a value is read as one vector (or matrix) of its own, of the declared shape, and every
application written the same way (``\\phi(\\mathbf{k}^{(i)})`` again, transposed or not) is that value: a
function gives one value at one argument. Since the argument occurs nowhere else, no other expression of
the file can equal it, so reading the value as a free vector loses nothing: a step proved holds for every
function and argument, and a counterexample's value is the function's value at some argument.

Refused, with the message saying what to write: a value whose argument names something the file declares or
defines (``\\phi(W x) \\in ...``: the value would depend on W and x, which a free vector forgets), and a
function the file also declares as a map.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..errors import ParseError
from . import ast
from .symbols import key_of


@dataclass(frozen=True)
class PointValue(ast.Node):
    """``f(a) \\in S``: the value of f at a, declared in S (a vector or matrix space)."""

    call: ast.Node
    shape: ast.Node


def _refuse(st, message, expected):
    raise ParseError(message, st.pos[0], st.pos[1], expected)


def _names_given(stmts) -> set:
    """The names the file declares or defines, and the maps it declares."""
    out = set()
    for st in stmts:
        if isinstance(st, ast.Declare):
            out |= {key_of(n) for n in st.names} | {n.base for n in st.names}
        elif isinstance(st, ast.FeatureDecl):
            out.add(st.name)
        elif isinstance(st, ast.Define):
            out.add(key_of(st.target))
        elif isinstance(st, ast.Chain) and isinstance(st.first, ast.Name):
            out.add(key_of(st.first))
    return out


def _as_calls(node, names):
    """``node`` with ``phi (x)`` (a product, as the parser reads it beside a matrix) read as the call."""
    from .vectors import rewrite_feature_calls

    return rewrite_feature_calls(node, names)


def _replace(node, table):
    if isinstance(node, tuple):
        return tuple(_replace(x, table) for x in node)
    if not isinstance(node, ast.Node) or isinstance(node, ast.Given):
        return node
    if isinstance(node, ast.Call) and node in table:
        return ast.Name(node.pos, table[node])
    return type(node)(**{f.name: getattr(node, f.name) if f.name == "pos" else _replace(getattr(node, f.name), table)
                         for f in fields(node)})


def read_point_values(stmts) -> list:
    """The statements with each declared value ``f(a) \\in S`` a declaration of a name of its own (written as
    ``f(a)``), and every application ``f(a)`` written the same way that name."""
    values = [st for st in stmts if isinstance(st, PointValue)]
    if not values:
        return stmts
    rest = [st for st in stmts if not isinstance(st, PointValue)]
    given = _names_given(rest)
    table, decls = {}, []
    for st in values:
        call = st.call
        f = call.target.text()
        usage = (f"the map declared instead ({f} : \\mathbb{{R}}^{{d_k}} \\to \\mathbb{{R}}^{{d}}), or a name of "
                 "its own for the value")
        if len(call.args) != 1:
            _refuse(st, f"{call.text()} \\in ... declares a value of {f} at {len(call.args)} arguments, which is not "
                    "read", usage)
        if f in given:
            _refuse(st, f"{call.text()} \\in ... declares a value of {f}, which the file also declares", usage)
        named = {key_of(n) for n in ast.names_of(call.args[0])} | {n.base for n in ast.names_of(call.args[0])}
        if named & given:
            _refuse(st, f"{call.text()} \\in ... declares the value of {f} at {call.args[0].text()}, which names "
                    f"{', '.join(sorted(named & given))} declared by the file: the value depends on it, and is not "
                    "read as a vector of its own", usage)
        table[call] = call.text()
        decls.append(ast.Declare(st.pos, (ast.Name(call.pos, call.text()),), st.shape))
    names = {c.target.text() for c in table}
    return decls + [_replace(_as_calls(st, names), table) for st in rest]
