"""Declarations of a derivation: shapes, head ranges and families, partitioned whole matrices, named
vectors, definitions (``:=``), rotations and masks defined entry by entry; a mixin of
:class:`~.elaborate.Scope`, which holds the tables these methods fill."""

from __future__ import annotations

from dataclasses import fields

import sympy as sp

from .. import defs as D
from ..defs.shapes import same_dim
from ..errors import NotationShapeError
from . import ast, sequences
from .conditions import SIGN_WORDS, sign_text, signed_symbol
from .entries import TRACE_NAMES
from .label_subscripts import new_labelled_name, word_label
from .labelled_slices import window_end_refusal
from .maxima import is_extremum
from .symbols import ONES, TOP, VOCABULARY_ARITY, Definition, family_key, is_matrix, key_of, shape_text
from .window_bounds import define_end


class Declarations:
    """The declaring half of :class:`~.elaborate.Scope`."""

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

    def head_in_labels(self, n, L=()):
        """W_{q,h} with h a head index (or an index bound by a sum): a label of several parts that holds the head
        index would be one matrix for every head, which the paper never means: refused, with what to write."""
        if not (isinstance(n, ast.Name) and isinstance(n.sub, ast.Labels)):
            return
        for part in n.sub.parts:
            if isinstance(part, ast.Name) and part.sub is None and (part.base in self.counts or part.base in L):
                rest = ",".join(p.text() for p in n.sub.parts if p is not part)
                self.fail(n, f"{n.text()}: the subscript holds the index {part.base} beside the label {rest}, which "
                          f"would name one matrix for every {part.base}",
                          f"the label on top and the index below, as in {n.base}^{{{rest}}}_{{{part.base}}}")

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

    def declare(self, st: ast.Declare):
        for n in st.names:
            self.head_in_labels(n)
        if st.shape.rows is None:  # c \in \mathbb{R}: a real scalar
            sign = st.sign or ("> 0" if st.positive else None)
            for n in st.names:
                k = key_of(n)
                if sign and (k in self.matrices or k in self.dims or k in self.features):
                    self.fail(n, f"{n.text()} {sign}: a sign is read for a real scalar, and {n.text()} is declared "
                              "otherwise (a matrix, a vector or a dimension)", "a sign of a real scalar, k \\ge 0")
                if sign and k in self.scalars:  # c \in \mathbb{R}, then c > 0 (or c \ge 0)
                    self.scalars[k] = signed_symbol(k, sign)
                    self.notes.append(f"assumption: {n.text()} {sign} ({SIGN_WORDS[sign]})")
                    continue
                if k in self.scalars or k in self.matrices or k in self.dims or k in self.features:
                    self.fail(n, f"{n.text()} is declared twice", "one declaration per name")
                self.scalars[k] = signed_symbol(k, sign)
                if sign:
                    self.notes.append(f"assumption: {n.text()} {sign} ({SIGN_WORDS[sign]})")
            return
        if st.index is None and st.upper is not None:  # x_1, \ldots, x_n: n the length (sequences)
            sequences.declare_length(self, st)
        rows, cols = self.dim(st.shape.rows), self.dim(st.shape.cols)
        columns = {n.base for n in st.names} <= getattr(self, "column_vectors", set())  # (vector_orientation)
        if st.shape.vector and self.convention == "row" and not columns:  # x \in \mathbb{R}^{d}: a row
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
            if n.base == ONES and n.sub is None and n.sup is None and st.index is None:
                self.declare_ones(n, rows, cols)
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

    def scalar(self, k):
        """The declared scalar ``k``; one declared positive (``\\delta > 0``) marks its assumption used, so
        that the steps it reaches say so in their scope."""
        v = self.scalars[k]
        text = sign_text(v)  # k > 0, k >= 0: the stated sign it is checked under
        if text is not None:
            if text not in self.assumptions:
                self.assumption_nodes[text] = None
            self.assumptions[text] = True
            self.hits.append(text)
        return v

    def superscript_family(self, n, L=()):
        """``W_Q^h`` with h a head index: the family key ``W_Q`` (the label below, the index on top); ``A^h``
        (no subscript): the key ``A^·``, head h's A (Elhage et al. write the head on top)."""
        if (isinstance(n, ast.Name) and n.sub is None and n.sup is not None and self.top_head(n.sup, L)):
            return f"{n.base}^{TOP}"
        if (isinstance(n, ast.Name) and n.sup is not None and self.top_head(n.sup, L)
                and isinstance(n.sub, ast.Name) and n.sub.sub is None and n.sub.base not in self.counts
                and n.sub.base not in L):
            return f"{n.base}_{n.sub.base}"
        return None

    def top_head(self, sup: str, L=()) -> bool:
        """``h`` (a head index) or ``h_2`` (a particular head, h a head index) written on top of a name."""
        if len(sup) == 1:
            return sup.isalpha() and (sup in self.counts or sup in L)
        letter, _, rest = sup.partition("_")
        return len(letter) == 1 and letter in self.counts and rest.isalnum()

    def top_index(self, node, L):
        """The head that the superscript of ``node`` names: h (bound or free), or the particular head h_2."""
        if len(node.sup) == 1:
            return self.index_value(ast.Name(node.pos, node.sup), L)
        return sp.Symbol(node.sup, integer=True, positive=True)

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
        needs = any((isinstance(n, ast.Call) and getattr(n.target, "base", None) == "MultiHead")
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
        if sequences.define(self, st):  # x_k = A x_{k-1} + B u_k: read when unrolled
            return
        t = st.target
        index = None
        top = self.superscript_family(t) if t.sub is None else None
        if top is not None:  # A^h = ...: head h's A, the index on top
            index, k = t.sup, top
            taken = k in self.families or k in self.indexed
        elif isinstance(t.sub, ast.Name) and t.sub.sub is None and t.sub.base in self.counts:
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
            if (p.sub is not None and key_of(p) not in self.matrices
                    and not (len(st.params) == 1 and self.is_member_argument(p))) \
                    or p.sup is not None:
                self.fail(p, f"the parameter {p.text()} must be a plain name", "a name such as Q")
        d = Definition(t, st.params, st.body, index, tuple(e.base for e in st.extra))
        d.open = not st.params and self.is_where_clause(st.body)
        if define_end(self, st):  # \ell_i = \max(1, i - w/2): a window's end for each position (window_bounds)
            return
        window_end_refusal(self, st)  # what window_bounds does not read (labelled_slices)
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
        if shape.vector and self.convention == "row":  # z_i \in \mathbb{R}^{d} declared, then defined: a row
            rows, cols = cols, rows
        if not is_matrix(value):
            self.fail(node, "a scalar where a matrix was declared", f"a {rows} × {cols} matrix")
        if not (same_dim(value.rows, rows) and same_dim(value.cols, cols)):
            self.fail(shape, f"the expression is {shape_text(value)}, but the annotation says "
                      f"{sp.sstr(rows)} × {sp.sstr(cols)}", f"M^{{{shape_text(value)}}}", NotationShapeError)

    def is_member_argument(self, a) -> bool:
        """``X_n`` of ``Retention(X_n) = Q_n S_n``: the member at a position letter of an undeclared sequence,
        the one argument of the function the file defines by its value there."""
        return (isinstance(a.sub, ast.Name) and a.sub.sub is None and a.sub.sup is None and len(a.sub.base) == 1
                and a.sub.base.islower() and self.is_undefined_name(ast.Name(a.pos, a.base, None, None, a.font))
                and not sequences.is_member_name(self, a))

    def is_undefined_name(self, n) -> bool:
        """True for a name that nothing declares or defines (``head_i = ...`` then defines it), or
        for a new function of plain names (``MQA(Q, K, V) = ...``, the one-argument ``Attention(X)``)."""
        if isinstance(n, ast.Call):
            if n.axis is not None or not n.args or not all(
                    isinstance(a, ast.Name) and a.sup is None and (a.sub is None or key_of(a) in self.matrices
                                                                   or (len(n.args) == 1 and self.is_member_argument(a)))
                    for a in n.args):  # FFN(x, W, V, W_2): a declared W_2 is a parameter bound to itself
                return False
            t = n.target
            if t.base in VOCABULARY_ARITY:
                return t.sub is None and len(n.args) != VOCABULARY_ARITY[t.base] and (
                    f"{t.base}/{len(n.args)}" not in self.defs)
            if word_label(t.sub):  # K_{gauss}(x, y): the file's own function, even beside a declared K
                return new_labelled_name(self, t)
            return (t.sub is None and self.is_undefined_name(t) and t.base not in ("exp", "log", *TRACE_NAMES)
                    and not is_extremum(n))  # tr(X) = ...: the trace (entries), not a new function
        if not isinstance(n, ast.Name):
            return False
        if n.base in VOCABULARY_ARITY or n.base in ("exp", "log", ONES):
            return False
        if n.sub is not None and self.is_declared_matrix(ast.Name(n.pos, n.base, None, n.sup, n.font)):
            return False  # Q_i, Q_{t,:}, K_{1:t} of a declared matrix: a part of it, which a claim is about
        k = key_of(n)
        top = self.superscript_family(n)
        if sequences.is_member_name(self, n):
            return False
        return not (k in self.matrices or k in self.dims or k in self.defs or k in self.functions or k in self.features
                    or k in self.scalars or k in self.partitions or k in self.aliases
                    or family_key(n) in self.families or family_key(n) in self.indexed
                    or (top is not None and (top in self.families or top in self.indexed)))

    def declare_ones(self, n, rows, cols):
        r"""``\mathbf{1} \in \mathbb{R}^{N \times 1}``: the vector of ones, with the declared shape (a paper's
        declaration of its ones vector, not a free matrix named 1)."""
        if self.ones is not None:
            self.fail(n, f"{n.text()} is declared twice", "one declaration per name")
        if rows != 1 and cols != 1:
            self.fail(n, f"the vector of ones declared as a {sp.sstr(rows)} × {sp.sstr(cols)} matrix",
                      "\\mathbf{1} \\in \\mathbb{R}^{N \\times 1} (a column) or \\mathbb{R}^{1 \\times N} (a row)")
        self.ones = (rows, cols)

    def is_declared_matrix(self, n) -> bool:
        """True when the plain name ``n`` (no subscript) is a matrix the file declares, whole or by blocks."""
        k = self.aliases.get(key_of(n), key_of(n))
        return k in self.matrices or k in self.partitions
