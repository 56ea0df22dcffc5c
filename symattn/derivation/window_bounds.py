r"""Windows whose ends are numbers defined for each position: Longformer's ``\ell_i``, ``r_i`` and ``w/2``.

Beltagy et al. (2020) let each position i attend to the w/2 positions on each side, a band mask
``M_{ij} = 0`` where ``|i - j| \le \frac{w}{2}``, and write the window's ends, clipped at the ends of the
sequence, as numbers defined for each position:
``\ell_i = \max\left(1, i - \frac{w}{2}\right)``, ``r_i = \min\left(n, i + \frac{w}{2}\right)``; row i of
the masked attention is then the attention over the slice ``K_{s,\ell_i:r_i}``. Read here:

- ``\frac{w}{2}`` of a letter w the file does not declare is a whole number only where w is even: it is
  read as the positive whole number named ``w/2`` (w = 2 · (w/2) >= 2), a note says so, and every step that
  uses it says so in its scope (:func:`half_width`);
- the band ``|i - j| \le \frac{w}{2}`` (or a chain ``i - \frac{w}{2} \le j \le i + \frac{w}{2}``) is a window
  of half-width w/2, the sum of two causal masks offset by w/2 (:func:`visible_atoms`, for
  :func:`.conditions.window_mask`);
- a definition ``\ell_i = \max(...)`` / ``\min(...)`` of whole-number expressions of its letter i, numbers,
  declared dimensions and half-widths is a number for each position (:func:`define_end`); where a slice's
  end is ``\ell_i`` (at the position i of the step), it is SymPy's Max / Min of those values
  (:func:`end_value`);
- a step whose values hold such a Max / Min is checked by cases on the order of the distances of the
  position to the first and to the last position and the half-widths (every order, ties included): in each
  case every Max / Min takes one of its branches, and the step is proved in every case or refuted in one
  with a counterexample given in the file's names i, n and w (:func:`verify_by_cases`). The slice's ends are
  checked to lie in 1..n in every case (:func:`check_positions`).

>>> from symattn.derivation.latex_document import check_latex
>>> text = (r"%: convention: row" "\n" r"$$ Q, K, V \in \mathbb{R}^{n \times d} $$" "\n"
...         r"$$ M_{ij} = \begin{cases} 0 & |i - j| \le \frac{w}{2} \\ -\infty & \text{otherwise} \end{cases}, "
...         r"\quad \ell_i = \max\left(1, i - \frac{w}{2}\right), \quad r_i = \min\left(n, i + \frac{w}{2}\right) $$"
...         "\n" r"$$ \left[\mathrm{softmax}\left(Q K^T + M\right) V\right]_{i,:} = "
...         r"\mathrm{softmax}\left([Q]_{i,:} K_{\ell_i:r_i}^T\right) V_{\ell_i:r_i} $$")
>>> [s.status for s in check_latex(text).steps]
['proved']
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import sympy as sp

from ..proof.sums import provably_nonnegative
from . import ast
from .maxima import is_extremum
from .symbols import key_of

HALVES = "half_widths"
ENDS = "window_ends"


def _table(scope, name) -> dict:
    return scope.__dict__.setdefault(name, {})


def _plain_letter(node) -> bool:
    return (isinstance(node, ast.Name) and node.sub is None and node.sup is None and len(node.base) == 1
            and node.base.isalpha())


def _named(scope, letter: str) -> bool:
    """True when the file gives ``letter`` a meaning of its own (a dimension, a count, a name, a position)."""
    return (scope.resolve(letter) in scope.dims or letter in scope.counts or letter in scope.scalars
            or letter in scope.matrices or letter in scope.defs or letter in getattr(scope, "positions", {}))


def half_width(scope, node):
    """The positive whole number w/2 for ``\\frac{w}{2}`` of an undeclared letter w, or None."""
    while isinstance(node, (ast.Group, ast.Arith)):
        node = node.body
    if not (isinstance(node, ast.Div) and isinstance(node.den, ast.Num) and node.den.value == 2):
        return None
    w = node.num
    while isinstance(w, (ast.Group, ast.Arith)):
        w = w.body
    if not _plain_letter(w) or (w.base not in _table(scope, HALVES) and _named(scope, w.base)):
        return None
    halves = _table(scope, HALVES)
    if w.base not in halves:
        halves[w.base] = sp.Dummy(f"{w.base}/2", integer=True, positive=True)
        scope.notes.append(f"{w.base}/2 is read as a whole number: the width {w.base} is even, {w.base} = 2 · "
                           f"({w.base}/2) >= 2, and each step that uses it is checked for every such {w.base}")
    return halves[w.base]


def _linear(scope, node):
    """(coefficients of the letters, a constant that may hold half-widths) of an index term, or None."""
    if isinstance(node, ast.Num):
        return {}, sp.Integer(node.value)
    if isinstance(node, (ast.Group, ast.Arith)):
        return _linear(scope, node.body)
    if _plain_letter(node):
        return {node.base: 1}, sp.Integer(0)
    if isinstance(node, ast.Div):
        h = half_width(scope, node)
        return None if h is None else ({}, h)
    if isinstance(node, ast.Index) and node.op in ("+", "-"):
        parts = [_linear(scope, node.left), _linear(scope, node.right)]
        signs = (1, 1 if node.op == "+" else -1)
    elif isinstance(node, ast.Add):
        parts = [_linear(scope, t) for _, t in node.terms]
        signs = tuple(s for s, _ in node.terms)
    else:
        return None
    if any(p is None for p in parts):
        return None
    coefs, const = {}, sp.Integer(0)
    for sign, (c, k) in zip(signs, parts):
        for x, v in c.items():
            coefs[x] = coefs.get(x, 0) + sign * v
        const += sign * k
    return {x: v for x, v in coefs.items() if v}, const


def visible_atoms(scope, atom, a, b, abs_type):
    """The comparisons 'u <= v + c' that ``atom`` states of the mask's letters a, b, c an integer expression with a
    half-width (``|i - j| \\le \\frac{w}{2}``), or None (for :func:`.conditions.window_mask`)."""
    left, rel, right = atom
    if rel in (">=", ">"):
        left, right, rel = right, left, {">=": "<=", ">": "<"}[rel]
    strict = 1 if rel == "<" else 0
    if isinstance(left, abs_type):
        x, e = _linear(scope, left.body), _linear(scope, right)
        if x is None or e is None or e[0]:
            return None
        forms = [({k: -c for k, c in x[0].items()}, e[1] - x[1]), (dict(x[0]), e[1] + x[1])]  # e -+ x >= 0
    else:
        lo, hi = _linear(scope, left), _linear(scope, right)
        if lo is None or hi is None or isinstance(right, abs_type):
            return None
        coefs = dict(hi[0])
        for k, c in lo[0].items():
            coefs[k] = coefs.get(k, 0) - c
        forms = [({k: c for k, c in coefs.items() if c}, hi[1] - lo[1])]
    if not any(v in _table(scope, HALVES).values() for _, const in forms for v in sp.sympify(const).free_symbols):
        return None  # a window of numbers is read by conditions itself
    out = []
    for coefs, const in forms:
        if set(coefs) != {a, b} or sorted(coefs.values()) != [-1, 1]:
            return None
        out.append((a if coefs[a] == -1 else b, sp.expand(const - strict)))
    return out


def _index_value(scope, node, letter, value):
    """The value of an index expression of a window's end: numbers, the letter (at ``value``), declared
    dimensions and half-widths, with + and -; None for anything else."""
    if isinstance(node, ast.Num):
        return sp.Integer(node.value)
    if isinstance(node, (ast.Group, ast.Arith)):
        return _index_value(scope, node.body, letter, value)
    if _plain_letter(node) or (isinstance(node, ast.Name) and node.sub is None and node.sup is None):
        if node.base == letter:
            return value
        k = scope.resolve(key_of(node))
        return scope.dims[k] if k in scope.dims else None
    if isinstance(node, ast.Div):
        return half_width(scope, node)
    if isinstance(node, ast.Index) and node.op in ("+", "-"):
        a, b = _index_value(scope, node.left, letter, value), _index_value(scope, node.right, letter, value)
        return None if a is None or b is None else (a + b if node.op == "+" else a - b)
    if isinstance(node, ast.Add):
        parts = [_index_value(scope, t, letter, value) for _, t in node.terms]
        return None if None in parts else sp.Add(*(s * v for (s, _), v in zip(node.terms, parts)))
    return None


def define_end(scope, st) -> bool:
    """Read ``\\ell_i = \\max(1, i - \\frac{w}{2})`` (a number for each position i, the end of a window clipped at
    the ends of the sequence); False where ``st`` is no such definition (the caller goes on)."""
    t, body = st.target, st.body
    if st.params or not (isinstance(t.sub, ast.Name) and _plain_letter(t.sub) and t.sup is None):
        return False
    letter = t.sub.base
    if _named(scope, letter) or not (isinstance(body, ast.Call) and is_extremum(body) and len(body.args) >= 2):
        return False
    probe = sp.Dummy(letter, integer=True, positive=True)
    if any(_index_value(scope, a, letter, probe) is None for a in body.args) or not any(
            _index_value(scope, a, letter, probe).has(probe) for a in body.args):
        return False
    _table(scope, ENDS)[t.base] = (letter, body, t)
    scope.notes.append(f"{t.text()} := {body.text()}: a whole number for each position {letter} (the end of a window "
                       "clipped at the ends of the sequence), read as SymPy's Max / Min where a slice ends there")
    return True


def is_end(scope, node) -> bool:
    """True for a use ``\\ell_i`` of a window's end the file defines."""
    return (isinstance(node, ast.Name) and node.sup is None and node.base in _table(scope, ENDS)
            and isinstance(node.sub, ast.Name) and _plain_letter(node.sub))


