"""The syntax tree shared by the plain-text notation and the LaTeX front end.

Both parsers build these nodes and nothing else; :mod:`.elaborate` turns them into
SymPy matrix expressions under the declarations. Every node carries ``pos``, the
(line, column) where it starts, so that later errors can point at the text.
Each node renders back to the plain notation (``text``) and to LaTeX (``latex``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

Pos = tuple  # (line, column), both from 1


@dataclass(frozen=True)
class Node:
    pos: Pos = field(compare=False)


class PowerText:
    """``text``/``latex`` of a node with ``base`` and ``exponent`` (the powers of exponents.py, index_powers.py)."""

    def text(self):
        return f"{self.base.text()}^{{{self.exponent.text()}}}"

    def latex(self):
        return f"{{{self.base.latex()}}}^{{{self.exponent.latex()}}}"


@dataclass(frozen=True)
class Num(Node):
    value: int

    def text(self):
        return str(self.value)

    def latex(self):
        return str(self.value)


@dataclass(frozen=True)
class Name(Node):
    """A name as written: base, optional subscript (a node) and superscript label.

    ``W_h^Q`` is Name("W", Name("h"), "Q"); ``d_model`` is Name("d", Name("model")).
    """

    base: str
    sub: Node | None = None
    sup: str | None = None
    font: str = field(default="", compare=False)  # mathbf, mathrm, operatorname, ... as written

    def text(self):
        out = self.base
        if self.sub is not None:
            s = self.sub.text()
            out += f"_{s}" if _simple(s) else f"_{{{s}}}"
        if self.sup is not None:
            out += f"^{self.sup}" if _simple(self.sup) else f"^{{{self.sup}}}"
        return out

    def latex(self):
        if self.font in ("mathbf", "boldsymbol", "bm", "mathrm", "operatorname", "mathit", "mathsf", "mathcal",
                         "mathbb", "text", "textrm"):
            base = rf"\{self.font}{{{self.base}}}"
        else:
            base = self.base if len(self.base) == 1 else rf"\{self.base}" if self.base in GREEK \
                else rf"\mathrm{{{self.base}}}"
        out = base
        if self.sub is not None:
            sub = self.sub.latex() if not isinstance(self.sub, Name) or len(self.sub.base) == 1 \
                else rf"\text{{{self.sub.text()}}}"
            out += f"_{{{sub}}}"
        if self.sup is not None:
            out += f"^{{{self.sup}}}"
        return out


GREEK = frozenset("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi "
                   "rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi "
                   "Psi Omega".split())


def _simple(s: str) -> bool:
    return s.isalnum()


@dataclass(frozen=True)
class Index(Node):
    """An index expression in a subscript: ``h + 1``, ``H - 1``."""

    left: Node
    op: str
    right: Node

    def text(self):
        return f"{self.left.text()}{self.op}{self.right.text()}"

    def latex(self):
        return f"{self.left.latex()}{self.op}{self.right.latex()}"


@dataclass(frozen=True)
class Arith(Node):
    """A compound subscript, ``W_{(g-1)h/G+j}``: an index computed from indices and counts."""

    body: Node

    def text(self):
        return self.body.text()

    def latex(self):
        return self.body.latex()


@dataclass(frozen=True)
class Round(Node):
    """``\\lceil iG/h \\rceil`` or ``\\lfloor ... \\rfloor`` in a subscript: a group map."""

    kind: str  # "ceil" | "floor"
    body: Node

    def text(self):
        return f"{self.kind}({self.body.text()})"

    def latex(self):
        lo, hi = (r"\lceil ", r" \rceil") if self.kind == "ceil" else (r"\lfloor ", r" \rfloor")
        return lo + self.body.latex() + hi


@dataclass(frozen=True)
class RowIndex(Node):
    """The subscript ``{t,:}``: row t (``A_{t,:}``), read only in a row-wise definition."""

    index: Node

    def text(self):
        return f"{self.index.text()},:"

    def latex(self):
        return f"{self.index.latex()},:"


@dataclass(frozen=True)
class RowOf(Node):
    """``F(X)_{t,:}``: row t of a result, the left side of a row-wise definition."""

    arg: Node
    index: Node

    def text(self):
        return f"{self.arg.text()}_{{{self.index.text()},:}}"

    def latex(self):
        return f"{self.arg.latex()}_{{{self.index.latex()},:}}"


@dataclass(frozen=True)
class Slice(Node):
    """The subscript ``{1:t}``: positions lo..hi of a sequence (rows in the row convention, columns
    in the column convention), as in the KV cache ``K_{1:t}``."""

    lo: Node
    hi: Node

    def text(self):
        return f"{self.lo.text()}:{self.hi.text()}"

    def latex(self):
        return f"{self.lo.latex()}:{self.hi.latex()}"


@dataclass(frozen=True)
class ParamIndex(Node):
    """The subscript ``{\\Theta,m}``: a label (the parameters Theta) and a position (m, n - m), as in
    Su et al.'s rotation ``R^d_{\\Theta,m}``."""

    label: Node
    index: Node

    def text(self):
        return f"{self.label.text()},{self.index.text()}"

    def latex(self):
        return f"{self.label.latex()},{self.index.latex()}"


