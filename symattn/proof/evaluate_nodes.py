"""Evaluation rules (exact and float) for the nodes of :mod:`symattn.defs.numeric_nodes`."""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..defs.numeric_nodes import DivideRows, Exp, Exp2, Log, RowOf, ScaleRows, ShiftRows
from .evaluate import EvaluationError, _int, rule


def _exact(be) -> bool:
    return be.name == "exact"


@rule(Exp)
def _exp(e, ev, be, env, fns):
    X = ev(e.args[0])
    return X.applyfunc(sp.exp) if _exact(be) else np.exp(X)


@rule(Exp2)
def _exp2(e, ev, be, env, fns):
    X = ev(e.args[0])
    return X.applyfunc(lambda x: sp.Integer(2) ** x) if _exact(be) else np.exp2(X)


@rule(Log)
def _log(e, ev, be, env, fns):
    X = ev(e.args[0])
    return X.applyfunc(sp.log) if _exact(be) else np.log(X)


@rule(sp.HadamardPower)
def _hadamard_power(e, ev, be, env, fns):
    X, p = ev(e.base), sp.sympify(e.exp)
    if _exact(be):
        return X.applyfunc(lambda x: x ** p)
    if p.free_symbols:
        raise EvaluationError(f"the entrywise power {sp.sstr(e)[:60]} has a symbolic exponent")
    return np.power(X, float(p))


@rule(ShiftRows)
def _shift(e, ev, be, env, fns):
    X, c = ev(e.args[0]), ev(e.args[1])
    if _exact(be):
        return sp.ImmutableMatrix(X.rows, X.cols, lambda i, j: X[i, j] - c[i, 0])
    return X - c


@rule(ScaleRows)
def _scale(e, ev, be, env, fns):
    d, X = ev(e.args[0]), ev(e.args[1])
    if _exact(be):
        return sp.ImmutableMatrix(X.rows, X.cols, lambda i, j: d[i, 0] * X[i, j])
    return d * X


@rule(DivideRows)
def _divide(e, ev, be, env, fns):
    X, d = ev(e.args[0]), ev(e.args[1])
    if _exact(be):
        return sp.ImmutableMatrix(X.rows, X.cols, lambda i, j: X[i, j] / d[i, 0])
    return X / d


@rule(RowOf)
def _row_of(e, ev, be, env, fns):
    X, k = ev(e.args[0]), e.args[1]
    k = _int(k)
    return X[k:k + 1, :] if not _exact(be) else sp.ImmutableMatrix(X[k:k + 1, :])
