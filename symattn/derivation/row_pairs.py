"""Rows at a second position, ``H_j`` beside ``H_i``, and rows picked by an index map, ``P_{\\delta(i,j)}``.

He et al. 2021 (DeBERTa) write the disentangled score of tokens i and j with rows of several matrices at
two positions and at the relative distance ``\\delta(i, j)``, a row of the position embeddings P::

    Q^c_i {K^c_j}^\\top + Q^c_i {K^r_{\\delta(i,j)}}^\\top = H_i W_{q,c} W_{k,c}^\\top H_j^\\top + ...

The first position letter of a derivation (i) is read as before (1 <= i <= N, checked for i < N and
i = N). A row at another position (j, or ``\\delta(i, j)`` for a function the file never defines) is read
as a row of its own: a declared matrix's row ``H_j`` is a free row ``H_j``, and a defined matrix's row is
the row of its definition, ``(H W)_j = H_j W`` (a row of a sum, a product, a multiple; any other form is
refused). Then

- a step proved with these rows free holds for every choice of the rows, so for every j and every value
  of the map (``j = i`` included): it is proved;
- otherwise it is checked again with every such row the row at the first position (``H_j = H_i``, j = i)
  and, for a map's rows, one free row per matrix (``\\delta(i, j) = \\delta(j, i)``, as at j = i): a
  counterexample there is one of the paper's (at j = i), and the step is refuted;
- a step true at j = i only is neither: unknown.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from .. import defs as D
from . import ast


def is_map_index(scope, sub) -> bool:
    """``\\delta(i, j)``: a call of a function the file does not define, on index letters."""
    if isinstance(sub, ast.Arith):  # a compound subscript holds the call
        sub = sub.body
    return (isinstance(sub, ast.Call) and sub.axis is None and isinstance(sub.target, ast.Name)
            and sub.target.sub is None and sub.target.sup is None and scope.is_undefined_name(sub.target)
            and bool(sub.args) and all(isinstance(a, ast.Name) and a.sub is None and a.sup is None
                                       and len(a.base) == 1 and a.base.islower() for a in sub.args))


def second_position(scope, sub, L) -> bool:
    """A row index that is neither the derivation's first position nor bound: read by :func:`free_row`."""
    if is_map_index(scope, sub):
        return True
    return (isinstance(sub, ast.Name) and bool(scope.positions) and sub.base not in scope.positions
            and sub.base not in L and sub.base not in scope.counts)


def free_row(scope, node, X, sub):
    """Row ``sub`` of the value X (a declared matrix or its definition) as a row of free entries."""
    label = sub.text()
    by_map = is_map_index(scope, sub)
    table = scope.__dict__.setdefault("free_rows", {})

    def row(e):
        if isinstance(e, (sp.MatrixSymbol, D.Apply)):  # K' = ReLU(K): a row of the map's value, free too
            fresh = sp.MatrixSymbol(f"{e.name if isinstance(e, sp.MatrixSymbol) else node.base}_{label}", 1, e.cols)
            if any(getattr(m, "name", None) == fresh.name for m in scope.matrices.values()):
                scope.fail(node, f"{node.text()}: the row {fresh.name} would be confused with the declared "
                           f"{fresh.name}", "another name for one of them")
            table[fresh] = (e, by_map, label)
            return fresh
        if isinstance(e, sp.MatAdd):
            return sp.MatAdd(*(row(a) for a in e.args))
        if isinstance(e, sp.MatMul):
            coeff, mats = e.as_coeff_matrices()
            if mats:
                return coeff * sp.MatMul(row(mats[0]), *mats[1:]) if len(mats) > 1 else coeff * row(mats[0])
        scope.fail(node, f"{node.text()}: a row at the second position {label} is read only of a declared matrix or "
                   "of one defined by sums and products of declared matrices", "rows at one position letter, or "
                   "the whole matrices")

    note = (f"{node.text()} is a row at the position {label}, read as a row of free entries: a step so proved "
            f"holds for every {label}; a counterexample is sought at {label} equal to the first position")
    if note not in scope.notes:
        scope.notes.append(note)
    return row(X)


def _identified(scope, rows):
    """The substitution that makes every free row the row at the first position (j = i), and the rows of a
    matrix at a map's indices one row; None where that is not a choice of the paper's indices."""
    out, canonical = {}, {}
    first = next(iter(scope.positions.values()), None)
    for fresh, (M, by_map, _) in rows.items():
        if not by_map and first is not None:
            t, n, slack = first
            if sp.simplify(sp.sympify(M.rows).xreplace(scope.subs) - sp.sympify(n).xreplace(scope.subs)) != 0:
                return None
            out[fresh] = M.xreplace(scope.subs)[t - 1:t, :]
        elif not by_map:
            return None
        else:
            out[fresh] = canonical.setdefault(M, fresh)
    return out, set(canonical)


def verify_rows(scope, L, R, verify):
    """``verify(L, R)`` with the free rows free; else at j = i (see the module's text)."""
    v = verify(L, R)
    present = L.free_symbols | R.free_symbols
    rows = {f: m for f, m in (getattr(scope, "free_rows", None) or {}).items() if f in present}  # this step's
    if not rows:
        return v
    letters = sorted({t for _, m, t in rows.values() if not m})
    maps = sorted({t for _, m, t in rows.values() if m})
    if v.proved:
        return dataclasses.replace(v, scope=v.scope + "; for every " + ", ".join(letters + maps)
                                   + " (rows there read free)")
    first = next(iter(scope.positions), None)
    at = ", ".join([f"{t} = {first}" for t in letters] + ([" = ".join(maps)] if len(maps) > 1 else []))
    found = _identified(scope, rows)
    if found is not None:
        ident, by_map = found
        L2, R2 = L.xreplace(ident), R.xreplace(ident)
        whole = {M for M, m, _ in rows.values() if m}
        if not (whole & (L2.free_symbols | R2.free_symbols)):  # P itself beside its row P_δ: not realizable
            w = verify(L2, R2)
            if w.status == "refuted":
                return dataclasses.replace(w, scope=w.scope + (f"; at {at}" if at else "")
                                           + ("; the rows of each matrix at an index map one row" if maps else ""))
            if not w.proved:
                return w
    return dataclasses.replace(v, status="unknown", general=False, counterexample=None,
                               scope="the step fails for some free rows at the second position, and is not "
                               "refuted with that position equal to the first")
