r"""Real functions papers apply without defining them: ``\tanh``, ``\mathrm{ReLU}``.

Bahdanau et al. (2015) write the alignment model ``v_a^\top \tanh(W_a s_{i-1} + U_a h_j)``; So et al.
(2021) the squared ReLU, ``\mathrm{ReLU}(x)^2``. Neither paper defines the function: each is a real
function every reader knows, tanh and max(0, x), applied entry by entry to a vector.

- Of a number (a declared scalar, or a 1 × 1 value), the call is that function of the number:
  ``\mathrm{ReLU}(x)`` is SymPy's ``Max(0, x)``, ``\tanh(x)`` is ``tanh(x)``.
- Of a matrix, the call stays an uninterpreted map of the argument's shape (``elaborate.uninterpreted``):
  a step proved with it holds for every such map, the real function among them. A step refuted for
  some map is then decided again with the real function entry by entry, at the inputs of that
  counterexample (and a few others): where the sides differ there, certified exactly (interval
  arithmetic for tanh), the step is refuted, since the paper's function is that one. Where they agree,
  the step stays unknown.

>>> import sympy as sp
>>> of_number("ReLU", sp.Integer(-2)), of_number("tanh", sp.Integer(0))
(0, 0)
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..errors import NotationShapeError
from . import ast
from .named_cases import chosen

#: name of the map (as the report names it) -> (its value at a SymPy number, at a NumPy array)
REAL = {
    "tanh": (sp.tanh, np.tanh),
    "ReLU": (lambda x: sp.Max(0, x), lambda a: np.maximum(0, a)),
}

#: maps read as a real function only to decide a step refuted for some map: sigma, which papers that do not
#: define it write for the logistic sigmoid (Shazeer 2020: GLU(x) = sigma(xW + b) (x) (xV + c), Swish = x sigma(x));
#: of a number it stays uninterpreted, so that no step is proved from it
NAMED = {
    "sigma": (lambda x: 1 / (1 + sp.exp(-x)), lambda a: 1 / (1 + np.exp(-a))),
}
MEANING = {"tanh": "tanh(x)", "ReLU": "max(0, x)", "sigma": "the logistic sigmoid 1/(1 + e^(-x))"}

SAMPLES = 6  # inputs tried besides the counterexample's own


def is_real_function(name) -> bool:
    """True for a name the reader reads as a real function (``name`` is a Name node or its key)."""
    base = getattr(name, "base", name)
    return base in REAL and getattr(name, "sub", None) is None and getattr(name, "sup", None) is None


def of_number(base: str, value):
    """The real function ``base`` at the number ``value``."""
    return REAL[base][0](value)


def number_call(scope, node, L):
    """``\\mathrm{ReLU}(x)`` of a number: the real function of it, noted; None when the argument is a
    matrix larger than 1 × 1 (then it is an uninterpreted map of the matrix, see the module text)."""
    base = node.target.base
    if len(node.args) != 1:
        return None
    v = scope._expr(node.args[0], L)
    if getattr(v, "is_Matrix", False):
        if tuple(v.shape) != (1, 1):
            return None
        v = v[0, 0]
    note = f"{node.target.text()} of the number {node.args[0].text()}: the real function {_meaning(base)}"
    if note not in scope.notes:
        scope.notes.append(note)
    return of_number(base, sp.sympify(v))


def _meaning(base):
    return "max(0, x)" if base == "ReLU" else "tanh(x)"


def _instances(exact: bool):
    """The callables that evaluate each Apply of a real function (f(X, 1) in the evaluator's terms)."""
    table = {**REAL, **NAMED}

    def make(base):
        if exact:
            return lambda X, ones: X.applyfunc(table[base][0])
        return lambda X, ones: table[base][1](np.asarray(X, dtype=float))
    return {base: make(base) for base in table}


def refute_with_real_functions(L, R, cex):
    """A counterexample to L = R with every uninterpreted map read as the real function it names, at the
    dimensions of ``cex`` (a counterexample found with some other map): first at its inputs, then at a few
    other small integer inputs. None where the sides are not shown to differ."""
    from ..proof.certify import certify_nonzero
    from ..proof.evaluate import EvaluationError, evaluate
    from ..proof.instances import specialize
    from ..proof.refute import _inputs
    from ..proof.verdict import Counterexample

    dims = _dims_of(L, R, cex.dims)
    try:
        Ls, Rs = specialize(L, dims), specialize(R, dims)
    except Exception:
        return None
    if tuple(Ls.shape) != tuple(Rs.shape):
        return None
    mats, perms = _inputs(Ls, Rs)
    if perms:
        return None
    rng = np.random.default_rng(0)
    given = {x: cex.values[x.name] for x in mats if x.name in cex.values}
    envs = [given] if len(given) == len(mats) else []
    envs += [{x: rng.integers(-2, 3, size=shape) for x, shape in mats.items()} for _ in range(SAMPLES)]
    for env in envs:
        try:
            A = np.asarray(evaluate(Ls, env, "float", _instances(False)), dtype=float)
            B = np.asarray(evaluate(Rs, env, "float", _instances(False)), dtype=float)
            Ax = evaluate(Ls, env, "exact", _instances(True))
            Bx = evaluate(Rs, env, "exact", _instances(True))
        except (EvaluationError, ArithmeticError, ValueError, TypeError, IndexError):
            continue
        for i in range(Ax.rows):
            for j in range(Ax.cols):
                d = sp.sympify(Ax[i, j] - Bx[i, j])
                cert = certify_nonzero(d)
                if cert is None:
                    continue
                values = {x.name: np.asarray(v) for x, v in env.items()}
                names = sorted({str(x.function) for e in (L, R) for x in sp.preorder_traversal(e)
                                if str(getattr(x, "function", "")) in MEANING})
                return Counterexample(dims=dict(cex.dims), values=values, lhs=A, rhs=B, lhs_exact=Ax,
                                      rhs_exact=Bx, entry=(i, j), difference=d, certificate=cert,
                                      functions={n: f"the real function {MEANING[n]}, entry by entry" for n in names})
    return None


def _dims_of(L, R, named: dict) -> dict:
    """The dimension symbols of L and R (the objects themselves) at the integers ``named`` gives their names."""
    syms = set()
    for e in (L, R):
        for x in sp.preorder_traversal(e):
            syms |= {s for s in getattr(x, "free_symbols", ()) if isinstance(s, sp.Symbol)}
            if getattr(x, "is_Matrix", False):
                syms |= {s for n in x.shape for s in sp.sympify(n).free_symbols}
    return {s: named[str(s)] for s in syms if str(s) in named}


def expand_call(scope, node, d, locals_):
    """The body of the file's function ``d`` at the call ``node``. A body written for a number, as Shazeer
    (2020) writes ``\\mathrm{Swish}_\\beta(x) = x \\sigma(\\beta x)``, applied to a row (or a column) has a
    product of two vectors of one shape, which as a matrix product is not defined: such a body is read again
    entry by entry, each such product being the component-wise one (the report says so). A body that is
    well-formed as written is read as written."""
    d = chosen(scope, node, d)  # score = \begin{cases} ... & \text{dot} ...: each alternative (named_cases)
    try:
        return scope.expand(node, d, locals_)
    except NotationShapeError:
        vectors = [v for v in locals_.values() if getattr(v, "is_Matrix", False) and 1 in tuple(v.shape)
                   and tuple(v.shape) != (1, 1)]
        if not vectors or scope.entrywise_body or any(isinstance(n, ast.T) for n in ast.nodes_of(d.body)):
            raise  # a body with a transpose is written for vectors, not for a number
    scope.entrywise_body = True
    try:
        value = scope.expand(node, d, locals_)
    finally:
        scope.entrywise_body = False
    note = (f"{node.text()}: the body of {d.target.text()} is written for a number; applied to a vector it is "
            "read entry by entry (a product of two vectors of one shape is their component-wise product)")
    if note not in scope.notes:
        scope.notes.append(note)
    return value


def entrywise_product(scope, acc, v):
    """The component-wise product of two vectors of one shape inside a body read entry by entry (see
    :func:`expand_call`), else None."""
    from ..defs.shapes import same_dim

    if not scope.entrywise_body or not (getattr(acc, "is_Matrix", False) and getattr(v, "is_Matrix", False)):
        return None
    if 1 not in tuple(acc.shape) or not (same_dim(acc.rows, v.rows) and same_dim(acc.cols, v.cols)):
        return None
    return sp.HadamardProduct(acc, v)


def refuse_power_of_map(scope, node):
    r"""``\mathrm{ReLU}(X)^2`` with X a matrix (not a number): the square of each entry or the matrix product
    ReLU(X) ReLU(X)? Refused, with both to write instead (of a number it is the square of the value)."""
    base = node.base
    if isinstance(base, ast.Call) and is_real_function(base.target) and scope.is_undefined_name(base.target):
        scope.fail(node, f"{node.text()}: a power of {base.target.text()} of a matrix, which may be the power of "
                   "each entry or a matrix product", f"{base.text()} \\odot {base.text()} (each entry) or "
                   f"{base.text()} {base.text()} (the matrix product)", NotationShapeError)
