"""Strategy E: search for a counterexample, then certify it exactly.

Small integer inputs at small dimensions are tried in float64 first (cheap); where
the two sides visibly differ, both are evaluated exactly and the differing entry is
shown nonzero by interval arithmetic (or is an exact nonzero rational). A float
difference alone never makes a refutation.
"""

from __future__ import annotations

import zlib

import numpy as np
import sympy as sp

from ..errors import BudgetExceeded
from .certify import certify_nonzero
from .evaluate import EvaluationError, evaluate
from .instances import (
    admissible,
    dimension_grid,
    dimension_symbols,
    leaves,
    permutations,
    random_permutation_matrix,
    scalar_symbols,
    score_functions,
    specialize,
)
from .verdict import Counterexample


def _bilinear_scores(name, rng_seed, backend):
    """f(Q, K) := Kᵀ M Q with a fixed random integer matrix M (an instance of f)."""
    made = {}

    def f(Q, K):
        d = Q.shape[0]
        if d not in made:
            r = np.random.default_rng([rng_seed, d, zlib.crc32(name.encode())])  # each f its own M
            made[d] = r.integers(-2, 3, size=(d, d))
        M = made[d]
        if backend == "exact":
            return K.T * sp.ImmutableMatrix(M.tolist()) * Q
        return K.T @ M @ Q

    return f, made


def search(lhs, rhs, budget, trials: int = 3, seed: int = 0, grid: list | None = None):
    """Return (Counterexample or None, trace lines, number of numeric samples that agreed)."""
    dims = dimension_symbols(lhs, rhs)
    scalars = scalar_symbols(lhs, rhs)
    grid = grid if grid is not None else dimension_grid(dims)
    trace, agreed = [], 0
    allowed = {s: [v for v in (-2, -1, 0, 1, 2, 3) if admissible(s, v)] for s in scalars}
    if any(not vals for vals in allowed.values()):
        return None, ["no small integer satisfies the assumptions of " +
                      ", ".join(str(s) for s, v in allowed.items() if not v)], 0
    for a_idx, assignment in enumerate(grid):
        try:
            budget.check("counterexample search")
            with budget.limit(what="instantiating the claim"):
                L, R = specialize(lhs, assignment), specialize(rhs, assignment)
            if tuple(L.shape) != tuple(R.shape):
                continue
            names = leaves(L, R)
            perms = permutations(L, R)
            fn_names = score_functions(L, R)
        except BudgetExceeded:
            raise
        except Exception as exc:  # the claim may not be well-formed at these sizes
            trace.append(f"skipped {assignment}: {exc}")
            continue
        for t in range(trials):
            rng = np.random.default_rng([seed, a_idx, t])
            env = {nm: rng.integers(-2, 3, size=shape) for nm, shape in names.items()}
            env.update({nm: random_permutation_matrix(rng, k) for nm, k in perms.items()})
            svals = {s: int(rng.choice(allowed[s])) for s in scalars}
            fns_f = {nm: _bilinear_scores(nm, 1000 * a_idx + 17 * t, "float")[0] for nm in fn_names}
            try:
                Ls, Rs = (x.xreplace({s: sp.Integer(v) for s, v in svals.items()}) for x in (L, R))
                with np.errstate(all="ignore"), budget.limit(what="evaluating a sample"):
                    A = evaluate(Ls, env, "float", fns_f)
                    B = evaluate(Rs, env, "float", fns_f)
            except EvaluationError as exc:
                trace.append(f"cannot evaluate at {assignment}: {exc}")
                return None, trace, agreed
            except (ArithmeticError, IndexError, ValueError, np.linalg.LinAlgError) as exc:
                trace.append(f"sample skipped at {assignment}, {svals}: {type(exc).__name__}: {exc}")
                continue
            if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
                trace.append(f"sample skipped at {assignment}: non-finite values (nothing is compared)")
                continue
            diff = np.abs(A - B)
            scale = 1.0 + np.maximum(np.abs(A), np.abs(B))
            if not np.any(diff > 1e-9 * scale):
                agreed += 1
                continue
            i, j = np.unravel_index(np.argmax(diff / scale), diff.shape)
            fns_x, made = {}, {}
            for nm in fn_names:
                fns_x[nm], made[nm] = _bilinear_scores(nm, 1000 * a_idx + 17 * t, "exact")
            with budget.limit(what="exact evaluation of a counterexample"):
                Ax = evaluate(Ls, env, "exact", fns_x)
                Bx = evaluate(Rs, env, "exact", fns_x)
                d = Ax[i, j] - Bx[i, j]
                cert = certify_nonzero(d)
            if cert is None:
                trace.append(f"at {assignment}: float difference at ({i}, {j}) not certified exactly")
                continue
            values = {nm: np.asarray(v) for nm, v in env.items()}
            values.update({str(s): np.asarray(v) for s, v in svals.items()})
            functions = {nm: f"{nm}(Q, K) := Kᵀ·M·Q with " + "; ".join(f"M = {m.tolist()}" for m in mm.values())
                         for nm, mm in made.items()}
            cex = Counterexample(
                dims={str(k): v for k, v in assignment.items()}, values=values, lhs=A, rhs=B,
                lhs_exact=Ax, rhs_exact=Bx, entry=(int(i), int(j)), difference=d,
                certificate=cert, functions=functions,
            )
            trace.append(f"counterexample at {assignment}, entry ({i}, {j}): {cert}")
            return cex, trace, agreed
    return None, trace, agreed
