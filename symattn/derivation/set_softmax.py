r"""A softmax over the members of a sequence, ``\mathop{\mathrm{softmax}}_{x_j \in X}(s_{ij})``.

Kobayashi et al. (2020) write the weights of a head as a softmax whose subscript ranges over the members of
the input: ``\alpha_{i,j} = \mathop{\mathrm{softmax}}_{x_j \in X}\left(\frac{q(x_i) k(x_j)^\top}{\sqrt{d'}}\right)``,
the weight of x_j among all of X, beside the declaration ``x_1, \ldots, x_n \in \mathbb{R}^{d}``. It is read
as the softmax written out over the n members,

    \frac{\exp(s(x_j))}{\sum_{k=1}^{n} \exp(s(x_k))}

(k a letter the file does not use), when the set is the capital of the sequence's name (x_j in X) and the
file declares that sequence with its length and does not name X otherwise. Any other set (a set the file
names, a sequence without a length, a subscript of another name) is refused where it is written.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..errors import DerivationError
from . import ast
from .indexed_names import _rename_letters
from .symbols import family_key

FRESH = "kmlpqrstuvwabcg"  # letters tried, in order, for the index of the written-out sum


@dataclass(frozen=True)
class MemberOf(ast.Node):
    """The subscript ``x_j \\in X``: the member ``member`` ranging over the set ``of``."""

    member: ast.Name
    of: ast.Name

    def text(self):
        return f"{self.member.text()} in {self.of.text()}"

    def latex(self):
        return rf"{self.member.latex()} \in {self.of.latex()}"


def read_member_of(parser, node):
    """After ``\\in`` in a subscript: ``x_j \\in X`` as a :class:`MemberOf` (read where it is used)."""
    parser.next()
    t = parser.peek()
    if t.kind != "ident":
        parser.fail(f"found {t.show()} as the set of the subscript {node.text()} \\in ...",
                    "the name of the sequence's set, as in x_j \\in X", t)
    of = parser.sub_atom(True)
    if not isinstance(of, ast.Name) or not isinstance(node, ast.Name):
        parser.fail(f"a subscript {node.text()} \\in ..., a range over the members of a set, is not read",
                    "the weights written out, as in \\frac{\\exp(s_{ij})}{\\sum_{k=1}^{n} \\exp(s_{ik})}, "
                    "over an index of a declared range", t)
    return MemberOf(node.pos, node, of)


def _fail(n, message, expected):
    raise DerivationError(message, n.pos[0], n.pos[1], expected)


def _refusal(n):
    _fail(n, f"a subscript {n.text()}, a range over the members of a set, is not read",
          "the weights written out, as in \\frac{\\exp(s_{ij})}{\\sum_{k=1}^{n} \\exp(s_{ik})}, over an index of "
          "a declared range")


def _lengths(stmts) -> dict:
    """family key -> the length n of each ``x_1, \\ldots, x_n \\in S``."""
    return {family_key(n): st.upper for st in stmts if isinstance(st, ast.Declare) and st.upper is not None
            and st.index is None for n in st.names}


def rewrite(scope, stmts) -> list:
    """Every ``\\mathop{\\mathrm{softmax}}_{x_j \\in X}(s)`` written out over the members (see the module's
    text); any other subscript ``x_j \\in X`` refused."""
    found = [n for st in stmts for n in ast.nodes_of(st) if isinstance(n, MemberOf)]
    if not found:
        return stmts
    lengths = _lengths(stmts)
    used = {c for st in stmts for n in ast.names_of(st) for c in n.base}
    fresh = next((c for c in FRESH if c not in used), None)

    def written_out(call):
        m = call.target.sub
        member, of = m.member, m.of
        letter = member.sub.base if isinstance(member.sub, ast.Name) and member.sub.sub is None else None
        if letter is None or len(letter) != 1:
            _fail(m, f"the subscript {m.text()} ranges over {member.text()}, whose index is not a letter",
                  f"{member.base}_j \\in {member.base.upper()}")
        if of.sub is not None or of.sup is not None or of.base != member.base.upper() or \
                any(of.base in t for t in (scope.matrices, scope.scalars, scope.defs, scope.dims)):
            _fail(m, f"the subscript {m.text()}: the set {of.text()} is not read as the members "
                  f"{member.base}_1, ..., {member.base}_n (it is not the capital of {member.base}, or the file names "
                  "it otherwise)", "the softmax written out over the members of a declared sequence, \\frac{"
                  "\\exp(s_{ij})}{\\sum_{k=1}^{n} \\exp(s_{ik})}")
        n = lengths.get(family_key(member))
        if n is None:
            _fail(m, f"the subscript {m.text()}: the number of members of {of.text()} is not written",
                  f"the sequence declared with its length, {member.base}_1, \\ldots, {member.base}_n \\in "
                  "\\mathbb{R}^{d}")
        if fresh is None or len(call.args) != 1:
            _refusal(m)
        arg = call.args[0]
        exp = ast.Name(call.pos, "exp", None, None, "")
        num = ast.Call(call.pos, exp, (arg,))
        den = ast.Sum(call.pos, fresh, n, ast.Call(call.pos, exp, (_rename_letters(arg, {letter: fresh}),)))
        note = (f"{call.target.base}_{{{m.text()}}}(...) is the softmax over the {n.text()} members of the "
                f"sequence {member.base}: exp(...) / sum_{{{fresh}=1}}^{{{n.text()}}} exp(...) at "
                f"{member.base}_{fresh}")
        if note not in scope.notes:
            scope.notes.append(note)
        return ast.Group(call.pos, ast.Div(call.pos, num, den))

    def visit(n):
        if (isinstance(n, ast.Call) and isinstance(n.target, ast.Name) and isinstance(n.target.sub, MemberOf)
                and n.target.base in ("softmax", "Softmax") and n.axis is None and not n.extra):
            return written_out(ast.Call(n.pos, n.target, tuple(visit(a) for a in n.args)))
        if isinstance(n, MemberOf):
            _refusal(n)
        if isinstance(n, tuple):
            return tuple(visit(x) for x in n)
        if not isinstance(n, ast.Node) or isinstance(n, ast.Given):
            return n
        return type(n)(**{f.name: getattr(n, f.name) if f.name == "pos" else visit(getattr(n, f.name))
                          for f in fields(n)})

    return [visit(st) for st in stmts]
