"""``\\otimes`` between row vectors of one shape: the component-wise product (Shazeer 2020, GLU variants).

Shazeer writes the gated linear unit of a row x as::

    \\mathrm{GLU}(x, W, V, b, c) = \\sigma(xW + b) \\otimes (xV + c)

with ``\\otimes`` the component-wise product of two rows of d_ff entries. Elsewhere the reader reads
``A \\otimes W`` as a Kronecker product acting on a matrix (Elhage et al., :mod:`.operators`), whose
factors are matrices. When every factor of ``a \\otimes b`` (or ``a \\otimes b \\otimes c``) is a row vector
and all have one shape, a Kronecker product (a row of d_ff^2 entries) is not what the paper can mean,
and the product is read component-wise, as ``\\odot``; the report says so. Column vectors are not read
this way (``u \\otimes v`` of columns is often the outer product u v^T), and a product of three factors
that are not such rows is refused.
"""

from __future__ import annotations

import sympy as sp

from ..defs.shapes import same_dim
from ..errors import DerivationError
from . import ast
from .symbols import is_matrix


def _factors(node):
    if isinstance(node, ast.Kron):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _is_id(node) -> bool:
    return isinstance(node, ast.Name) and node.base == "Id" and node.sub is None and node.sup is None


def product(scope, node: ast.Kron, L):
    """The component-wise product of the factors of ``node`` when they are rows of one shape; None for a
    Kronecker product of two factors that are not (read as before); refused for three such factors."""
    factors = _factors(node)
    values = None if any(_is_id(f) for f in factors) else [scope._expr(f, L) for f in factors]
    rows = values is not None and all(is_matrix(v) and v.rows == 1 and v.cols != 1 for v in values) and all(
        same_dim(v.cols, values[0].cols) for v in values)
    if not rows:
        if len(factors) > 2:
            scope.fail(node, "a Kronecker product of three factors", "two factors, A \\otimes W, or rows of one "
                       "shape (x W \\otimes x V: their component-wise product)")
        return None
    note = (f"{node.text()}: \\otimes between rows of one shape (1 × {sp.sstr(values[0].cols)}) is read as their "
            "component-wise product (as \\odot), as Shazeer (2020) writes it")
    if note not in scope.notes:
        scope.notes.append(note)
    return sp.HadamardProduct(*values)


def reads_rows(scope, node) -> bool:
    """True when the Kronecker node ``node`` elaborates, with no locals, to a component-wise product of rows
    (it is then a matrix, not an operator); False when it does not or cannot be elaborated on its own."""
    if not isinstance(node, ast.Kron):
        return False
    notes = list(scope.notes)
    try:
        return product(scope, node, {}) is not None
    except DerivationError:
        return False
    finally:
        scope.notes[:] = notes
