"""Readable printing of symattn expressions: math notation in text, LaTeX and presentation MathML.

SymPy's own ``str`` shows the engine's internals: summation indices are Dummies (``X[_j, _i]``,
``Sum(exp(...), (_k, 0, m - 1))``), products are ``*``, transposes ``.T`` and an explicit
matrix runs over several lines (``Matrix([\\n[...``). The printers here show the same expression
the way the seeds write it:

>>> import sympy as sp
>>> from symattn import dims, softmax
>>> m, n = dims("m n")
>>> X = sp.MatrixSymbol("X", m, n)
>>> k, j = sp.Dummy("k"), sp.Dummy("j")
>>> text(sp.Sum(sp.exp(X[k, j]), (k, 0, m - 1)))
'Σ_{k<m} exp(Xₖⱼ)'
>>> text(softmax(X.T, axis=1) * sp.ImmutableMatrix([[1, 2], [3, 4]]))
'softmax_row(Xᵀ)·[[1, 2], [3, 4]]'

Every Dummy gets a readable name (its own letter when free, else the next of i, j, k, l, p, ...),
distinct from every other name in the expression, so two nested sums over ``_k`` read
Σ_k ... Σ_l. :func:`latex` renders the same choices as LaTeX, :func:`mathml` as presentation
MathML (for a browser, no script needed). :func:`text` with ``limit`` shortens without leaving a
bracket open.

This module is the ground floor of the package's notation: it imports only SymPy, so that the
proof engine's verdicts and traces (and everything above them) can explain themselves with it.
"""

from __future__ import annotations

import re

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.mathml import MathMLPresentationPrinter
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.str import StrPrinter

