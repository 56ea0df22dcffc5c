"""The prover on claims about deep models: L stacked residual self-attention layers.

Each layer is the math papers' form X <- X + W^V X Softmax((W^K X)ᵀ W^Q X) (column convention); the
claim is that the row-convention stack on Xᵀ, Xᵀ <- Xᵀ + softmax_row(Xᵀ W^Qᵀ (Xᵀ W^Kᵀ)ᵀ) Xᵀ W^Vᵀ, is
the transpose of the column stack. The claim is built with SymPy's unevaluated constructors (MatMul,
MatAdd, Transpose): ``A * B`` and ``.T`` evaluate their operands' whole trees, which for a deep
model is exponential before any proof starts. The expression tree grows about 4x per layer, its DAG
linearly.

Prints, for each L, the time of the proof alone (strategy A on the DAG, ``same_on_the_dag``), of the
audit alone (``run_audit``, the instances verify's audit evaluates), of ``symattn.verify`` (proof and
audit; the verdict cache is off), the audit's instances (agreed / skipped: with integer entries the
enclosures widen with depth until an instance is undecided, and the audit then draws entries k/16),
the verdict and its method, and the growth per doubling of L of the proof and audit times; last, the
claim for every L (a symbolic depth, :func:`symattn.layer_stack`) proved by induction on L. Not a
timed test: run it by hand.

    python benchmarks/deep_layers.py            # L = 1, 2, 4, 8, 12, 24, 48, 96
    python benchmarks/deep_layers.py 1 2 3      # chosen depths
"""

from __future__ import annotations

import os
import re
import sys
import time

os.environ.setdefault("SYMATTN_VERDICT_CACHE", "off")

import sympy as sp  # noqa: E402

import symattn as sa  # noqa: E402
from symattn.proof.audit import run_audit  # noqa: E402
from symattn.proof.structural import same_on_the_dag  # noqa: E402

DEPTHS = (1, 2, 4, 8, 12, 24, 48, 96)


def stacks(L: int, d, n):
    """(row stack on Xᵀ, transpose of the column stack) after L layers."""
    X = sp.MatrixSymbol("X", d, n)
    col, row = X, sp.Transpose(X)
    for layer in range(1, L + 1):
        WQ, WK, WV = (sp.MatrixSymbol(f"W^{s}_{layer}", d, d) for s in "QKV")
        scores = sp.MatMul(sp.Transpose(sp.MatMul(WK, col)), sp.MatMul(WQ, col))
        col = sp.MatAdd(col, sp.MatMul(WV, col, sa.softmax(scores)))
        row_scores = sp.MatMul(sp.MatMul(row, sp.Transpose(WQ)), sp.Transpose(sp.MatMul(row, sp.Transpose(WK))))
        row = sp.MatAdd(row, sp.MatMul(sa.softmax(row_scores, axis=1), row, sp.Transpose(WV)))
    return row, sp.Transpose(col)


def main(depths) -> None:
    d, n = sa.dims("d n")
    print(f"{'L':>4} {'build s':>8} {'proof s':>8} {'audit s':>8} {'verify s':>9} {'agreed':>6} {'skipped':>7}  "
          "verdict; audit")
    previous = {}
    for L in depths:
        t0 = time.perf_counter()
        lhs, rhs = stacks(L, d, n)
        t1 = time.perf_counter()
        same_on_the_dag(lhs, rhs)
        t2 = time.perf_counter()
        record = run_audit(lhs, rhs)  # what verify's audit does (the same seed, so the same instances)
        t3 = time.perf_counter()
        v = sa.verify(lhs, rhs, budget=120)
        t4 = time.perf_counter()
        growth = ""
        if L // 2 in previous:
            p, a = previous[L // 2]
            growth = f"   x{(t2 - t1) / p:.2f} proof, x{(t3 - t2) / a:.2f} audit from L = {L // 2}"
        previous[L] = (t2 - t1, t3 - t2)
        audit = "" if v.audit is None else "; " + v.audit.line.split(" (enclosures")[0].split(" (an enclosure")[0]
        skipped = re.search(r"(\d+) skipped", record.line)  # the record keeps each reason once
        print(f"{L:>4} {t1 - t0:8.3f} {t2 - t1:8.3f} {t3 - t2:8.3f} {t4 - t3:9.3f} {record.agreed:>6} "
              f"{int(skipped.group(1)) if skipped else 0:>7}  {v.status} ({v.scope}) by {v.method}{audit}{growth}",
              flush=True)
    t0 = time.perf_counter()
    v = sa.verify(*every_depth(d, n), budget=120)
    print(f"every L: {time.perf_counter() - t0:.3f} s  {v.status} ({v.scope}) by {v.method}; {v.audit.line}")


def every_depth(d, n):
    """The same claim for every L (a symbolic depth): proved by induction on the number of layers."""
    X, L = sp.MatrixSymbol("X", d, n), sa.dims("L")
    WQ, WK, WV = (sp.MatrixSymbol(f"W^{s}", d, d) for s in "QKV")
    S, R = sp.MatrixSymbol("S", d, n), sp.MatrixSymbol("R", n, d)
    col = sa.layer_stack(S + WV * S * sa.softmax((WK * S).T * (WQ * S)), S, X, L, weights=(WQ, WK, WV))
    row = sa.layer_stack(R + sa.softmax(R * WQ.T * (R * WK.T).T, axis=1) * R * WV.T, R, X.T, L,
                         weights=(WQ, WK, WV))
    return row, sp.Transpose(col)

if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or DEPTHS)
