"""From syntax trees to SymPy matrix expressions, under the declarations of a derivation.

:class:`Scope` holds what the header declared: dimensions, matrices, head-indexed
families, the head index and head count, definitions, the score function and the
convention. :meth:`Scope.expr` elaborates an expression node; every misfit (an unknown
name, shapes that do not fit, an ellipsis whose pattern cannot be read) raises a
:class:`~symattn.errors.DerivationError` that names the line and the column.

Vocabulary (the seeds' own words):

- ``Attention(Q, K, V)``: symattn.attention with the declared score and convention
- ``Softmax(X)``, ``softmax(X)``: normalize each column (column convention) or each row
  (row convention); ``Softmax_row``, ``Softmax_col`` name the axis explicitly
- ``MultiHead(Q, K, V)``: symattn.multihead with the families W_h^Q, W_h^K, W_h^V, W_h^O
- ``head_h``: the document's definition, or else Attention(W_h^Q Q, W_h^K K, W_h^V V)
  (column) / Attention(Q W_h^Q, K W_h^K, V W_h^V) (row)
- ``Concat(e_1, ..., e_H)``: the heads side by side (row convention) or stacked (column)
- ``sum_{h=1}^{H} e_h``, blocks ``[e_1; ...; e_H]`` and ``[e_1, ..., e_H]`` over heads
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from .. import defs as D
from ..defs.shapes import same_dim
from ..errors import DerivationError, NotationShapeError, SymattnError, UnknownSymbolError
from . import ast, vectors

VOCABULARY_ARITY = {"Attention": 3, "Softmax": 1, "softmax": 1, "MultiHead": 3}
ONES = "\U0001d7cf"  # \mathbf{1}, the vector of ones
HOLE = "\u27e8k\u27e9"  # the placeholder index of an ellipsis pattern (cannot be typed)
MAX_WORK = 5_000  # syntax nodes elaborated for one expression, definitions expanded included


class KronOp:
    """``A \\otimes W`` as an operator on a matrix x whose columns are positions (column convention)
    or whose rows are (row convention): (A \\otimes W) x = W x Aᵀ, resp. A x Wᵀ, which is
    vec(W x Aᵀ) = (A \\otimes W) vec(x). ``None`` on a side is the identity (\\mathrm{Id})."""

    def __init__(self, left, right):
        self.left, self.right = left, right


def is_matrix(x) -> bool:
    return isinstance(x, (MatrixExpr, sp.MatrixBase))


def shape_text(x) -> str:
    return f"{sp.sstr(x.rows)} × {sp.sstr(x.cols)}"


def key_of(n: ast.Name) -> str:
    """The declared name of ``n``: ``d_model``, ``W^O``, ``q_pool``."""
    out = n.base
    if n.sub is not None:
        out += "_" + n.sub.text()
    if n.sup is not None:
        out += "^" + n.sup
    return out


def family_key(n: ast.Name) -> str:
    return n.base + (f"^{n.sup}" if n.sup is not None else "")


class CountSymbol(sp.Symbol):
    """A dimension named like the head index (seed 002 counts heads with h): a distinct symbol."""


def dimension_symbol(name: str) -> sp.Symbol:
    """A positive integer symbol; a dimension named ``h`` must not be the head index h."""
    if name == str(D.h):
        return CountSymbol(name, integer=True, positive=True)
    return sp.Symbol(name, integer=True, positive=True)


@dataclass(eq=False)
class Definition:
    target: ast.Name
    params: tuple
    body: ast.Node
    index: str | None
    extra: tuple = ()  # the base names of the fixed parameters after ';'
    open: bool = False  # a "where" clause: it reads the parameters of the function that uses it


class _Members:
    """The members of a head family under assumptions about them: ``W[k]`` and ``W(k)``."""

    def __init__(self, member):
        self.member = member

    def __getitem__(self, k):
        return self.member(sp.sympify(k))

    def __call__(self, k):
        return self.member(sp.sympify(k))


# Functions papers use whose meaning the reader would get wrong as an uninterpreted map of the
# argument's shape: refused, with what to write instead.
NOT_UNINTERPRETED = {
    "diag": "the product with the diagonal matrix written out, or ScaleRows in Python",
    "Diag": "the product with the diagonal matrix written out, or ScaleRows in Python",
    "tr": "the trace written as a sum, or the step about the matrices themselves",
    "Tr": "the trace written as a sum, or the step about the matrices themselves",
    "trace": "the trace written as a sum, or the step about the matrices themselves",
    "det": "the step about the matrices themselves",
    "vec": "the matrices themselves",
    "rank": "the matrices themselves",
    "argmax": "the step about the scores themselves",
    "argmin": "the step about the scores themselves",
}


class Scope:
    """The declarations of a derivation, and the elaboration of expressions under them."""

    def __init__(self):
        self.convention = "column"
        self.score = None  # None (scaled dot product) | "dot" | a ScoreFunction
        self.dims: dict[str, sp.Expr] = {}
        self.counts: dict[str, sp.Expr] = {}  # head index letter -> head count
        self.matrices: dict[str, sp.MatrixSymbol] = {}
        self.families: dict[str, D.Family] = {}
        self.defs: dict[str, Definition] = {}  # W^O := ..., Attention(Q, K, V) := ...
        self.indexed: dict[str, Definition] = {}  # head_h := ... (keyed by "head")
        self.functions: dict[str, D.ScoreFunction] = {}
        self.aliases: dict[str, str] = {}
        # family key -> [(subscript, target, text)]: assume W_i^K = W_1^K reads every W_h^K as W_1^K
        self.member_aliases: dict[str, list] = {}
        self.assumption_nodes: dict[str, object] = {}
        self.assumptions: dict[str, bool] = {}  # the text of each assumption -> used in some step
        self.assumed_by: dict[str, str] = {}  # alias key -> the text of its assumption
        self.hits: list[str] = []  # the text of an assumption, each time it is applied
        self.notes: list[str] = []
        self.work, self.nesting, self.expanding, self.top = 0, 0, [], None
        self.plain_subs: dict[str, str] = {}  # matrices named with a one-letter subscript
        self.count_nodes: dict[str, ast.Node] = {}  # head index letter -> its count as written (h, G)
        self.family_letters: dict[str, str] = {}  # family key -> the index letter of its declaration
        self.scalars: dict[str, sp.Symbol] = {}  # c \in \mathbb{R}
        self.partitions: dict[str, object] = {}  # W^O declared whole beside its blocks W^O_i
        self.dialect = "notation"  # the language of the file: "notation" or "latex"
        # a position t of a sequence (K_{1:t}, [.]_{t,:}): name -> (symbol t, the length n it runs to, slack s);
        # the length is read as t + s, with the steps checked for s >= 1 and for s = 0 (1 <= t <= n)
        self.positions: dict[str, tuple] = {}
        self.subs: dict = {}
        self.rotations: dict[str, tuple] = {}  # R^d: (label Theta, frequency function, number of pairs p)
        self.masks: dict[str, tuple] = {}  # M_{ts} = \begin{cases}...: key -> (row letter, column letter, cases)
        self.features: dict[str, tuple] = {}  # phi : R^D -> R^C: name -> (D, C)
        self.row_vectors = False  # rows Q_i of declared matrices were read as column vectors
        self.uninterpreted_maps: dict[str, tuple] = {}  # \mathrm{LN}(X) never defined: name -> argument shape
        self.uninterpreted_noted = 0
        self.rows_read = 0  # how many times such a row was read (a step's sides compare the count)

    # declarations ----------------------------------------------------------

    def fail(self, node, message, expected="", cls=DerivationError):
        line, col = node.pos if node is not None else (0, 0)
        for t, n, slack in self.positions.values():  # a length read as t + s is shown as the file writes it
            message, expected = (x.replace(sp.sstr(t + slack), sp.sstr(n)) for x in (message, expected))
        raise cls(message, line, col, expected)

    def known_names(self) -> list[str]:
        return sorted(set(self.matrices) | {k + "_h" for k in self.families} | set(self.defs) | set(self.scalars)
                      | {k + "_h" for k in self.indexed}
                      | set(self.functions) | set(self.dims) | set(self.features))

    def dim(self, node, create: bool = True):
        """Elaborate a dimension expression (``d_model``, ``H d_v``, ``2``)."""
        if isinstance(node, ast.Num):
            if node.value < 1:
                self.fail(node, f"the dimension {node.value} is not positive", "a positive integer")
            return sp.Integer(node.value)
        if isinstance(node, ast.Name):
            if node.sup is not None and not (node.sup.isalpha() and self.dialect == "latex"):  # d^M_q: a name
                self.fail(node, f"{node.text()} cannot be a dimension", "a dimension name such as d_k")
            k = self.resolve(key_of(node))
            if k not in self.dims:
                if not create:
                    self.fail(node, f"unknown dimension {k}", "a dimension used in a declared shape",
                              UnknownSymbolError)
                self.dims[k] = dimension_symbol(k)
            return self.dims[k]
        if isinstance(node, ast.Mul):
            out = sp.Integer(1)
            for f in node.factors:
                out *= self.dim(f, create)
            return out
        if isinstance(node, ast.Add):
            out = sp.Integer(0)
            for s, t in node.terms:
                out += s * self.dim(t, create)
            return out
        if isinstance(node, ast.Group):
            return self.dim(node.body, create)
        self.fail(node, f"{node.text()} is not a dimension", "a dimension such as d_k, n or H d_v")

    def head_range(self, index: str, upper, node):
        count = self.dim(upper)
        early = [k for k, letter in self.plain_subs.items() if letter == index]
        if early:
            self.fail(node, f"{', '.join(early)} was declared before the head index {index}, "
                      "as a single matrix",
                      f"the head range ({index} = 1, ..., {upper.text()}) before the declarations it indexes")
        if index in self.counts and not same_dim(self.counts[index], count):
            self.fail(node, f"the head index {index} already runs to {self.counts[index]}",
                      f"the same head count for {index}")
        self.counts[index] = count
        self.count_nodes.setdefault(index, upper)
        return count

    def declare(self, st: ast.Declare):
        if st.shape.rows is None:  # c \in \mathbb{R}: a real scalar
            for n in st.names:
                k = key_of(n)
                if k in self.scalars or k in self.matrices or k in self.dims or k in self.features:
                    self.fail(n, f"{n.text()} is declared twice", "one declaration per name")
                self.scalars[k] = sp.Symbol(k, real=True)
            return
        rows, cols = self.dim(st.shape.rows), self.dim(st.shape.cols)
        if st.shape.vector and self.convention == "row":  # x \in \mathbb{R}^{d}: under the row convention a row
            rows, cols = cols, rows
            names, d = ", ".join(n.text() for n in st.names), sp.sstr(cols)
            self.notes.append(f"{names} \u2208 R^{d}: a row of {d} entries (1 \u00d7 {d}), as the row convention "
                              "writes vectors")
        if st.index is not None:
            self.head_range(st.index, st.upper, st)
        for n in st.names:
            top = self.superscript_family(n)
            if top is not None and st.index is None:  # W_Q^h (Elhage et al.): the head index on top
                if top in self.families or top in self.matrices:
                    self.fail(n, f"{n.text()} is declared twice", "one declaration per name")
                self.families[top] = D.Family(top, rows, cols)
                continue
            letter = n.sub.base if isinstance(n.sub, ast.Name) and n.sub.sub is None else None
            if letter is not None and (letter == st.index or (st.index is None and letter in self.counts)):
                k = family_key(n)
                if k in self.families:
                    self.fail(n, f"{n.text()} is declared twice", "one declaration per name")
                self.families[k] = D.Family(k, rows, cols)
                self.family_letters[k] = letter
                if k in self.matrices:  # the whole W^O declared before its blocks W^O_h
                    self.partition(k, n, self.counts[letter])
                continue
            if st.index is not None:
                self.fail(n, f"{n.text()} has no subscript {st.index}",
                          f"a name indexed by the head index, as in W_{st.index}^Q")
            k = key_of(n)
            if k in self.matrices or k in self.partitions or k in self.scalars or k in self.features:
                self.fail(n, f"{n.text()} is declared twice", "one declaration per name")
            self.matrices[k] = sp.MatrixSymbol(k, rows, cols)
            if k in self.families:  # the blocks W^O_h declared before the whole W^O
                count = next((c for c in self.counts.values()), None)
                self.partition(k, n, count)
            if letter is not None and len(letter) == 1:
                self.plain_subs[k] = letter

    def superscript_family(self, n, L=()):
        """``W_Q^h`` with h a head index: the family key ``W_Q`` (the label below, the index on top)."""
        if (isinstance(n, ast.Name) and n.sup is not None and len(n.sup) == 1 and (n.sup in self.counts or n.sup in L)
                and isinstance(n.sub, ast.Name) and n.sub.sub is None and n.sub.base not in self.counts
                and n.sub.base not in L):
            return f"{n.base}_{n.sub.base}"
        return None

    def partition(self, k, node, count, family_shape=None):
        """Read the whole matrix ``k`` (W^O) as its head blocks W^O_h: stacked when its rows are
        count × the rows of a block, side by side when its columns are; any other shape is an error."""
        whole = self.matrices[k]
        R, C = whole.shape
        if count is None:
            self.fail(node, f"{k} is declared whole and by blocks, but the number of heads is not declared",
                      "a head range, as in h = 1, \\cdots, H")
        fam = self.families.get(k)
        options = []
        for stacked, big, other in ((True, R, C), (False, C, R)):
            part = sp.cancel(big / count)
            if not (part.free_symbols & set(sp.sympify(count).free_symbols)) and part.is_positive and (
                    part.is_Integer or not part.is_Rational):
                options.append((stacked, part, other))
        fits = []
        for stacked, part, other in options:
            r, c = (part, other) if stacked else (other, part)
            if fam is None or (same_dim(fam.rows, r) and same_dim(fam.cols, c)):
                fits.append((stacked, r, c))
        if not fits:
            blocks = f" of blocks {shape_text(fam)}" if fam is not None else ""
            self.fail(node, f"{k} ({shape_text(whole)}) is not {sp.sstr(count)} blocks{blocks} stacked or side "
                      "by side", f"a whole {k} whose rows or columns are {sp.sstr(count)} times a block's",
                      NotationShapeError)
        stacked, r, c = fits[0]
        if fam is None:
            self.families[k] = fam = D.Family(k, r, c)
        del self.matrices[k]
        self.partitions[k] = (D.head_stack if stacked else D.head_concat)(fam[D.h], count)
        b, sup = k.split("^") if "^" in k else (k, "")
        sup = f"^{sup}" if sup else ""
        how = "stacked" if stacked else "side by side"
        self.notes.append(f"{k} ({sp.sstr(R)} × {sp.sstr(C)}) is read as its {sp.sstr(count)} blocks "
                          f"{b}_1{sup}, ..., {b}_{sp.sstr(count)}{sup} ({shape_text(fam)}) {how}")

    def name_vectors(self, st, rhs) -> bool:
        """``X = [x_1, x_2, \\dots, x_N]`` with X declared (N × D) and x undeclared: the x_i are the N rows
        of X (or its columns, when X is D × N); X is read as the x_i stacked (or side by side)."""
        X = key_of(st.first) if isinstance(st.first, ast.Name) else None
        cells = ([c for r in rhs.rows for c in r] if isinstance(rhs, ast.Block) and
                 (len(rhs.rows) == 1 or all(len(r) == 1 for r in rhs.rows)) else [])
        if X not in self.matrices or len(cells) < 3 or not any(isinstance(c, ast.Dots) for c in cells):
            return False
        names = [c for c in cells if not isinstance(c, ast.Dots)]
        if not all(isinstance(c, ast.Name) and c.sup is None and c.sub is not None and c.base == names[0].base
                   for c in names) or not isinstance(names[0].sub, ast.Num) or names[0].sub.value != 1:
            return False
        last = names[-1].sub
        if not (isinstance(last, ast.Name) and last.sub is None and self.resolve(last.base) in self.dims):
            return False
        b = names[0].base
        if b in self.families or b in self.matrices or self.is_undefined_name(ast.Name(st.pos, b)) is False:
            return False
        whole, count = self.matrices[X], self.dims[self.resolve(last.base)]
        if same_dim(whole.rows, count):
            fam, rows = D.Family(b, 1, whole.cols), True
        elif same_dim(whole.cols, count):
            fam, rows = D.Family(b, whole.rows, 1), False
        else:
            self.fail(rhs, f"{X} is {shape_text(whole)}: it has no {last.base} rows or columns to name "
                      f"{names[0].text()}, ..., {names[-1].text()}", f"a matrix with {last.base} rows or columns",
                      NotationShapeError)
        self.families[b] = fam
        del self.matrices[X]
        self.partitions[X] = (D.head_stack if rows else D.head_concat)(fam[D.h], count)
        what = "rows" if rows else "columns"
        self.notes.append(f"{X} = [{names[0].text()}, ..., {names[-1].text()}]: {b}_i is {what[:-1]} i of {X} "
                          f"({shape_text(fam)}), and {X} is read as its {what}")
        return True

    def partition_uses(self, nodes):
        """Names W^O_i used beside a whole W^O declared without blocks: a block partition; and so is
        a whole W^O where MultiHead or head_i needs the blocks of the output projection."""
        nodes = list(nodes)
        counts = {sp.sstr(c): c for c in self.counts.values()}
        needs = any((isinstance(n, ast.Call) and n.target.base == "MultiHead")
                    or (isinstance(n, ast.Name) and n.base == "head" and n.sub is not None) for n in nodes)
        for k in [k for k in self.matrices if needs and k.endswith("^O") and "_" not in k]:
            if k not in self.families and not any(f.endswith("^O") for f in self.families) and len(counts) == 1:
                self.partition(k, nodes[0], next(iter(counts.values())))
        for n in nodes:
            if not isinstance(n, ast.Name) or n.sub is None:
                continue
            whole = family_key(n)
            if whole in self.families or whole not in self.matrices or key_of(n) in self.matrices:
                continue
            sub = n.sub
            if isinstance(sub, ast.Name) and sub.sub is None and sub.base in self.counts:
                self.partition(whole, n, self.counts[sub.base])
            elif isinstance(sub, ast.Num) and len({sp.sstr(c) for c in self.counts.values()}) == 1:
                self.partition(whole, n, next(iter(self.counts.values())))

    def define(self, st: ast.Define):
        t = st.target
        index = None
        if isinstance(t.sub, ast.Name) and t.sub.sub is None and t.sub.base in self.counts:
            index = t.sub.base
            k = family_key(t)
            taken = k in self.families or k in self.indexed
        else:
            k = key_of(t)
            if t.base in VOCABULARY_ARITY and st.params:  # Attention(X): the document's own function
                k = f"{t.base}/{len(st.params)}"
            taken = k in self.matrices or k in self.defs or k in self.dims or k in self.scalars
        if taken:
            self.fail(t, f"{t.text()} is already declared or defined", "a new name")
        for p in st.params:
            if p.sub is not None or p.sup is not None:
                self.fail(p, f"the parameter {p.text()} must be a plain name", "a name such as Q")
        d = Definition(t, st.params, st.body, index, tuple(e.base for e in st.extra))
        d.open = not st.params and self.is_where_clause(st.body)
        if not st.params and not d.open:  # check the body now: its errors point into the definition
            value = self.expr(st.body, {index: D.h} if index else {})
            if st.shape is not None:  # the annotation ∈ M^{r × c}
                self.check_shape(st, value, st.shape)
        (self.indexed if index else self.defs)[k] = d

    def define_rotation(self, st):
        """``R^d_{\\Theta,m} = \\begin{pmatrix} \\cos{m\\theta_1} & -\\sin{m\\theta_1} & \\cdots & 0 & 0 \\\\ ...
        \\end{pmatrix}`` (Su et al. 2021, eq. (15)): the block-diagonal rotation diag(rho(m theta_1), ...,
        rho(m theta_{d/2})), the library's rope(m) with arbitrary frequencies theta_i, and d read as 2p. Only
        that layout is read; any other cell is refused by name."""
        t, block = st.first, st.links[0][2]
        sub = t.sub
        usage = ("the rotation as Su et al. typeset it: rows cos(m theta_1), -sin(m theta_1), \\cdots, 0, 0 / "
                 "sin(m theta_1), cos(m theta_1), \\cdots, 0, 0 / \\vdots ... \\ddots ... / 0, 0, \\cdots, "
                 "cos(m theta_{d/2}), -sin(m theta_{d/2}) / 0, 0, \\cdots, sin(m theta_{d/2}), cos(m theta_{d/2})")
        m = sub.index
        if not (isinstance(m, ast.Name) and m.sub is None and len(m.base) == 1):
            self.fail(t, f"{t.text()} is not a rotation at a position letter m", usage)
        rows = block.rows
        if len(rows) != 5 or any(len(r) != 5 for r in rows):
            self.fail(block, f"the matrix of {t.text()} is not 5 × 5 cells with dots", usage)

        def cell(c):
            """("0",), ("dots",), or (sign, cos|sin, theta base, subscript node)."""
            sign = 1
            if isinstance(c, ast.Add) and len(c.terms) == 1:
                sign, c = c.terms[0]
            if isinstance(c, ast.Num) and c.value == 0 and sign == 1:
                return ("0",)
            if isinstance(c, ast.Dots) and sign == 1:
                return ("dots",)
            if isinstance(c, ast.Call) and c.target.base in ("cos", "sin") and len(c.args) == 1:
                a = c.args[0]
                a = a.body if isinstance(a, ast.Group) else a
                fs = list(a.factors) if isinstance(a, ast.Mul) else []
                if len(fs) == 2 and fs[0] == ast.Name(fs[0].pos, m.base) and isinstance(fs[1], ast.Name) \
                        and fs[1].sub is not None and fs[1].sup is None:
                    return (sign, c.target.base, fs[1].base, fs[1].sub)
            return None

        cells = [[cell(c) for c in r] for r in rows]
        first, last = None, None
        for k, r in enumerate(cells):
            for j, c in enumerate(r):
                if c is None:
                    self.fail(rows[k][j], f"the cell {rows[k][j].text()} of {t.text()} is not an entry of a rotation "
                              f"at {m.base}", usage)
        shape = [[(1, "cos"), (-1, "sin"), "dots", "0", "0"], [(1, "sin"), (1, "cos"), "dots", "0", "0"],
                 ["dots"] * 5, ["0", "0", "dots", (1, "cos"), (-1, "sin")], ["0", "0", "dots", (1, "sin"), (1, "cos")]]
        for k in range(5):
            for j in range(5):
                want, got = shape[k][j], cells[k][j]
                ok = got == (want,) if isinstance(want, str) else got[:2] == want
                if not ok:
                    self.fail(rows[k][j], f"the cell {rows[k][j].text()} (row {k + 1}, column {j + 1}) of {t.text()} "
                              "is not the one of a rotation diag(rho(m theta_1), ..., rho(m theta_{d/2}))", usage)
                if not isinstance(want, str):
                    key = (got[2], got[3])
                    if k < 2:
                        first = first or key
                        if key != first:
                            self.fail(rows[k][j], f"the angle of {rows[k][j].text()} differs from the first block's",
                                      usage)
                    else:
                        last = last or key
                        if key != last:
                            self.fail(rows[k][j], f"the angle of {rows[k][j].text()} differs from the last block's",
                                      usage)
        theta, one = first
        if last[0] != theta or not (isinstance(one, ast.Num) and one.value == 1):
            self.fail(block, f"the first block of {t.text()} is not at {theta}_1", usage)
        end = last[1]
        d = None
        if isinstance(end, ast.Arith) and isinstance(end.body, ast.Div) and isinstance(end.body.den, ast.Num) \
                and end.body.den.value == 2 and isinstance(end.body.num, ast.Name):
            d = self.resolve(key_of(end.body.num))
        if d not in self.dims or (t.sup is not None and self.resolve(t.sup) != d):
            self.fail(block, f"the last block of {t.text()} is not at {theta}_{{d/2}} with d its declared dimension",
                      usage)
        whole = ast.Name(t.pos, t.base, None, t.sup, t.font)
        if key_of(whole) in self.rotations or not self.is_undefined_name(whole):
            self.fail(t, f"{whole.text()} is already declared or defined", "a new name for the rotation")
        dim = self.dims[d]
        if dim in self.subs:
            p = self.subs[dim] / 2
        else:
            p = sp.Dummy(f"{d}/2", integer=True, positive=True)
            self.subs[dim] = 2 * p
        self.rotations[key_of(whole)] = (sub.label.text(), sp.Function(theta), p)
        self.notes.append(f"{t.text()} is the rotation diag(rho({m.base} {theta}_1), ..., "
                          f"rho({m.base} {theta}_{d}/2)), the library's rope({m.base}), with frequencies "
                          f"{theta}_i that the file does not fix (any values), and {d} = 2 · ({d}/2) even")

    def rotation_at(self, node, L):
        """``R^d_{\\Theta,n-m}``: the rotation defined by cases of a pmatrix, at the position written."""
        label, theta, p = self.rotations[key_of(ast.Name(node.pos, node.base, None, node.sup, node.font))]
        if node.sub.label.text() != label:
            self.fail(node, f"{node.text()} has the label {node.sub.label.text()}, defined with {label}",
                      f"{node.base}_{{{label},m}}")

        def value(n):
            if isinstance(n, ast.Num):
                return sp.Integer(n.value)
            if isinstance(n, ast.Index):
                a, b = value(n.left), value(n.right)
                return a + b if n.op == "+" else a - b
            if isinstance(n, ast.Name) and n.sub is None and n.sup is None and len(n.base) == 1:
                return sp.Symbol(n.base, integer=True)  # a position: any integer
            self.fail(n, f"{n.text()} is not a position", "a letter, a number, or sums and differences of them")

        return D.rope(value(node.sub.index), p, theta)

    def define_mask(self, st):
        """``M_{ts} = \\begin{cases} ... \\end{cases}``: the mask M, entry (t, s) by cases; read where it is used."""
        t = st.first
        sub = t.sub
        letters = sub.base if isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None else ""
        if len(letters) != 2 or letters[0] == letters[1]:
            self.fail(t, f"{t.text()} is not an entry M_{{ts}} with two index letters", "M_{ts} = \\begin{cases} ...")
        whole = ast.Name(t.pos, t.base, None, t.sup, t.font)
        if not self.is_undefined_name(whole) or key_of(whole) in self.masks:
            self.fail(t, f"{whole.text()} is already declared or defined", "a new name for the mask")
        self.masks[key_of(whole)] = (letters[0], letters[1], st.links[0][2])

    def is_where_clause(self, body) -> bool:
        """True when ``body`` uses a parameter of a function defined before, undeclared on its own
        (O_j = Att(QW_j^Q, ...) after Multihead(Q, K, V) = ...): it is read where the function is used."""
        params = {p.base for d in self.defs.values() for p in d.params}
        stack = [body]
        while stack:
            n = stack.pop()
            if isinstance(n, tuple):
                stack.extend(n)
            elif isinstance(n, ast.Name):
                if n.sub is None and n.sup is None and n.base in params and n.base not in self.matrices \
                        and n.base not in self.partitions:
                    return True
            elif isinstance(n, ast.Node):
                stack.extend(getattr(n, f.name) for f in fields(n) if f.name != "pos")
        return False

    def match_extra(self, node, d):
        """The names after ';' in a call must be the definition's own (omega_j is read as omega)."""
        got = tuple(e.base for e in node.extra)
        if got != d.extra:
            self.fail(node, f"{node.target.text()} is defined with the parameters ({'; ' + ', '.join(d.extra)}) "
                      f"after ';', and called with ({'; ' + ', '.join(got)})",
                      f"the same names after ';' as in the definition of {d.target.text()}")
        for e in node.extra:
            if e.sub is not None or e.sup is not None:  # a reading the paper implies: named in the scope
                note = f"{e.text()} is read as {e.base}: every head has the same {e.base}"
                if note not in self.notes:
                    self.notes.append(note)
                text = f"{e.text()} = {e.base}"
                self.assumptions[text] = True
                self.hits.append(text)

    def check_shape(self, node, value, shape: ast.Shape):
        rows, cols = self.dim(shape.rows), self.dim(shape.cols)
        if not is_matrix(value):
            self.fail(node, "a scalar where a matrix was declared", f"a {rows} × {cols} matrix")
        if not (same_dim(value.rows, rows) and same_dim(value.cols, cols)):
            self.fail(shape, f"the expression is {shape_text(value)}, but the annotation says "
                      f"{sp.sstr(rows)} × {sp.sstr(cols)}", f"M^{{{shape_text(value)}}}", NotationShapeError)

    def is_undefined_name(self, n) -> bool:
        """True for a name that nothing declares or defines (``head_i = ...`` then defines it), or
        for a new function of plain names (``MQA(Q, K, V) = ...``, the one-argument ``Attention(X)``)."""
        if isinstance(n, ast.Call):
            if n.axis is not None or not n.args or not all(
                    isinstance(a, ast.Name) and a.sub is None and a.sup is None for a in n.args):
                return False
            t = n.target
            if t.base in VOCABULARY_ARITY:
                return t.sub is None and len(n.args) != VOCABULARY_ARITY[t.base] and (
                    f"{t.base}/{len(n.args)}" not in self.defs)
            return t.sub is None and self.is_undefined_name(t) and t.base not in ("exp", "log")
        if not isinstance(n, ast.Name):
            return False
        if n.base in VOCABULARY_ARITY or n.base in ("exp", "log", ONES):
            return False
        if n.sub is not None and self.is_declared_matrix(ast.Name(n.pos, n.base, None, n.sup, n.font)):
            return False  # Q_i, Q_{t,:}, K_{1:t} of a declared matrix: a part of it, which a claim is about
        k = key_of(n)
        return not (k in self.matrices or k in self.dims or k in self.defs or k in self.functions or k in self.features
                    or k in self.scalars or k in self.partitions or k in self.aliases
                    or family_key(n) in self.families or family_key(n) in self.indexed)

    def is_declared_matrix(self, n) -> bool:
        """True when the plain name ``n`` (no subscript) is a matrix the file declares, whole or by blocks."""
        k = self.aliases.get(key_of(n), key_of(n))
        return k in self.matrices or k in self.partitions

    # expressions -----------------------------------------------------------

    def expr(self, node, locals_=None):
        """Elaborate ``node``; ``locals_`` binds head indices and function parameters."""
        locals_ = locals_ or {}
        if self.nesting == 0:
            self.work, self.top = 0, node
        self.nesting += 1
        try:
            out = self._expr(node, locals_)
            if self.subs and self.nesting == 1 and isinstance(out, sp.Basic):
                out = out.xreplace(self.subs)
            if isinstance(out, KronOp) and self.nesting == 1:
                self.fail(node, f"{node.text()} is a Kronecker product that acts on nothing",
                          "(A \\otimes W) \\cdot x, with x the matrix it acts on")
            return out
        except DerivationError:
            raise
        except SymattnError as exc:  # a misfit found by the definitions themselves
            cls = NotationShapeError if isinstance(exc, D.shapes.ShapeError) else DerivationError
            self.fail(node, self.speak(str(exc)), "", cls)
        finally:
            self.nesting -= 1

    def speak(self, message: str) -> str:
        """A message of the Python library in the file's language: no ``symattn.dims(...)`` advice
        in a derivation file, but the declaration that file would use."""
        m = re.search(r"declare (.+?) with symattn\.dims\(\.\.\.\) \(positive integer symbols\)", message)
        if not m:
            return message
        names = m.group(1)
        if self.dialect == "latex":
            advice = (f"declare {names} as a dimension in a shape of the file (as in "
                      f"\\mathbb{{R}}^{{{names} \\times d}}), or use a declared dimension")
        else:
            advice = f"declare {names} as a dimension in a shape (as in X: {names} x d), or use a declared dimension"
        return message[:m.start()] + advice + message[m.end():]

    def expand(self, node, d: Definition, locals_):
        """The body of definition ``d`` (refusing a definition that refers to itself)."""
        if d in self.expanding:
            self.fail(node, f"the definition of {d.target.text()} refers to itself", "a definition in "
                      "terms of names declared or defined before it")
        self.expanding.append(d)
        try:
            return self.expr(d.body, locals_)
        finally:
            self.expanding.pop()

    def _expr(self, node, L):
        self.work += 1
        if self.work > MAX_WORK:
            self.fail(self.top, f"the expression grows beyond {MAX_WORK} terms once definitions are expanded",
                      "a smaller expression (are definitions nested too deeply?)")
        meth = getattr(self, "_" + type(node).__name__.lower(), None)
        if meth is None:
            self.fail(node, f"{node.text()} cannot stand here", "an expression")
        return meth(node, L)

    def _given(self, node, L):
        return node.value

    def _num(self, node, L):
        return sp.Integer(node.value)

    def _group(self, node, L):
        return self._expr(node.body, L)

    def _sqrt(self, node, L):
        v = self._expr(node.arg, L)
        if is_matrix(v):
            self.fail(node, "the square root of a matrix", "a scalar such as sqrt(d_k)")
        return sp.sqrt(v)

    def _div(self, node, L):
        num, den = self._expr(node.num, L), self._expr(node.den, L)
        if is_matrix(den) and is_matrix(num) and den.rows == 1 and den.cols == 1:  # a 1 × 1 matrix: a scalar
            vectors.division_note(self, node.den)
            return vectors.divide(num, den)
        if is_matrix(den):
            self.fail(node.den, f"division by the matrix {node.den.text()}",
                      "a scalar divisor such as sqrt(d_k)")
        if den.is_zero is not False:
            self.fail(node.den, f"division by {node.den.text()}, which is not known to be nonzero",
                      "a nonzero divisor such as sqrt(d_k)")
        return num / den if not is_matrix(num) else num * (1 / den)

    def _t(self, node, L):
        v = self._expr(node.arg, L)
        if not is_matrix(v):
            self.fail(node, f"the transpose of the scalar {node.arg.text()}", "a matrix")
        return v.T

    def _add(self, node, L):
        out, first = None, None
        plain = [t for _, t in node.terms if not (isinstance(t, ast.Name) and key_of(t) in self.masks)]
        shape = None
        for sign, t in node.terms:
            if isinstance(t, ast.Name) and key_of(t) in self.masks:  # a mask takes the shape of the scores
                if shape is None:
                    other = self._expr(plain[0], L) if plain else None
                    if not is_matrix(other):
                        self.fail(t, f"the mask {t.text()} beside no matrix", "scores + mask")
                    shape = other.shape
                v = self.mask(t, *shape)
            else:
                v = self._expr(t, L)
            v = v if sign > 0 else -v
            if out is None:
                out, first = v, t
                continue
            if is_matrix(out) != is_matrix(v):
                self.fail(t, f"cannot add a {'matrix' if is_matrix(v) else 'scalar'} to a "
                          f"{'matrix' if is_matrix(out) else 'scalar'}", "terms of the same kind")
            if is_matrix(v) and not (same_dim(out.rows, v.rows) and same_dim(out.cols, v.cols)):
                self.fail(t, f"cannot add {t.text()} ({shape_text(v)}) to {first.text()} ({shape_text(out)})",
                          "terms of the same shape", NotationShapeError)
            out = out + v
        return out

    def _hadamard(self, node, L):
        out, first = None, None
        for f in node.factors:
            v = self._expr(f, L)
            if not is_matrix(v):
                self.fail(f, f"{f.text()} in an entrywise product (\\odot) is a scalar", "matrices of one shape; "
                          "a scalar multiplies as c A")
            if out is not None and not (same_dim(out.rows, v.rows) and same_dim(out.cols, v.cols)):
                self.fail(f, f"cannot multiply {first.text()} ({shape_text(out)}) entrywise by {f.text()} "
                          f"({shape_text(v)})", "factors of the same shape", NotationShapeError)
            out, first = (v, f) if out is None else (sp.HadamardProduct(out, v), first)
        return out

    def _power(self, node, L):
        v = self._expr(node.base, L)
        if not is_matrix(v):
            return sp.Pow(v, sp.Rational(node.num, node.den))
        if node.den != 1 or node.num < 1:
            self.fail(node, f"the power ^{{{node.exponent()}}} of the matrix {node.base.text()}",
                      "a positive whole power of a square matrix (A^2 = A A); inverses and roots of matrices are "
                      "not part of the notation")
        out = v
        for _ in range(node.num - 1):
            out = self.multiply(out, node.base, v, node.base)
        return out

    def _inner(self, node, L):
        a, b = self._expr(node.left, L), self._expr(node.right, L)
        for n, v in ((node.left, a), (node.right, b)):
            if not is_matrix(v):
                self.fail(n, f"{n.text()} in an inner product is a scalar", "two vectors of one shape")
        if not (same_dim(a.rows, b.rows) and same_dim(a.cols, b.cols)):
            self.fail(node.right, f"the inner product of {node.left.text()} ({shape_text(a)}) and "
                      f"{node.right.text()} ({shape_text(b)})", "two vectors of one shape", NotationShapeError)
        if a.cols == 1:
            return a.T * b  # columns: a^T b (1 × 1)
        if a.rows == 1:
            return a * b.T  # rows: a b^T (1 × 1)
        return sp.Trace(a.T * b)  # matrices: the Frobenius inner product

    def _norm(self, node, L):
        v = self._expr(node.arg, L)
        if not is_matrix(v):
            self.fail(node.arg, f"the norm of the scalar {node.arg.text()}", "a vector or a matrix")
        square = self._inner(ast.Inner(node.pos, node.arg, node.arg), L)
        if node.squared:
            return square
        return sp.sqrt(square[0, 0] if getattr(square, "shape", None) == (1, 1) else square)

    def _mul(self, node, L):
        acc, left = None, None
        for f in node.factors:
            v = self._expr(f, L)
            acc, left = self.multiply(acc, left, v, f), f if left is None else ast.Mul(left.pos, (left, f))
        return acc

    def multiply(self, acc, left, v, f):
        if acc is None:
            return v
        if isinstance(acc, KronOp) or isinstance(v, KronOp):
            return self.kron_multiply(acc, left, v, f)
        if is_matrix(acc) and is_matrix(v):
            if not same_dim(acc.cols, v.rows) and vectors.scalar_product(acc, v) is not None:
                return vectors.scalar_product(acc, v, self, (left, f))  # a 1 × 1 matrix (x^T y) is a scalar
            if not same_dim(acc.cols, v.rows):
                self.fail(f, f"cannot multiply {_short(left)} ({shape_text(acc)}) by {_short(f)} "
                          f"({shape_text(v)}): the inner dimensions {sp.sstr(acc.cols)} and "
                          f"{sp.sstr(v.rows)} are not known to be equal",
                          "factors whose inner dimensions agree (a transpose missing?)", NotationShapeError)
            return acc * v
        return acc * v

    def kron_multiply(self, acc, left, v, f):
        """(A ⊗ W)(B ⊗ U) = AB ⊗ WU (the mixed product); (A ⊗ W) x = W x Aᵀ (column) or A x Wᵀ (row)."""
        def mul(a, b, at):
            if a is None or b is None:
                return b if a is None else a
            return self.multiply(a, at, b, f)

        if isinstance(acc, KronOp) and isinstance(v, KronOp):
            return KronOp(mul(acc.left, v.left, left), mul(acc.right, v.right, left))
        if isinstance(v, KronOp):
            self.fail(f, f"{_short(f)} stands after {_short(left)}: a Kronecker product acts on the matrix to its "
                      "right", "(A \\otimes W) \\cdot x")
        if not is_matrix(v):
            self.fail(f, f"{_short(left)} acts on a scalar", "(A \\otimes W) \\cdot x with x a matrix")
        pos, vec = acc.left, acc.right
        if self.convention == "column":
            out = v if vec is None else self.multiply(vec, left, v, f)
            return out if pos is None else self.multiply(out, f, pos.T, f)
        out = v if pos is None else self.multiply(pos, left, v, f)
        return out if vec is None else self.multiply(out, f, vec.T, f)

    def _kron(self, node, L):
        sides = []
        for n in (node.left, node.right):
            if isinstance(n, ast.Name) and n.base == "Id" and n.sub is None and n.sup is None \
                    and "Id" not in self.matrices:
                sides.append(None)
                continue
            v = self._expr(n, L)
            if not is_matrix(v):
                self.fail(n, f"{n.text()} in a Kronecker product is a scalar", "matrices, or \\mathrm{Id}")
            sides.append(v)
        return KronOp(*sides)

    def _sum(self, node, L):
        up = node.upper
        rows = self.sums_rows(node)
        if rows is not None and not (isinstance(up, ast.Name) and up.sub is None and up.sup is None
                                     and up.base not in L and self.resolve(up.base) in self.dims):
            self.rows_sum_range(node, rows)
        if up is None and rows is not None:  # \sum_j K_j: over every row of K
            count = rows
            note = f"\\sum_{node.index} over the rows {node.index} = 1, ..., {sp.sstr(rows)}"
            if note not in self.notes:
                self.notes.append(note)
        elif up is None:  # \sum_i over the declared range of i
            if node.index not in self.counts:
                self.fail(node, f"the sum over {node.index} has no range, and {node.index} has none declared",
                          f"\\sum_{{{node.index}=1}}^{{H}}, or a range {node.index} = 1, \\dots, H", UnknownSymbolError)
            count = self.counts[node.index]
        elif (isinstance(up, ast.Name) and up.sub is None and up.sup is None and up.base not in L
                and up.base not in self.counts and self.resolve(up.base) in self.dims):
            count = self.dims[self.resolve(up.base)]  # a sum over positions 1..N (a dimension)
        elif isinstance(up, ast.Name) and up.base not in L and up.base not in self.counts:
            self.fail(node, f"the sum over {node.index} runs to {up.text()}, which is neither a number of heads "
                      "nor a declared dimension",
                      f"a head range {node.index} = 1, \\dots, {up.text()}, or {up.text()} in a declared shape",
                      UnknownSymbolError)
        else:
            count = self.index_value(node.upper, L)

        def summand(k):  # k: a fresh placeholder (or each head, for a concrete count); bound without capture
            body = self._expr(node.body, {**L, node.index: k, (node.index, "count"): count})
            if not is_matrix(body):
                self.fail(node.body, "the summand is a scalar", "a matrix summand")
            return body

        return D.head_sum(summand, count)

    def sums_rows(self, node):
        """The number of rows of a declared matrix K whose rows K_j the summand of ``node`` reads by the sum's
        index j (a sum over positions, not over heads), or None."""
        if self.dialect != "latex" or node.index in self.counts:
            return None
        stack = [node.body]
        while stack:
            n = stack.pop()
            if isinstance(n, tuple):
                stack.extend(n)
            elif isinstance(n, ast.Name):
                whole = ast.Name(n.pos, n.base, None, n.sup, n.font)
                if (isinstance(n.sub, ast.Name) and n.sub.base == node.index and n.sub.sub is None
                        and self.is_declared_matrix(whole)):
                    k = self.aliases.get(key_of(whole), key_of(whole))
                    return (self.matrices[k] if k in self.matrices else self.partitions[k]).rows
            elif isinstance(n, ast.Node):
                stack.extend(getattr(n, f.name) for f in fields(n) if f.name != "pos")
        return None

    def rows_sum_range(self, node, rows):
        """Refuse a sum over rows K_j whose range is not all the rows 1..N (N a declared dimension)."""
        j, up = node.index, node.upper
        every = f"\\sum_{{{j}=1}}^{{{sp.sstr(rows)}}}"
        if up is None:
            return
        written = up.text()
        if isinstance(up, ast.Name) and up.sub is None and up.sup is None and len(up.base) == 1 \
                and up.base not in self.dims:
            why = (f"the sum over the positions {j} runs to the position {written}: a causal sum over the rows up "
                   f"to a position (1 <= {j} <= {written}) is not read")
        else:
            why = (f"the sum over the positions {j} runs to {written}: a sum over the rows of a declared matrix is "
                   "read over all of them, up to its number of rows (a declared dimension), not over part of them")
        self.fail(node, why, f"{every}, a sum over every row", NotationShapeError)

    def index_value(self, node, L):
        if isinstance(node, ast.Arith):  # a compound subscript: (g - 1) h / G + j
            return self.index_arith(node.body, L)
        if isinstance(node, ast.Round):  # a group map: ceil(i G / h)
            v = self.index_arith(node.body, L)
            return sp.ceiling(v) if node.kind == "ceil" else sp.floor(v)
        if isinstance(node, ast.Num):
            if node.value < 1:
                self.fail(node, f"head {node.value} does not exist", "heads numbered from 1")
            return sp.Integer(node.value)
        if isinstance(node, ast.Name) and node.sub is None and node.sup is None:
            if node.base in L:
                return L[node.base]
            if node.base in self.counts:  # a free head index: the step holds for every head
                return D.h
            k = self.resolve(node.base)
            if k in self.dims and any(same_dim(self.dims[k], c) for c in self.counts.values()):
                return self.dims[k]
            self.fail(node, f"unknown head index {node.base}",
                      "a number, the head index of a sum or a definition, or the head count "
                      f"({', '.join(sorted(map(str, self.counts.values()))) or 'none declared'})",
                      UnknownSymbolError)
        if isinstance(node, ast.Index):
            a, b = self.index_value(node.left, L), self.index_value(node.right, L)
            return a + b if node.op == "+" else a - b
        self.fail(node, f"{node.text()} is not a head index", "h, 1, H or h + 1")

    def _rowof(self, node, L):
        """``[softmax(...) V]_{t,:}``: row t of a result (t a position, 1 <= t <= its rows)."""
        v = self._expr(node.arg, L)
        if not is_matrix(v):
            self.fail(node, f"row {node.index.text()} of the scalar {node.arg.text()}", "a matrix")
        k = self.position_value(node.index, v.rows, L)
        self.check_positions(node, k, k, v.rows)
        return v[k - 1:k, :]

    def check_positions(self, node, lo, hi, length):
        """Positions lo..hi must exist and be at least one for every value of the position (t >= 1, t <= n)."""
        last = " or ".join(f"{p} = {sp.sstr(n)}" for p, (_, n, _) in self.positions.items())
        some = " and ".join(f"1 <= {p} < {sp.sstr(n)}" for p, (_, n, _) in self.positions.items())
        for case, when in (({}, f"for some {some}" if self.positions else ""),
                           ({slack: 0 for _, _, slack in self.positions.values()}, f"when {last}")):
            n = sp.sympify(length).xreplace(self.subs).xreplace(case)
            a, b = sp.sympify(lo).xreplace(case), sp.sympify(hi).xreplace(case)
            for bad, what in ((a - 1, f"position {sp.sstr(a)} is before the first"),
                              (b - a, f"positions {sp.sstr(a)}..{sp.sstr(b)} are empty"),
                              (n - b, f"position {sp.sstr(b)} is after the last")):
                if not sp.expand(bad).is_nonnegative:
                    self.fail(node, f"{node.text()} is out of the shape of its sequence ({sp.sstr(length)} "
                              f"positions): {what} {when}".rstrip(),
                              "positions 1..t with 1 <= t <= the length", NotationShapeError)

    def position_value(self, node, length, L):
        """The value of a position index (1, t, t - 1) of a sequence of ``length`` positions: an undeclared
        letter t is a position 1 <= t <= length, read as length = t + s (s >= 1, and s = 0 in a second check)."""
        if isinstance(node, ast.Num):
            if node.value < 1:
                self.fail(node, f"position {node.value} does not exist", "positions numbered from 1")
            return sp.Integer(node.value)
        if isinstance(node, ast.Index):
            a, b = self.position_value(node.left, length, L), self.position_value(node.right, length, L)
            return a + b if node.op == "+" else a - b
        if isinstance(node, ast.Name) and node.sub is None and node.sup is None:
            k = self.resolve(node.base)
            if k in self.dims:
                return self.dims[k]
            if node.base in self.positions:
                t, n, slack = self.positions[node.base]
                if not (same_dim(length, n) or same_dim(length, t + slack) or same_dim(length, t)):
                    self.fail(node, f"the position {node.base} runs to {sp.sstr(n)}, and here indexes "
                              f"{sp.sstr(length)} positions", "one length per position")
                return t
            if node.base in L or node.base in self.counts or len(node.base) != 1:
                self.fail(node, f"{node.text()} is not a position", "a number, a dimension or a letter such as t")
            if self.positions:
                self.fail(node, f"a second position {node.base} beside {next(iter(self.positions))}",
                          "one position letter per derivation")
            if not (isinstance(length, sp.Symbol) and length in self.dims.values()):
                self.fail(node, f"the position {node.base} indexes {sp.sstr(length)} positions",
                          "a sequence whose length is a declared dimension, as in \\mathbb{R}^{n \\times d}")
            t = dimension_symbol(node.base)
            slack = sp.Dummy("s", integer=True, positive=True)
            self.positions[node.base] = (t, length, slack)
            self.subs[length] = t + slack
            self.notes.append(f"{node.base} is a position, 1 <= {node.base} <= {sp.sstr(length)}: each step is "
                              f"checked for {node.base} < {sp.sstr(length)} and for {node.base} = {sp.sstr(length)}")
            return t
        self.fail(node, f"{node.text()} is not a position", "a number, a dimension or a letter such as t")

    def sliced(self, node, L):
        """``K_{1:t}`` (positions 1..t: rows in the row convention, columns in the column convention) and
        ``Q_{t,:}`` (row t) of a declared matrix."""
        base = ast.Name(node.pos, node.base, None, node.sup, node.font)
        X = self._expr(base, L)
        if not is_matrix(X):
            self.fail(node, f"{node.text()} slices the scalar {base.text()}", "a matrix")
        sub = node.sub
        if isinstance(sub, ast.RowIndex):
            k = self.position_value(sub.index, X.rows, L)
            self.check_positions(node, k, k, X.rows)
            return X[k - 1:k, :]
        rows = self.convention == "row"
        length = X.rows if rows else X.cols
        lo, hi = self.position_value(sub.lo, length, L), self.position_value(sub.hi, length, L)
        self.check_positions(node, lo, hi, length)
        return X[lo - 1:hi, :] if rows else X[:, lo - 1:hi]

    def mask(self, node, rows, cols):
        """The mask M_{ab} defined by cases, as the library's CausalMask or PaddingMask of shape rows × cols."""
        a, b, cases = self.masks[key_of(node)]
        zero = [c for v, c in cases.rows if v == "0"]
        inf = [c for v, c in cases.rows if v == "-inf"]
        usage = ("0 & s \\le t \\\\ -\\infty & s > t (a causal mask, or t \\le s for the column convention), "
                 "or 0 & s \\le L \\\\ -\\infty & s > L (a padding mask of valid length L)")
        if len(cases.rows) != 2 or len(zero) != 1 or len(inf) != 1 or zero[0] is None:
            self.fail(cases, f"the cases of {node.text()} are not one row 0 and one row -\\infty", usage)
        visible = self.visible(zero[0], a, b, cases, usage)
        other = inf[0]
        if other is not None:
            flip = {"<=": ">", ">": "<=", "<": ">=", ">=": "<"}
            neg = self.visible((other[0], flip[other[1]], other[2]), a, b, cases, usage, other)
            if neg != visible:
                self.fail(cases, f"the row -\\infty & {other[0].text()} {other[1]} {other[2].text()} is not the "
                          "complement of the row 0", "the opposite comparison, or \\text{otherwise}")
        kind, lead, bound = visible
        if kind == "causal":  # entry (x, y) visible when y <= x + offset
            offset = bound
            if lead == b:  # M_{ab} = 0 when b <= a + c: the transpose of the column mask
                return D.CausalMask(cols, rows, offset).T
            return D.CausalMask(rows, cols, offset)
        if lead == b:
            return D.PaddingMask(cols, rows, bound).T
        return D.PaddingMask(rows, cols, bound)

    def visible(self, cond, a, b, cases, usage, shown=None):
        """A condition 'u <= v + c' of the mask's indices: ("causal", u, c) or ("padding", u, L)."""
        left, rel, right = cond
        if rel in (">=", ">"):
            left, right, rel = right, left, {">=": "<=", ">": "<"}[rel]

        def split(n):
            if isinstance(n, ast.Name) and n.sup is None:
                return key_of(n), 0
            if isinstance(n, ast.Index) and isinstance(n.right, ast.Num) and isinstance(n.left, ast.Name):
                return key_of(n.left), n.right.value if n.op == "+" else -n.right.value
            return None, None

        (u, cu), (v, cv) = split(left), split(right)
        c = cv - cu - (1 if rel == "<" else 0) if u is not None and v is not None else None
        text = f"{(shown or cond)[0].text()} {(shown or cond)[1]} {(shown or cond)[2].text()}"
        if u in (a, b) and v in (a, b) and u != v:
            return ("causal", u, sp.Integer(c))
        if u in (a, b) and v is not None and v not in (a, b) and self.resolve(v) in self.dims:
            return ("padding", u, self.dims[self.resolve(v)] + c)
        if u in (a, b) and v in self.positions and v not in (a, b):  # a valid length that is a position t
            return ("padding", u, self.positions[v][0] + c)
        self.fail(cases, f"the case {text} of {cases.text()} is neither a causal mask (comparing the two "
                  f"indices {a} and {b}) nor a padding mask (an index against a declared length)", usage)

    def index_arith(self, node, L):
        """The value of ``i G / h`` inside a group map: products, quotients, sums of indices and counts."""
        if isinstance(node, ast.Mul):
            out = sp.Integer(1)
            for f in node.factors:
                out *= self.index_arith(f, L)
            return out
        if isinstance(node, ast.Div):
            return self.index_arith(node.num, L) / self.index_arith(node.den, L)
        if isinstance(node, ast.Add):
            return sum((s * self.index_arith(t, L) for s, t in node.terms), sp.Integer(0))
        if isinstance(node, ast.Group):
            return self.index_arith(node.body, L)
        if isinstance(node, ast.Name) and node.sub is None and node.base not in L and node.base not in self.counts:
            k = self.resolve(node.base)
            if k in self.dims:
                return self.dims[k]
        return self.index_value(node, L)

    def _name(self, node, L):
        if isinstance(node.sub, ast.ParamIndex):
            if key_of(ast.Name(node.pos, node.base, None, node.sup, node.font)) in self.rotations:
                return self.rotation_at(node, L)
            self.fail(node, f"{node.text()}: a subscript with a label and a position is read only for a rotation "
                      "defined by its pmatrix", "R^d_{\\Theta,m} = \\begin{pmatrix} ... \\end{pmatrix} before its use")
        if isinstance(node.sub, ast.Slice) or (isinstance(node.sub, ast.RowIndex) and self.dialect == "latex"
                                               and self.resolve(node.base) in self.matrices):
            return self.sliced(node, L)
        if key_of(node) in self.masks:
            self.fail(node, f"the mask {node.text()} on its own", f"the mask as a summand of scores, as in "
                      f"\\mathrm{{softmax}}(QK^\\top + {node.base})")
        if isinstance(node.sub, ast.RowIndex):
            self.fail(node, f"row {node.sub.index.text()} of {node.base} ({node.text()}) is read only in a row-wise "
                      "definition", "F(X)_{t,:} := softmax(A_{t,:}) M, or the whole matrix")
        k = self.resolve(key_of(node))
        if node.sub is None and node.sup is None and node.base in L:
            v = L[node.base]
            if is_matrix(v):
                return v
            self.fail(node, f"the head index {node.base} used as a value", "a matrix or a dimension")
        if k in self.matrices:
            return self.matrices[k].xreplace(self.subs) if self.subs else self.matrices[k]
        if k in self.partitions:
            return self.partitions[k].xreplace(self.subs) if self.subs else self.partitions[k]
        if k in self.scalars:
            return self.scalars[k]
        if k in self.dims:
            return self.dims[k]
        top = self.superscript_family(node, L)
        if top is not None and top in self.families:
            return self.families[top][self.index_value(ast.Name(node.pos, node.sup), L)]
        if node.base == ONES:
            if node.sub is None or node.sup is not None:
                self.fail(node, "the vector of ones without its length", "\\mathbf{1}_N (N entries)")
            return sp.OneMatrix(self.dim(node.sub), 1)
        fk = self.resolve(family_key(node))
        if node.sub is not None and fk in self.member_aliases:
            return self.member_alias(node, fk, L)
        if node.sub is not None and fk in self.families:
            return self.families[fk][self.index_value(node.sub, L)]
        if k in self.defs and not self.defs[k].params:
            d = self.defs[k]
            return self.expand(node, d, dict(L) if d.open else {})  # a "where" clause sees the caller's parameters
        if node.sub is not None and fk in self.indexed:
            d = self.indexed[fk]
            return self.expand(node, d, {**(L if d.open else {}), d.index: self.index_value(node.sub, L)})
        if node.base == "head" and node.sub is not None:
            return self.builtin_head(node, self.index_value(node.sub, L))
        if fk in self.families and node.sub is None and node.sup == "O":
            return self.whole_output_weights(node, self.families[fk])
        if fk in self.families:
            self.fail(node, f"{node.text()} is a head-indexed family",
                      f"a member such as {node.base}_h^{node.sup}")
        row = vectors.row_vector(self, node, L)  # Q_i: row i of a declared Q, as a column vector
        if row is not None:
            return row
        self.unknown(node, k)

    def resolve(self, key: str) -> str:
        """The name ``key`` stands for under the assumptions (d_v = d_k, W^K = W^Q); marks the
        assumption used, so that the steps it reaches name it in their scope."""
        if key in self.aliases:
            self.assumptions[self.assumed_by[key]] = True
            self.hits.append(self.assumed_by[key])
            return self.aliases[key]
        return key

    def member_alias(self, node, fk, L):
        """A member W_x^K under ``assume W_i^K = T`` (T with i read as x) or ``assume W_2^K = T``
        (when x is 2); the family's own member where no assumption applies."""
        return self.member_of(fk, self.index_value(node.sub, L), L, node)

    def member_of(self, fk, value, L, node):
        """The member ``value`` of the family ``fk`` under the assumptions about its members."""
        for sub, target, text in self.member_aliases[fk]:
            if isinstance(sub, ast.Num):
                if not sp.sympify(value).is_Integer:
                    # W_h^K for a symbolic h is W_1^K at h = 2 only: neither reading is right for every h
                    self.fail(node, f"the assumption {text} says something about one member only, and "
                                    f"{fk.replace('^', '_' + sp.sstr(value) + '^')} stands for every member",
                              f"an assumption for every member ({fk.replace('^', '_i^')} = ...)")
                if int(value) != sub.value:
                    continue
                bound = dict(L)
            else:
                bound = {**L, sub.base: value}
            self.assumptions[text] = True
            self.hits.append(text)
            tk = family_key(target)
            if target.sub is not None and tk in self.families:
                return self.families[tk][self.index_value(target.sub, bound)]
            if target.sub is None and key_of(target) in self.matrices:
                return self.matrices[key_of(target)]
            self.fail(target, f"the assumption {text} names {target.text()}, which is not a declared matrix "
                              "or a member of a declared family", "a declared name on the right of the assumption")
        if fk in self.families:
            return self.families[fk][value]
        self.unknown(node, fk)

    def unknown(self, node, k):
        names = self.known_names()
        hint = ""
        for a in names:  # QW written for Q W
            if k.startswith(a) and k[len(a):] in names:
                hint = f" (a product is written with a space: {a} {k[len(a):]})"
        self.fail(node, f"unknown symbol {k}{hint}",
                  "a declared name (" + (", ".join(names) if names else "nothing is declared yet") + ")",
                  UnknownSymbolError)

    def whole_output_weights(self, node, family):
        """W^O without a definition: the seeds' block of the W_h^O, [W_1^O ... W_H^O] (column
        convention) or [W_1^O; ...; W_H^O] (row convention)."""
        letter = self.family_letters.get(family_key(node))
        count = self.counts[letter] if letter in self.counts else self.head_count(node)
        col = self.convention == "column"
        b, s = node.base, node.sup
        note = (f"{b}^{s} is read as [{b}_1^{s} ... {b}_H^{s}] side by side (seed 000)" if col
                else f"{b}^{s} is read as [{b}_1^{s}; ...; {b}_H^{s}] stacked (row convention)")
        if note not in self.notes:
            self.notes.append(note)
        return (D.head_concat if col else D.head_stack)(family[D.h], count)

    def weights(self, node):
        out = {}
        for label in "QKVO":
            keys = sorted(k for k in set(self.families) | set(self.aliases) if k.endswith("^" + label))
            found = {self.resolve(k) for k in keys}
            fams = [k for k in found if k in self.families]
            if len(fams) != 1:
                latex = (f"a declaration such as W_h^{{{label}}} \\in \\mathbb{{R}}^{{d_k \\times d}} with a head "
                         "range h = 1, \\dots, H")
                self.fail(node, f"{node.target.base} needs one head-indexed family W_h^{label}",
                          latex if self.dialect == "latex" else f"a declaration such as W_h^{label}: ... for h in 1..H")
            fk = fams[0]
            if fk in self.member_aliases:  # assume W_i^K = W_1^K reaches MultiHead's own heads too
                out[label] = _Members(lambda k, fk=fk: self.member_of(fk, k, {}, node))
            else:
                out[label] = self.families[fk]
        return out

    def head_count(self, node):
        counts = {sp.sstr(c): c for c in self.counts.values()}
        if len(counts) != 1:
            self.fail(node, "the number of heads is not declared (or declared twice)",
                      "one head range, as in h = 1, \\cdots, H")
        return next(iter(counts.values()))

    def builtin_head(self, node, k):
        w = self.weights(ast.Call(node.pos, node, ()))
        Q, K, V = (self.matrix_named(node, x) for x in "QKV")
        return D.head(Q, K, V, w["Q"][k], w["K"][k], w["V"][k], score=self.score, convention=self.convention)

    def matrix_named(self, node, name):
        if name not in self.matrices:
            self.fail(node, f"{node.text()} needs the matrix {name}", f"a declaration of {name}")
        return self.matrices[name]

    def _call(self, node, L):
        name = node.target
        base = name.base
        if base in ("cos", "sin") and name.sub is None:
            self.fail(node, f"\\{base} is read only in a rotation R^d_{{\\Theta,m}} = \\begin{{pmatrix}} \\cos{{m"
                      "\\theta_1}} & -\\sin{{m\\theta_1}} & \\cdots ... \\end{{pmatrix}} as Su et al. typeset it",
                      "the rotation as a whole, defined by that pmatrix")
        own = f"{base}/{len(node.args)}"
        if own in self.defs and name.sub is None:  # the document's Attention(X)
            d = self.defs[own]
            vals = self.args(node, L, len(d.params))
            return self.expand(node, d, {p.base: v for p, v in zip(d.params, vals)})
        if base in ("exp", "log") and name.sub is None and name.sup is None:
            if len(node.args) != 1 or isinstance(node.args[0], ast.Dots):
                self.fail(node, f"{base} takes 1 argument, got {len(node.args)}", "exp(x)")
            v = self._expr(node.args[0], L)
            if is_matrix(v):
                return (D.Exp if base == "exp" else D.Log)(v)
            return sp.exp(v) if base == "exp" else sp.log(v)
        if base in ("Softmax", "softmax") and name.sub is None and name.sup is None:
            (X,) = self.args(node, L, 1)
            if X.shape == (1, 1):  # softmax(q^T x_i): the paper means a softmax over i, never the number 1
                arg = node.args[0].text()
                self.fail(node, f"softmax({arg}) of the 1 × 1 argument {arg} would be 1 for every value; a paper "
                          "writing it means the softmax over the positions (the index of the argument), which is "
                          "not read as such",
                          "the softmax of the whole column of scores, as in softmax(X^T q), whose entries are the "
                          "weights; a step is never checked under a reading the paper did not intend")
            axis = {"col": 0, "row": 1}.get(node.axis, 0 if self.convention == "column" else 1)
            return D.softmax(X, axis)
        if base == "Attention" and name.sub is None:
            Q, K, V = self.args(node, L, 3)
            return D.attention(Q, K, V, score=self.score, convention=self.convention)
        if base == "MultiHead" and name.sub is None:
            Q, K, V = self.args(node, L, 3)
            w = self.weights(node)
            wq, wk, wv, wo = w["Q"], w["K"], w["V"], w["O"]
            return D.multihead(Q, K, V, wq, wk, wv, wo, H=self.head_count(node), score=self.score,
                               convention=self.convention)
        if base in ("Concat", "concat") and name.sub is None:
            return self.sequence(node, list(node.args), "row" if self.convention == "row" else "column", L)
        k = key_of(name)
        if k in self.features and name.sub is None:
            return vectors.apply_feature_map(self, node, L)
        if k in self.functions:
            Q, K = self.args(node, L, 2)
            f = self.functions[k]
            return f(Q, K) if self.convention == "column" else f.row(Q, K)
        if k in self.defs and self.defs[k].params:
            d = self.defs[k]
            self.match_extra(node, d)
            vals = self.args(node, L, len(d.params))
            return self.expand(node, d, {p.base: v for p, v in zip(d.params, vals)})
        if self.is_function_name(name) and len(node.args) == 1 and not isinstance(node.args[0], ast.Dots):
            return self.uninterpreted(node, L)
        target = self._name(name, L)
        if len(node.args) != 1:
            self.fail(node, f"{name.text()} is not a function", "a product written as A (B)")
        arg = self._expr(node.args[0], L)
        return self.multiply(target, name, arg, node.args[0])

    def is_function_name(self, name) -> bool:
        """A name the file never declares, typeset as a function's (\\mathrm{LN}, \\operatorname{FFN},
        \\sigma, \\tanh, f, g) rather than as a matrix's (a capital letter such as W stays an unknown symbol)."""
        if not self.is_undefined_name(name) or name.sup is not None:
            return False
        if name.base in NOT_UNINTERPRETED:
            self.fail(name, f"{name.base} is a function whose meaning changes the shape or the kind of its value "
                      "(diag of a vector is a matrix, tr of a matrix a number), which is not read",
                      NOT_UNINTERPRETED[name.base])
        return (name.font in ("mathrm", "operatorname", "mathsf", "text", "textrm") or len(name.base) > 1
                or name.base in ("f", "g"))

    def uninterpreted(self, node, L):
        """``\\mathrm{LN}(X)``: an uninterpreted map of X, of X's shape; every step proved with it holds
        for every such map, so a step that depends on what the map does is not proved."""
        fname = key_of(node.target)
        arg = self._expr(node.args[0], L)
        if not is_matrix(arg):
            self.fail(node.args[0], f"{node.target.text()} of the scalar {node.args[0].text()}: a function the "
                      "file does not define is read only on matrices", f"declare {node.target.text()}")
        seen = self.uninterpreted_maps.setdefault(fname, arg.shape)
        if seen != arg.shape and not (same_dim(seen[0], arg.rows) and same_dim(seen[1], arg.cols)):
            self.fail(node, f"{node.target.text()} is applied to a {shape_text(arg)} matrix here and to a "
                      f"{sp.sstr(seen[0])} × {sp.sstr(seen[1])} one elsewhere",
                      "one shape per function the file does not define, or a declaration of each map")
        if len(self.uninterpreted_maps) > self.uninterpreted_noted:
            self.uninterpreted_noted = len(self.uninterpreted_maps)
            self.notes.append(f"{node.target.text()} is not defined by the file: read as an uninterpreted map of "
                              f"its argument, with the argument's shape (a step proved holds for every such map)")
        return D.Apply(fname, arg)

    def args(self, node, L, count):
        if len(node.args) != count or any(isinstance(a, ast.Dots) for a in node.args):
            self.fail(node, f"{node.target.text()} takes {count} argument{'s' if count > 1 else ''}, "
                      f"got {len(node.args)}", f"{count} argument{'s' if count > 1 else ''}")
        vals = [self._expr(a, L) for a in node.args]
        for a, v in zip(node.args, vals):
            if not is_matrix(v):
                self.fail(a, f"the argument {a.text()} of {node.target.text()} is a scalar", "a matrix")
        return vals

    def _block(self, node, L):
        rows = node.rows
        has_dots = any(isinstance(c, ast.Dots) for r in rows for c in r)
        if has_dots:
            if all(len(r) == 1 for r in rows):
                return self.sequence(node, [r[0] for r in rows], "column", L)
            if len(rows) == 1:
                return self.sequence(node, list(rows[0]), "row", L)
            self.fail(node, "an ellipsis in a block matrix with several rows and columns",
                      "one column [e_1; ...; e_H] or one row [e_1, ..., e_H]")
        vals = [[self._expr(c, L) for c in r] for r in rows]
        for r_node, r in zip(rows, vals):
            for c_node, v in zip(r_node, r):
                if not is_matrix(v):
                    self.fail(c_node, "a scalar in a block matrix", "matrix blocks")
        for i, r in enumerate(vals):
            for j, v in enumerate(r):
                if not same_dim(v.rows, r[0].rows):
                    self.fail(rows[i][j], f"the blocks of block row {i + 1} have different heights",
                              "blocks of equal height in a row", NotationShapeError)
                if not same_dim(v.cols, vals[0][j].cols):
                    self.fail(rows[i][j], f"the blocks of block column {j + 1} have different widths",
                              "blocks of equal width in a column", NotationShapeError)
        if len(vals) == 1 and len(vals[0]) == 1:
            return vals[0][0]
        return sp.BlockMatrix(vals)

    def sequence(self, node, items, direction, L):
        """``e_1, e_2, ..., e_H`` with one ellipsis: a stack or concatenation over heads."""
        dots = [k for k, c in enumerate(items) if isinstance(c, ast.Dots)]
        if not dots:  # an explicit list: Concat(head_1, head_2, head_3, head_4)
            rows = tuple((c,) for c in items) if direction == "column" else (tuple(items),)
            return self._block(ast.Block(node.pos, rows), L)
        if len(dots) != 1 or dots[0] in (0, len(items) - 1):
            self.fail(node, "the list must have one ellipsis between its first and last element",
                      "e_1, ..., e_H")
        first, last = items[0], items[-1]
        pat, upper = anti_unify(first, last)
        if pat is None:
            self.fail(last, f"cannot read the pattern from {first.text()} to {last.text()}",
                      "a first element indexed by 1 and a last one by the number of heads, "
                      "as in head_1, ..., head_H")
        for k, c in enumerate(items[1:dots[0]], start=2):
            if substitute(pat, ast.Num(c.pos, k)) != c:
                self.fail(c, f"{c.text()} does not follow the pattern {_show_pattern(pat)}",
                          f"the element for index {k}")
        count = self.index_value(upper, L)

        def element(k):
            body = self._expr(pat, {**L, HOLE: k})
            if not is_matrix(body):
                self.fail(first, "the elements are scalars", "matrices")
            return body

        return (D.head_stack if direction == "column" else D.head_concat)(element, count)