@dataclass(frozen=True)
class Labels(Node):
    """A subscript of parts separated by commas, ``{k,E}`` or ``{t,i}``: one label of the name, so that
    ``W_{k,E}`` and ``q_{t,i}`` are names of their own (declared or defined as the paper does)."""

    parts: tuple

    def text(self):
        return ",".join(p.text() for p in self.parts)

    def latex(self):
        return ",".join(p.latex() for p in self.parts)


@dataclass(frozen=True)
class Cases(Node):
    """``\\begin{cases} 0 & s \\le t \\\\ -\\infty & s > t \\end{cases}``: rows (value, condition), the
    value "0" or "-inf", the condition (left, relation, right) of index nodes or None for "otherwise"."""

    rows: tuple

    def text(self):
        parts = []
        for value, cond in self.rows:
            c = "otherwise" if cond is None else cond.text() if hasattr(cond, "text") else \
                f"{cond[0].text()} {cond[1]} {cond[2].text()}"  # a conjunction (.conditions) or one comparison
            parts.append(f"{value if isinstance(value, str) else value.text()} if {c}")
        return "{" + "; ".join(parts) + "}"

    def latex(self):
        rel = {"<=": r"\le", ">=": r"\ge", "<": "<", ">": ">"}
        rows = []
        for value, cond in self.rows:
            v = value.latex() if not isinstance(value, str) else r"-\infty" if value == "-inf" else "0"
            c = r"\text{otherwise}" if cond is None else cond.latex() if hasattr(cond, "latex") else \
                f"{cond[0].latex()} {rel[cond[1]]} {cond[2].latex()}"
            rows.append(f"{v} & {c}")
        return r"\begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"


@dataclass(frozen=True)
class Dots(Node):
    """An ellipsis in a list or block: ``...``, ``\\cdots``, ``\\vdots``, ``\\dots``."""

    def text(self):
        return "..."

    def latex(self):
        return r"\cdots"


@dataclass(frozen=True)
class Call(Node):
    """``target(args)``: a function of the vocabulary, a declared function, or a product."""

    target: Name
    args: tuple
    axis: str | None = None  # "row" | "col" for Softmax_row / Softmax_col
    extra: tuple = ()  # names after ';' (Att(Q, K, V; omega)): the function's fixed parameters

    def text(self):
        ax = f"_{self.axis}" if self.axis else ""
        tail = "; " + ", ".join(a.text() for a in self.extra) if self.extra else ""
        return f"{self.target.text()}{ax}({', '.join(a.text() for a in self.args)}{tail})"

    def latex(self):
        name = self.target.base
        t = rf"\operatorname{{{name}}}" if len(name) > 1 and not self.target.font and name not in GREEK \
            else self.target.latex()
        if self.axis:
            t += rf"_{{\mathrm{{{self.axis}}}}}"
        tail = "; " + ", ".join(a.latex() for a in self.extra) if self.extra else ""
        return t + r"\left(" + ", ".join(a.latex() for a in self.args) + tail + r"\right)"