_POOL = "klpqrsuvwabcefgij"
_SUB = dict(zip("0123456789+-=()aehijklmnoprstuvx",
                "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_SUP_DIGITS = dict(zip("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"))
_OPEN, _CLOSE = "([{⌊«", ")]}⌋»"


#: characters the readable printers write as notation (ᵀ, ·, Σ, subscripts, ...) and that separate
#: terms; a user's name holding one is shown in «» so that it never reads as notation
_NOTATION = frozenset("ᵀ⁻·ΣΠ√⌊⌋∞…⋯≤δ↦()[],;*/=<+ ") | frozenset(_SUB.values()) | frozenset(_SUP_DIGITS.values())


def shown_name(name: str) -> str:
    """A user's name as the readable printers show it: as it is, or in «» when it holds notation
    (a matrix named ``Xᵀ`` prints «Xᵀ», never like the transpose of X)."""
    return f"«{name}»" if any(c in _NOTATION for c in name) else name


def _is_internal(x) -> bool:
    """The engine's own index symbols: Dummies, and bound indices whose names start with ``_``."""
    return isinstance(x, sp.Dummy) or (isinstance(x, sp.Symbol) and x.name.startswith("_"))


def dummy_names(*exprs) -> dict:
    """A readable, distinct name for every Dummy in ``exprs`` (in order of appearance)."""
    taken = set()
    dummies = []
    for e in exprs:
        if not isinstance(e, sp.Basic):
            continue
        for node in sp.preorder_traversal(e):
            if _is_internal(node):
                if node not in dummies:
                    dummies.append(node)
            elif isinstance(node, sp.Symbol):
                taken.add(node.name)
            elif hasattr(node, "name") and isinstance(getattr(node, "name", None), str):
                taken.add(node.name)
    names = {}
    # i and j name the entry (i, j) in traces: a pooled name never takes a letter a Dummy has of its own
    own_letters = {d.name.lstrip("_").rstrip("0123456789") for d in dummies} | {"i", "j"}
    for d in dummies:
        own = d.name.lstrip("_").rstrip("0123456789")
        if len(own) == 1 and own.isalpha() and own not in taken:
            choice = own
        else:
            choice = next((c for c in _POOL if c not in taken and c not in own_letters), None)
            k = 2
            while choice is None:
                choice = next((f"{c}{k}" for c in _POOL if f"{c}{k}" not in taken), None)
                k += 1
        taken.add(choice)
        names[d] = choice
    return names


def _subscript(parts: list[str]) -> str | None:
    """Unicode subscripts for short indices (``kj`` -> ``ₖⱼ``), or None when a character has none."""
    if not all(len(p) == 1 for p in parts):
        return None
    if not all(c in _SUB for c in "".join(parts)):
        return None
    return "".join(_SUB[c] for c in "".join(parts))


class ReadablePrinter(StrPrinter):
    """Math notation in plain text: Σ, subscripts, ᵀ, ·, √, softmax_row, one-line matrices."""

    def __init__(self, names: dict | None = None, **settings):
        super().__init__(settings)
        self.names = names or {}

    def _print(self, expr, **kwargs):
        own = getattr(self, f"_print_{type(expr).__name__}", None)
        if own is not None and type(expr).__name__ in _NODES:
            return own(expr, **kwargs)
        return super()._print(expr, **kwargs)

    # scalars
    def _print_Symbol(self, expr):
        if expr in self.names:
            return self.names[expr]
        return expr.name.lstrip("_") or "i" if _is_internal(expr) else shown_name(expr.name)

    _print_Dummy = _print_Symbol

    def _print_Indexed(self, expr):
        base = self._print(expr.base)
        idx = [self._print(i) for i in expr.indices]
        sub = _subscript(idx) if len(idx) == 1 or all(len(i) == 1 for i in idx) else None
        return base + sub if sub is not None else f"{base}[{', '.join(idx)}]"

    def _print_Infinity(self, expr):
        return "∞"

    def _print_NegativeInfinity(self, expr):
        return "-∞"

    def _print_Pow(self, expr, rational=False):
        b, e = expr.args
        if e == sp.S.Half:
            return "√" + self._wrap(b)
        if e == -sp.S.Half:
            return "1/√" + self._wrap(b)
        if b == sp.E:
            return f"exp({self._print(e)})"
        base = self.parenthesize(b, PRECEDENCE["Pow"], strict=False)  # (y^b)^c is not y^(b^c)
        if e.is_Integer and e > 0:
            return base + "".join(_SUP_DIGITS[c] for c in str(e))
        if e == -1:
            return f"1/{base}"
        return f"{base}^{self.parenthesize(e, PRECEDENCE['Pow'], strict=False)}"

    def _wrap(self, b) -> str:
        s = self._print(b)
        return s if b.is_Atom or re.fullmatch(r"\w+", s) else f"({s})"

    def _print_Mul(self, expr):
        return super()._print_Mul(expr).replace("*", "·")

    def _print_floor(self, expr):
        return f"⌊{self._print(expr.args[0])}⌋"

    def _print_KroneckerDelta(self, expr):
        return f"δ({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_Sum(self, expr, op="Σ"):
        body = self.parenthesize(expr.function, PRECEDENCE["Mul"])
        for lim in reversed(expr.limits):
            i, lo, hi = (lim + (None, None))[:3] if len(lim) == 3 else (lim[0], None, None)
            idx = self._print(i)
            if lo is None:
                body = f"{op}_{idx} {body}"
            elif lo == 0 and isinstance(hi, sp.Expr) and (hi + 1).is_Atom:
                body = f"{op}_{{{idx}<{self._print(hi + 1)}}} {body}"
            else:
                body = f"{op}_{{{idx}={self._print(lo)}}}^{{{self._print(hi)}}} {body}"
        return body

    def _print_Product(self, expr):
        return self._print_Sum(expr, op="Π")

    # matrices
    def _print_MatrixSymbol(self, expr):
        return shown_name(expr.name)

    def _print_MatrixElement(self, expr):
        parent = self.parenthesize(expr.parent, PRECEDENCE["Atom"], strict=True)
        i, j = self._print(expr.i), self._print(expr.j)
        sub = _subscript([i, j])
        return parent + sub if sub is not None and len(parent) <= 2 else f"{parent}[{i}, {j}]"

    def _print_Transpose(self, expr):
        arg = expr.arg
        s = self._print(arg)
        atomic = isinstance(arg, sp.MatrixSymbol) or type(arg).__name__ == "FamilyMember" or re.fullmatch(r"\w+", s)
        call = type(arg).__name__ in ("Softmax", "BlockDiag")  # Softmax(X)ᵀ, diag(...)ᵀ: the transpose of a call
        stack = type(arg).__name__ in ("HeadStack", "HeadConcat") and s.startswith("[") and s.endswith("]")
        return f"{s}ᵀ" if atomic or call or stack else f"({s})ᵀ"

    def _print_Inverse(self, expr):
        s = self._print(expr.arg)
        return f"{s}⁻¹" if isinstance(expr.arg, sp.MatrixSymbol) else f"({s})⁻¹"

    def _print_MatMul(self, expr):
        c, mats = expr.as_coeff_mmul()
        mats = list(mats.args) if isinstance(mats, sp.MatMul) else [mats]
        num, den = sp.fraction(c)
        sign = ""
        if num.is_number and num.is_negative:
            num, sign = -num, "-"
        parts = [] if num == 1 else [self.parenthesize(num, PRECEDENCE["Mul"])]
        parts += [self.parenthesize(a, PRECEDENCE["Mul"]) for a in mats]
        out = sign + "·".join(parts)
        if den != 1:
            d = self._print(den)
            out += "/" + (d if den.is_Atom or d.startswith("√") else f"({d})")
        return out

    def _print_MatAdd(self, expr):
        terms = [self._print(a) for a in expr.args]
        out = terms[0]
        for t in terms[1:]:
            out += f" - {t[1:]}" if t.startswith("-") else f" + {t}"
        return out

    def _print_MatPow(self, expr):
        exp = self.parenthesize(expr.exp, PRECEDENCE["Pow"], strict=False)
        return f"{self.parenthesize(expr.base, PRECEDENCE['Pow'], strict=False)}^{exp}"

    def _print_ZeroMatrix(self, expr):
        return "0"

    def _print_Identity(self, expr):
        return "I"

    def _print_OneMatrix(self, expr):
        r, c = expr.shape
        if c == 1:
            return f"1_{self._print(r)}"
        if r == 1:
            return f"1_{self._print(c)}ᵀ"
        return "1"

    def _print_MatrixBase(self, expr):
        rows = ["[" + ", ".join(self._print(expr[i, j]) for j in range(expr.cols)) + "]" for i in range(expr.rows)]
        return "[" + ", ".join(rows) + "]"

    _print_ImmutableDenseMatrix = _print_MatrixBase
    _print_MutableDenseMatrix = _print_MatrixBase
    _print_ImmutableMatrix = _print_MatrixBase

    def _print_HadamardProduct(self, expr):
        return " ∘ ".join(self._bracket(a) for a in expr.args)

    def _print_MatrixSlice(self, expr):
        def part(sl, full):
            a, b, step = sl
            if a == 0 and b == full and step == 1:
                return ":"
            lo = "" if a == 0 else self._print(a)
            return f"{lo}:{self._print(b)}" + ("" if step == 1 else f":{self._print(step)}")
        parent = self.parenthesize(expr.parent, PRECEDENCE["Atom"], strict=True)
        return f"{parent}[{part(expr.rowslice, expr.parent.rows)}, {part(expr.colslice, expr.parent.cols)}]"

    def _print_BlockMatrix(self, expr):
        rows = [", ".join(self._print(b) for b in expr.blocks.row(i)) for i in range(expr.blocks.rows)]
        return "[" + "; ".join(rows) + "]"

    # symattn nodes (their own _sympystr shows the engine's form)
    def _print_Softmax(self, expr):
        name = "Softmax" if expr.axis == 0 else "softmax_row"
        return f"{name}({self._print(expr.arg)})"

    def _print_HeadSum(self, expr):
        return f"Σ_{{{self._print(expr.index)}=1}}^{{{self._print(expr.count)}}} {self._bracket(expr.body)}"

    def _print_HeadStack(self, expr):
        return self._over_heads(expr, "; ")

    def _print_HeadConcat(self, expr):
        return self._over_heads(expr, " ")

    def _over_heads(self, expr, sep: str) -> str:
        """[e_1; …; e_H] (stacked) or [e_1 ⋯ e_H] (side by side) when e_h is short, else
        [e_h; h=1..H] / [e_h  h=1..H]."""
        body = self._print(expr.body)
        if len(body) <= 12:
            first, last = self._print(expr.term(1)), self._print(expr.term(expr.count))
            dots = "…" if sep == "; " else "⋯"
            return f"[{first}{sep}{dots}{sep}{last}]"
        return f"[{body}{sep if sep == '; ' else '  '}{self._print(expr.index)}=1..{self._print(expr.count)}]"

    def _print_BlockDiag(self, expr):
        rho = _rotation_angle(expr.body)
        if rho is not None:
            angle, transposed = rho
            body = f"ρ({self._print(angle)})" + ("ᵀ" if transposed else "")
            return f"diag({body}, {self._print(expr.index)}=1..{self._print(expr.count)})"
        return f"diag({self._print(expr.body)}, {self._print(expr.index)}=1..{self._print(expr.count)})"

    def _print_FamilyMember(self, expr):
        idx = self._print(expr.index)
        return f"{shown_name(expr.family_name)}_{idx if expr.index.is_Atom else '(' + idx + ')'}"

    def _print_Visible(self, expr):
        return f"mask({self._print(expr.args[0])} ≤ {self._print(expr.args[1])})"

    def _bracket(self, e) -> str:
        s = self._print(e)
        return f"({s})" if isinstance(e, (sp.MatAdd, sp.Add)) else s


def _rotation_angle(body):
    """x when ``body`` is the rotation ρ(x) = [[cos x, -sin x], [sin x, cos x]] (or its transpose)."""
    if not isinstance(body, sp.MatrixBase) or body.shape != (2, 2) or not isinstance(body[0, 0], sp.cos):
        return None
    x = body[0, 0].args[0]
    c, s_ = sp.cos(x), sp.sin(x)
    if list(body) == [c, -s_, s_, c]:
        return x, False
    if list(body) == [c, s_, -s_, c]:
        return x, True
    return None


_NODES = {"Softmax", "HeadSum", "HeadStack", "HeadConcat", "BlockDiag", "Visible", "FamilyMember"}


def balanced_cut(s: str, limit: int | None) -> str:
    """``s`` cut to about ``limit`` characters, ending in ``…`` and closing every open bracket."""
    if limit is None or len(s) <= limit:
        return s
    cut = s[:limit]
    stack = []
    for ch in cut:
        if ch in _OPEN:
            stack.append(_CLOSE[_OPEN.index(ch)])
        elif ch in _CLOSE and stack and stack[-1] == ch:
            stack.pop()
    return cut.rstrip() + " …" + "".join(reversed(stack))


class DistinctDummyPrinter(StrPrinter):
    """SymPy's ``str`` form, except that two different Dummies never print alike: the first Dummy
    of a name prints as SymPy prints it (``_k``), the next ones with primes (``_k'``, ``_k''``), so
    ``K[_k', _k]`` shows two bound indices where ``str`` shows ``K[_k, _k]``. One printer keeps its
    names across every expression it prints (the expressions of one trace line)."""

    def __init__(self, settings=None):
        super().__init__(settings)
        self._dummies: dict = {}

    def _print_Dummy(self, expr):
        name = self._dummies.get(expr)
        if name is None:
            name = f"_{expr.name}"
            while name in self._dummies.values():
                name += "'"
            self._dummies[expr] = name
        return name


def plain(*exprs) -> list[str]:
    """``sympy.sstr`` of each expression, with distinct Dummies printed distinctly (see
    :class:`DistinctDummyPrinter`; one index keeps one name across the expressions)."""
    printer = DistinctDummyPrinter()
    return [printer.doprint(e) for e in exprs]


def text(expr, limit: int | None = None, names: dict | None = None) -> str:
    """``expr`` in readable plain-text math notation, on one line."""
    if not isinstance(expr, sp.Basic):
        return balanced_cut(str(expr), limit)
    names = dummy_names(expr) if names is None else names
    return balanced_cut(ReadablePrinter(names).doprint(expr), limit)


def dim(d) -> str:
    """A dimension as text, parenthesized when it is a sum: ``(t + 1)``, so ``(t + 1) × 1`` reads right."""
    s = text(d)
    return f"({s})" if isinstance(d, sp.Add) else s


class ReadableLatexPrinter(LatexPrinter):
    """SymPy's LaTeX with readable Dummy names and symattn's nodes in the seeds' notation."""

    def __init__(self, names: dict | None = None, **settings):
        super().__init__(settings)
        self.names = names or {}

    def _print(self, expr, **kwargs):
        own = getattr(self, f"_print_{type(expr).__name__}", None)
        if own is not None and type(expr).__name__ in _LATEX_NODES:
            return own(expr, **kwargs)
        return super()._print(expr, **kwargs)

    def _print_Symbol(self, expr, style="plain"):
        if expr in self.names:
            return self.names[expr]
        return super()._print_Symbol(expr, style=style)

    _print_Dummy = _print_Symbol

    def _print_MatrixSymbol(self, expr, style="plain"):
        return _latex_name(expr.name)

    def _print_Transpose(self, expr):
        """X^{\\top}, as the seeds write it (a matrix named X^T prints X^{T}, a different thing)."""
        out = super()._print_Transpose(expr)
        return out[: -len("^{T}")] + r"^{\top}" if out.endswith("^{T}") else out

    def _print_HeadStack(self, expr):
        i, H = self._print(expr.index), self._print(expr.count)
        return rf"\left[{self._print(expr.body)}\right]_{{{i}=1}}^{{{H}}}\ (\text{{stacked}})"

    def _print_HeadConcat(self, expr):
        i, H = self._print(expr.index), self._print(expr.count)
        return rf"\left[{self._print(expr.body)}\right]_{{{i}=1}}^{{{H}}}\ (\text{{side by side}})"

    def _print_HeadSum(self, expr):
        i, H = self._print(expr.index), self._print(expr.count)
        return rf"\sum_{{{i}=1}}^{{{H}}} {self._print(expr.body)}"

    def _print_Expectation(self, expr, exp=None):
        out = rf"\mathbb{{E}}\left[{self._print(expr.args[0])}\right]"
        return out if exp is None else rf"{out}^{{{exp}}}"

    def _print_Visible(self, expr):
        return rf"M\left[{self._print(expr.args[0])} \le {self._print(expr.args[1])}\right]"

    # the entrywise and row-wise nodes of the numeric kernels, and the masks, by their names
    def _print_Exp(self, expr):
        return rf"\exp\left({self._print(expr.args[0])}\right)"

    def _print_Exp2(self, expr):
        return rf"\exp_{{2}}\left({self._print(expr.args[0])}\right)"

    def _print_Log(self, expr):
        return rf"\log\left({self._print(expr.args[0])}\right)"

    def _named(self, expr, args=None):
        args = expr.args if args is None else args
        return rf"\operatorname{{{type(expr).__name__}}}\left({', '.join(self._print(a) for a in args)}\right)"

    _print_ShiftRows = _print_ScaleRows = _print_DivideRows = _print_RowOf = _print_PaddingMask = _named

    def _print_CausalMask(self, expr):
        return self._named(expr, expr.args[:2] if expr.offset == 0 else expr.args)

    def _print_BlockDiag(self, expr):
        i, n = self._print(expr.index), self._print(expr.count)
        return rf"\operatorname{{diag}}\left({self._print(expr.body)}\right)_{{{i}=1}}^{{{n}}}"


_LATEX_NODES = {"HeadStack", "HeadConcat", "HeadSum", "Visible", "Expectation"}


def _latex_name(name: str) -> str:
    """``W^Q_h`` -> ``W^{Q}_{h}``; ``d_k`` -> ``d_{k}``; ``q_pool`` -> ``q_{\\mathrm{pool}}``."""
    m = re.fullmatch(r"([A-Za-z]+)(?:\^(\{[^}]*\}|[^_{]+))?(?:_(.+))?", name)
    if not m:
        return rf"\mathrm{{{name}}}"
    base, sup, sub = m.groups()
    out = base if len(base) == 1 else rf"\mathrm{{{base}}}"
    if sup:
        out += "^{" + sup.strip("{}") + "}"
    if sub:
        out += "_{" + (sub if len(sub) <= 2 else rf"\mathrm{{{sub}}}") + "}"
    return out


def latex(expr, names: dict | None = None) -> str:
    """``expr`` as LaTeX (for Markdown and notebooks), with readable index names."""
    if not isinstance(expr, sp.Basic):
        return rf"\text{{{expr}}}"
    names = dummy_names(expr) if names is None else names
    try:
        return ReadableLatexPrinter(names).doprint(expr)
    except Exception:  # a node SymPy's LaTeX printer cannot lay out: its readable text, verbatim
        plain = text(expr, names=names).replace("\\", "/").replace("{", "(").replace("}", ")")
        return rf"\text{{{plain}}}"


class ReadableMathMLPrinter(MathMLPresentationPrinter):
    """Presentation MathML with readable Dummy names and symattn's nodes."""

    def __init__(self, names: dict | None = None, **settings):
        super().__init__(settings)
        self.names = names or {}

    def _print(self, expr, **kwargs):
        own = getattr(self, f"_print_{type(expr).__name__}", None)
        if own is not None and type(expr).__name__ in _MATHML_NODES:
            return own(expr, **kwargs)
        return super()._print(expr, **kwargs)

    def _el(self, tag, text=None, *children):
        x = self.dom.createElement(tag)
        if text is not None:
            x.appendChild(self.dom.createTextNode(text))
        for c in children:
            x.appendChild(c)
        return x

    def _row(self, *children):
        return self._el("mrow", None, *children)

    def _apply(self, name, *args, sub=None):
        head = self._el("mi", name)
        if sub is not None:
            head = self._el("msub", None, head, sub)
        fenced = [self._el("mo", "(")]
        for k, a in enumerate(args):
            if k:
                fenced.append(self._el("mo", ","))
            fenced.append(self._print(a))
        fenced.append(self._el("mo", ")"))
        return self._row(head, self._row(*fenced))

    def _print_Symbol(self, expr, style="plain"):
        if expr in self.names:
            return self._el("mi", self.names[expr])
        return super()._print_Symbol(expr, style=style)

    _print_Dummy = _print_Symbol

    def _print_MatrixSymbol(self, expr):
        return self._name(expr.name)

    def _print_Transpose(self, expr):
        """X with ⊤ above right (a matrix named X^T shows a T there, a different thing)."""
        sup = super()._print_Transpose(expr)
        sup.lastChild.firstChild.data = "⊤"
        return sup

    def _name(self, name: str):
        m = re.fullmatch(r"([A-Za-z]+)(?:\^(\{[^}]*\}|[^_{]+))?(?:_(.+))?", name)
        if not m:
            return self._el("mi", shown_name(name))
        base, sup, sub = m.groups()
        x = self._el("mi", base)
        if sup and sub:
            return self._el("msubsup", None, x, self._el("mi", sub), self._el("mi", sup.strip("{}")))
        if sup:
            return self._el("msup", None, x, self._el("mi", sup.strip("{}")))
        if sub:
            return self._el("msub", None, x, self._el("mi", sub))
        return x

    def _print_FamilyMember(self, expr):
        base, _, sup = expr.family_name.partition("^")
        x = self._el("mi", base)
        idx = self._print(expr.index)
        if sup:
            return self._el("msubsup", None, x, idx, self._el("mi", sup))
        return self._el("msub", None, x, idx)

    def _print_Softmax(self, expr):
        if expr.axis == 0:
            return self._apply("Softmax", expr.arg)
        return self._apply("softmax", expr.arg, sub=self._el("mi", "row"))

    def _over(self, expr, what):
        H = self._row(self._print(expr.index), self._el("mo", "="), self._el("mn", "1"))
        if what == "sum":
            op = self._el("munderover", None, self._el("mo", "∑"), H, self._print(expr.count))
            return self._row(op, self._print(expr.body))
        sep = ";" if what == "stack" else " "
        if len(text(expr.body)) <= 12:  # short terms: [e_1; …; e_H] or [e_1 ⋯ e_H]
            dots = "…" if what == "stack" else "⋯"
            return self._row(self._el("mo", "["), self._print(expr.term(1)), self._el("mo", sep),
                             self._el("mi", dots), self._el("mo", sep), self._print(expr.term(expr.count)),
                             self._el("mo", "]"))
        body = self._row(self._el("mo", "["), self._print(expr.body), self._el("mo", sep),
                         self._el("mi", "…"), self._el("mo", "]"))
        return self._el("msubsup", None, body, H, self._print(expr.count))

    def _print_HeadSum(self, expr):
        return self._over(expr, "sum")

    def _print_HeadStack(self, expr):
        return self._over(expr, "stack")

    def _print_HeadConcat(self, expr):
        return self._over(expr, "concat")

    def _print_BlockDiag(self, expr):
        return self._over(expr, "concat")

    def _generic(self, expr):
        return self._apply(type(expr).__name__, *[a for a in expr.args if isinstance(a, sp.Basic)])

    _print_CausalMask = _generic
    _print_PaddingMask = _generic
    _print_Visible = _generic
    _print_ShiftRows = _print_ScaleRows = _print_DivideRows = _print_RowOf = _generic

    def _print_Exp(self, expr):
        return self._apply("exp", expr.args[0])

    def _print_Exp2(self, expr):
        return self._apply("exp", expr.args[0], sub=self._el("mn", "2"))

    def _print_Log(self, expr):
        return self._apply("log", expr.args[0])

    def _print_FeatureMap(self, expr):
        return self._apply(str(expr.function), expr.arg)

    def _print_BlockMatrix(self, expr):
        return self._print(expr.blocks)

    def _print_Score(self, expr):
        return self._apply(str(expr.function), *expr.args[1:])

    def _print_Apply(self, expr):
        return self._apply(str(expr.function), expr.argument)

    def _print_Permutation(self, expr):
        """The permutation matrix by its name, as in text (two permutations never print alike)."""
        return self._name(expr.name)

    def _print_MatrixBase(self, expr):
        """An explicit matrix in brackets that stretch to its height (fence and stretchy said outright,
        so a browser stretches them with its math font)."""
        rot = _rotation_angle(expr)
        if rot is not None:  # ρ(x) (or ρ(x)ᵀ), as in text: the 2 × 2 rotation by its angle
            call = self._apply("ρ", rot[0])
            return self._el("msup", None, call, self._el("mo", "⊤")) if rot[1] else call
        out = super()._print_MatrixBase(expr)
        for child in (out.firstChild, out.lastChild):
            if child is not None and child.nodeName == "mo":
                child.setAttribute("fence", "true")
                child.setAttribute("stretchy", "true")
        return out

    def _print_Product(self, expr):
        """∏ with its limits under and over it (SymPy's MathML printer wrote a function named product)."""
        out = self._print(expr.function)
        if isinstance(expr.function, sp.Add):
            out = self._row(self._el("mo", "("), out, self._el("mo", ")"))
        for var, lo, hi in reversed(expr.limits):
            under = self._row(self._print(var), self._el("mo", "="), self._print(lo))
            out = self._row(self._el("munderover", None, self._el("mo", "∏"), under, self._print(hi)), out)
        return out

    def _print_KroneckerDelta(self, expr):
        """δ with its two indices below (SymPy's MathML printer wrote kroneckerdelta(i, j))."""
        a, b = expr.args[:2]
        return self._el("msub", None, self._el("mi", "δ"), self._row(self._print(a), self._el("mo", ","),
                                                                      self._print(b)))

    def _print_MatrixSlice(self, expr):
        """X[a:b, :] as in text (SymPy's MathML printer wrote it as a function named matrixslice)."""
        whole = text(expr, names=self.names)
        suffix = whole[whole.rfind("["):]
        parent = self._print(expr.parent)
        if not isinstance(expr.parent, sp.MatrixSymbol):
            parent = self._row(self._el("mo", "("), parent, self._el("mo", ")"))
        return self._row(parent, self._el("mo", "["), self._el("mtext", suffix[1:-1]), self._el("mo", "]"))


_MATHML_NODES = {"BlockMatrix", "MatrixSlice", "Exp", "Exp2", "Log", "ShiftRows", "ScaleRows", "DivideRows", "RowOf",
                 "FeatureMap", "Softmax", "HeadSum", "HeadStack", "HeadConcat", "BlockDiag", "FamilyMember",
                 "CausalMask", "PaddingMask", "Visible", "Score", "Apply", "Permutation"}


def mathml(expr, names: dict | None = None, display: bool = False) -> str:
    """``expr`` as a presentation MathML ``<math>`` element (browsers render it with no script)."""
    if not isinstance(expr, sp.Basic):
        expr = sp.Symbol(str(expr))
    names = dummy_names(expr) if names is None else names
    try:
        inner = ReadableMathMLPrinter(names).doprint(expr)
    except Exception:  # a node the MathML printer cannot lay out: show its readable text instead
        from html import escape

        inner = f"<mtext>{escape(text(expr, names=names))}</mtext>"
    block = ' display="block"' if display else ""
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML"{block}>{inner}</math>'
