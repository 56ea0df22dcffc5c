"""Stock ``sympy.lambdify`` on symattn's nodes: ``_numpycode`` (and ``_pythoncode``) methods.

SymPy's printers first ask the object to print itself (``Printer.printmethod``: ``_numpycode`` for
``NumPyPrinter`` and ``SciPyPrinter``, ``_pythoncode`` for ``PythonCodePrinter``). :func:`install`
gives every node class of :mod:`symattn.defs` a ``_numpycode`` that prints its whole subtree with
:class:`~symattn.lowering.numpy_printer.BatchedNumPyPrinter`, so

    sympy.lambdify([Q, K, V], sa.attention(Q, K, V))

returns a batched NumPy function. The root of such an expression is often a SymPy product
(``V*Softmax(...)``), so SymPy's matrix classes (MatMul, MatAdd, Transpose, ...) get a
``_numpycode`` too, which prints batched only when the expression holds a symattn node and
otherwise calls the printer's own method (a pure SymPy expression prints exactly as before).
The definitions in :mod:`symattn.defs` are not edited: the methods are attached from here.

>>> import numpy as np, sympy as sp, symattn as sa
>>> n, m, d_k, d_v = sa.dims("n m d_k d_v")
>>> Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)
>>> f = sp.lambdify([Q, K, V], sa.attention(Q, K, V))
>>> f(np.ones((8, 4, 3)), np.ones((8, 4, 5)), np.ones((8, 2, 5))).shape    # a batch of 8
(8, 2, 3)

A feature map phi(X) of linear attention (``sa.FeatureMap``) is printed as a call of ``phi`` on the
array of X's rows, (..., N, D) -> (..., N, C): list a symbol named as the map among the arguments, or
give the function through ``modules``.

>>> N, M, D, C = sa.dims("N M D C")
>>> Qr, Kr, Vr = sp.MatrixSymbol("Q", N, D), sp.MatrixSymbol("K", M, D), sp.MatrixSymbol("V", M, D)
>>> linear = sa.FeatureMap("phi", Qr, C) * sa.FeatureMap("phi", Kr, C).T * Vr       # phi(Q) phi(K)ᵀ V
>>> def elu1(x):
...     return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))
>>> q, k, v = np.ones((8, 3, 4)), np.ones((8, 5, 4)), np.ones((8, 5, 4))
>>> sp.lambdify([Qr, Kr, Vr, sp.Symbol("phi")], linear)(q, k, v, elu1).shape         # phi as an argument
(8, 3, 4)
>>> g = sp.lambdify([Qr, Kr, Vr], linear, modules=[{"phi": elu1}, "numpy"])         # phi from modules
>>> float(g(q, k, v)[0, 0, 0])                                                       # 5 keys · (4 · 2·2) · 1
80.0

The function first checks the inputs' shapes against the expression, so a mismatch is an error
naming the inputs (``dimension d_k: K (5, 5) has 5 rows but Q (4, 3) has 4 rows``), not NumPy's.

Names of matrices must be Python identifiers for lambdify (it replaces other arguments by scalar
dummies); :func:`symattn.lower` takes any name (``W^Q`` becomes ``W_Q``).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..defs.heads import FamilyMember
from ..errors import LoweringError
from .feature_maps import fold_feature_maps
from .layers import LayerStack, layer_weights, lowering_dimensions, placeholders
from .numpy_printer import BatchedNumPyPrinter, has_symattn_node
from .printer import identifier

#: SymPy classes that may be the root of an expression holding a symattn node
SYMPY_ROOTS = (sp.MatMul, sp.MatAdd, sp.Transpose, sp.MatrixSlice, sp.BlockMatrix, sp.BlockDiagMatrix,
               sp.HadamardProduct, sp.MatPow, sp.Inverse,
               sp.ImmutableDenseMatrix)  # a feature map phi(X) at concrete sizes is an explicit matrix


def node_classes() -> list:
    """Every SymPy node class defined in :mod:`symattn.defs` (matrix expressions and scalar functions)."""
    from .. import defs

    found = []
    for info in pkgutil.iter_modules(defs.__path__):
        module = importlib.import_module(f"{defs.__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (cls.__module__ == module.__name__ and issubclass(cls, sp.Basic)
                    and issubclass(cls, (MatrixExpr, sp.Function))):
                found.append(cls)
    found.append(LayerStack)  # a stack of layers: a node of the prover's claims about deep models
    return sorted(set(found), key=lambda c: (c.__module__, c.__name__))


class StockNumPyPrinter(BatchedNumPyPrinter):
    """The batched printer of stock ``sympy.lambdify``: NumPy and float are called under the runtime's
    aliases ``symattn_numpy`` and ``symattn_float``, since lambdify names the function's parameters as
    the user's symbols (a matrix named numpy or float would hide the module or the builtin)."""

    numpy_name = "symattn_numpy"
    float_name = "symattn_float"

    def print_root(self, expr) -> str:
        if self.stacked is None:
            from .numpy_printer import stacked_families

            self.stacked = {fam: self._named(sp.sstr(FamilyMember(fam, sp.Symbol("h"), rows, cols)))
                            for fam, (rows, cols) in stacked_families(expr).items()}
        return super().print_root(expr)

    def _leaf(self, e) -> str:
        if e in self.names:  # a layer's input or weight inside a stack: code of the printer's own
            return self.names[e]
        return self._named(super()._leaf(e))

    def _named(self, code: str) -> str:
        """``code``, the name of a matrix input, when it is a Python identifier; else a LoweringError."""
        if not code.isidentifier():
            fix = code.replace("^", "_") if code.replace("^", "_").isidentifier() else "W_Q"
            raise LoweringError(
                f"{code}: sympy.lambdify names the function's parameters after the matrices, so a matrix "
                f"name must be a Python identifier ({fix}, not {code}). Name the matrix or the family so "
                f"(sa.Family({fix.rsplit('_', 1)[0]!r}, ...) for the heads of a family), or use "
                f"symattn.lower(expr), which takes any name ({code} becomes {identifier(code, set())})")
        return code


