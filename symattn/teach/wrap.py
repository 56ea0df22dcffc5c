"""Long formulas as MathML that wraps: an expression cut into pieces a browser may break between.

A MathML ``<math>`` element is laid out as one unbreakable box, so a long claim or trace line in
one element runs past a narrow window (the report used to clip them in scroll boxes). Here an
expression whose readable text is longer than :data:`PIECE` characters is cut at its top-level
structure, recursively: the terms of a sum (``+``/``−`` between them), the factors of a product
(``⋅`` between them), the argument of Softmax, exp or a transpose (the brackets as pieces of their
own), the body of a Σ (the operator with its limits as one piece), a fraction whose parts are long
(numerator ``/`` (denominator)), an explicit matrix too wide for a grid (its rows in one line).
Each piece is one inline ``<math>``; a ``<wbr/>`` between pieces
lets the line break there and nowhere inside a piece. Short expressions stay one element, with
their fractions and sub/superscripts typeset as usual.

:func:`wrapped` gives the HTML of one expression, :func:`equation` of ``lhs = rhs``, and
:func:`trace_html` of a proof trace line (the text of its template, its expressions as MathML).
"""

from __future__ import annotations

import functools
import string
from html import escape

import sympy as sp

from ..printing import _rotation_angle, dummy_names, mathml, text

PIECE = 24  # readable characters above which an expression is cut into pieces
WIDE_MATRIX = 60  # readable characters above which an explicit matrix is written row after row, not as a grid
LONGEST = 2000  # readable characters above which a trace line is shown as text (MathML would be too heavy)
_NS = 'xmlns="http://www.w3.org/1998/Math/MathML"'


@functools.lru_cache(maxsize=8192)
def _size(expr) -> int:
    """About how many characters ``expr`` takes in the readable text (the length of its leaves' names
    and one per operation): linear in the tree, where printing each subtree again would be quadratic."""
    if not isinstance(expr, sp.Basic):
        return len(str(expr))
    if not expr.args:
        return len(str(expr))
    return sum(_size(a) for a in expr.args) + len(expr.args)


def _long(expr, limit) -> bool:
    return isinstance(expr, sp.Basic) and _size(expr) > limit


def _inner(expr, names) -> str:
    s = mathml(expr, names)
    return s[s.index(">") + 1: s.rindex("</math>")]


def _mo(op: str, form: str = "infix") -> str:
    return f'<mo form="{form}">{escape(op)}</mo>'


def _is_negative(term) -> bool:
    if isinstance(term, sp.MatMul):
        head = term.args[0] if term.args else None
        return isinstance(head, sp.Number) and head.is_negative
    return isinstance(term, sp.Basic) and term.could_extract_minus_sign()


def _negate(term):
    if isinstance(term, sp.MatMul):
        coeff, rest = -term.args[0], term.args[1:]
        args = rest if coeff == 1 else (coeff, *rest)
        return args[0] if len(args) == 1 else sp.MatMul(*args)
    return -term


def _grouped(x, names) -> list[str]:
    """``x`` in brackets when it is a sum (a factor of a product, a Σ body), else as it is."""
    if isinstance(x, (sp.Add, sp.MatAdd)):
        return [_mo("(", "prefix"), *_pieces(x, names), _mo(")", "postfix")]
    return _pieces(x, names)


def _call(head: str, args, names) -> list[str]:
    out = [f"{head}{_mo('(', 'prefix')}"]
    for k, a in enumerate(args):
        if k:
            out.append(_mo(","))
        out += _pieces(a, names)
    return out + [_mo(")", "postfix")]


def _sum_operator(limits, names, op: str = "∑") -> str:
    parts = []
    for lim in reversed(limits):
        if len(lim) != 3:  # a sum over an index with no bounds: the operator with the index under it
            parts.append(f"<munder><mo>{op}</mo>{_inner(lim[0], names)}</munder>")
            continue
        var, lo, hi = lim
        parts.append(f"<munderover><mo>{op}</mo><mrow>{_inner(var, names)}<mo>=</mo>{_inner(lo, names)}</mrow>"
                     f"<mrow>{_inner(hi, names)}</mrow></munderover>")
    return "".join(parts)


