"""The node :class:`LayerStack`: a stack of L layers of one layer map, each with its own weights.

A deep model applies one layer map L times: S_0 = start, S_l = layer_l(S_{l-1}), where layer l has
weights of its own (``W^Q`` of the layer map is ``W^Q_l`` in layer l). :func:`layer_stack` states
such a stack, with a concrete depth or a symbolic one (a positive integer symbol L);
:mod:`symattn.proof.layer_induction` proves claims about stacks for every L, and the audit's
interpreter evaluates a stack layer by layer at the depth an instance gives L.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..errors import ClaimError, ShapeError
from . import dag


class LayerStack(MatrixExpr):
    """stack_L(layer; start): L layers ``placeholder <- layer`` applied to ``start``.

    ``layer``: the layer map, an expression in the matrix symbol ``placeholder`` (the layer's
    input) of the placeholder's shape; ``start``: the input of the first layer, of that shape;
    ``depth``: the number of layers, a positive integer or a positive integer symbol L;
    ``weights``: the matrix symbols of the layer map that each layer has of its own (named
    ``W_1``, ``W_2``, ... for ``W`` when the stack is unfolded); the layer's other symbols are the
    same in every layer. :func:`layer_stack` makes one and checks its parts.
    """

    def __new__(cls, layer, placeholder, start, depth, weights=()):
        return super().__new__(cls, layer, placeholder, start, sp.sympify(depth), sp.Tuple(*weights))

    layer = property(lambda self: self.args[0])
    placeholder = property(lambda self: self.args[1])
    start = property(lambda self: self.args[2])
    depth = property(lambda self: self.args[3])
    weights = property(lambda self: tuple(self.args[4]))

    @property
    def shape(self):
        return self.start.shape

    def doit(self, **hints):
        return self

    def unfold(self, L: int):
        """The stack after ``L`` concrete layers, each with its own weights (``W`` -> ``W_l``)."""
        out = self.start
        for layer in range(1, L + 1):
            out = self.layer_at(layer, out)
        return out

    def layer_at(self, layer, below):
        """Layer number ``layer`` applied to ``below``."""
        renamed = {W: sp.MatrixSymbol(f"{W.name}_{layer}", *W.shape) for W in self.weights}
        return _residual_first(self.layer, self.placeholder).xreplace({self.placeholder: below, **renamed})

    def _latex(self, printer):
        weights = ", ".join(printer._print(W) for W in self.weights)
        return (rf"\operatorname{{stack}}_{{{printer._print(self.depth)}}}\left({printer._print(self.placeholder)}"
                rf" \mapsto {printer._print(self.layer)};\ {printer._print(self.start)}\right)"
                + (rf"_{{\text{{weights }} {weights}}}" if weights else ""))

    def _sympystr(self, printer):
        weights = ", ".join(printer._print(W) for W in self.weights)
        return (f"stack_{printer._print(self.depth)}({printer._print(self.placeholder)} -> "
                f"{printer._print(self.layer)}; {printer._print(self.start)}; weights {weights or 'none'})")


def _residual_first(e, placeholder):
    """``e`` with the terms of each sum ordered so that the layer's input itself (a residual) or a
    term without it comes first: SymPy reads a sum's shape from its first term and does not keep
    shapes, so a stack whose sums start with a product holding the input at both ends would take
    time exponential in the depth to build (each layer reads its input's shape twice). The same
    sum, in another order."""
    if not isinstance(e, sp.Basic) or not e.args:
        return e
    args = [_residual_first(a, placeholder) for a in e.args]
    if isinstance(e, sp.MatAdd):
        args.sort(key=lambda a: 0 if a == placeholder else 1 if not a.has(placeholder) else 2)
    return e.func(*args) if args != list(e.args) else e


def layer_stack(layer, placeholder, start, depth, *, weights=()) -> LayerStack:
    """The stack of ``depth`` layers ``placeholder <- layer`` on ``start`` (see :class:`LayerStack`).

    >>> import sympy as sp, symattn as sa
    >>> n, L = sa.dims("n L")
    >>> X, S, A = (sp.MatrixSymbol(s, n, n) for s in "XSA")
    >>> s = sa.layer_stack(S + A * S, S, X, L, weights=[A])
    >>> s.shape, s.unfold(2)
    ((n, n), (A_1*X + X) + A_2*(A_1*X + X))
    """
    where = "layer_stack(layer, placeholder, start, depth)"
    if not isinstance(placeholder, sp.MatrixSymbol):
        raise ClaimError(f"{where}: the placeholder must be a MatrixSymbol (the layer's input), got "
                         f"{type(placeholder).__name__}: {sp.sstr(placeholder)[:80]}")
    for what, x in (("layer", layer), ("start", start)):
        if not isinstance(x, MatrixExpr):
            raise ClaimError(f"{where}: the {what} must be a matrix expression, got {type(x).__name__}: "
                             f"{sp.sstr(x)[:80]}")
        if tuple(x.shape) != tuple(placeholder.shape):
            raise ShapeError(f"{where}: a layer maps its input to a matrix of the same shape, but the {what} "
                             f"{sp.sstr(x)[:80]} is {x.shape[0]} × {x.shape[1]} and the placeholder "
                             f"{placeholder} is {placeholder.shape[0]} × {placeholder.shape[1]}")
    depth = sp.sympify(depth)
    if not (depth.is_integer and depth.is_positive and (depth.is_Integer or depth.is_Symbol)):
        raise ClaimError(f"{where}: the depth must be a positive integer or a positive integer symbol "
                         f"(symattn.dims(\"L\")), got {depth!r}")
    weights = tuple(weights)
    for W in weights:
        if not isinstance(W, sp.MatrixSymbol):
            raise ClaimError(f"{where}: each weight must be a MatrixSymbol of the layer map, got {W!r}")
        if W == placeholder:
            raise ClaimError(f"{where}: the placeholder {W} is the layer's input, not one of its weights")
        if not dag.has(layer, sp.MatrixSymbol) or W not in dag.atoms(layer, sp.MatrixSymbol):
            raise ClaimError(f"{where}: the weight {W} does not occur in the layer map {sp.sstr(layer)[:80]}")
        if W in dag.atoms(start, sp.MatrixSymbol):
            raise ClaimError(f"{where}: the start {sp.sstr(start)[:80]} holds the weight {W}, which each layer "
                             f"has of its own ({W}_1, {W}_2, ...); name the start's matrix otherwise")
    if placeholder in dag.atoms(start, sp.MatrixSymbol) and start != placeholder:
        raise ClaimError(f"{where}: the start {sp.sstr(start)[:80]} holds the placeholder {placeholder} (the "
                         "input of each layer); name the placeholder otherwise")
    return LayerStack(layer, placeholder, start, depth, weights)


def stacks_of(*exprs) -> list:
    """The :class:`LayerStack` nodes of ``exprs``, in a fixed order."""
    found = {x for x in dag.nodes(*exprs) if isinstance(x, LayerStack)}
    return sorted(found, key=sp.sstr)


def has_stacks(*exprs) -> bool:
    return any(isinstance(x, LayerStack) for x in dag.nodes(*exprs))


def unfold(expr, L: int, stacks=None):
    """``expr`` with every stack unfolded at ``L`` layers (a concrete depth stays as it is)."""
    stacks = stacks_of(expr) if stacks is None else stacks
    return expr.xreplace({s: s.unfold(L if s.depth.is_Symbol else int(s.depth)) for s in stacks})