def _short(node) -> str:
    s = node.text()
    return s if len(s) <= 40 else s[:39] + "…"


def _show_pattern(pat) -> str:
    return substitute(pat, ast.Name((0, 0), "k")).text()


def anti_unify(first, last):
    """The common pattern of ``first`` (index 1) and ``last`` (index N), and N; or (None, None)."""
    found = []

    def walk(a, b):
        if a == b:
            return a
        if isinstance(a, ast.Num) and a.value == 1 and isinstance(b, (ast.Name, ast.Num, ast.Index)):
            found.append(b)
            return ast.Name(a.pos, HOLE)
        if type(a) is not type(b) or not isinstance(a, ast.Node):
            raise ValueError
        kw = {}
        for f in fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if f.name == "pos":
                kw[f.name] = x
            elif isinstance(x, tuple) and isinstance(y, tuple):
                if len(x) != len(y):
                    raise ValueError
                kw[f.name] = tuple(walk_any(p, q) for p, q in zip(x, y))
            else:
                kw[f.name] = walk_any(x, y)
        return type(a)(**kw)

    def walk_any(x, y):
        if isinstance(x, ast.Node):
            return walk(x, y)
        if isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y):
            return tuple(walk_any(p, q) for p, q in zip(x, y))
        if x != y:
            raise ValueError
        return x

    try:
        pat = walk(first, last)
    except ValueError:
        return None, None
    if not found or any(u != found[0] for u in found):
        return None, None
    return pat, found[0]


def substitute(node, value):
    """``node`` with the placeholder index replaced by ``value``."""
    if isinstance(node, ast.Name) and node.base == HOLE:
        return value
    if isinstance(node, tuple):
        return tuple(substitute(x, value) for x in node)
    if not isinstance(node, ast.Node):
        return node
    return type(node)(**{f.name: (getattr(node, f.name) if f.name == "pos"
                                  else substitute(getattr(node, f.name), value)) for f in fields(node)})
