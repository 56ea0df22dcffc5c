"""Positions and index arithmetic in a derivation: head indices and their arithmetic, positions t of a
sequence (K_{1:t}, [.]_{t,:}), slices, and masks read from their cases; a mixin of
:class:`~.elaborate.Scope`."""

from __future__ import annotations

import sympy as sp

from .. import defs as D
from ..defs.shapes import same_dim
from ..errors import NotationShapeError, UnknownSymbolError
from . import ast
from .conditions import Conjunction, window_mask, window_refusal
from .decay_masks import is_decay
from .decay_masks import refuse_use as refuse_decay
from .labelled_slices import sliced_base
from .result_parts import ResultParts
from .symbols import dimension_symbol, is_matrix, key_of
from .window_bounds import check_positions as window_positions
from .window_bounds import end_value


class Positions(ResultParts):
    """Indices, positions, slices and masks for :class:`~.elaborate.Scope` (one vector ``[E]_n`` of a result
    from :class:`~.result_parts.ResultParts`)."""

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
        if window_positions(self, node, lo, hi, length):  # ends \ell_i, r_i: checked in every case (window_bounds)
            return
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
        if (end := end_value(self, node, length, L)) is not None:  # \ell_i: a window's end (window_bounds)
            return end
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
            if node.base in L or node.base in self.counts or len(node.base.rstrip("'")) != 1:
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
        base = sliced_base(self, node)  # K_{s,1:t}: a slice of K_s (labelled_slices)
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

    def refuse_mask_alone(self, node):
        """Refuse the mask ``node`` used on its own (a decay mask: in a product, ``decay_masks``)."""
        cases = self.masks[key_of(node)][2]
        if is_decay(cases):
            refuse_decay(self, node, cases)
        self.fail(node, f"the mask {node.text()} on its own", f"the mask as a summand of scores, as in "
                  f"\\mathrm{{softmax}}(QK^\\top + {node.base})")

    def mask(self, node, rows, cols):
        """The mask M_{ab} defined by cases, as the library's CausalMask or PaddingMask of shape rows × cols."""
        a, b, cases = self.masks[key_of(node)]
        if is_decay(cases):  # D_{nm} = \gamma^{n-m} multiplies; it is no summand of scores (decay_masks)
            refuse_decay(self, node, cases)
        zero = [c for v, c in cases.rows if v == "0"]
        inf = [c for v, c in cases.rows if v == "-inf"]
        usage = ("0 & s \\le t \\\\ -\\infty & s > t (a causal mask, or t \\le s for the column convention), "
                 "or 0 & s \\le L \\\\ -\\infty & s > L (a padding mask of valid length L)")
        if len(cases.rows) != 2 or len(zero) != 1 or len(inf) != 1 or zero[0] is None:
            self.fail(cases, f"the cases of {node.text()} are not one row 0 and one row -\\infty", usage)
        why = window_refusal(inf[0])
        if why:
            self.fail(cases, f"{node.text()}: {why}", usage)
        if isinstance(zero[0], Conjunction):  # i - W <= j <= i, |i - j| <= w: a window, one mask per comparison
            return window_mask(self, node, cases, a, b, rows, cols)
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