def _pieces(expr, names) -> list[str]:
    """The MathML (inner content) of each piece of ``expr``, in reading order."""
    if not _long(expr, PIECE):
        return [_inner(expr, names)]
    kind = type(expr).__name__
    if isinstance(expr, (sp.Add, sp.MatAdd)):
        terms = expr.as_ordered_terms() if isinstance(expr, sp.Add) else list(expr.args)
        out = []
        for k, t in enumerate(terms):
            neg = _is_negative(t)
            if neg:
                t = _negate(t)
            if k or neg:
                out.append(_mo("−" if neg else "+", "infix" if k else "prefix"))
            out += _grouped(t, names) if isinstance(t, (sp.Add, sp.MatAdd)) else _pieces(t, names)
        return out
    if isinstance(expr, sp.MatMul):
        coeff, mats = expr.as_coeff_matrices()
        factors = ([] if coeff in (1, -1) else [coeff]) + list(mats)
        out = [_mo("−", "prefix")] if coeff == -1 else []
        for k, f in enumerate(factors):
            if k:
                out.append(_mo("⋅"))
            out += _grouped(f, names)
        return out
    if isinstance(expr, sp.Mul):
        num, den = sp.fraction(expr, exact=True)
        if den != 1:
            top = _grouped(num, names) if isinstance(num, sp.Add) else _pieces(num, names)
            return [*top, _mo("/"), *_grouped(den, names)]
        out = []
        for k, f in enumerate(expr.as_ordered_factors()):
            if k:
                out.append(_mo("⋅"))
            out += _grouped(f, names)
        return out
    if isinstance(expr, sp.HadamardProduct):  # the entrywise products of backward passes: P ∘ (dP − D 1ᵀ)
        out = []
        for k, f in enumerate(expr.args):
            if k:
                out.append(_mo("∘"))
            out += _grouped(f, names)
        return out
    if kind == "VJP":  # the right side of a gradient claim: vjp(E, W, G)
        return _call("<mi>vjp</mi>", list(expr.args), names)
    if kind in ("ShiftRows", "ScaleRows", "DivideRows"):
        return _call(f"<mi>{kind}</mi>", list(expr.args), names)
    if isinstance(expr, (sp.Sum, sp.Product)):
        op = "∑" if isinstance(expr, sp.Sum) else "∏"
        return [_sum_operator(expr.limits, names, op), *_grouped(expr.function, names)]
    if kind in ("HeadSum",):
        op = (f"<munderover><mo>∑</mo><mrow>{_inner(expr.index, names)}<mo>=</mo><mn>1</mn></mrow>"
              f"<mrow>{_inner(expr.count, names)}</mrow></munderover>")
        return [op, *_grouped(expr.body, names)]
    if kind in ("HeadStack", "HeadConcat", "BlockDiag"):  # [e_h; …] with h = 1..H under the closing bracket
        sep = ";" if kind == "HeadStack" else " "
        close = (f"<msubsup><mo>]</mo><mrow>{_inner(expr.index, names)}<mo>=</mo><mn>1</mn></mrow>"
                 f"<mrow>{_inner(expr.count, names)}</mrow></msubsup>")
        return [_mo("[", "prefix"), *_pieces(expr.body, names), f"<mo>{sep}</mo><mi>…</mi>{close}"]
    if kind == "Softmax":
        head = "<mi>Softmax</mi>" if expr.axis == 0 else "<msub><mi>softmax</mi><mi>row</mi></msub>"
        return _call(head, [expr.arg], names)
    if isinstance(expr, (sp.floor, sp.ceiling)):
        left, right = ("⌊", "⌋") if isinstance(expr, sp.floor) else ("⌈", "⌉")
        return [_mo(left, "prefix"), *_pieces(expr.args[0], names), _mo(right, "postfix")]
    if isinstance(expr, sp.Function) or kind in ("Exp", "Log", "Exp2"):
        name = getattr(expr.func, "__name__", kind)
        return _call(f"<mi>{escape(name)}</mi>", [a for a in expr.args if isinstance(a, sp.Basic)], names)
    if isinstance(expr, sp.MatrixBase) and _rotation_angle(expr) is not None:
        angle, transposed = _rotation_angle(expr)
        out = _call("<mi>ρ</mi>", [angle], names)
        return out[:-1] + [f"<msup>{out[-1]}<mo>⊤</mo></msup>"] if transposed else out
    if isinstance(expr, sp.MatrixBase) and _long(expr, WIDE_MATRIX):
        out = [_mo("[", "prefix")]  # too wide to typeset as a grid: its rows in one line, [a, b; c, d]
        for i in range(expr.rows):
            if i:
                out.append(_mo(";"))
            for j in range(expr.cols):
                if j:
                    out.append(_mo(","))
                out += _pieces(expr[i, j], names)
        return out + [_mo("]", "postfix")]
    if isinstance(expr, sp.MatrixSlice):
        whole = text(expr, None, names)
        suffix = escape(whole[whole.rfind("[") + 1:-1])
        return [_mo("(", "prefix"), *_pieces(expr.parent, names),
                f"{_mo(')', 'postfix')}<mo>[</mo><mtext>{suffix}</mtext><mo>]</mo>"]
    if isinstance(expr, sp.Transpose):
        return [_mo("(", "prefix"), *_pieces(expr.arg, names), f"<msup>{_mo(')', 'postfix')}<mo>⊤</mo></msup>"]
    if isinstance(expr, (sp.Pow, sp.MatPow)) and not _long(expr.args[1], PIECE):
        base, exp_ = expr.args
        if exp_ == -1 and isinstance(expr, sp.Pow):
            return ["<mn>1</mn>", _mo("/"), *_grouped(base, names)]
        return [_mo("(", "prefix"), *_pieces(base, names),
                f"<msup>{_mo(')', 'postfix')}{_inner(exp_, names)}</msup>"]
    return [_inner(expr, names)]


