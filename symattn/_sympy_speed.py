"""The free symbols of a sum or a product without rebuilding its summand (SymPy 1.14 rebuilds it).

SymPy's ``ExprWithLimits.free_symbols`` masks each bound variable before it collects the summand's
symbols: ``function.xreplace({i: i})`` for a plain symbol i. An ``xreplace`` that maps a symbol to itself
still reports a change, so the whole summand is built again, node by node, on every call, and each
``MatrixElement`` of it checks its symbolic indices against its matrix's shape again (relationals,
assumptions). The proof engine asks for the free symbols of its sums constantly (``expand``, ``has``,
``as_independent``): in the entrywise normal form of a softmax this rebuild was a fifth of the time.

:func:`free_symbols` is SymPy's method with only the variables that are really replaced (those whose own
free symbols are more than themselves, masked by a Dummy) passed to ``xreplace``: the same set of symbols
for every expression, without the rebuild. It replaces the property on import of :mod:`symattn`.

>>> import sympy as sp
>>> i, n = sp.symbols("i n", integer=True)
>>> A = sp.MatrixSymbol("A", n, n)
>>> sorted(map(str, sp.Sum(A[i, i], (i, 0, n - 1)).free_symbols))
['A', 'n']
"""

from __future__ import annotations

from sympy import Dummy
from sympy.concrete.expr_with_limits import ExprWithLimits

ORIGINAL = ExprWithLimits.free_symbols  # SymPy's own property (the tests compare with it)


def free_symbols(self):
    """The symbols of ``self`` outside its bound variables, as SymPy computes them (see the module)."""
    function, limits = self.function, self.limits
    reps = {xab[0]: xab[0] if xab[0].free_symbols == {xab[0]} else Dummy() for xab in limits}
    masked = {k: v for k, v in reps.items() if v is not k}
    if masked:
        function = function.xreplace(masked)
    isyms = set(function.free_symbols)
    for xab in limits:
        v = reps[xab[0]]
        if len(xab) == 1:
            isyms.add(v)
            continue
        isyms.discard(v)
        for x in xab[1:]:
            isyms.update(x.free_symbols)
    back = {v: k for k, v in reps.items()}
    return {back.get(x, x) for x in isyms}


ExprWithLimits.free_symbols = property(free_symbols, doc=ORIGINAL.__doc__)