@dataclass(frozen=True)
class Group(Node):
    """Parentheses as written (kept so that renderings keep them)."""

    body: Node

    def text(self):
        return f"({self.body.text()})"

    def latex(self):
        return r"\left(" + self.body.latex() + r"\right)"


@dataclass(frozen=True)
class Mul(Node):
    factors: tuple

    @property
    def dots(self) -> tuple:
        """The k where ``\\cdot`` stands before factors[k] (:func:`.vectors.dot_product`): kept beside the fields,
        not among them, so that a product reads alike with ``\\cdot`` or without it wherever it is compared,
        unified or rebuilt (a rebuilt product has none, and reads as written)."""
        return self.__dict__.get("_dots", ())

    def text(self):  # "\\cdot" or juxtaposition: one claim (the typesetting-invariance property)
        return " ".join(f.text() for f in self.factors)

    def latex(self):
        return " ".join(f.latex() for f in self.factors)


@dataclass(frozen=True)
class Add(Node):
    """A sum of terms, each with its sign: ((+1, a), (-1, b))."""

    terms: tuple

    def text(self):
        out = []
        for k, (s, t) in enumerate(self.terms):
            out.append(("- " if s < 0 else "") if k == 0 else (" - " if s < 0 else " + "))
            out.append(t.text())
        return "".join(out)

    def latex(self):
        out = []
        for k, (s, t) in enumerate(self.terms):
            out.append(("-" if s < 0 else "") if k == 0 else (" - " if s < 0 else " + "))
            out.append(t.latex())
        return "".join(out)


@dataclass(frozen=True)
class Kron(Node):
    """``A \\otimes W`` (Elhage et al.): A acts on the positions, W on each position's vector."""

    left: Node
    right: Node

    def text(self):
        return f"{self.left.text()} (x) {self.right.text()}"

    def latex(self):
        return rf"{self.left.latex()} \otimes {self.right.latex()}"


@dataclass(frozen=True)
class Hadamard(Node):
    """``A \\odot B \\odot C`` (also ``\\circ``): the entrywise product of matrices of one shape."""

    factors: tuple

    def text(self):
        return " ∘ ".join(f.text() for f in self.factors)

    def latex(self):
        return r" \odot ".join(f.latex() for f in self.factors)


@dataclass(frozen=True)
class Inner(Node):
    """``\\langle a, b \\rangle``: aᵀb for columns, a bᵀ for rows, tr(AᵀB) for matrices."""

    left: Node
    right: Node

    def text(self):
        return f"<{self.left.text()}, {self.right.text()}>"

    def latex(self):
        return rf"\langle {self.left.latex()}, {self.right.latex()} \rangle"


@dataclass(frozen=True)
class Norm(Node):
    """``\\|x\\|`` (Euclidean, Frobenius for a matrix), ``\\|x\\|^2`` when ``squared``."""

    arg: Node
    squared: bool = False

    def text(self):
        return f"||{self.arg.text()}||" + ("^2" if self.squared else "")

    def latex(self):
        return rf"\left\| {self.arg.latex()} \right\|" + ("^{2}" if self.squared else "")


@dataclass(frozen=True)
class Power(Node):
    """``d^{-1/2}``, ``x^2``: a number power, num/den (den > 0)."""

    base: Node
    num: int
    den: int = 1

    def exponent(self):
        return str(self.num) if self.den == 1 else f"{self.num}/{self.den}"

    def text(self):
        return f"{self.base.text()}^{{{self.exponent()}}}"

    def latex(self):
        return f"{{{self.base.latex()}}}^{{{self.exponent()}}}"


