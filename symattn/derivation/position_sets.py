r"""Sets of positions written by a condition, as papers define the positions a query attends to.

Reformer's ``\mathcal{P}_i = \{j : i \geq j\}`` (the positions j at or before i) and the Sparse
Transformer's strided pattern ``A^{(2)}_i = \{j : (i - j) \bmod l = 0\}`` (the positions a multiple of the
stride l away from i) name a set by its bound letter and a condition on it:

- a comparison or a chain of comparisons, read as the conditions of a cases row are (:mod:`.conditions`):
  ``\{j : j \le i\}``, ``\{j : i - W \le j \le i\}``, ``\{j \mid |i - j| \le w\}``;
- a congruence ``(i - j) \bmod l = 0``: the difference is a multiple of l.

A set so written and named (``\mathcal{P}_i = \{...\}``) is read and kept as written, a definition shown
in the report that no step uses; a step that uses it, or a set written in a step, is refused where it is used:
the range of the set (from which first position?) is not written, and a sum over the members of a set is
not read.

>>> from .latex import parse_latex
>>> st = parse_latex(r"$$ A_i = \{j : (i - j) \bmod l = 0\} $$")[0]
>>> st.links[0][2].text()
'{j : (i-j) mod l = 0}'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ast
from .conditions import LATEX_REL, _chain, _term
from .symbols import key_of

#: where ``\{`` opens a set written by a condition (a letter, then ':' or \mid), and the commands read inside one
SET_BUILDER = re.compile(r"\s*[A-Za-z]\s*(:|\\mid(?![A-Za-z]))")
SET_COMMANDS = {"le": ("cmd", "<="), "leq": ("cmd", "<="), "ge": ("cmd", ">="), "geq": ("cmd", ">="),
                "bmod": ("cmd", "bmod"), "mid": ("op", ":")}


@dataclass(frozen=True)
class Congruence(ast.Node):
    """``(i - j) \\bmod l = 0``: ``left`` leaves the remainder ``residue`` on division by ``modulus``."""

    left: ast.Node
    modulus: ast.Node
    residue: ast.Node

    def text(self):
        return f"{self.left.text()} mod {self.modulus.text()} = {self.residue.text()}"

    def latex(self):
        return rf"{self.left.latex()} \bmod {self.modulus.latex()} = {self.residue.latex()}"


@dataclass(frozen=True)
class PositionSet(ast.Node):
    """``\\{j : cond\\}``: the positions ``var`` (a letter, kept as text: it is bound here) satisfying
    ``cond``, a chain of comparisons (terms and relations alternating) or a :class:`Congruence`."""

    var: str
    cond: object

    def _cond(self, latex: bool) -> str:
        if isinstance(self.cond, Congruence):
            return self.cond.latex() if latex else self.cond.text()
        rel = LATEX_REL if latex else {r: r for r in LATEX_REL}
        return " ".join(rel[x] if isinstance(x, str) else (x.latex() if latex else x.text()) for x in self.cond)

    def text(self):
        return f"{{{self.var} : {self._cond(False)}}}"

    def latex(self):
        return rf"\{{{self.var} : {self._cond(True)}\}}"


def read_position_set(p) -> PositionSet:
    """``\\{j : i \\geq j\\}`` or ``\\{j : (i - j) \\bmod l = 0\\}`` at the parser ``p`` (the lexer marks the
    opening brace of a set written by a condition as the op ``\\{``)."""
    t = p.next()
    v = p.peek()
    if v.kind != "ident" or len(v.value) != 1:
        p.fail(f"found {v.show()} as the letter of a set of positions", "a letter, as in \\{j : j \\le i\\}", v)
    p.next()
    p.expect_op(":", "':' (or \\mid) after the letter of the set")
    p.enter()
    start, first = p.i, _term(p)
    if p.at("cmd", "bmod"):
        p.next()
        modulus = _term(p)
        p.expect_op("=", "'=' and the remainder of the division, as in (i - j) \\bmod l = 0")
        residue = _term(p)
        cond = Congruence(first.pos, first, modulus, residue)
    else:
        p.i = start
        cond = _chain(p)
    p.expect_op("\\}", f"\\}} closing the set opened at line {t.line}, column {t.col}")
    p.leave()
    letters = {n.base for n in ast.names_of(_parts(cond))}
    if v.value not in letters:
        p.fail(f"the condition of the set {{{v.value} : ...}} does not mention {v.value}",
               f"a condition on {v.value}, as in \\{{{v.value} : {v.value} \\le i\\}}", v)
    return PositionSet((t.line, t.col), v.value, cond)


def _parts(cond) -> tuple:
    if isinstance(cond, Congruence):
        return (cond.left, cond.modulus, cond.residue)
    return tuple(x for x in cond if not isinstance(x, str))


def define_set(scope, st) -> str:
    """``\\mathcal{P}_i = \\{j : i \\geq j\\}``: the set kept as written under its name (a use is refused);
    returns the definition as the report shows it."""
    target, body = st.first, st.links[0][2]
    if not isinstance(target, ast.Name):
        scope.fail(target, f"{target.text()} = {body.text()}: a set of positions is named by a name",
                   "a name, as in \\mathcal{P}_i = \\{j : j \\le i\\}")
    scope.position_sets[key_of(target)] = body
    return f"{target.text()} := {body.text()}  (a set of positions: a step that uses it is refused)"


def refuse_use(scope, node, the_set: PositionSet | None = None):
    """A set of positions where a step uses it (``node``, the set or its name): refused, with what to write."""
    the_set = node if the_set is None else the_set
    name = "" if the_set is node else f"{node.text()} := "
    scope.fail(node, f"the set of positions {name}{the_set.text()} used in a step: the positions it starts from "
               "are not written, and a sum over the members of a set is not read",
               "a sum over a range, as in \\sum_{j=1}^{i}, or a mask by cases, M_{ij} = \\begin{cases} 0 & "
               "j \\le i \\\\ -\\infty & \\text{otherwise} \\end{cases}")


def sum_over_set(p, letter: str):
    """Refuse ``\\sum_{j \\in \\mathcal{P}_i}`` at the parser ``p`` (after \\in): a sum over the members of a set
    is read only over the heads (``\\sum_{i \\in [h]}``, ``\\sum_{h \\in H}``)."""
    t = p.peek()
    p.fail(f"found {t.show()} after \\in: a sum over the members of a set, \\sum_{{{letter} \\in S}}, is not read "
           f"(the heads are, \\sum_{{{letter} \\in [h]}})", f"a sum over a range, as in \\sum_{{{letter}=1}}^{{i}}", t)
