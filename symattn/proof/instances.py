"""Concrete instances of a claim: dimension symbols, leaves, and strategy D.

Strategy D (proved at given dimensions): substitute concrete dimensions, give every
input matrix entries that are fresh symbols, evaluate both sides exactly, replace
each exp(t) of a term t by a fresh positive symbol (exp(a + b) = exp(a) exp(b) first; a power
2^t of a non-constant t, Exp2's entries, is exp(t ln 2) and shares the symbols of exp), and cancel
the difference. Treating the exp atoms as independent can only miss true
identities, never prove false ones: an identity of rational functions in independent
symbols stays true when the symbols are specialized.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..defs.dims import BoundIndex
from ..defs.heads import Binder, FamilyMember, _OverHeads
from ..defs.mask import CausalMask, PaddingMask
from ..defs.permutation import Permutation, PermutationSymbol
from ..defs.score import Score
from . import dag
from .evaluate import evaluate
from .names import check_distinct_names


def dimension_symbols(*exprs) -> list:
    """The whole-number symbols a claim depends on, sorted: the sizes in the shapes of its matrix nodes,
    the counts of its binders (heads, RoPE blocks), and the positions that pick entries (the bounds of
    slices, the offset of a causal mask, the length of a padding mask). A position takes whole-number
    values only, so it is sampled, substituted and reported with the sizes, never as a real scalar.
    Bound indices are excluded. The lowering binds the same symbols (``lowering.kernel``)."""
    out = set()
    shapes = dag.Shapes()
    for x in dag.nodes(*exprs):
        if isinstance(x, MatrixExpr):
            for d in shapes(x):
                out |= sp.sympify(d).free_symbols
        if isinstance(x, Binder):
            out |= x.count.free_symbols
        if isinstance(x, sp.MatrixSlice):
            for b in (*x.rowslice, *x.colslice):
                out |= sp.sympify(b).free_symbols
        if isinstance(x, (CausalMask, PaddingMask)):
            out |= set().union(*(a.free_symbols for a in x.args))
    bound = {x.index for x in dag.nodes(*exprs) if isinstance(x, Binder)}
    return sorted((s for s in out if isinstance(s, sp.Symbol) and not isinstance(s, BoundIndex) and s not in bound),
                  key=str)


def matrix_inputs(*exprs) -> list:
    """The names of the input matrices a claim is about (matrix symbols, head families,
    permutations), sorted: a claim with one is not closed, whatever its dimensions."""
    out = set()
    for x in dag.nodes(*exprs):
        if isinstance(x, FamilyMember):
            out.add(x.family_name)
        elif isinstance(x, Permutation):
            out.add(str(x.name))
        elif isinstance(x, sp.MatrixSymbol) and not isinstance(x.args[0], sp.Dummy):
            out.add(x.name)
    return sorted(out)


def scalar_symbols(*exprs) -> list:
    """Free scalar variables that are not dimensions (e.g. a shift c)."""
    dims = set(dimension_symbols(*exprs))
    out = {s for s in dag.free_symbols(*exprs)
           if isinstance(s, sp.Symbol) and s not in dims and not isinstance(s, (BoundIndex, PermutationSymbol))}
    return sorted(out, key=str)


def expand_heads(e):
    while True:
        nodes = [x for x in sp.preorder_traversal(e) if isinstance(x, _OverHeads)]
        if not nodes:
            return e
        e = e.replace(lambda x: isinstance(x, _OverHeads) and x.count.is_Integer,
                      lambda x: x.expand_heads())
        if any(not n.count.is_Integer for n in nodes):
            return e


def specialize(e, values: dict):
    """``e`` with the dimension symbols replaced by integers and every head node expanded; two objects
    that print alike afterwards (a family member W_2 beside a matrix W_2) are refused."""
    out = expand_heads(e.xreplace({k: sp.Integer(v) for k, v in values.items()}))
    check_distinct_names(out, where=f"at {', '.join(f'{k}={v}' for k, v in values.items()) or 'these sizes'}")
    return out


def leaves(*exprs) -> dict:
    """name -> (rows, cols) of the input matrices (MatrixSymbols and family members)."""
    out = {}
    for e in exprs:
        for x in sp.preorder_traversal(e):
            if isinstance(x, (sp.MatrixSymbol, FamilyMember)):
                out[x.name] = (int(x.shape[0]), int(x.shape[1]))
    return out


def permutations(*exprs) -> dict:
    """name -> size of the symbolic permutation matrices P_σ (their values are permutations)."""
    return {x.name: int(x.size) for e in exprs for x in sp.preorder_traversal(e)
            if isinstance(x, Permutation)}


def random_permutation_matrix(rng, n: int):
    """A random n × n permutation matrix, not the identity when n >= 2."""
    while True:
        p = rng.permutation(n)
        if n < 2 or (p != np.arange(n)).any():
            return np.eye(n, dtype=int)[:, p]


def score_functions(*exprs) -> list:
    return sorted({str(x.function) for e in exprs for x in sp.preorder_traversal(e) if isinstance(x, Score)})


def admissible(symbol, value: int) -> bool:
    """True when the integer ``value`` satisfies every assumption declared on ``symbol``."""
    v = sp.Integer(value)
    return all(getattr(v, f"is_{fact}") is held for fact, held in symbol.assumptions0.items()
               if getattr(v, f"is_{fact}", None) is not None)


def dimension_grid(dims: list, sizes=(1, 2, 3), limit: int = 64):
    """Assignments of small sizes to ``dims``: all-equal first, then mixed ones; only sizes that
    satisfy each symbol's assumptions (e.g. ``even=True``)."""
    seen = []
    candidates = [{d: s for d in dims} for s in (2, 3, 1)]
    candidates += [dict(zip(dims, combo)) for combo in itertools.product(sizes, repeat=len(dims))]
    for a in candidates:
        if a not in seen and all(admissible(d, v) for d, v in a.items()):
            seen.append(a)
        if len(seen) >= limit:
            break
    return seen