@dataclass(frozen=True)
class Div(Node):
    num: Node
    den: Node

    def text(self):
        return f"({self.num.text()}) / ({self.den.text()})"

    def latex(self):
        return rf"\frac{{{self.num.latex()}}}{{{self.den.latex()}}}"


@dataclass(frozen=True)
class Sqrt(Node):
    arg: Node

    def text(self):
        return f"sqrt({self.arg.text()})"

    def latex(self):
        return rf"\sqrt{{{self.arg.latex()}}}"


@dataclass(frozen=True)
class T(Node):
    """The transpose ``x^T``."""

    arg: Node

    def text(self):
        return f"{_atomic_text(self.arg)}^T"

    def latex(self):
        a = self.arg.latex()
        a = a if isinstance(self.arg, (Name, Group, Call, Block)) else r"\left(" + a + r"\right)"
        return a + r"^{\mathsf{T}}"


def _atomic_text(n: Node) -> str:
    s = n.text()
    return s if isinstance(n, (Name, Group, Call, Block, Num)) else f"({s})"


@dataclass(frozen=True)
class Sum(Node):
    """``sum_{index=1}^{upper} body`` over heads."""

    index: str
    upper: Node | None  # None: \\sum_i, over the declared range of i
    body: Node
    lower: Node | None = None  # None: from 1; else \\sum_{j=0}^{n-1}, \\sum_{i=t-1}^{t} (index_ranges.py)

    def text(self):
        if self.upper is None:
            return f"sum_{self.index} {self.body.text()}"
        low = "1" if self.lower is None else self.lower.text()
        return f"sum_{{{self.index}={low}}}^{{{self.upper.text()}}} {self.body.text()}"

    def latex(self):
        if self.upper is None:
            return rf"\sum_{{{self.index}}} {self.body.latex()}"
        low = "1" if self.lower is None else self.lower.latex()
        return rf"\sum_{{{self.index}={low}}}^{{{self.upper.latex()}}} {self.body.latex()}"


@dataclass(frozen=True)
class Prod(Node):
    """``\\prod_{j=1}^{t} body``: a product over an index range (read by index_ranges.py)."""

    index: str
    upper: Node | None
    body: Node
    lower: Node | None = None  # None: from 1

    def text(self):
        low = "1" if self.lower is None else self.lower.text()
        up = "" if self.upper is None else f"^{{{self.upper.text()}}}"
        return f"prod_{{{self.index}={low}}}{up} {self.body.text()}"

    def latex(self):
        low = "1" if self.lower is None else self.lower.latex()
        up = "" if self.upper is None else f"^{{{self.upper.latex()}}}"
        return rf"\prod_{{{self.index}={low}}}{up} {self.body.latex()}"


@dataclass(frozen=True)
class RangeSum(Sum):
    """``\\sum_{s=0}^{2} body``: a sum whose lower limit is not 1 (read by index_ranges.py)."""


@dataclass(frozen=True)
class Block(Node):
    """A block matrix: rows of cells; a cell may be :class:`Dots`."""

    rows: tuple

    def text(self):
        return "[" + "; ".join(", ".join(c.text() for c in r) for r in self.rows) + "]"

    def latex(self):
        def cell(c):
            if isinstance(c, Dots):
                return r"\vdots" if len(self.rows) > 1 and all(len(r) == 1 for r in self.rows) else r"\cdots"
            return c.latex()

        body = r" \\ ".join(" & ".join(cell(c) for c in r) for r in self.rows)
        return r"\begin{bmatrix} " + body + r" \end{bmatrix}"


@dataclass(frozen=True)
class Tuple(Block):
    """``(h_1, h_2, \\cdots, h_n)``: a sequence written as a tuple; read only where it names the rows or columns of
    a declared matrix (``H = (h_1, \\cdots, h_n)``), as a block ``[h_1, \\cdots, h_n]`` would."""

    def text(self):
        return "(" + "; ".join(", ".join(c.text() for c in r) for r in self.rows) + ")"