def end_value(scope, node, length, L):
    """The value of the end ``\\ell_i`` at the position i of a sequence of ``length`` positions, or None."""
    if not is_end(scope, node):
        return None
    letter, body, target = _table(scope, ENDS)[node.base]
    t = scope.position_value(node.sub, length, L)
    word = sp.Max if body.target.base == "max" else sp.Min
    return word(*[_index_value(scope, a, letter, t) for a in body.args])


def _extrema(e) -> bool:
    return bool(sp.sympify(e).atoms(sp.Max, sp.Min)) if isinstance(e, sp.Basic) else False


def _cases(scope, exprs):
    """The substitutions of the cases (see the module), or None where the values hold no window's end. Each case
    orders the distance t - 1 to the first position, the distance s = n - t to the last and the half-widths: the
    values in that order, each the one before plus a gap >= 0, a half-width's gap >= 1 unless a half-width comes
    just before it. Every value of t, s >= 0 and half-widths >= 1 is in a case (sorted, ties broken with the
    half-widths first), and every case holds only such values."""
    exprs = [sp.sympify(e) for e in exprs]
    if not any(e.atoms(sp.Max, sp.Min) for e in exprs):
        return None
    positions = getattr(scope, "positions", {}) or {}
    if len(positions) != 1:
        return None
    (t, _, slack), = positions.values()
    halves = [h for h in _table(scope, HALVES).values() if any(e.has(h) for e in exprs)]
    items = [("first", None), ("last", None)] + [("half", h) for h in halves]
    out = []
    for order in itertools.permutations(items):
        below, sub = sp.Integer(0), {}
        for k, (kind, h) in enumerate(order):
            strict = kind == "half" and (k == 0 or order[k - 1][0] != "half")  # a half-width >= 1, ties among halves
            gap = sp.Dummy(f"g{k}", integer=True, **({"positive": True} if strict else {"nonnegative": True}))
            below = below + gap
            key = t if kind == "first" else slack if kind == "last" else h
            sub[key] = below + 1 if kind == "first" else below
        out.append(sub)
    return (t, slack, halves), out


