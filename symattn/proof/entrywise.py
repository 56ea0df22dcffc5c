"""Strategy B: compare the (i, j) entries of both sides with symbolic indices.

Entries of products become sums over fresh Dummy indices (never a fixed name, which
could be captured), entries of Softmax become exp(x_ij) / Σ_k exp(x_kj). Both sides
are then normalized by true scalar identities: expansion (with exp(a + b) =
exp(a) exp(b)), splitting sums over +, pulling factors free of the summation index
out of sums, renaming bound indices canonically, and cancelling.

Entry rules beyond products, sums and Softmax (each is the definition of the node):

- a slice X[r0:r1:rs, c0:c1:cs] has entry (i, j) = X_{r0 + rs·i, c0 + cs·j};
- adjacent slices of one matrix glue back: [X[:, a:b]  X[:, b:c]] = X[:, a:c] (and vertically),
  and a slice over the full range is the matrix itself (``merge_slices``);
- nodes that declare ``entry_is_defined`` (masks, permutation matrices) give their entry by
  ``_entry``: Visible(i, j + offset) for CausalMask, [i = σ(j)] for a permutation matrix P_σ;
- a stack [e_1; ...; e_H] of blocks with R rows has entry (i, j) = (e_h)_{i - R(h-1), j} with
  h = floor(i/R) + 1, and a concatenation [e_1 ... e_H] of blocks with C columns likewise by
  columns (for every 0 <= i < H·R, this is the definition of stacking); a node over heads
  whose body binds the same index again is refused (substitution would capture);
- a free index over a single row (column) is 0, the only index there.

Integer rules on indices: floor(x + n) = floor(x) + n for an integer n (SymPy, after expansion),
and ``merge_nested_floors``: floor(floor(x)/r) = floor(x/r) for a positive integer r.

When the difference of the two entries does not normalize to 0, it is tried once more in the
interchange form (sums pulled out of products, their limits ordered; see :mod:`symattn.proof.sums`):
the numerator of the difference is 0 there only if the difference is 0.

The sum rules (delta elimination, permutation reindexing, mask restriction, ...) and their
side conditions are listed in :mod:`symattn.proof.sums`, part of the trust base.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixElement

from ..defs.dims import BoundIndex
from ..defs.heads import FamilyMember, HeadConcat, HeadStack, HeadSum, _OverHeads
from ..defs.softmax import Softmax
from .sums import prenex, simplify_sums
from .verdict import TraceLine, _trace_line


class NoEntryRule(Exception):
    pass


def _fresh():
    return sp.Dummy("k", integer=True)


#: sums over a concrete range at most this long are written out term by term
WRITE_OUT = 8


def _index_sum(term, length):
    """Σ_{k=0}^{length-1} term(k): written out when the length is a small integer, else a Sum."""
    length = sp.sympify(length)
    if length.is_Integer and int(length) <= WRITE_OUT:
        return sp.Add(*[term(sp.Integer(k)) for k in range(int(length))])
    k = _fresh()
    return sp.Sum(term(k), (k, 0, length - 1))


def _block_entry(e, i, j):
    """Entry (i, j) of a block matrix with concrete block sizes, at concrete i and j."""
    if not (i.is_Integer and j.is_Integer):
        return None
    rows, cols = e.rowblocksizes, e.colblocksizes
    if not all(sp.sympify(x).is_Integer for x in rows + cols):
        return None
    r, i = 0, int(i)
    while i >= rows[r]:
        i, r = i - rows[r], r + 1
    c, j = 0, int(j)
    while j >= cols[c]:
        j, c = j - cols[c], c + 1
    return entry(e.blocks[r, c], sp.Integer(i), sp.Integer(j))


def entry(e, i, j):
    """The (i, j) entry of a matrix expression, as a scalar SymPy expression."""
    if isinstance(e, (sp.MatrixSymbol, FamilyMember)):
        # a single row (column) has only index 0 there; a structured input (Symmetric) states its entry
        i, j = (0 if e.rows == 1 else i), (0 if e.cols == 1 else j)
        return e._entry(i, j) if hasattr(e, "structure") else MatrixElement(e, i, j)
    if isinstance(e, sp.MatMul):
        coeff, mats = e.as_coeff_matrices()
        return coeff * _product_entry(mats, i, j)
    if isinstance(e, sp.MatAdd):
        return sp.Add(*[entry(a, i, j) for a in e.args])
    if isinstance(e, sp.Transpose):
        return entry(e.arg, j, i)
    if isinstance(e, Softmax):
        X = e.arg
        if e.axis == 0:
            return sp.exp(entry(X, i, j)) / _index_sum(lambda k: sp.exp(entry(X, k, j)), X.rows)
        return sp.exp(entry(X, i, j)) / _index_sum(lambda k: sp.exp(entry(X, i, k)), X.cols)
    if isinstance(e, sp.Identity):
        return sp.KroneckerDelta(i, j)
    if isinstance(e, sp.ZeroMatrix):
        return sp.Integer(0)
    if isinstance(e, sp.OneMatrix):
        return sp.Integer(1)
    if isinstance(e, sp.HadamardProduct):
        return sp.Mul(*[entry(a, i, j) for a in e.args])
    if isinstance(e, sp.HadamardPower):
        return entry(e.base, i, j) ** e.exp
    if isinstance(e, sp.MatPow) and not isinstance(e, sp.Inverse):
        k = sp.sympify(e.exp)
        if not (k.is_Integer and k > 0):
            raise NoEntryRule(f"a matrix power with exponent {k}")
        return _product_entry([e.base] * int(k), i, j)  # SymPy folds A·A into A**2 when the claim is built
    if isinstance(e, _OverHeads) and e.rebinds_index():
        raise NoEntryRule(f"a node over heads whose body rebinds its index {e.index}")
    if isinstance(e, HeadSum):
        k = sp.Dummy("h", integer=True, positive=True)
        return sp.Sum(entry(e.term(k), i, j), (k, 1, e.count))
    if isinstance(e, HeadStack):
        R = e.body.rows
        h = sp.floor(i / R) + 1
        return entry(e.term(h), i - R * (h - 1), j)
    if isinstance(e, HeadConcat):
        C = e.body.cols
        h = sp.floor(j / C) + 1
        return entry(e.term(h), i, j - C * (h - 1))
    if isinstance(e, sp.MatrixSlice):
        (r0, _, rs), (c0, _, cs) = e.rowslice, e.colslice
        return entry(e.parent, r0 + rs * i, c0 + cs * j)
    if isinstance(e, sp.BlockMatrix):
        flat = _flattened(e)
        if flat is not None:
            return entry(flat, i, j)
        merged = merge_slices(e)
        if merged is not None:
            return entry(merged, i, j)
        if e.blockshape == (1, 1):
            return entry(e.blocks[0, 0], i, j)
        located = _block_entry(e, i, j)
        if located is not None:
            return located
        B = e.blocks
        if all(isinstance(b, sp.Transpose) for b in B):
            # [A_11ᵀ A_21ᵀ; A_12ᵀ A_22ᵀ] = [A_11 A_12; A_21 A_22]ᵀ
            inner = sp.BlockMatrix([[B[r, c].arg for r in range(B.rows)] for c in range(B.cols)])
            return entry(inner, j, i)
        raise NoEntryRule("a block matrix indexed symbolically")
    if getattr(e, "entry_is_defined", False):
        return e._entry(i, j)
    if isinstance(e, sp.MatrixBase):
        if i.is_Integer and j.is_Integer:
            return e[i, j]
        raise NoEntryRule("an explicit matrix indexed symbolically")
    if hasattr(e, "entry_rule"):  # nodes that state their own entries (defs/numeric_nodes.py)
        return e.entry_rule(i, j, entry)
    if hasattr(e, "_entry") and getattr(e, "entry_is_opaque", False):
        return MatrixElement(e, i, j)
    raise NoEntryRule(f"no entry rule for {type(e).__name__}")


def _same(a, b) -> bool:
    return sp.expand(sp.sympify(a) - sp.sympify(b)) == 0


def _full(e):
    """A slice over the whole of its parent is the parent."""
    if isinstance(e, sp.MatrixSlice):
        (r0, r1, rs), (c0, c1, cs) = e.rowslice, e.colslice
        p = e.parent
        if r0 == 0 and c0 == 0 and rs == 1 and cs == 1 and _same(r1, p.rows) and _same(c1, p.cols):
            return p
    return e


def _line_parts(B, side_by_side: bool) -> list:
    """The blocks of a single block row (column), a nested block row (column) spliced in:
    [[A B] C] is [A B C]."""
    out = []
    for k in range(B.cols if side_by_side else B.rows):
        b = B[0, k] if side_by_side else B[k, 0]
        if isinstance(b, sp.BlockMatrix) and (b.blocks.rows if side_by_side else b.blocks.cols) == 1:
            out += _line_parts(b.blocks, side_by_side)
        else:
            out.append(b)
    return out


def _flattened(e):
    """A single block row (column) with its nested block rows (columns) spliced in; None when none is nested."""
    B = e.blocks
    for side_by_side, single in ((True, B.rows == 1), (False, B.cols == 1)):
        if single:
            parts = _line_parts(B, side_by_side)
            if len(parts) > (B.cols if side_by_side else B.rows):
                return sp.BlockMatrix([parts] if side_by_side else [[p] for p in parts])
    return None


def merge_slices(e):
    """[X[r, a:b]  X[r, b:c]] = X[r, a:c] and [X[a:b, c]; X[b:c, c]] = X[a:c, c] (nested block rows
    spliced in first: [[X[:, a:b] X[:, b:c]] X[:, c:d]] = X[:, a:d]); None otherwise."""
    B = e.blocks
    if B.rows == 1 or B.cols == 1:
        parts = _line_parts(B, B.rows == 1)
        if not all(isinstance(p, sp.MatrixSlice) for p in parts):
            return None
        parent = parts[0].parent
        along, across = ("colslice", "rowslice") if B.rows == 1 else ("rowslice", "colslice")
        first = getattr(parts[0], along)
        for prev, nxt in zip(parts, parts[1:]):
            a, b = getattr(prev, along), getattr(nxt, along)
            if (nxt.parent != parent or getattr(nxt, across) != getattr(parts[0], across)
                    or a[2] != 1 or b[2] != 1 or not _same(a[1], b[0])):
                return None
        span = (first[0], getattr(parts[-1], along)[1], 1)
        other = getattr(parts[0], across)
        rows, cols = (other, span) if B.rows == 1 else (span, other)
        return _full(sp.MatrixSlice(parent, rows, cols))
    return None


def _product_entry(mats, i, j):
    """(A_1 A_2 ... A_r)_ij = Σ_k (A_1)_ik (A_2 ... A_r)_kj, with a fresh k each time."""
    if len(mats) == 1:
        return entry(mats[0], i, j)
    first = mats[0]
    return _index_sum(lambda k: entry(first, i, k) * _product_entry(mats[1:], k, j), first.cols)


def rename_bound(x, depth: int = 0, fresh: bool = True, memo: dict | None = None):
    """Rename each bound index by its nesting depth (_b0, _b1, ...), so that alpha-equivalent
    sums become identical. Indices are first made fresh Dummies, so no renaming can capture.

    Equal subtrees at equal depth are renamed once (``memo``) and share the result: an expanded
    entry repeats the same sums (a softmax denominator) in many terms."""
    if not isinstance(x, sp.Basic) or x.is_Atom:
        return x
    memo = {} if memo is None else memo
    key = (x, depth)
    if key in memo:
        return memo[key]
    if isinstance(x, (sp.Sum, sp.Product)):
        # limits run innermost first; name the outermost by the current depth
        mapping, new_limits, d = {}, [], depth
        for k, lo, hi in reversed(x.limits):
            new = sp.Dummy("b") if fresh else BoundIndex(f"_b{d}", integer=True)
            new_limits.append((new, rename_bound(lo.xreplace(mapping), d, fresh, memo),
                               rename_bound(hi.xreplace(mapping), d, fresh, memo)))
            mapping[k] = new
            d += 1
        body = rename_bound(x.function.xreplace(mapping), d, fresh, memo)
        out = x.func(body, *reversed(new_limits))
    else:
        args = [rename_bound(a, depth, fresh, memo) for a in x.args]
        out = x.func(*args) if args != list(x.args) else x
    memo[key] = out
    return out


def _split_floor(f):
    """For floor(c·floor(y)) with 1/c a positive integer: (floor(y), c); otherwise None."""
    if not isinstance(f, sp.floor):
        return None
    parts = sp.Mul.make_args(f.args[0])
    inner = [p for p in parts if isinstance(p, sp.floor)]
    if len(inner) != 1:
        return None
    c = sp.Mul(*[p for p in parts if p is not inner[0]])
    r = 1 / c
    return (inner[0], c) if (r.is_integer and r.is_positive) else None


def merge_nested_floors(x):
    """floor(floor(y)/r) = floor(y/r) for a positive integer r."""
    for _ in range(4):
        new = x.replace(lambda f: _split_floor(f) is not None,
                        lambda f: sp.floor(sp.expand(_split_floor(f)[0].args[0] * _split_floor(f)[1])))
        if new == x:
            return x
        x = new
    return x


def normalize(x, ranges: dict | None = None, rounds: int = 4):
    """Expand, apply the sum rules until nothing changes, rename bound indices, cancel."""
    x = sp.expand(simplify_sums(x, ranges), power_exp=True)
    for _ in range(rounds):
        new = sp.expand(simplify_sums(x, ranges), power_exp=True)
        if new == x:
            break
        x = new
    if x.has(sp.floor):
        x = sp.expand(merge_nested_floors(x))
    x = rename_bound(rename_bound(x), fresh=False)
    return sp.cancel(sp.together(x))


def interchanged(d):
    """``d`` in the interchange form of :func:`symattn.proof.sums.prenex`, bound indices renamed, cancelled."""
    x = prenex(sp.numer(sp.together(d)))
    x = rename_bound(rename_bound(x), fresh=False)
    return sp.cancel(sp.together(x))


def _free_indices(length, name):
    """The values a free index takes: each integer of a short concrete range, else one Dummy."""
    length = sp.sympify(length)
    if length.is_Integer and int(length) <= WRITE_OUT:
        return [sp.Integer(k) for k in range(int(length))]
    return [sp.Dummy(name, integer=True)]


def _entry_line(where: str, i, j, side: str, value) -> TraceLine:
    """"entry (i, j) of lhs: ...": the engine's text keeps the plain "(i, j)"; the readable and LaTeX
    forms print i and j with the expression, so a user's own i renames both alike."""
    line = TraceLine(f"entry {where} of {side}: {{}}", value, limit=200)
    return _trace_line(f"entry ({{}}, {{}}) of {side}: {{}}", (i, j, value), 200, str(line))