def _join(pieces) -> str:
    return "<wbr/>".join(f"<math {_NS}>{p}</math>" for p in pieces)


def wrapped(expr, names: dict | None = None) -> str:
    """``expr`` as HTML: one ``<math>`` when short, else pieces a line may break between."""
    names = dummy_names(expr) if names is None else names
    return f"<span class='wrapmath'>{_join(_pieces(expr, names))}</span>"


def equation(lhs, rhs, relation: str = "=") -> str:
    """``lhs = rhs`` as a block of MathML pieces that wraps (the readable index names shared)."""
    names = dummy_names(lhs, rhs)
    pieces = [*_pieces(lhs, names), _mo(relation), *_pieces(rhs, names)]
    return f"<div class='equation wrapmath'>{_join(pieces)}</div>"


def trace_html(line) -> str:
    """A proof trace line as HTML: the words of its template as text, its expressions as wrapping MathML.
    A line with no expressions is its escaped readable text; a line a worker process already showed
    (with ``html``) is that HTML."""
    shown = getattr(line, "html", None)
    if shown:  # a line as a worker process showed it (symattn.theorems.prove_all)
        return shown
    exprs = getattr(line, "exprs", None)
    template = getattr(line, "template", None)
    if not exprs or template is None:
        return escape(line.readable() if hasattr(line, "readable") else str(line))
    names = dummy_names(*exprs)
    if sum(_size(e) for e in exprs) > LONGEST:
        return escape(line.readable())
    out, k = [], 0
    try:
        for literal, field, _, _ in string.Formatter().parse(template):
            out.append(escape(literal))
            if field is not None:
                out.append(f"<span class='wrapmath'>{_join(_pieces(exprs[k], names))}</span>")
                k += 1
    except (ValueError, IndexError):  # a template that is not a plain sequence of {} slots: its readable text
        return escape(line.readable())
    return "".join(out)