def batched_code(expr, printer, cls=StockNumPyPrinter) -> str:
    """``expr`` printed by the batched printer ``cls`` with the settings of ``printer``; the helpers
    it uses are added to ``printer.module_imports`` (lambdify imports them)."""
    settings = {k: v for k, v in printer._settings.items() if k in cls._default_settings}
    batched = cls(settings)
    expr = fold_feature_maps(expr)
    code = batched.print_root(expr)
    if cls in (BatchedNumPyPrinter, StockNumPyPrinter):
        guard = " and ".join(g for g in (shape_guard(batched, expr), size_guard(batched, expr, code)) if g)
        code = f"({guard} and {code})" if guard else code
    imports = getattr(printer, "module_imports", None)
    if imports is not None:
        for module, names in batched.module_imports.items():
            imports[module] |= set(names)
    return code


def shape_guard(batched, expr) -> str:
    """Code that checks the input arrays' shapes against ``expr`` before it is computed
    (:func:`~symattn.lowering.targets.numpy.shapes_agree`: an error names the inputs and their shapes);
    '' when the expression reads no input matrix."""
    from .numpy_printer import walk_binders

    def size(d):
        d = sp.sympify(d)
        return repr(d.name) if isinstance(d, sp.Symbol) else int(d) if d.is_Integer else None

    seen: dict = {}
    inside, weights = placeholders(expr), layer_weights(expr)

    def visit(e, context):
        if isinstance(e, FamilyMember) and e.family_name in batched.stacked:
            code, name, stacked = batched.stacked[e.family_name], e.family_name, True
        elif e in inside:  # a layer's input: bound by its stack
            return
        elif batched._is_leaf(e):  # a stack's weight has its layers on axis -3, as a family its heads
            code, name, stacked = batched._leaf(e), str(e.name), e in weights
        else:
            return
        rows, cols = (size(d) for d in e.shape)
        seen.setdefault(code, f"({code}, {name!r}, {rows}, {cols}, {stacked})")

    walk_binders(expr, visit)
    if not seen:
        return ""
    return f"{batched.helper('shapes_agree')}({', '.join(seen.values())})"


