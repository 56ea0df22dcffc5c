r"""Conditions of a ``cases`` row, as papers write them: comparisons of indices.

A row of a mask written entry by entry is a value and the condition under which it holds. The
field writes the condition in several ways, all read here:

- one comparison, ``j \le i``, ``s > t``, ``j \leq i``, ``i \geq j``, ``s < t + 1``;
- a chain, ``i - W \le j \le i`` (a window: both comparisons hold);
- an absolute value, ``|i - j| \le \frac{w}{2}`` (a band of half-width w/2 around the diagonal);
- several comparisons joined by ``\text{and}`` or a comma, and ``\text{if}`` or ``\text{for}`` before the
  condition, as in ``-\infty & \text{if } j > i``.

One comparison is read as a triple (left, relation, right) of index nodes, the form the masks of
:mod:`.positions` take (a causal mask, a padding mask). A chain, an absolute value or a joined
condition is read as a :class:`Conjunction` of such comparisons, kept as written; a mask whose visible
entries it describes is a window: the sum of one causal mask per comparison (:func:`window_mask`), whose
entry is 0 exactly where every comparison holds and -infinity elsewhere. A window whose width is not a
number (``i - W \le j \le i``) is refused where it is used, never read as a causal mask.

>>> from .latex import parse_latex
>>> st = parse_latex(r"$$ M_{ij} = \begin{cases} 0 & i - W \le j \le i \\ -\infty & \text{otherwise} \end{cases} $$")[0]
>>> st.links[0][2].rows[0][1].text()
'i-W <= j <= i'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy as sp

from .. import defs as D
from . import ast
from .symbols import key_of
from .window_bounds import visible_atoms

LATEX_REL = {"<=": r"\le", ">=": r"\ge", "<": "<", ">": ">"}


@dataclass(frozen=True)
class Abs(ast.Node):
    """``|i - j|``: the absolute value of an index expression, in a condition."""

    body: ast.Node

    def text(self):
        return f"|{self.body.text()}|"

    def latex(self):
        return f"|{self.body.latex()}|"


@dataclass(frozen=True)
class Conjunction(ast.Node):
    """Comparisons that hold together: a chain ``a <= j <= b`` is the links (a, <=, j), (j, <=, b).

    ``links`` are the chains as written (terms and relations alternating); ``atoms`` the comparisons."""

    links: tuple  # one tuple per chain: (term, rel, term, rel, term, ...)

    @property
    def atoms(self) -> tuple:
        out = []
        for chain in self.links:
            for k in range(0, len(chain) - 2, 2):
                out.append((chain[k], chain[k + 1], chain[k + 2]))
        return tuple(out)

    def text(self):
        return " and ".join(" ".join(p if isinstance(p, str) else p.text() for p in chain) for chain in self.links)

    def latex(self):
        return r" \text{ and } ".join(" ".join(LATEX_REL[p] if isinstance(p, str) else p.latex() for p in chain)
                                      for chain in self.links)


def show(cond) -> str:
    """A condition in words: ``otherwise``, ``s <= t`` or a conjunction as written."""
    if cond is None:
        return "otherwise"
    if isinstance(cond, Conjunction):
        return cond.text()
    return f"{cond[0].text()} {cond[1]} {cond[2].text()}"


def read_condition(p):
    """The condition of a cases row at the parser ``p``: a triple for one comparison of indices,
    a :class:`Conjunction` for a chain, an absolute value or comparisons joined by ``\\text{and}`` or a comma."""
    start = p.peek()
    if p.at("ident", "if") or p.at_op(","):  # \text{if } j \le i; \text{for } j \le i (a joining word, read as ',')
        p.next()
    chains = [_chain(p)]
    # \text{and} (read as ',') or a comma joins a second comparison; a comma before \\ or \end is punctuation
    while p.at_op(",") and not (p.at("op", "\\\\", 1) or p.at("end", None, 1) or p.at("op", ".", 1)):
        p.next()
        chains.append(_chain(p))
    if len(chains) == 1 and len(chains[0]) == 3 and not any(isinstance(x, Abs) for x in chains[0][::2]):
        return chains[0]
    return Conjunction((start.line, start.col), tuple(chains))


def _chain(p) -> tuple:
    parts = [_term(p)]
    while True:
        r = p.peek()
        if (r.kind == "cmd" and r.value in ("<=", ">=")) or (r.kind == "op" and r.value in ("<", ">")):
            p.next()
            parts += [r.value, _term(p)]
        else:
            break
    if len(parts) == 1:
        r = p.peek()
        p.fail(f"found {r.show()} in the condition of a cases row", "a comparison of indices: \\le, \\ge, < or >, "
               "as in j \\le i, i - W \\le j \\le i or |i - j| \\le w", r)
    rels = set(parts[1::2])
    if len(parts) > 3 and not (rels <= {"<=", "<"} or rels <= {">=", ">"}):
        p.fail(f"the chain {' '.join(x if isinstance(x, str) else x.text() for x in parts)} mixes the directions "
               "of its comparisons", "a chain that runs one way, as in a \\le j \\le b", p.peek())
    return tuple(parts)


def _term(p):
    """An index term: ``|i - j|``, ``i - W``, ``\\frac{w}{2}``, ``t + 1``."""
    t = p.peek()
    if p.at_op("|"):
        p.next()
        body = _sum(p)
        p.expect_op("|", f"'|' closing the absolute value opened at line {t.line}, column {t.col}")
        return Abs((t.line, t.col), body)
    return _sum(p)


def _sum(p):
    node = _atom(p)
    while p.at_op("+", "-"):
        op = p.next()
        node = ast.Index(node.pos, node, op.value, _atom(p))
    return node


def _atom(p):
    t = p.peek()
    if p.at("cmd", "frac"):  # \frac{w}{2}: a half-width
        p.next()
        p.expect_op("{", "'{' opening the numerator of \\frac")
        num = _sum(p)
        p.expect_op("}", "'}' closing the numerator of \\frac")
        p.expect_op("{", "'{' opening the denominator of \\frac")
        den = _sum(p)
        p.expect_op("}", "'}' closing the denominator of \\frac")
        return ast.Div((t.line, t.col), num, den)
    if p.at_op("("):
        p.next()
        body = _sum(p)
        p.expect_op(")", f"')' closing the '(' at line {t.line}, column {t.col}")
        return ast.Group((t.line, t.col), body)
    if t.kind == "ident":
        node = p.name(p.next())
        if not isinstance(node, ast.Name):
            p.fail(f"{node.text()} in the condition of a cases row", "an index or a length, as in s \\le t", t)
        return node
    return p.sub_atom()


def linear(node):
    """An index term as (coefficients of its letters, constant), or None: ``i - 2`` is ({i: 1}, -2)."""
    if isinstance(node, ast.Num):
        return {}, node.value
    if isinstance(node, ast.Name) and node.sub is None and node.sup is None:
        return {node.base: 1}, 0
    if isinstance(node, ast.Group):
        return linear(node.body)
    if isinstance(node, ast.Index) and node.op in ("+", "-"):
        left, right = linear(node.left), linear(node.right)
        if left is None or right is None:
            return None
        sign = 1 if node.op == "+" else -1
        coefs = dict(left[0])
        for k, c in right[0].items():
            coefs[k] = coefs.get(k, 0) + sign * c
        return {k: c for k, c in coefs.items() if c}, left[1] + sign * right[1]
    return None


def _visible_atoms(atom, a, b):
    """The comparisons 'u <= v + c' (u, v the two index letters a, b; c an integer) that ``atom`` states,
    or None when it is not such a comparison (a letter other than a and b, a width that is not a number)."""
    left, rel, right = atom
    if rel in (">=", ">"):
        left, right, rel = right, left, {">=": "<=", ">": "<"}[rel]
    strict = 1 if rel == "<" else 0
    if isinstance(left, Abs):  # |x| <= e: x <= e and -x <= e
        x, e = linear(left.body), linear(right)
        if x is None or e is None or e[0]:
            return None
        halves = [(x[0], x[1]), ({k: -c for k, c in x[0].items()}, -x[1])]
        forms = [({k: -c for k, c in coefs.items()}, e[1] - k0) for coefs, k0 in halves]  # e - x >= 0
    else:
        if isinstance(right, Abs):
            return None
        lo, hi = linear(left), linear(right)
        if lo is None or hi is None:
            return None
        coefs = dict(hi[0])
        for k, c in lo[0].items():
            coefs[k] = coefs.get(k, 0) - c
        forms = [({k: c for k, c in coefs.items() if c}, hi[1] - lo[1])]  # right - left >= 0
    out = []
    for coefs, const in forms:  # v - u + const >= strict, i.e. u <= v + const - strict
        if set(coefs) != {a, b} or sorted(coefs.values()) != [-1, 1]:
            return None
        u = a if coefs[a] == -1 else b
        out.append((u, const - strict))
    return out


def window_mask(scope, node, cases, a, b, rows, cols):
    """The mask M_{ab} visible where every comparison of its row 0 holds (a window), as the sum of one causal
    mask per comparison: an entry of the sum is 0 exactly where every summand's is. The other row must be
    \\text{otherwise} (the complement of a window is not one comparison)."""
    zero = next(c for v, c in cases.rows if v == "0")
    other = next(c for v, c in cases.rows if v == "-inf")
    if other is not None:
        scope.fail(cases, f"the row -\\infty & {show(other)} of {node.text()}: the complement of the window "
                   f"{show(zero)} is not read as a condition", "-\\infty & \\text{otherwise}")
    masks = []
    for atom in zero.atoms:
        found = _visible_atoms(atom, a, b) or visible_atoms(scope, atom, a, b, Abs)  # |i - j| <= w/2 (window_bounds)
        if found is None:
            scope.fail(cases, f"{node.text()}: the comparison {show(atom)} of the window {show(zero)} does not compare "
                       f"the two indices {a} and {b} up to a whole number (a width W or w/2 that is not a number "
                       "is not read)", "a window of numbers, as in i - 2 \\le j \\le i or |i - j| \\le 1")
        for lead, offset in found:
            masks.append(D.CausalMask(cols, rows, offset).T if lead == b else D.CausalMask(rows, cols, offset))
    total = masks[0]
    for m in masks[1:]:
        total = total + m
    return total


def mask_entry_refusal(scope, node):
    """Refuse an entry ``M_{ij}`` of a mask defined by cases used in an expression of entries (Mistral's
    ``\\exp(q_i k_j^\\top / \\sqrt{d} + M_{ij})`` in a sum over j): a mask is read only as a summand of the
    scores of a matrix. A sum over j whose terms the mask hides is the sum over the visible positions only
    where those positions lie in the sum's range, which the entries do not say."""
    whole = ast.Name(node.pos, node.base, None, node.sup, node.font)
    _, _, cases = scope.masks[key_of(whole)]
    part = "row" if isinstance(node.sub, (ast.RowIndex, ast.Slice)) else "entry"
    scope.fail(node, f"the {part} {node.text()} of the mask {node.base} := {cases.text()}: a mask is read only as a "
               "summand of the scores of a matrix, not by its entries or rows (a sum over the positions the mask "
               "hides is not restricted to the visible ones)",
               f"the matrix form, as in \\mathrm{{softmax}}(QK^\\top / \\sqrt{{d}} + {node.base}) V")