def _decided(x):
    """``x`` with each Max / Min replaced by the argument provably largest / smallest, where one is."""
    if not isinstance(x, sp.Basic) or x.is_Atom:
        return x
    args = [_decided(a) for a in x.args]
    x = x.func(*args) if args != list(x.args) else x
    if isinstance(x, (sp.Max, sp.Min)):
        sign = 1 if isinstance(x, sp.Max) else -1
        for a in x.args:
            if all(provably_nonnegative(sign * (a - b)) for b in x.args if b is not a):
                return a
    return x


def _resolved(e, case):
    v = sp.sympify(e).xreplace(case)
    if v.atoms(sp.Max, sp.Min):
        v = _decided(v)
    return None if v.atoms(sp.Max, sp.Min) else v


def check_positions(scope, node, lo, hi, length) -> bool:
    """Check the slice lo..hi of ``length`` positions whose ends are windows' ends in every case (True), or leave
    it to :meth:`~.positions.Positions.check_positions` (False, no window's end)."""
    found = _cases(scope, [sp.sympify(x).xreplace(scope.subs) for x in (lo, hi)])
    if found is None:
        return False
    (t, slack, _), cases = found
    n = sp.sympify(length).xreplace(scope.subs)
    for case in cases:
        a, b, m = (_resolved(sp.sympify(x).xreplace(scope.subs), case) for x in (lo, hi, n))
        if a is None or b is None or m is None:
            scope.fail(node, f"the ends of {node.text()} are not decided by the order of the position, the ends of the "
                       "sequence and the half-widths", "ends \\max / \\min of the position, numbers and w/2")
        for bad, what in ((a - 1, "starts before the first position"), (b - a, "is empty"),
                          (m - b, "ends after the last position")):
            if not provably_nonnegative(bad):
                scope.fail(node, f"{node.text()} {what} for some position and width", "a window between 1 and n")
    return True


