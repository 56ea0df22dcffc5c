"""Cost formulas: ``\\Omega(\\text{MSA}) = 4hwC^2 + 2(hw)^2C`` (Liu et al. 2021, the Swin Transformer).

Papers count the cost of a method as a polynomial in its sizes, named by the method in parentheses:
``\\Omega(\\text{MSA})``, ``\\Omega(\\text{W-MSA})``, ``\\mathcal{O}(\\text{attention})``. Read with
:mod:`.labels`, ``\\Omega(\\text{MSA})`` is a name of its own; the letters of the formulas that mention
such a cost (h, w, C, M) are declared nowhere, and they are sizes: each undeclared letter of a
statement that mentions a labelled cost is read as a dimension, a positive integer, and the report
says so. A step between costs is then a claim about numbers, proved for all sizes or refuted with
sizes at which its sides differ.
"""

from __future__ import annotations

from . import ast
from .symbols import dimension_symbol, key_of

COSTS = ("Omega", "O", "Theta")  # \Omega(·), \mathcal{O}(·), \Theta(·)


def _is_cost(n) -> bool:
    return isinstance(n, ast.Name) and n.base in COSTS and n.sub is None and (n.sup or "").startswith("(")


def declare_sizes(scope, stmts) -> None:
    """Every undeclared plain letter of a statement that mentions a labelled cost, as a dimension."""
    sizes = []
    for st in stmts:
        if not isinstance(st, (ast.Chain, ast.Define)):
            continue
        names = list(ast.names_of(st))
        if not any(_is_cost(n) for n in names):
            continue
        for n in names:
            if (not _is_cost(n) and n.sub is None and n.sup is None and len(n.base) == 1 and n.base.isalpha()
                    and scope.is_undefined_name(n) and key_of(n) not in sizes):
                sizes.append(key_of(n))
    for k in sizes:
        scope.dims[k] = dimension_symbol(k)
    if sizes:
        scope.notes.append(f"{', '.join(sizes)} appear in cost formulas and are declared nowhere: each is read as a "
                           "size (a positive integer)")