def window_refusal(cond) -> str | None:
    """Why a mask whose hidden entries satisfy ``cond`` is not read (a conjunction: its complement, the visible
    entries, is not one window), or None."""
    if not isinstance(cond, Conjunction):
        return None
    return (f"the mask is hidden where {cond.text()}: the visible entries are where one of these comparisons "
            "fails, which is not read as a mask; write the visible entries as the row 0 (a window, as in "
            "0 & i - W \\le j \\le i) and -\\infty & \\text{otherwise}")


#: a stated sign of real scalars, ``k \\ge 0``: the SymPy assumptions it gives the symbol
SIGNS = {"> 0": {"positive": True}, ">= 0": {"nonnegative": True}, "< 0": {"negative": True},
         "<= 0": {"nonpositive": True}}
SIGN_WORDS = {"> 0": "a positive real scalar", ">= 0": "a nonnegative real scalar", "< 0": "a negative real scalar",
              "<= 0": "a nonpositive real scalar"}
#: a comparison with 0 that ends a statement (``k \\ge 0,``), read by the lexer outside a cases row
SIGN_AHEAD = re.compile(r"\s*0\s*(,|\$|\\\]|\\\)|\\quad|\\qquad|\\\\|\\end|\.(?!\d)|;|$)")


def sign_statement(p, names):
    """``k \\ge 0``, ``a, b > 0``, ``x < 0`` after the names ``names`` at the parser ``p``: the sign stated,
    or None (the tokens are left as they are)."""
    r = p.peek()
    rel = r.value if (r.kind == "cmd" and r.value in ("<=", ">=")) or (r.kind == "op" and r.value in ("<", ">")) \
        else None
    if not names or rel is None or not p.at("num", "0", 1):
        return None
    if not (p.at_op(",", 2) or p.at("math", None, 2) or p.at("eof", None, 2) or p.at("end", None, 2)
            or p.at("op", "\\\\", 2)):
        return None
    p.i += 2
    return f"{rel} 0"


def signed_symbol(name: str, sign: str | None):
    """The real scalar ``name`` of the stated sign (None: any real)."""
    if sign == "> 0":
        return sp.Symbol(name, positive=True)
    return sp.Symbol(name, real=True, **SIGNS.get(sign, {}))


def sign_text(symbol) -> str | None:
    """``k >= 0`` for a scalar declared of a sign, None for any real (what a step's scope says it assumed)."""
    for rel, facts in SIGNS.items():
        (fact,) = facts
        if symbol.assumptions0.get(fact):
            return f"{symbol.name} {rel}"
    return None


def stray_comparison(p, first):
    """Refuse a comparison after the expression ``first`` (``Q^\\top Q \\le 0``, ``a + 1 \\ge 0``): outside a
    cases row, an inequality is read only as the sign of real scalars (``k \\ge 0``)."""
    r = p.peek()
    if (r.kind == "cmd" and r.value in ("<=", ">=")) or (r.kind == "op" and r.value in ("<", ">")):
        p.fail(f"the inequality {first.text()} {r.value} ...: outside a cases row an inequality is read only as "
               "the sign of real scalars", "a sign k \\ge 0 (k > 0, k < 0, k \\le 0) of declared names, or a step "
               "written as an equality", r)