def verify_by_cases(scope, L, R, verify, **kw):
    """verify(L, R) in every case of :func:`_cases`: the first verdict that is not a proof (in the file's names),
    or one proof for all cases; None where the step holds no window's end."""
    if scope is None or not getattr(scope, "positions", None):
        return None
    L, R = L.xreplace(scope.subs), R.xreplace(scope.subs)
    found = _cases(scope, [L, R])
    if found is None:
        return None
    (t, slack, halves), cases = found
    (letter, (_, n, _)), = scope.positions.items()
    first, seconds = None, 0.0
    for case in cases:
        a, b = _resolved(L, case), _resolved(R, case)
        if a is None or b is None:
            return None  # an extremum the order does not decide: the plain check decides
        v = verify(a, b, **kw)
        seconds += v.seconds
        if not v.proved:
            return _as_written(scope, v, case, t, slack, halves, letter, n)
        first = first or v
    widths = " and ".join(f"every even {h.name[:-2]} >= 2" for h in halves)
    dims = sorted({str(n)} | {d for d in first.over[0] if not d.startswith("_")})
    text = (f"all dimensions ({', '.join(dims)}) and every position 1 <= {letter} <= {sp.sstr(n)}"
            f"{' and ' + widths if widths else ''}, by cases on the ends of the window ({len(cases)} orders of "
            f"{letter} - 1, {sp.sstr(n)} - {letter}{''.join(', ' + h.name for h in halves)})")
    return replace(first, scope=text, seconds=seconds, over=(tuple(dims), (), first.over[2]))


def _as_written(scope, v, case, t, slack, halves, letter, n):
    """The verdict ``v`` of one case with its counterexample given as n, the position and the widths."""
    cex = v.counterexample
    if cex is None:
        return v
    gaps = {g: cex.dims.get(str(g), cex.dims.get(g.name, 0)) for g in set().union(
        *(sp.sympify(x).free_symbols for x in case.values())) if isinstance(g, sp.Dummy)}
    value = {k: int(sp.sympify(x).xreplace(gaps)) for k, x in case.items()}
    dims = {str(n): value[t] + value[slack], letter: value[t]}
    dims.update({h.name[:-2]: 2 * value[h] for h in halves})
    dims.update({k: x for k, x in cex.dims.items() if not k.startswith("_")})
    cex = replace(cex, dims=dims)
    return replace(v, counterexample=cex, scope="counterexample at " + ", ".join(f"{k}={x}" for k, x in dims.items()))