def size_guard(batched, expr, code: str) -> str:
    """Code that checks, before anything is computed, that every size no input's shape shows (a
    padding mask's valid length, a size of a ones matrix, ...) was given as an argument of lambdify and
    is a whole number (:func:`~symattn.lowering.targets.numpy.sizes_given`); '' when the shapes show all that
    ``code`` reads.
    Each size is read by a lambda, so a name that lambdify did not define is reported, not a NameError."""
    def read_by_name(d):  # the code reads the size by its bare name (no input axis binds it)
        return re.search(rf"(?<![\w.'\"]){re.escape(batched._print(d))}(?![\w'\"])", code) is not None

    missing = sorted((d for d in lowering_dimensions(expr) if d not in (batched.dims or {}) and read_by_name(d)),
                     key=str)
    if not missing:
        return ""
    pairs = ", ".join(f"({str(d)!r}, lambda: {batched._print(d)})" for d in missing)
    return f"{batched.helper('sizes_given')}({pairs})"


def _numpycode(self, printer, **kwargs):
    return batched_code(self, printer)


def _stock(printer, expr) -> str:
    """What ``printer`` prints for ``expr`` by its own ``_print_<Class>`` methods (no printmethod)."""
    for cls in type(expr).__mro__:
        method = getattr(printer, f"_print_{cls.__name__}", None)
        if method is not None:
            return method(expr)
    return printer.emptyPrinter(expr)


def _sympy_numpycode(self, printer, **kwargs):
    if has_symattn_node(self):
        return batched_code(self, printer)
    return _stock(printer, self)


def _visible_pythoncode(self, printer, **kwargs):
    k, t = (printer._print(a) for a in self.args)
    return f"(0.0 if ({k}) <= ({t}) else -{printer._module_format('math.inf')})"


def _perm_index_pythoncode(self, printer, **kwargs):
    sigma, _, k, inverse = self.args
    s, kk = printer._print(sigma), printer._print(k)
    return f"list({s}).index({kk})" if inverse else f"({s})[{kk}]"


def install_printmethod(printmethod: str, cls) -> None:
    """Attach ``printmethod`` (e.g. ``"_jaxcode"`` of SymPy's JaxPrinter) to every node class and to
    SymPy's matrix roots, printing with the batched printer class ``cls`` (a subclass of
    :class:`BatchedNumPyPrinter` for another array library)."""

    def own(self, printer, **kwargs):
        return batched_code(self, printer, cls)

    def root(self, printer, **kwargs):
        return batched_code(self, printer, cls) if has_symattn_node(self) else _stock(printer, self)

    for node in node_classes():
        setattr(node, printmethod, own)
    for node in SYMPY_ROOTS:
        if printmethod not in vars(node):
            setattr(node, printmethod, root)


_INSTALLED: list = []


def install() -> list:
    """Attach the printing methods (once); returns the classes that received ``_numpycode``."""
    if _INSTALLED:
        return list(_INSTALLED)
    from ..defs.mask import Visible
    from ..defs.permutation import PermIndex

    for cls in node_classes():
        cls._numpycode = _numpycode
        _INSTALLED.append(cls)
    for cls in SYMPY_ROOTS:
        if "_numpycode" not in vars(cls):
            cls._numpycode = _sympy_numpycode
    Visible._pythoncode = _visible_pythoncode
    PermIndex._pythoncode = _perm_index_pythoncode
    return list(_INSTALLED)