def same_fractions(a, b, ranges=None) -> bool:
    """True when a = n₁/d₁ and b = n₂/d₂ (over a common denominator each) with n₁ - n₂ and d₁ - d₂ both
    zero in the normal or the interchange form: then a = b. Comparing a - b over the product d₁ d₂
    can leave a sum of products of sums that only a relabelling of indices over the same range
    cancels (Σ_p Σ_q x_p y_q z_q w_p against Σ_p Σ_q x_q y_p z_q w_p), which the interchange form
    does not try; each fraction's own parts do not multiply."""
    (n1, d1), (n2, d2) = sp.fraction(sp.together(a)), sp.fraction(sp.together(b))
    if d1 == 1 and d2 == 1:
        return False
    for x in (n1 - n2, d1 - d2):
        d = normalize(x, ranges)
        if d != 0 and interchanged(d) != 0:
            return False
    return True


def same_entrywise(lhs, rhs, budget) -> tuple[bool, list[str]]:
    """Compare entry (i, j) of both sides: symbolic i, j, or every i (j) of a short concrete range."""
    rows, cols = _free_indices(lhs.rows, "i"), _free_indices(lhs.cols, "j")
    trace = []
    for i in rows:
        for j in cols:
            try:
                a, b = entry(lhs, i, j), entry(rhs, i, j)
            except NoEntryRule as exc:
                return False, trace + [f"entrywise: {exc}"]
            where = f"({i}, {j})" if (i.is_Integer and j.is_Integer) else "(i, j)"
            trace += [_entry_line(where, i, j, "lhs", a), _entry_line(where, i, j, "rhs", b)]
            with budget.limit(what="entrywise normalization"):
                ranges = {x: (0, hi - 1) for x, hi in ((i, lhs.rows), (j, lhs.cols)) if isinstance(x, sp.Dummy)}
                d = normalize(a - b, ranges)
                if d != 0:
                    d = interchanged(d)
                    if d == 0:
                        trace.append(f"at {where}: zero after pulling sums out and ordering their limits")
                if d != 0 and same_fractions(a, b, ranges):
                    d = 0
                    trace.append(f"at {where}: the numerators agree and the denominators agree")
            if d != 0:
                line = TraceLine(f"lhs - rhs at {where} normalizes to {{}}, not 0", d, limit=200)
                trace.append(_trace_line("lhs - rhs at ({}, {}) normalizes to {}, not 0", (i, j, d), 200, str(line)))
                return False, trace
    scope = "for symbolic i, j" if len(rows) == len(cols) == 1 else f"for all {len(rows) * len(cols)} index pairs"
    trace.append(f"lhs_ij - rhs_ij normalizes to 0 {scope}")
    return True, trace