def _is_power_of_two(p) -> bool:
    return isinstance(p, sp.Pow) and p.base == 2 and not p.exp.is_number


def _exp_atoms_to_symbols(x, table: dict):
    x = x.replace(_is_power_of_two, lambda p: sp.exp(p.exp * sp.log(2)))  # 2^t = exp(t ln 2)

    def repl(arg):
        terms = sp.Add.make_args(sp.expand(arg))
        out = sp.Integer(1)
        for t in terms:
            if t not in table:  # a Dummy: never equal to a user's symbol of the same name
                table[t] = sp.Dummy(f"e{len(table)}", positive=True)
            out *= table[t]
        return out

    return x.replace(sp.exp, repl)


def symbolic_env(names: dict) -> dict:
    """name -> a matrix of fresh Dummy entries (``X[i,j]`` prints alike a user's symbol, never equals it)."""
    return {
        name: sp.ImmutableMatrix(r, c, lambda i, j, nm=name: sp.Dummy(f"{nm}[{i},{j}]"))
        for name, (r, c) in names.items()
    }


def generic_functions(names: list) -> dict:
    """Each score function f as m×n coordinate functions of all entries of Q and K."""

    def make(nm):
        def f(Q, K):
            args = list(Q) + list(K)
            # coordinate functions of symattn's own (the keyword keeps them apart from a user's
            # function of the same name), named f[i,j] so that indices cannot run together
            return sp.ImmutableMatrix(K.cols, Q.cols,
                                      lambda i, j: sp.Function(f"{nm}[{i},{j}]", symattn_internal=True)(*args))

        return f

    return {nm: make(nm) for nm in names}


def equal_at(lhs, rhs, values: dict, budget) -> tuple[bool, str]:
    """Strategy D at one assignment of the dimensions: exact, with symbolic entries."""
    L, R = specialize(lhs, values), specialize(rhs, values)
    if permutations(L, R):
        return False, "strategy D does not range over symbolic permutations"
    env = symbolic_env(leaves(L, R))
    fns = generic_functions(score_functions(L, R))
    with budget.limit(what="exact evaluation"):
        A = evaluate(L, env, "exact", fns)
        B = evaluate(R, env, "exact", fns)
    if A.shape != B.shape:
        return False, f"the sides have shapes {A.shape} and {B.shape}"
    table: dict = {}
    for k, (a, b) in enumerate(zip(A, B)):
        budget.check("exact comparison")
        with budget.limit(what="cancelling an entry"):
            d = sp.cancel(sp.together(_exp_atoms_to_symbols(a - b, table)))
        if d != 0:
            return False, f"entry {divmod(k, A.cols)} does not cancel: {sp.sstr(d)[:200]}"
    return True, f"all {A.rows * A.cols} entries cancel exactly with symbolic inputs"