# statements ---------------------------------------------------------------


@dataclass(frozen=True)
class Shape(Node):
    rows: Node
    cols: Node
    vector: bool = field(default=False, compare=False)  # written as a vector space, \\mathbb{R}^{n}


@dataclass(frozen=True)
class Declare(Node):
    """``names: rows x cols [for h in 1..H]`` or ``names \\in M^{rows \\times cols}``."""

    names: tuple
    shape: Shape
    index: str | None = None
    upper: Node | None = None
    positive: bool = False  # \delta > 0: a positive real scalar
    sign: str | None = None  # k \ge 0: ">= 0" (also "> 0", "< 0", "<= 0"), a real scalar of that sign


@dataclass(frozen=True)
class HeadRange(Node):
    """``h = 1, \\cdots, H``: h is the head index, H the number of heads."""

    index: str
    upper: Node


@dataclass(frozen=True)
class ScoreDecl(Node):
    """``f : M^{..} \\times M^{..} \\to M^{..}`` or ``score: f`` (an uninterpreted score); ``domain`` and
    ``codomain`` hold the declared shapes, when the declaration gives them."""

    name: str
    domain: tuple = ()
    codomain: Node | None = None


@dataclass(frozen=True)
class FeatureDecl(Node):
    """``\\phi : \\mathbb{R}^{D} \\to \\mathbb{R}^{C}``: a feature map of one vector argument, applied to
    vectors and to the rows of matrices (Katharopoulos et al.'s linear attention)."""

    name: str
    domain: Shape
    codomain: Shape


@dataclass(frozen=True)
class Setting(Node):
    """``convention: row``, ``score: scaled_dot``."""

    key: str
    value: str


@dataclass(frozen=True)
class Define(Node):
    """``target := body``; ``params`` for a function ``Name(Q, K, V) := ...``."""

    target: Name
    params: tuple
    body: Node
    shape: Shape | None = None
    extra: tuple = ()  # the fixed parameters after ';' (Att(Q, K, V; omega) := ...)


@dataclass(frozen=True)
class Assume(Node):
    """``assume lhs = rhs``: two dimensions, two matrices, or H = 1."""

    lhs: Node
    rhs: Node


@dataclass(frozen=True)
class Chain(Node):
    """``e0 rel1 e1 rel2 e2 ...`` with rel ``=`` or ``:=``; ``links`` holds (rel, pos, expr)."""

    first: Node
    links: tuple
    shape: Shape | None = None
    bind: tuple = ()  # (Name, Shape) pairs: parameters checked for every matrix of that shape


@dataclass(frozen=True)
class MapDef(Node):
    """``F : M^{..} \\times ... \\to M^{..}`` and ``(Q, K, V) \\mapsto body``: a function with its signature."""

    name: Name
    domain: tuple
    codomain: Shape
    params: tuple
    body: Node


@dataclass(frozen=True)
class Given(Node):
    """A SymPy matrix expression given directly (the Python API), used as it is."""

    value: object

    def text(self):
        import sympy as sp

        return sp.sstr(self.value)

    def latex(self):
        import sympy as sp

        return sp.latex(self.value)


def product(pos, factors, dots=()) -> Mul:
    """The product of ``factors``, with ``\\cdot`` before the factors at ``dots`` (:attr:`Mul.dots`)."""
    node = Mul(pos, tuple(factors))
    if dots:
        object.__setattr__(node, "_dots", tuple(dots))
    return node


def nodes_of(n):
    """Every node of the tree ``n`` (a node or a tuple of them), ``n`` first, the subscript of a name included."""
    stack = [n]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple):
            stack.extend(x)
        elif isinstance(x, Node):
            yield x
            stack.extend(getattr(x, f.name) for f in fields(x) if f.name != "pos")


def names_of(n):
    """Every name in the tree ``n``, those inside subscripts included (W_{i} gives W and i)."""
    return (x for x in nodes_of(n) if isinstance(x, Name))
