r"""The cosine and sine of a number: ``\cos x``, ``\sin(\frac{\pi i}{2M})``, ``\cos\left(w \cdot x\right)``.

Papers apply cos and sin to numbers: cosFormer's re-weighting ``\cos(\frac{\pi}{2} \times \frac{i - j}{M})``,
the random features ``\sin(w_i \cdot x)`` of Rahimi & Recht and Peng et al., the entries of RoPE's
rotation. The argument is a number (a declared scalar, an arithmetic of them, or a 1 × 1 product such as
``w^\top x``; without parentheses, the product that follows up to the next \cos, \sin, \exp or \log, as
``\cos m\theta`` is cos(mθ) and ``\cos a \cos b`` is cos(a) cos(b)); its cosine is SymPy's ``cos``, so
that cos(a - b) = cos a cos b + sin a sin b is proved by the rewriting rule ``expand_trig_entries``
(docs/theorems.md). The cosine of a matrix (an entrywise
cosine, or the matrix function) is refused with what to write instead.

>>> import sympy as sp
>>> cosine_of("cos", sp.Symbol("a")) == sp.cos(sp.Symbol("a"))
True
"""

from __future__ import annotations

import sympy as sp

from .symbols import is_matrix

FUNCTIONS = {"cos": sp.cos, "sin": sp.sin}


def cosine_of(base: str, value):
    """``\\cos`` or ``\\sin`` (``base``) of the number ``value``."""
    return FUNCTIONS[base](value)


def trig_call(scope, node, L):
    """The value of ``node``, a call of cos or sin with one argument: a number, or refused."""
    base = node.target.base
    if len(node.args) != 1:
        scope.fail(node, f"\\{base} takes one argument, got {len(node.args)}", f"\\{base}(x)")
    arg = node.args[0]
    v = scope._expr(arg, L)
    if is_matrix(v):
        if tuple(v.shape) != (1, 1):
            scope.fail(node, f"\\{base} of the {sp.sstr(v.rows)} × {sp.sstr(v.cols)} matrix {arg.text()}: the "
                       f"cosine and sine are read only of numbers (an entrywise \\{base} of a matrix is not read)",
                       f"\\{base} of a number, as in \\{base}(w^\\top x) or \\{base}(m\\theta); without parentheses "
                       f"the argument is the whole product that follows (write \\{base}(m\\theta) A, not "
                       f"\\{base} m\\theta A)")
        v = v[0, 0]
    return cosine_of(base, v)
