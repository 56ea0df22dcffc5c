r"""Powers by an index expression: the decay ``\gamma^{n-m}`` of a scalar, ``\bar{A}^{k-j}`` of a square matrix.

State space models and retention write the kernel of an unrolled recurrence as a power whose exponent is a
distance between positions: ``\bar{C}\bar{A}^{k-j}\bar{B}`` (Gu et al. 2022), ``\gamma^{n-m}`` (Sun et al.
2023). The exponent is index arithmetic over positions and the indices of sums, ``^{k-j}``, ``^{t-1-i}``;
a single letter on top, ``\bar{A}^{j}``, is a power when the letter is bound (the index of an enclosing sum,
or the position a recurrence is read at) and the name without it is a declared square matrix or scalar;
otherwise it stays a label, as ``W^{Q}`` is.

Where the exponent comes to a number (a sum of a given number of terms, a recurrence at a given position),
the power is that number's power: ``A^0`` is the identity and ``\gamma^0`` is 1 (the last term of the kernel);
a negative power of a scalar is its reciprocal's (``\gamma^{m-n}`` at m < n is ``1/\gamma^{n-m}``), and a negative
power of a matrix is refused, since the kernel's power counts steps between positions. A symbolic exponent
is read only inside the closed form of a recurrence, where it is the distance g = t - 1 - j between a
position t and an earlier j (so g is a natural number) plus a given m: ``X^{g+m}`` is then ``X^m W`` with W a
free value of the shape of X standing for X^g (``decay_induction.py``). A step proved for every W holds for
W = X^g; any other symbolic exponent is refused with what to write instead.

>>> from symattn.derivation.latex import parse_latex
>>> parse_latex(r"$$ y = \gamma^{n-m} A^{k-j} $$")[0].links[0][2].text()
'gamma^{n - m} A^{k - j}'
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from . import ast, closed_forms, entrywise_division
from .sequences import index_value
from .symbols import is_matrix, key_of


@dataclass(frozen=True)
class IndexPower(ast.PowerText, ast.Node):
    """``X^{k-j}``: the base to a power given by index arithmetic."""

    base: ast.Node
    exponent: ast.Node


def ahead(p) -> bool:
    """At ``^``: ``{k-j}``, ``{t-1-i}``, ``{2-j}``, index arithmetic of single letters and numbers with a sign."""
    if p.dialect != "latex" or not p.at("op", "{", 1):
        return False
    k, signs, letters = 2, 0, 0
    while k < 24:
        t = p.peek(k)
        if t.kind == "op" and t.value == "}":
            return signs > 0 and letters > 0 and k > 3
        if t.kind == "op" and t.value in "+-" and k > 2:
            signs += 1
        elif t.kind == "ident" and len(t.value) == 1:
            letters += 1
        elif t.kind != "num":
            return False
        k += 1
    return False


def power(p, node, pos):
    """The power after ``node``: a number power (:class:`~.ast.Power`) or an :class:`IndexPower`."""
    if not ahead(p):
        return ast.Power(pos, node, *p.power())
    p.next()
    p.next()
    return IndexPower(pos, node, p.arith_subscript())


def _concrete(scope, node, v, n: int):
    if not is_matrix(v):
        return v ** n  # \gamma^{m-n} at m < n: 1 / \gamma^{n-m}, where \gamma is nonzero
    if n < 0:
        scope.fail(node, f"{node.text()} at the exponent {n}: a power by an index expression counts the steps between "
                   "positions, and a negative power of a matrix is not read", "the power where the exponent is a "
                   "natural number (\\bar{A}^{k-j} for j \\le k)")
    if v.rows != v.cols:
        scope.fail(node, f"the power {node.text()} of a matrix that is not square", "a power of a square matrix")
    return sp.Identity(v.rows) if n == 0 else v if n == 1 else sp.MatPow(v, n)


def _standin(base, v, gap):
    """The free value standing for X^g, g the distance of the induction (the same symbol wherever it appears)."""
    name = f"{base.text()}^({gap})"
    return sp.MatrixSymbol(name, v.rows, v.cols) if is_matrix(v) else sp.Symbol(name, real=True)


def value(scope, node, L):
    """The value of :class:`IndexPower` ``node`` under the bindings ``L``."""
    v = scope.expr(node.base, L)
    e = index_value(scope, node.exponent, L, node, strict=False)
    if e is None:
        scope.fail(node, f"the exponent of {node.text()} is not index arithmetic", "a power such as \\gamma^{n-m}")
    e = sp.expand(e)
    if e.is_Integer:
        return _concrete(scope, node, v, int(e))
    gap = getattr(scope, "power_gap", None)
    m = sp.expand(e - gap) if gap is not None else None
    if m is not None and m.is_Integer and m >= 0:
        return _concrete(scope, node, v, int(m)) * _standin(node.base, v, gap)
    scope.fail(node, f"the power {node.text()} by the symbolic exponent {e} is not read here",
               "the step at a given position (the exponent a number), or the closed form of a recurrence, "
               "\\sum_{j=1}^{t} \\gamma^{t-j} ..., where the exponent is the distance between two positions")


def label_power(scope, node, L):
    """``\\bar{A}^{j}`` with j bound in ``L`` and ``\\bar{A}`` a declared square matrix or scalar (the name with the
    label undeclared): the power, else None (the caller reads a label)."""
    sup = node.sup
    if not (isinstance(sup, str) and len(sup) == 1 and sup.isalpha() and sup in L) or sup in scope.counts \
            or sup in scope.family_letters.values():
        return None  # W^h of head h stays a label
    base = ast.Name(node.pos, node.base, node.sub, None, node.font)
    k = key_of(base)
    if k not in scope.matrices and k not in scope.scalars:
        return None
    v = scope.expr(base, L)
    if is_matrix(v) and v.rows != v.cols:
        return None
    return value(scope, IndexPower(node.pos, base, ast.Name(node.pos, sup)), L)


class IndexPowers:
    """The scope's reading of :class:`IndexPower` nodes, of ``\\bar{A}^{j}``, of a distance as a number, and of the
    sums a step read with closed forms holds (``closed_forms.py``): a mixin of the scope."""

    def _indexpower(self, node, L):
        return value(self, node, L)

    def label_power(self, node, L):
        return label_power(self, node, L)

    def entrywise_quotient(self, node, num, den):  # \frac{a}{b} of vectors, b positive (entrywise_division)
        return entrywise_division.quotient(self, node, num, den)

    def opaque_sum(self, node, L):  # a sum of symbolically many terms, in a step read with closed forms
        return closed_forms.opaque_sum(self, node, L)

    def index_number(self, node, v):
        """A position or a sum's index bound to an integer, used as a number (``-(t-1-i) w``, RWKV's decay by
        the distance); a head index, or anything else bound, is refused as a value."""
        v = sp.sympify(v)
        if isinstance(v, sp.Expr) and not is_matrix(v) and node.base not in self.counts \
                and node.base not in self.family_letters.values() \
                and all(s.is_Symbol and s.is_integer for s in v.free_symbols) and (v.is_integer or v.free_symbols):
            return v
        self.fail(node, f"the head index {node.base} used as a value", "a matrix or a dimension")
