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
from dataclasses import fields

import sympy as sp

from .. import defs as D
from ..defs.shapes import same_dim
from ..errors import DerivationError, NotationShapeError, SymattnError, UnknownSymbolError
from . import ast, broadcast, componentwise, index_ranges, operators, scalar_functions, sequences, statistics, vectors
from . import real_functions as real
from .call_values import rejoin_calls
from .conditions import mask_entry_refusal
from .declarations import Declarations
from .diagonal import inverse_power
from .entries import declared_entry, double_subscript_hint, frobenius, norm_root, trace_call
from .free_letters import value as number_letter
from .grad_names import gradient_symbol, vocabulary_call
from .head_lists import HeadLists
from .index_powers import IndexPowers
from .label_subscripts import labelled_name
from .patterns import short_text
from .position_sets import refuse_use
from .positions import Positions
from .softmax_axis import softmax_axis
from .symbols import (
    MAX_MATRIX_POWER,
    MAX_WORK,
    NOT_UNINTERPRETED,
    ONES,
    TOP,
    Definition,
    KronOp,
    Members,
    dimension_symbol,
    family_key,
    is_matrix,
    key_of,
    shape_text,
)
from .tokens import PINV
from .trig import trig_call


class Scope(Declarations, Positions, index_ranges.Ranges, HeadLists, IndexPowers):
    """The declarations of a derivation, and the elaboration of expressions under them."""
    _letterpower = operators.letter_power  # 2^{-8h/n}: a positive number to a scalar power (exponents)

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
        self.position_sets: dict = {}  # P_i = \{j : i \geq j\}: key -> the set as written (position_sets)
        self.features: dict[str, tuple] = {}  # phi : R^D -> R^C: name -> (D, C)
        self.ones: tuple | None = None  # \mathbf{1} \in R^{N \times 1}: the declared shape of the ones vector
        self.free_ones = None  # D 1^T - dP: the length of an unsized 1 while the other terms of a sum fix it
        self.row_vectors = False  # rows Q_i of declared matrices were read as column vectors
        self.signatures: dict[str, ast.ScoreDecl] = {}  # f : M^{..} x M^{..} -> M^{..}, as declared
        self.uninterpreted_maps: dict[str, tuple] = {}  # \mathrm{LN}(X) never defined: name -> argument shape
        self.entrywise_body = False  # a body written for a number, read entry by entry (real_functions)
        self.rows_read = 0  # how many times such a row was read (a step's sides compare the count)

    # declarations ----------------------------------------------------------

    def fail(self, node, message, expected="", cls=DerivationError):
        line, col = node.pos if node is not None else (0, 0)
        for t, n, slack in self.positions.values():  # a length read as t + s is shown as the file writes it
            message, expected = (x.replace(sp.sstr(t + slack), sp.sstr(n)) for x in (message, expected))
        raise cls(message, line, col, expected)

    def known_names(self) -> list[str]:
        def member(k):  # W^Q_h; A^h for head h's A with the index on top
            return k.replace(TOP, "h") if k.endswith(TOP) else k + "_h"

        return sorted(set(self.matrices) | {member(k) for k in self.families} | set(self.defs) | set(self.scalars)
                      | {member(k) for k in self.indexed}
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
            if out.is_positive is False:  # -3, n - n: never a number of rows or columns
                written = node.text().replace(" ", "")
                value = "" if written == sp.sstr(out) else f" = {sp.sstr(out)}"
                self.fail(node, f"the dimension {written}{value} is not positive",
                          "a positive dimension, such as 3, n or n + 1")
            return out
        if isinstance(node, ast.Group):
            return self.dim(node.body, create)
        self.fail(node, f"{node.text()} is not a dimension", "a dimension such as d_k, n or H d_v")

    # expressions -----------------------------------------------------------

    def expr(self, node, locals_=None):
        """Elaborate ``node``; ``locals_`` binds head indices and function parameters."""
        locals_ = locals_ or {}
        if self.nesting == 0:
            self.work, self.top = 0, node
        self.nesting += 1
        try:
            top_operator = self.nesting == 1 and operators.is_operator(self, node)
            out = operators.probe(self, node, locals_) if top_operator else self._expr(node, locals_)
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

    def _positionset(self, node, L):  # \{j : j \le i\} used in a step (.position_sets)
        refuse_use(self, node)

    def _given(self, node, L):
        return node.value

    def _num(self, node, L):
        return sp.Integer(node.value)

    def _group(self, node, L):
        return self._expr(node.body, L)

    def _sqrt(self, node, L):
        v = self._expr(node.arg, L)
        if is_matrix(v) and v.shape == (1, 1):  # \sqrt{\sum_i a_i^2}, \sqrt{x^T x}: a 1 × 1 matrix is a scalar
            try:
                return sp.sqrt(v[0, 0])
            except NotImplementedError:  # a sum over heads or rows has no entry to take
                return statistics.root_of_sum(self, node, v)
        if is_matrix(v):
            self.fail(node, f"the square root of the {shape_text(v)} matrix {node.arg.text()}",
                      "a scalar such as sqrt(d_k), or a 1 × 1 value such as \\sqrt{x^\\top x}")
        return sp.sqrt(v)

    def _div(self, node, L):
        num, den = self._expr(node.num, L), self._expr(node.den, L)
        if is_matrix(den) and is_matrix(num) and den.rows == 1 and den.cols == 1:  # a 1 × 1 matrix: a scalar
            vectors.division_note(self, node.den)
            return vectors.divide(num, den)
        if is_matrix(den):  # a vector positive by its form divides entry by entry; other matrices are refused
            return self.entrywise_quotient(node, num, den)
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
            elif vectors.needs_size(self, t):  # an unsized 1 (this module) or I (identity.py)
                v = vectors.sized_ones_term(self, t, L, plain)
            else:
                v = self._expr(t, L)
            v = v if sign > 0 else -v
            if out is None:
                out, first = v, t
                continue
            out, v = (broadcast.spread(self, t, out, v, first) or (out, v, None))[:2]  # a^l - mu^l
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
        real.refuse_power_of_map(self, node)  # ReLU(X)^2 of a matrix: entrywise, or a matrix product?
        if node.den != 1 or node.num < 1:
            return inverse_power(self, node, v)  # D^{-1} of D = diag(v), else refused (diagonal)
        if node.num > MAX_MATRIX_POWER:
            self.fail(node, f"the power ^{{{node.num}}} of the matrix {node.base.text()}: whole powers of a matrix are "
                      f"read up to ^{{{MAX_MATRIX_POWER}}}", "a smaller power, or the claim about the matrix itself")
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
        if (v := vectors.inner(a, b)) is not None:
            return v  # columns: a^T b, rows: a b^T (1 × 1)
        return frobenius(a, b)  # matrices: the Frobenius inner product, a sum of entries (entries)

    def _norm(self, node, L):
        v = self._expr(node.arg, L)
        if not is_matrix(v):
            self.fail(node.arg, f"the norm of the scalar {node.arg.text()}", "a vector or a matrix")
        square = self._inner(ast.Inner(node.pos, node.arg, node.arg), L)
        if node.squared:
            return square
        return norm_root(square)  # the root of a 1 × 1 value, or of a sum of entries (entries)

    def _mul(self, node, L):
        if (node := rejoin_calls(self, node, L)) and not isinstance(node, ast.Mul):
            return self._expr(node, L)  # k (x)^T of the document's function k: (k(x))^T (call_values)
        if operators.mentions_operator(self, node):  # (Id + A \otimes W) \cdot x
            return operators.application(self, node, L)
        acc, left = None, None
        for k, f in enumerate(node.factors):
            acc = self.multiply(acc, left, self._expr(f, L), f, dot=k in node.dots)
            left = f if left is None else ast.Mul(left.pos, (left, f))
        return acc

    def multiply(self, acc, left, v, f, dot=False):
        if acc is None:
            return v
        if isinstance(acc, KronOp) or isinstance(v, KronOp):
            return self.kron_multiply(acc, left, v, f)
        if is_matrix(acc) and is_matrix(v):
            if not same_dim(acc.cols, v.rows) and (h := real.entrywise_product(self, acc, v)) is not None:
                return h  # x sigma(beta x) of a row x, in a body written for a number
            if dot and (h := vectors.dot_product(self, acc, v, left, f)) is not None:
                return h  # q_i \cdot k_j of two columns (or rows) of one length: their inner product
            if not same_dim(acc.cols, v.rows) and vectors.scalar_product(acc, v) is not None:
                return vectors.scalar_product(acc, v, self, (left, f))  # a 1 × 1 matrix (x^T y) is a scalar
            if not same_dim(acc.cols, v.rows):
                self.fail(f, f"cannot multiply {short_text(left)} ({shape_text(acc)}) by {short_text(f)} "
                          f"({shape_text(v)}): the inner dimensions {sp.sstr(acc.cols)} and "
                          f"{sp.sstr(v.rows)} are not known to be equal",
                          "factors whose inner dimensions agree (a transpose missing?)", NotationShapeError)
            if acc.has(sp.Inverse) or v.has(sp.Inverse):  # A^{-1} A as written: SymPy's * would cancel it to I
                return sp.MatMul(acc, v, evaluate=False)
        return acc * v

    def kron_multiply(self, acc, left, v, f):
        """(A ⊗ W)(B ⊗ U) = AB ⊗ WU (the mixed product); (A ⊗ W) x = W x Aᵀ (column) or A x Wᵀ (row)."""
        def mul(a, b, at):
            return b if a is None else a if b is None else self.multiply(a, at, b, f)

        if isinstance(acc, KronOp) and isinstance(v, KronOp):
            return KronOp(mul(acc.left, v.left, left), mul(acc.right, v.right, left))
        if isinstance(v, KronOp):
            self.fail(f, f"{short_text(f)} stands after {short_text(left)}: a Kronecker product acts on the "
                      "matrix to its right", "(A \\otimes W) \\cdot x")
        if not is_matrix(v):
            self.fail(f, f"{short_text(left)} acts on a scalar", "(A \\otimes W) \\cdot x with x a matrix")
        pos, vec = acc.left, acc.right
        if self.convention == "column":
            out = v if vec is None else self.multiply(vec, left, v, f)
            return out if pos is None else self.multiply(out, f, pos.T, f)
        out = v if pos is None else self.multiply(pos, left, v, f)
        return out if vec is None else self.multiply(out, f, vec.T, f)

    def _kron(self, node, L):
        if (rows := componentwise.product(self, node, L)) is not None:  # x W \otimes x V (Shazeer)
            return rows
        if (outer := operators.outer_product(self, node, L)) is not None:  # u \otimes v of two vectors: u v^T
            return outer
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

    def _sum(self, node, L):  # a sum of symbolically many terms is free in a step read with closed forms
        count = None if (free := self.opaque_sum(node, L)) is not None else self.sum_count(node, L)

        def summand(k):  # k: a fresh placeholder (or each head, for a concrete count); bound without capture
            body = self._expr(node.body, {**L, node.index: k, (node.index, "count"): count})
            if not is_matrix(body):
                self.fail(node.body, "the summand is a scalar", "a matrix summand")
            return body

        return D.head_sum(summand, count) if free is None else free

    def sum_count(self, node, L):
        """The number of terms of the sum ``node``: its upper limit, the declared range of its index, or the
        number of rows it runs over."""
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
        elif (isinstance(up, ast.Name) and up.sup is None and up.base not in L
                and up.base not in self.counts and self.resolve(key_of(up)) in self.dims):
            count = self.dims[self.resolve(key_of(up))]  # a sum over positions 1..N (a dimension; T_x too)
        elif (length := sequences.length_of(self, node, L)) is not None:  # sum_{j=1}^{n} over x_j of a declared x_i
            count = length
        elif isinstance(up, ast.Name) and up.base not in L and up.base not in self.counts:
            self.fail(node, f"the sum over {node.index} runs to {up.text()}, which is neither a number of heads "
                      "nor a declared dimension",
                      f"a head range {node.index} = 1, \\dots, {up.text()}, or {up.text()} in a declared shape",
                      UnknownSymbolError)
        else:
            count = self.index_value(node.upper, L)
        return count

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

    def _name(self, node, L):
        self.head_in_labels(node, L)
        if isinstance(node.sub, ast.ParamIndex):
            if key_of(ast.Name(node.pos, node.base, None, node.sup, node.font)) in self.rotations:
                return self.rotation_at(node, L)
            node = labelled_name(self, node)  # W_{Q,h} declared as a name of its own (label_subscripts)
        if isinstance(node.sub, ast.Slice) or (isinstance(node.sub, ast.RowIndex) and self.dialect == "latex"
                                               and self.resolve(node.base) in self.matrices):
            return self.sliced(node, L)
        if key_of(node) in self.position_sets:  # P_i := \{j : i \geq j\} (position_sets)
            refuse_use(self, node, self.position_sets[key_of(node)])
        if node.sub is not None and key_of(ast.Name(node.pos, node.base, None, node.sup, node.font)) in self.masks:
            mask_entry_refusal(self, node)  # exp(s_ij + M_ij) in a sum over j (.conditions)
        if key_of(node) in self.masks:
            self.refuse_mask_alone(node)  # a mask beside no scores; a decay mask in a product (.positions)
        if isinstance(node.sub, ast.RowIndex):
            self.fail(node, f"row {node.sub.index.text()} of {node.base} ({node.text()}) is read only in a row-wise "
                      "definition", "F(X)_{t,:} := softmax(A_{t,:}) M, or the whole matrix")
        if (seq := sequences.member(self, node, L)) is not None:  # q_{i-1}, w_s at s = 0, x_2 of a recurrence
            return seq
        k = self.resolve(key_of(node))
        if node.sub is None and node.sup is None and node.base in L:
            v = L[node.base]
            if is_matrix(v) or scalar_functions.is_scalar_argument(v):  # sigma(u) = ... called on a scalar
                return scalar_functions.value_of(v)
            return self.index_number(node, v)  # (t - 1 - i) w: a distance (index_powers)
        if k in self.matrices:
            return self.matrices[k].xreplace(self.subs) if self.subs else self.matrices[k]
        if k in self.partitions:
            return self.partitions[k].xreplace(self.subs) if self.subs else self.partitions[k]
        if k in self.scalars:
            return self.scalar(k)
        if k in self.dims:
            return self.dims[k]
        top = self.superscript_family(node, L)
        if top is not None and top in self.families:
            return self.families[top][self.top_index(node, L)]
        if top is not None and top in self.indexed:  # A^h := ...: head h's A
            d = self.indexed[top]
            value = self.top_index(node, L)
            return self.expand(node, d, {**(L if d.open else {}), d.index: value})
        if node.base == ONES:
            if node.sub is None and node.sup is None and self.ones is not None:
                return sp.OneMatrix(*self.ones)  # the declared vector of ones
            if node.sub is None and node.sup is None and self.free_ones is not None:
                return sp.OneMatrix(self.free_ones, 1)  # its length fixed by the sum (vectors.sized_ones_term)
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
        row = declared_entry(self, node, L, vectors.row_vector)  # A_{ij} in sums (entries); Q_i: row i
        if row is not None:
            return row
        if isinstance(node.sub, ast.Labels):
            whole = ast.Name(node.pos, node.base, None, node.sup, node.font)
            if self.is_declared_matrix(whole):
                self.fail(node, f"{node.text()}: a double subscript on the declared matrix {whole.text()} would be an "
                          "entry, and entries of a matrix are not read (a double subscript is read only as the "
                          "label of a name of its own, such as W_{k,E} declared by the file)",
                          "whole matrices, or a name W_{k,E} declared with its shape")
        grad = gradient_symbol(self, node, L)  # dO in a backward pass (grad_names)
        if grad is not None:
            return grad
        return p if (p := self.label_power(node, L)) is not None else self.unknown(node, k)  # A^j: a power

    def resolve(self, key: str) -> str:
        """The name ``key`` stands for under the assumptions (d_v = d_k, W^K = W^Q); marks the
        assumption used, so that the steps it reaches name it in their scope."""
        if key in self.aliases:
            self.assumptions[self.assumed_by[key]] = True
            self.hits.append(self.assumed_by[key])
            return self.aliases[key]
        return key

    def unknown(self, node, k):
        if (v := number_letter(self, node, k)) is not None or (k == "pi" and self.dialect == "latex"):
            return sp.pi if v is None else v  # \pi: the number (trig); M declared in prose only (free_letters)
        names = self.known_names()
        hint = ""
        for a in names:  # QW written for Q W
            if k.startswith(a) and k[len(a):] in names:
                hint = f" (a product is written with a space: {a} {k[len(a):]})"
        if isinstance(getattr(node, "sub", None), ast.Labels) and not hint:
            hint = double_subscript_hint(self, node)  # q_{t,i}^C beside a declared q_t^C (entries)
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
                out[label] = Members(lambda k, fk=fk: self.member_of(fk, k, {}, node))
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
        if base in ("cos", "sin") and name.sub is None and name.sup is None:
            return trig_call(self, node, L)  # of a number (trig)
        own = f"{base}/{len(node.args)}"
        if own in self.defs and name.sub is None:  # the document's Attention(X)
            d = self.defs[own]
            vals = self.args(node, L, len(d.params))
            return real.expand_call(self, node, d, {p.base: v for p, v in zip(d.params, vals)})
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
            axis = softmax_axis(self, node)  # refuses softmax(A B^T) with no convention set (softmax_axis)
            return D.softmax(X, axis)
        if base == "Attention" and name.sub is None:
            Q, K, V = self.args(node, L, 3)
            if isinstance(self.score, D.ScoreFunction):
                q, k = (Q, K) if self.convention == "column" else (Q.T, K.T)  # the row twin applies f to Qᵀ, Kᵀ
                self.check_signature(node, self.score.name, q, k)
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
            self.check_signature(node, k, *((Q, K) if self.convention == "column" else (Q.T, K.T)))
            return f(Q, K) if self.convention == "column" else f.row(Q, K)
        if k in self.defs and self.defs[k].params:
            d = self.defs[k]
            self.match_extra(node, d)
            return real.expand_call(self, node, d, scalar_functions.bind_arguments(self, node, d, L))
        word = trace_call(self, node, L, vocabulary_call)  # tr(X) (entries); rowsum(X) (grad_names)
        if word is not None:
            return word
        if real.is_real_function(name) and self.is_undefined_name(name) and (
                value := real.number_call(self, node, L)) is not None:
            return value  # ReLU(x) of a number: max(0, x)
        if self.is_function_name(name) and vectors.one_argument(self, node):  # MultiHeadAtt(x, X): refused
            return vectors.pseudo_inverse(self, node, L) if node.target.base == PINV else self.uninterpreted(node, L)
        target = self._name(name, L)
        if len(node.args) != 1:
            self.fail(node, f"{name.text()} is not a function", "a product written as A (B)")
        arg = self._expr(node.args[0], L)
        return self.multiply(target, name, arg, node.args[0])

    def check_signature(self, node, name, Q, K):
        """f(Q, K) against the signature the file declared for f: its arguments' shapes and its value's,
        K^T Q's m × n in the column convention (a declaration that disagrees is not silently ignored)."""
        decl = self.signatures.get(name)
        if decl is None:
            return
        got = [(Q.rows, Q.cols), (K.rows, K.cols), (K.cols, Q.cols)]
        shapes = list(decl.domain) + [decl.codomain]
        what = ["its first argument", "its second argument", "its value"]
        for shape, (r, c), part in zip(shapes, got, what):
            want = (self.dim(shape.rows), self.dim(shape.cols) if shape.cols is not None else 1)
            if not (same_dim(want[0], r) and same_dim(want[1], c)):
                self.fail(node, f"{name} is declared with {part} in M^{{{sp.sstr(want[0])} × {sp.sstr(want[1])}}}, "
                          f"but here {part} is {sp.sstr(r)} × {sp.sstr(c)}",
                          f"a signature that fits its use: {name} : M^{{{sp.sstr(got[0][0])} × {sp.sstr(got[0][1])}}}"
                          f" × M^{{{sp.sstr(got[1][0])} × {sp.sstr(got[1][1])}}} → M^{{{sp.sstr(got[2][0])} × "
                          f"{sp.sstr(got[2][1])}}}", NotationShapeError)

    def is_function_name(self, name) -> bool:
        """A name the file never declares, typeset as a function's (\\mathrm{LN}, \\operatorname{FFN},
        \\sigma, \\tanh, f, g) rather than as a matrix's (a capital letter such as W stays an unknown symbol)."""
        if (name.base in ("softmax", "Softmax") and name.sub is None and name.sup is not None
                and not name.sup.isalnum()):
            return True  # softmax^* (a masked softmax, Elhage et al.): a variant the file names, not defined
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
        if fname not in self.uninterpreted_maps:
            self.uninterpreted_maps[fname] = arg.shape
            self.notes.append(f"{node.target.text()} is not defined by the file: read as an uninterpreted map of "
                              f"its argument, with the argument's shape (a step proved holds for every such map)")
        seen = tuple(sp.sympify(x).xreplace(self.subs) for x in self.uninterpreted_maps[fname])  # N = t + s
        if not (same_dim(seen[0], arg.rows) and same_dim(seen[1], arg.cols)):
            self.fail(node, f"{node.target.text()} is applied to a {shape_text(arg)} matrix here and to a "
                      f"{sp.sstr(seen[0])} × {sp.sstr(seen[1])} one elsewhere",
                      "one shape per function the file does not define, or a declaration of each map")
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
