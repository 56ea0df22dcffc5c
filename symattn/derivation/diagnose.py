"""Diagnose a failing step by trying the usual slips, one at a time.

For a step L = R that is not proved, each candidate below changes R in one place; a
candidate that makes the step hold names the slip:

- transposed operand: a transpose dropped (X written where Xᵀ was meant) or added;
- softmax on the other axis: Softmax normalizing rows where columns were meant (or back);
- scale dropped: the 1/sqrt(d_k) of the scores missing (or applied where it was not);
- heads summed in the wrong order: the factors of the summand swapped (head_h W_h^O for
  W_h^O head_h), or the heads paired in reverse (head H+1-h with W_h);
- one declared matrix for another of its shape: queries and keys swapped, a wrong matrix (or a
  wrong denominator), see :mod:`.operand_slips`; slips of a mask, see :mod:`.mask_slips`.

A candidate is first checked on random integer inputs (cheap, never trusted alone), then
given to :func:`symattn.verify`; the diagnosis reports which evidence it has.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from .. import defs as D
from ..defs.heads import FamilyMember, HeadConcat, HeadStack, HeadSum, _OverHeads
from ..defs.shapes import check_shapes, same_dim, show
from ..errors import DerivationError, SymattnError
from ..proof import verify
from ..proof.budget import Budget
from ..proof.refute import search
from ..proof.verdict import general_scope
from . import ast
from .block_sums import blocks_as_written
from .mask_slips import mask_candidates
from .maxima import as_scalar_claim
from .operand_slips import operand_candidates
from .window_bounds import verify_by_cases

MAX_CANDIDATES = 120  # tried in order until one is proved, within the budget


@dataclass(frozen=True)
class Diagnosis:
    """The slip that, corrected, makes the step hold; and how strongly that is known."""

    slip: str
    detail: str
    corrected: str
    evidence: str
    proved: bool
    side: str = "right"  # the side of the step that is corrected

    def describe(self) -> str:
        where = "definition" if self.side == "definition" else f"{self.side} side"
        return (f"likely slip: {self.slip}: {self.detail}\n"
                f"  corrected {where}: {self.corrected}\n  with it the step is {self.evidence}")

    def as_dict(self) -> dict:
        return {"slip": self.slip, "detail": self.detail, "corrected": self.corrected,
                "evidence": self.evidence, "proved": self.proved, "side": self.side}


def _nodes(e, kind):
    seen = []
    for x in sp.preorder_traversal(e):
        if isinstance(x, kind) and x not in seen:
            seen.append(x)
    return seen


def _fits(a, b) -> bool:
    return same_dim(a.rows, b.rows) and same_dim(a.cols, b.cols)


def expr_candidates(L, R):
    """(slip, detail, R') for single changes of the SymPy expression R."""
    for S in _nodes(R, D.Softmax):
        other = {0: "column", 1: "row"}
        yield ("softmax on the other axis",
               f"{show(S, 60)} normalizes each {other[S.axis]}; the step needs each {other[1 - S.axis]}",
               lambda S=S: R.xreplace({S: D.Softmax(S.arg, 1 - S.axis)}))
    scales = [p for p in _nodes(L, sp.Pow) if p.exp == -sp.Rational(1, 2)]
    for S in _nodes(R, D.Softmax):
        coeff, _ = S.arg.as_coeff_mmul() if isinstance(S.arg, sp.MatMul) else (sp.Integer(1), None)
        for c in scales:
            if not S.arg.has(c):
                yield ("scale dropped", f"the scores in {show(S, 60)} lack the factor {c}",
                       lambda S=S, c=c: R.xreplace({S: D.Softmax(c * S.arg, S.axis)}))
        if coeff != 1:
            yield ("scale applied where it does not belong", f"the scores in {show(S, 60)} carry {coeff}",
                   lambda S=S, coeff=coeff: R.xreplace({S: D.Softmax(S.arg / coeff, S.axis)}))
    for N in _nodes(R, _OverHeads):
        for M in _nodes(N.body, sp.MatMul):
            _, mats = M.as_coeff_matrices()
            if len(mats) >= 2:
                swapped = sp.MatMul(*(list(mats[1:]) + [mats[0]]))
                swapped2 = sp.MatMul(*([mats[-1]] + list(mats[:-1])))
                for sw in (swapped, swapped2):
                    yield ("heads summed in the wrong order",
                           f"the factors of {show(M, 50)} are in the wrong order",
                           lambda M=M, sw=sw: R.xreplace({M: sw}))
        what = {HeadSum: "summed", HeadStack: "stacked", HeadConcat: "concatenated"}[type(N)]
        for F in _nodes(N.body, FamilyMember):
            if not F.index.has(N.index):
                continue
            flipped = F.index.xreplace({N.index: N.count + 1 - N.index})
            G = FamilyMember(F.args[0], flipped, *F.shape)
            yield ("heads summed in the wrong order",
                   f"the heads are {what} with {show(F)} where {show(G)} belongs (reversed head order)",
                   lambda N=N, F=F, G=G: R.xreplace({N: type(N)(N.body.xreplace({F: G}), N.index, N.count)}))


def _t(n):
    return ast.T(n.pos, n if isinstance(n, (ast.Name, ast.Group, ast.Call, ast.Block)) else ast.Group(n.pos, n))


def _transposed(n):
    """n^T, with (x^T)^T written x."""
    return n.arg if isinstance(n, ast.T) else _t(n)


def _bare(n):
    return n.body if isinstance(n, ast.Group) else n


def _product(pos, factors):
    return factors[0] if len(factors) == 1 else ast.Mul(pos, tuple(factors))


def group_map_candidates(node, scope):
    """(slip, detail, node') for members W^K_{map} whose group map is not the GQA map: query head i of
    h reads group ceil(i G / h) = floor((i - 1) G / h) + 1 of G (the counts as the file writes them).
    Every member with the same written map is corrected at once (W^K and W^V of a head share it)."""
    out, seen = [], []
    for n in ast.names_of(node):
        if not isinstance(n.sub, (ast.Round, ast.Index)) or n.sub in seen:
            continue
        fam = n.base + (f"^{n.sup}" if n.sup is not None else "")
        letter = scope.family_letters.get(fam)
        G = scope.count_nodes.get(letter)
        if G is None:
            continue
        seen.append(n.sub)
        for i in sorted({x.base for x in ast.names_of(n.sub)} & set(scope.count_nodes) - {letter}):
            h, I = scope.count_nodes[i], ast.Name(n.pos, i)
            ceil = ast.Round(n.pos, "ceil", ast.Div(n.pos, ast.Mul(n.pos, (I, G)), h))
            floor = ast.Index(n.pos, ast.Round(n.pos, "floor", ast.Div(n.pos, ast.Mul(
                n.pos, (ast.Group(n.pos, ast.Index(n.pos, I, "-", ast.Num(n.pos, 1))), G)), h)), "+",
                ast.Num(n.pos, 1))
            for sub in (ceil, floor):
                if sub == n.sub:
                    continue
                fixed = ast.Name(n.pos, n.base, sub, n.sup, n.font)
                out.append(("wrong GQA group map", f"{n.text()} should be {fixed.text()}: query head {i} of "
                            f"{h.text()} reads group {sub.latex()} of {G.text()}", _resub(node, n.sub, sub)))
    return out


def _resub(n, old, new):
    """``n`` with every name subscripted by ``old`` subscripted by ``new``."""
    if isinstance(n, tuple):
        return tuple(_resub(x, old, new) for x in n)
    if not isinstance(n, ast.Node):
        return n
    if isinstance(n, ast.Name) and n.sub == old:
        return ast.Name(n.pos, n.base, new, n.sup, n.font)
    return type(n)(**{f.name: (getattr(n, f.name) if f.name == "pos" else _resub(getattr(n, f.name), old, new))
                      for f in fields(n)})


def structural_candidates(node, scales=()):
    """(slip, detail, node') for the slips of the catalogue that change the structure of a product:

    - transposed product: (A B)^T written A^T B^T (the factors not reversed), or A^T B meant and
      (A B^T)^T written, which is B A^T;
    - transpose of a product inside a projection: (K W^K)^T written K W^{K T} or K^T W^K;
    - transposed operand: a transpose dropped from a sub-product, (K W^K) for (K W^K)^T;
    - heads summed in the wrong order: the factors of a summand over heads swapped;
    - off-by-one in an index: K_{t-1} for K_t, W_{h+1} for W_h (a cache, mask or head index);
    - rotation by the wrong relative position: R_{Theta,m-n} for R_{Theta,n-m};
    - scale dropped: the 1/sqrt(d_k) of the scores missing (``scales`` are the d_k of the left side).
    """
    out = []

    def walk(n, rebuild, in_sum=False):
        if not isinstance(n, ast.Node):
            return
        if isinstance(n, ast.T) and isinstance(_bare(n.arg), ast.Mul):  # (A B^T)^T meant as A^T B
            fs = _bare(n.arg).factors
            meant = ast.Group(n.pos, ast.Mul(n.pos, tuple(_transposed(f) for f in fs)))
            really = " ".join(_transposed(f).text() for f in reversed(fs))
            out.append(("transposed product", f"{n.text()} is {really}: a transpose reverses the factors "
                        f"((A B)^T = B^T A^T); {meant.body.text()} was meant", rebuild(meant)))
        if isinstance(n, ast.Mul):
            fs = list(n.factors)
            for k in range(len(fs) - 1):
                a, b = fs[k], fs[k + 1]
                if isinstance(a, ast.T) and isinstance(b, ast.T):
                    new = fs[:k] + [b, a] + fs[k + 2:]
                    out.append(("transposed product",
                                f"{a.text()} {b.text()} should be {b.text()} {a.text()}: "
                                f"({_bare(b.arg).text()} {_bare(a.arg).text()})^T reverses the factors",
                                rebuild(_product(n.pos, new))))
                elif isinstance(b, ast.T) and not isinstance(a, ast.T):
                    new = fs[:k] + [_t(ast.Group(a.pos, ast.Mul(a.pos, (a, b.arg))))] + fs[k + 2:]
                    out.append(("transpose of a product inside a projection",
                                f"{a.text()} {b.text()} should be ({a.text()} {b.arg.text()})^T: the transpose "
                                "applies to the whole projection", rebuild(_product(n.pos, new))))
                elif isinstance(a, ast.T) and not isinstance(b, ast.T):
                    new = fs[:k] + [_t(ast.Group(a.pos, ast.Mul(a.pos, (b, a.arg))))] + fs[k + 2:]
                    out.append(("transpose of a product inside a projection",
                                f"{a.text()} {b.text()} should be ({b.text()} {a.arg.text()})^T: the transpose "
                                "applies to the whole projection", rebuild(_product(n.pos, new))))
            for size in range(2, len(fs)):
                for k in range(len(fs) - size + 1):
                    run = ast.Mul(fs[k].pos, tuple(fs[k:k + size]))
                    new = fs[:k] + [_t(ast.Group(run.pos, run))] + fs[k + size:]
                    out.append(("transposed operand", f"({run.text()}) should be ({run.text()})^T "
                                "(a transpose dropped)", rebuild(_product(n.pos, new))))
            if in_sum and len(fs) >= 2:
                for new in (fs[1:] + fs[:1], fs[-1:] + fs[:-1]):
                    out.append(("heads summed in the wrong order",
                                f"the factors of {n.text()} are in the wrong order",
                                rebuild(_product(n.pos, new))))
        if isinstance(n, ast.Call) and n.target.base in ("Softmax", "softmax") and len(n.args) == 1:
            for d in scales:
                arg = n.args[0]
                if d in arg.text():
                    continue
                div = ast.Div(arg.pos, arg, ast.Sqrt(arg.pos, _dim_name(d, arg.pos)))
                out.append(("scale dropped", f"the scores in {n.text()} lack the factor 1/sqrt({d})",
                            rebuild(ast.Call(n.pos, n.target, (div,), n.axis))))
        if isinstance(n, ast.Name) and isinstance(n.sub, ast.ParamIndex):  # R_{Theta,m-n} for R_{Theta,n-m}
            idx = n.sub.index
            if isinstance(idx, ast.Index) and idx.op == "-":
                swapped = ast.Index(idx.pos, idx.right, "-", idx.left)
                fixed = ast.Name(n.pos, n.base, ast.ParamIndex(n.sub.pos, n.sub.label, swapped), n.sup, n.font)
                out.append(("rotation by the wrong relative position", f"{n.text()} should be {fixed.text()}: the "
                            "score rotates by the key's position minus the query's", rebuild(fixed)))
            return
        if isinstance(n, ast.Name) and n.sub is not None:
            for sub2, _ in _off_by_one(n.sub):
                fixed = ast.Name(n.pos, n.base, sub2, n.sup, n.font)
                out.append(("off-by-one in an index", f"{n.text()} should be {fixed.text()}", rebuild(fixed)))
            return
        for f in fields(n):
            if f.name == "pos" or (isinstance(n, ast.Call) and f.name == "target"):
                continue
            v = getattr(n, f.name)
            inner = in_sum or isinstance(n, ast.Sum)
            if isinstance(v, ast.Node):
                walk(v, lambda x, n=n, f=f: rebuild(_replace(n, f.name, x)), inner)
            elif isinstance(v, tuple):
                for k, item in enumerate(v):
                    _walk_tuple(item, k, n, f.name, v, rebuild, lambda a, b, inner=inner: walk(a, b, inner))

    walk(node, lambda x: x)
    return out


def _dim_name(d: str, pos):
    base, _, sub = d.partition("_")
    return ast.Name(pos, base, ast.Name(pos, sub) if sub else None)


def _off_by_one(sub):
    """Index nodes one away from ``sub``: t-1 -> t, t -> t-1 and t+1, 2 -> 1 and 3; the ends of a slice
    1:t; the row of [.]_{t,:}."""
    out = []
    if isinstance(sub, ast.Slice):  # K_{1:t-1} for K_{1:t}: the end of a slice (then its start)
        for hi, _ in _off_by_one(sub.hi):
            new = replace(sub, hi=hi)
            out.append((new, new.text()))
        for lo, _ in _off_by_one(sub.lo):
            new = replace(sub, lo=lo)
            out.append((new, new.text()))
        return out
    if isinstance(sub, ast.RowIndex):  # [.]_{t-1,:} for [.]_{t,:}
        return [(ast.RowIndex(sub.pos, k), f"{text},:") for k, text in _off_by_one(sub.index)]
    if isinstance(sub, ast.Index) and isinstance(sub.right, ast.Num) and sub.right.value == 1:
        out.append((sub.left, sub.left.text()))
    elif isinstance(sub, ast.Name) and sub.sub is None and len(sub.base) == 1:
        for op in ("-", "+"):
            idx = ast.Index(sub.pos, sub, op, ast.Num(sub.pos, 1))
            out.append((idx, idx.text()))
    elif isinstance(sub, ast.Num):
        for v in (sub.value - 1, sub.value + 1):
            if v >= 1:
                out.append((ast.Num(sub.pos, v), str(v)))
    return out


def node_candidates(node, convention: str = "column"):
    """(slip, detail, node') for one transpose added or removed, or one softmax axis switched."""
    out = []

    def walk(n, rebuild):
        if not isinstance(n, ast.Node):
            return
        if isinstance(n, ast.Call) and n.target.base in ("Softmax", "softmax"):
            axis = n.axis or ("col" if convention == "column" else "row")
            other = "row" if axis == "col" else "col"
            words = {"col": "column", "row": "row"}
            out.append(("softmax on the other axis",
                        f"{n.text()} normalizes each {words[axis]}; the step needs each {words[other]}",
                        rebuild(ast.Call(n.pos, n.target, n.args, other))))
        if isinstance(n, ast.Call) and not _is_function_name(n.target) and len(n.args) == 1:
            arg = n.args[0]  # A (B) is a product: try A (B)^T
            out.append(("transposed operand",
                        f"({arg.text()}) should be ({arg.text()})^T (a transpose dropped)",
                        rebuild(ast.Mul(n.pos, (n.target, ast.T(arg.pos, ast.Group(arg.pos, arg)))))))
        if isinstance(n, ast.T):
            out.append(("transposed operand", f"{n.text()} should be {n.arg.text()} (a transpose too many)",
                        rebuild(n.arg)))
        elif isinstance(n, (ast.Name, ast.Group, ast.Call)) and not _is_function_name(n):
            out.append(("transposed operand", f"{n.text()} should be {n.text()}^T (a transpose dropped)",
                        rebuild(ast.T(n.pos, n))))
        elif isinstance(n, (ast.Mul, ast.Div)):
            out.append(("transposed operand", f"{n.text()} should be ({n.text()})^T (the operands swapped)",
                        rebuild(ast.T(n.pos, ast.Group(n.pos, n)))))
        if isinstance(n, ast.Name):
            return
        for f in fields(n):
            if f.name == "pos" or (isinstance(n, ast.Call) and f.name == "target"):
                continue
            v = getattr(n, f.name)
            if isinstance(v, ast.Node):
                walk(v, lambda x, n=n, f=f: rebuild(_replace(n, f.name, x)))
            elif isinstance(v, tuple):
                for k, item in enumerate(v):
                    _walk_tuple(item, k, n, f.name, v, rebuild, walk)

    walk(node, lambda x: x)
    return out


def _walk_tuple(item, k, n, fname, v, rebuild, walk):
    if isinstance(item, ast.Node):
        walk(item, lambda x: rebuild(_replace(n, fname, v[:k] + (x,) + v[k + 1:])))
    elif isinstance(item, tuple):  # Add terms (sign, node) and Block rows
        for j, sub in enumerate(item):
            if isinstance(sub, ast.Node):
                walk(sub, lambda x, j=j: rebuild(_replace(n, fname, v[:k] + (item[:j] + (x,) + item[j + 1:],)
                                                          + v[k + 1:])))


def _is_function_name(n) -> bool:
    return isinstance(n, ast.Name) and n.base in ("Attention", "Softmax", "softmax", "MultiHead", "Concat",
                                                  "exp", "log")


def _replace(n, name, value):
    kw = {f.name: getattr(n, f.name) for f in fields(n)}
    kw[name] = value
    return type(n)(**kw)


def _consistent(L, R2, seconds: float) -> int:
    """Number of random samples on which L and R2 agree; 0 when they differ or cannot be evaluated."""
    try:
        cex, _, agreed = search(L, R2, Budget(seconds), trials=2)
    except SymattnError:
        return 0
    return 0 if cex is not None else agreed


def verify_positions(scope, L, R, **kw):
    """verify(L, R) where a position t of a sequence of length n is read as n = t + s (s >= 1), and again
    at s = 0 (t = n): the first verdict that is not a proof, or the proof with both scopes."""
    positions = getattr(scope, "positions", None) or {}
    L, R = as_scalar_claim(L, R)  # max(a, b) = ...: the numbers' claim, split by cases (.maxima)
    if (w := verify_by_cases(scope, L, R, verify, **kw)) is not None:  # ends \ell_i, r_i of a window (window_bounds)
        return w
    if not positions:
        return halves_as_written(scope, verify(L, R, **kw))
    L, R = L.xreplace(scope.subs), R.xreplace(scope.subs)
    v = halves_as_written(scope, as_written(positions, verify(L, R, **kw), last=False))
    if not v.proved:
        return v
    last = {slack: 0 for _, _, slack in positions.values()}
    w = halves_as_written(scope, as_written(positions, verify(L.xreplace(last), R.xreplace(last), **kw), last=True))
    if not w.proved:
        return w
    names = ", ".join(f"{p} = {sp.sstr(n)}" for p, (_, n, _) in positions.items())
    return replace(v, scope=f"{v.scope}; and at {names}: {w.scope}", seconds=v.seconds + w.seconds)


def halves_as_written(scope, v):
    """The verdict ``v`` with the half d/2 of an even dimension d (read as 2 p for a rotation's p pairs) named
    as the file writes it: d/2 in a scope, d = 2 p in a counterexample."""
    v = blocks_as_written(scope, v)  # n read as m · (n/m) for a block sum (block_sums)
    halves = {str(p): (str(d), p.name) for d, p2 in (getattr(scope, "subs", None) or {}).items()
              for p in sp.sympify(p2).atoms(sp.Dummy) if sp.sympify(p2) == 2 * p}
    if not halves:
        return v
    text = v.scope
    for inner, (_, shown) in halves.items():
        text = text.replace(inner, shown)
    cex = v.counterexample
    if cex is not None:
        dims = {halves[k][0] if k in halves else k: 2 * x if k in halves else x for k, x in cex.dims.items()}
        cex = replace(cex, dims=dims)
        text = "counterexample at " + ", ".join(f"{k}={x}" for k, x in dims.items())
    return replace(v, scope=text, counterexample=cex)


def as_written(positions, v, last: bool):
    """The verdict ``v`` of a step checked with each length n read as t + s (a position t, an internal slack
    s >= 1; or s = 0 when ``last``) in the file's own names: the scope quantifies over n and the positions
    t < n (or t = n), and a counterexample gives n, never s."""
    t_of = {str(t): (str(n), p) for p, (t, n, _) in positions.items()}
    slacks = {str(s): (str(t), str(n)) for t, n, s in positions.values()}
    cex = v.counterexample
    if cex is not None:
        dims = {}
        for k, x in cex.dims.items():
            if k in slacks:
                t, n = slacks[k]
                dims[n] = cex.dims.get(t, 0) + x
            elif k in t_of and last:
                dims[t_of[k][0]] = x
            else:
                dims[k] = x
        cex = replace(cex, dims=dims)
        shown = ", ".join(f"{k}={x}" for k, x in dims.items())
        return replace(v, counterexample=cex, scope=f"counterexample at {shown}")
    if v.proved and v.general and any(v.over):
        dims, heads, scalars = v.over
        named, read = set(), set()
        for d in dims + heads:  # a position or its slack, read as a count of heads, is a length too
            read.add(d)
            if d in slacks:
                named.add(slacks[d][1])
            elif d in t_of:
                named.add(t_of[d][0])
            elif d in dims:
                named.add(d)
        where = [f"every position 1 <= {p} < {sp.sstr(n)}" for p, (t, n, _) in positions.items()
                 if not last and str(t) in read]
        heads = tuple(h for h in heads if h not in slacks and h not in t_of)
        over = (tuple(sorted(named)), heads, scalars)
        return replace(v, over=over, scope=" and ".join([general_scope(over)] + where))
    def named(text):
        for s, (t, n) in slacks.items():
            text = text.replace(s, n if last else f"({n} - {t})")
        return text

    trace = tuple(named(x) if isinstance(x, str) else x for x in v.trace)
    return replace(v, scope=named(v.scope), trace=trace)


def diagnose_left(step, budget: float):
    """A slip of the catalogue in an ill-formed left side (the first expression of a chain) whose
    correction makes it well-formed and equal to the right side, or None."""
    R, node, scope = step.rhs_expr, step.lhs_node, step.scope_obj
    if isinstance(R, Exception) or R is None or node is None or scope is None or not isinstance(R, MatrixExpr):
        return None
    latex = getattr(scope, "dialect", "notation") == "latex"
    deadline = Budget(budget)
    for slip, detail, fixed in structural_candidates(node)[:MAX_CANDIDATES]:
        if deadline.left() <= 0:
            break
        try:
            L2 = scope.expr(fixed, dict(step.bound))
            check_shapes(L2)
        except (DerivationError, SymattnError, ValueError, TypeError, AttributeError):
            continue
        if not isinstance(L2, MatrixExpr) or not _fits(L2, R) or not _consistent(L2, R, min(2.0, deadline.left())):
            continue
        try:
            v = verify_positions(scope, L2, R, budget=max(min(5.0, deadline.left()), 0.5),
                                 search_counterexample=False)
        except SymattnError:
            v = None
        proved = v is not None and v.proved
        how = f"proved ({v.scope}) by {v.method}" if proved else "consistent on random samples (a hint, not a proof)"
        return Diagnosis(slip, detail, fixed.latex() if latex else fixed.text(), how, proved, "left")
    return None


def diagnose_step(step, budget: float = 10.0):
    """The first slip whose correction makes ``step`` hold, or None."""
    L = step.lhs_expr
    if isinstance(L, Exception):
        return diagnose_left(step, budget)
    if L is None or not isinstance(L, MatrixExpr):
        return None  # a scalar side: no slip of a matrix derivation explains it
    deadline = Budget(budget)
    candidates = []
    scope = step.scope_obj
    latex = getattr(scope, "dialect", "notation") == "latex"
    scales = sorted({str(p.base) for p in _nodes(L, sp.Pow) if p.exp == -sp.Rational(1, 2) and p.base.is_Symbol})

    def add_nodes(found):
        for slip, detail, node in found:
            candidates.append((slip, detail, lambda node=node: scope.expr(node, dict(step.bound)),
                               node.latex() if latex else node.text()))

    written = [] if step.rhs_node is None or scope is None else node_candidates(step.rhs_node, scope.convention)
    if step.rhs_node is not None and scope is not None:  # as written in the file come first; simpler slips first
        structural = structural_candidates(step.rhs_node, scales)
        projection = "transpose of a product inside a projection"
        add_nodes(group_map_candidates(step.rhs_node, scope))
        candidates.extend(mask_candidates(step, scope, latex))  # a mask's cases: off by one, flipped
        add_nodes([c for c in structural if c[0] != projection])
        add_nodes([c for c in written if c[0] == "softmax on the other axis"])
        add_nodes([c for c in written if c[0] == "transposed operand" and "operands swapped" not in c[1]])
        add_nodes([c for c in structural if c[0] == projection])
    R = step.rhs_expr
    if not isinstance(R, Exception) and R is not None:
        for slip, detail, make in expr_candidates(L, R):
            candidates.append((slip, detail, make, None))
    add_nodes([c for c in written if c[0] != "softmax on the other axis" and not (
        c[0] == "transposed operand" and "operands swapped" not in c[1])])
    if step.rhs_node is not None and scope is not None:  # last: Q for K, a wrong matrix in a denominator
        add_nodes(operand_candidates(step.rhs_node, scope))
    best = None
    for slip, detail, make, text, *where in candidates[:MAX_CANDIDATES]:
        if deadline.left() <= 0:
            break
        try:
            R2 = make()
            check_shapes(R2)
        except (DerivationError, SymattnError, ValueError, TypeError, AttributeError):
            continue  # the candidate does not fit together: not this slip
        if getattr(step, "orientation", "") and isinstance(R2, MatrixExpr) and not _fits(L, R2) and _fits(L, R2.T):
            R2 = R2.T  # a row compared with a column as vectors, as the step itself was
        if not isinstance(R2, MatrixExpr) or not _fits(L, R2):
            continue
        agreed = _consistent(L, R2, min(2.0, max(deadline.left(), 0.1)))
        if not agreed:
            continue
        corrected = text or (sp.latex(R2) if latex else sp.sstr(R2))
        try:
            v = verify_positions(scope, L, R2, budget=max(min(5.0, deadline.left()), 0.5),
                                 search_counterexample=False)
        except SymattnError:
            v = None
        side = where[0] if where else "right"
        if v is not None and v.proved:
            return Diagnosis(slip, detail, corrected, f"proved ({v.scope}) by {v.method}", True, side)
        if best is None:
            best = Diagnosis(slip, detail, corrected,
                             f"consistent on {agreed} random samples (a hint, not a proof)", False, side)
    return best
