"""The printers of kernels: a matrix expression becomes the body of a Python function.

Matrices are the last two axes of every array; leading axes are batch axes and broadcast.

- :class:`KernelPrinter` is the NumPy kernel's printer, run by stock ``sympy.lambdify``
  (``printer=printer, cse=printer.cse``, see :func:`symattn.lowering.lower`): its CSE lists every
  subexpression once, in the order of evaluation, with the plan of what is changed in place (a
  temporary with a single use, an input the caller donates) and which step makes the result in
  ``out``; it prints each step batched (``mm(A, B)``: ``A @ B`` as one GEMM over all rows when B has
  no batch axes; the cheapest parenthesization of a matrix chain from the shapes, static when every
  size is a number, else ``chain(c, A, B, ...)`` at run time; ``numpy.swapaxes`` for Transpose;
  max-shifted softmax in place; the row causal mask as -inf in place; a bias row broadcast; exp, exp2,
  exp(X - c 1ᵀ) and row sums of large temporaries in row chunks on every core, see ``runtime``);
  scalars through SymPy's Python printer (math.sqrt, ...) inside ``float(...)``, so float32 stays
  float32;
- :class:`BatchedPrinter` is the same walk (one temporary per subexpression, the same common
  subexpressions, chain ordering, mask and bias recognition) that emits lines of code directly; the
  printers of the other array libraries (``targets.TargetPrinter``) subclass it with one
  ``_print_<Node>`` per node of :data:`SPECIALISED`.

Every other node (sums, stacks and concatenations over heads, family members, slices, explicit
matrices, masks, RoPE blocks, RowOf, score functions) is one expression of
:class:`~symattn.lowering.numpy_printer.BatchedNumPyPrinter` (the printer stock ``sympy.lambdify``
reaches through the hooks) or of a target's subclass of it, with the temporaries computed so far
known to it by name.
"""

from __future__ import annotations

import keyword
import re

import sympy as sp
from sympy.core.symbol import Str
from sympy.matrices.expressions.matexpr import MatrixExpr
from sympy.printing.pycode import PythonCodePrinter

from ..defs.heads import FamilyMember, _OverHeads  # noqa: F401  (_OverHeads: re-exported)
from ..defs.mask import CausalMask
from ..defs.numeric_nodes import DivideRows, Exp, Exp2, Log, ScaleRows, ShiftRows
from ..defs.softmax import Softmax
from ..errors import LoweringError
from .numpy_printer import BatchedNumPyPrinter, has_entries
from .targets.common import chain_order


def identifier(name: str, taken: set) -> str:
    """A Python identifier for a symbol name (``W^Q`` -> ``W_Q``), unique among ``taken``."""
    s = re.sub(r"\W+", "_", name).strip("_") or "x"
    if s[0].isdigit() or keyword.iskeyword(s):
        s = "x_" + s
    base, k = s, 2
    while s in taken:
        s, k = f"{base}_{k}", k + 1
    taken.add(s)
    return s


class ScalarPrinter(PythonCodePrinter):
    """SymPy's Python printer (``math`` functions) for scalar coefficients, dimensions renamed."""

    def __init__(self, names: dict):
        super().__init__({"fully_qualified_modules": True})
        self.names = names

    def _print_Symbol(self, s):
        if s in self.names:
            return self.names[s]
        raise LoweringError(f"the scalar symbol {s} is neither a dimension nor an input")

    _print_Dummy = _print_Symbol


def leaf(e) -> bool:
    return isinstance(e, (sp.MatrixSymbol, FamilyMember))


def _uses(expr) -> dict:
    """How many parents use each subexpression (the expression is a DAG after CSE)."""
    counts: dict = {}

    def walk(e):
        for a in e.args:
            if isinstance(a, MatrixExpr):
                counts[a] = counts.get(a, 0) + 1
                if counts[a] == 1:
                    walk(a)

    walk(expr)
    return counts


def _shape_comment(e) -> str:
    r, c = e.shape
    return f"# (..., {sp.sstr(r)}, {sp.sstr(c)})"


class BatchedPrinter:
    """Emit the statements computing ``expr`` from the named inputs, for the kernels of other array
    libraries: a subclass gives one ``_print_<Node>`` per node of :data:`SPECIALISED`, each returning
    (variable, owned) through :meth:`emit` (the NumPy kernel is :class:`KernelPrinter`'s).

    ``inputs``: leaf (MatrixSymbol or family member) -> Python identifier;
    ``dims``: dimension symbol -> Python identifier bound at run time.
    """

    def __init__(self, inputs: dict, dims: dict, donated=(), *, scalars=None, stacked=None, features=None):
        self.inputs = inputs
        self.features = dict(features or {})  # C -> (identifier, name): bound from the first phi(X) computed
        self.donated = set(donated)
        self.dims = dims
        self.scalars = dict(scalars or {})  # scalar symbols and functions that are inputs -> identifier
        self.stacked = dict(stacked or {})  # family name -> identifier of its array with a head axis
        self.scalar = ScalarPrinter({**dims, **{s: v for s, v in self.scalars.items() if isinstance(s, sp.Symbol)}})
        self.lines: list[str] = []
        self.memo: dict = {}
        self.uses: dict = {}
        self.counter = 0

    # -- driving ---------------------------------------------------------------------
    def doprint(self, expr) -> tuple[list[str], str]:
        self.uses = _uses(expr)
        out, _ = self._print(expr)
        return self.lines, out

    def _print(self, e):
        """Return (variable, owned): owned temporaries may be changed in place by their one user."""
        if e in self.memo:
            var, owned = self.memo[e]
            return var, owned and self.uses.get(e, 1) <= 1
        if e in self.inputs:
            res = (self.inputs[e], e in self.donated)  # a donated input may be overwritten
        elif leaf(e) and not (isinstance(e, FamilyMember) and e.family_name in self.stacked):
            raise LoweringError(f"no input named for the matrix {e}")
        else:
            for cls in type(e).__mro__:
                if cls.__name__ in SPECIALISED:
                    res = getattr(self, f"_print_{cls.__name__}")(e)
                    break
            else:  # every other node: one expression of the expression printer
                res = self._print_feature_map_first(e) or self.emit(e, self.expression_printer()._print(e),
                                                                     owned=False)
        self.memo[e] = res
        return res[0], res[1] and self.uses.get(e, 1) <= 1

    def _print_feature_map_first(self, e):
        """phi(X) whose number of features C no input shows, the first time: computed unchecked, then
        C bound from its last axis (later applications are checked against it); None for other nodes."""
        from ..defs.feature_map import FeatureMap

        if not (isinstance(e, FeatureMap) and e.features in self.features):
            return None
        ident, name = self.features.pop(e.features)
        x, _ = self._print(e.arg)
        var, owned = self.emit(e, self.expression_printer().feature_map_call(e, x, "None"), owned=False)
        self.lines.append(f"{ident} = bind(bound, {name!r}, {var}.shape[-1], {sp.sstr(e)[:60]!r}, 'features')")
        return var, owned

    def expression_printer(self):
        """The printer of the nodes this printer does not specialise (heads, slices, masks, explicit
        matrices, ...): they become one expression each; the temporaries computed so far are known
        to it by name. Subclasses for other array libraries return their own printer here."""
        from .numpy_printer import BatchedNumPyPrinter

        known = {e: var for e, (var, _) in self.memo.items()}
        return BatchedNumPyPrinter({"fully_qualified_modules": True}, dims=self.dims,
                                   names={**self.inputs, **self.scalars}, stacked=self.stacked,
                                   known=known, dtype="dtype")

    def emit(self, e, code: str, owned: bool = True):
        var = f"t{self.counter}"
        self.counter += 1
        self.lines.append(f"{var} = {code}  {_shape_comment(e)}")
        return var, owned

    def coeff(self, c) -> str:
        if has_entries(c):  # one number per batch element, an array (..., 1, 1)
            return self.expression_printer().entry_coeff(c)
        return f"float({self.scalar.doprint(sp.sympify(c))})"

    def dim(self, d) -> str:
        return self.scalar.doprint(sp.sympify(d))


#: nodes with a rule of their own in the kernel printers (in place on temporaries, chain ordering, masks, biases)
SPECIALISED = {"MatMul", "MatAdd", "Transpose", "Softmax", "BlockMatrix", "Identity", "ZeroMatrix",
               "OneMatrix", "Exp", "Exp2", "Log", "ShiftRows", "ScaleRows", "DivideRows"}


def _is_broadcast_row(t) -> bool:
    """1 b: a column of ones times a row (a bias added to every row)."""
    if not isinstance(t, sp.MatMul):
        return False
    _, mats = t.as_coeff_matrices()
    return isinstance(mats[0], sp.OneMatrix) and mats[0].cols == 1 and len(mats) >= 2


def _row_of(t):
    c, mats = t.as_coeff_matrices()
    rest = mats[1:]
    return sp.MatMul(c, *rest).doit(deep=False) if (c != 1 or len(rest) > 1) else rest[0]


__all__ = ["BatchedPrinter", "KernelPrinter", "identifier", "leaf", "_OverHeads", "Softmax", "Exp", "Exp2", "Log",
           "ShiftRows", "ScaleRows", "DivideRows"]


def _is_row_causal_mask(e) -> bool:
    """CausalMask(m, n, offset=m - n)ᵀ: the bottom-right aligned row mask the runtime applies."""
    if not (isinstance(e, sp.Transpose) and isinstance(e.arg, CausalMask)):
        return False
    M = e.arg
    keys, queries = M.shape
    return sp.expand(M.offset - (keys - queries)) == 0


# -- the printer and the CSE that sympy.lambdify runs for ``lower`` ------------------------------


class Temporary(sp.MatrixSymbol):
    """An intermediate array of a kernel (t0, t1, ...): the left side of a step of
    :meth:`KernelPrinter.cse` (a class of its own, so no input named t0 is ever taken for it)."""


class Statement(sp.Basic):
    """A line of a kernel that is no matrix value: the conversion of the inputs, the binding and
    checking of the sizes (written as given by :func:`~symattn.lowering.kernel.solve_sizes`)."""

    def __new__(cls, code: str):
        return sp.Basic.__new__(cls, Str(code))

    @property
    def code(self) -> str:
        return self.args[0].name


class Result(MatrixExpr):
    """The value a kernel returns: the temporary ``t``, written into ``out`` when the caller gives it."""

    def __new__(cls, t):
        return sp.Basic.__new__(cls, t)

    @property
    def shape(self):
        return self.args[0].shape


#: the kinds of steps whose first array can be made directly in ``out=`` (a product, or one
#: elementwise operation of two names that makes a new array)
_INTO_OUT = {"mm", "static_chain", "chain", "binary", "add"}
#: the names the statements and scalars of a kernel use, from the runtime module (math is imported there)
_STATEMENT_NAMES = ("as_inputs", "bind", "check_size", "solve_size", "check_out", "check_donated", "batch_of",
                    "math")
_UFUNC_NAMES = {"-": "numpy.subtract", "*": "numpy.multiply", "/": "numpy.divide", "+": "numpy.add"}



class KernelPrinter(BatchedNumPyPrinter):
    """The printer ``sympy.lambdify`` runs for :func:`symattn.lower` (``printer=``), with its CSE
    (``cse=printer.cse``): the batched NumPy kernel of one expression, step by step.

    :meth:`cse` is the chain-ordered common-subexpression elimination: it walks the expression once
    and returns lambdify's ``(pairs, result)``, each pair ``(temporary, subexpression)`` in the order
    of evaluation, every subexpression computed once (a later step names it by its temporary). It
    also plans where a step may work in place: a temporary with one use, or an input the caller
    donates, is changed in place by its user (the pair then names that temporary again, as in
    ``t1 = softmax_(t1, -1)``), and the first array of the result is made in ``out``. The first pairs
    are :class:`Statement` lines: the inputs converted to arrays of one dtype, the sizes bound from
    their shapes and checked.

    :meth:`doprint` prints one side of a pair; the rules, one ``_step_<kind>`` per kind of step:

    - MatMul: ``A 1`` and ``1ᵀ A`` (a OneMatrix column or row) as row and column sums, ``1 b`` as
      ``b`` repeated; two factors ``mm(A, B)``; more factors in the cheapest parenthesization of the
      shapes (nested ``mm`` when every size is a number, else ``chain(c, A, B, ...)``, ordered at run
      time), the scalar applied to the smallest operand;
    - Transpose: ``numpy.swapaxes(x, -1, -2)``; Softmax: ``softmax_`` (max-shifted, in place);
    - MatAdd: ``iadd`` into the first term that may be changed; the row causal mask
      CausalMask(m, n, offset=m - n)ᵀ in a sum as ``causal_mask_`` (-inf in place), ``1 b`` (a bias)
      as the row ``b`` broadcast;
    - BlockMatrix: ``block``; Exp, Exp2 (``numpy.exp2``), Log, ShiftRows, ScaleRows, DivideRows
      elementwise, exp(X - c 1ᵀ) in one sweep (``shift_exp_``), in place where the plan allows;
    - every other node (heads, family members, slices, explicit matrices, masks, RoPE, RowOf, score
      functions): one expression of :class:`BatchedNumPyPrinter` (the printer of stock lambdify),
      the temporaries made before it known to it by name.

    ``inputs``: {leaf: identifier}; ``dims``: {dimension symbol: identifier}; ``donated``: inputs
    that may be overwritten; ``scalars``: {scalar symbol or function: identifier}; ``stacked``:
    {family name: identifier of its array with a head axis}; ``statements``: the (left, right) code
    of the lines before the first step.
    """

    def __init__(self, inputs: dict, dims: dict, donated=(), *, scalars=None, stacked=None, statements=(),
                 features=(), late=()):
        scalars = dict(scalars or {})
        self.features = tuple(features)  # (phi(X), identifier of C, name of C): C bound from phi's output
        self.late = tuple(late)  # statements that use such a C: after it is bound
        super().__init__({"fully_qualified_modules": True}, dims=dims, names={**inputs, **scalars},
                         stacked=dict(stacked or {}), dtype="dtype")
        self.inputs = dict(inputs)
        self.donated = set(donated)
        self.statements = tuple(statements)
        self.scalar = ScalarPrinter({**dims, **{s: v for s, v in scalars.items() if isinstance(s, sp.Symbol)}})
        self.steps: dict = {}

    # -- the CSE: the steps in order, and where each may work in place ---------------------------
    def cse(self, expr):
        """lambdify's ``cse=``: ``([(temporary, subexpression), ...], Result(temporary))``."""
        from .feature_maps import fold_feature_maps

        expr = fold_feature_maps(expr)  # a feature map at concrete sizes: phi(X) again, as lower() has it
        self.uses, self.memo, self.steps, self.pairs, self.counter = _uses(expr), {}, {}, [], 0
        self.into_out = None
        for node, ident, name in self.features:  # phi(X) first, then C = its last axis
            x, _ = self._plan(node.arg)
            t, _ = self._new(node, "feature_map", owned=False, x=x)
            self.memo[node] = (t, False)
            where = sp.sstr(node)[:60]
            self.pairs.append((Statement(ident), Statement(f"bind(bound, {name!r}, {t.name}.shape[-1], {where!r}, "
                                                           f"'features')")))
        bound_here = len(self.pairs)
        result, _ = self._plan(expr)
        first = next((e for t, e in self.pairs if t == result), None)
        if first is not None and self.steps[first][0] in _INTO_OUT and self.steps[first][1].get("fresh", True):
            self.into_out = first
        glue = [(Statement(left), Statement(right)) for left, right in self.statements]
        late = [(Statement(left), Statement(right)) for left, right in self.late]
        for name in _STATEMENT_NAMES:  # lambdify imports what the statements call (math: the scalars)
            self.helper(name)
        return glue + self.pairs[:bound_here] + late + self.pairs[bound_here:], Result(result)

    def _plan(self, e):
        """(the symbol holding e, whether its one user may change it in place)."""
        if e in self.memo:
            var, owned = self.memo[e]
            return var, owned and self.uses.get(e, 1) <= 1
        if e in self.inputs:
            res = (e, e in self.donated)
        elif leaf(e) and not (isinstance(e, FamilyMember) and e.family_name in self.stacked):
            raise LoweringError(f"no input named for the matrix {e}")
        else:
            for cls in type(e).__mro__:
                if cls.__name__ in SPECIALISED:
                    res = getattr(self, f"_plan_{cls.__name__}")(e)
                    break
            else:
                known = {x: self._code(var) for x, (var, _) in self.memo.items()}
                res = self._new(e, "expression", owned=False, known=known)
        self.memo[e] = res
        return res[0], res[1] and self.uses.get(e, 1) <= 1

    def _new(self, e, kind, owned=True, **data):
        """A step that makes a new array (a new temporary, named apart from the inputs and sizes)."""
        taken = {*self.inputs.values(), *self.names.values(), *self.dims.values(), *self.stacked.values()}
        while f"t{self.counter}" in taken:
            self.counter += 1
        t = Temporary(f"t{self.counter}", *e.shape)
        self.counter += 1
        self.pairs.append((t, e))
        self.steps[e] = (kind, data)
        return t, owned

    def _again(self, e, var, kind, **data):
        """A step that changes ``var`` in place (the pair names it again)."""
        self.pairs.append((var, e))
        self.steps[e] = (kind, data)
        return var, True

    def _plan_MatMul(self, e):
        c, mats = e.as_coeff_matrices()
        if len(mats) >= 2 and isinstance(mats[0], sp.OneMatrix) and mats[0].cols == 1:  # 1 b: rows repeated
            rest = sp.MatMul(c, *mats[1:]).doit(deep=False) if len(mats) > 2 or c != 1 else mats[1]
            var, _ = self._plan(rest)
            return self._new(e, "repeat", x=var, rows=mats[0].rows)
        if len(mats) == 2 and isinstance(mats[1], sp.OneMatrix) and mats[1].cols == 1:  # A 1: row sums
            return self._new(e, "rowsum", x=self._plan(mats[0])[0], c=c)
        if len(mats) == 2 and isinstance(mats[0], sp.OneMatrix) and mats[0].rows == 1:  # 1ᵀ A: column sums
            return self._new(e, "colsum", x=self._plan(mats[1])[0], c=c)
        vars_ = [self._plan(m)[0] for m in mats]
        if len(vars_) == 1:
            var, owned = self._plan(mats[0])
            if c == 1:  # 1·A, left unevaluated when a size fixed to 1 turned a scale into 1
                return var, owned
            if owned:
                return self._again(e, var, "scale_", x=var, c=c)
            return self._new(e, "scaled", x=var, c=c)
        if len(vars_) == 2 and c == 1:
            return self._new(e, "mm", xs=vars_)
        if c == 1 and all(sp.sympify(d).is_Integer for m in mats for d in m.shape):
            order = chain_order([tuple(int(d) for d in m.shape) for m in mats])
            return self._new(e, "static_chain", xs=vars_, order=order)
        return self._new(e, "chain", xs=vars_, c=c)

    def _plan_MatAdd(self, e):
        terms = [t for t in e.args if not isinstance(t, sp.ZeroMatrix)]  # X + 0 = X
        if len(terms) == 1:
            return self._plan(terms[0])
        masks = [t for t in terms if _is_row_causal_mask(t)]
        rows = [t for t in terms if _is_broadcast_row(t)]
        full = [t for t in terms if t not in masks and t not in rows]
        if not full:
            raise LoweringError(f"cannot lower a sum of masks and broadcast rows alone: {sp.sstr(e)[:80]}")
        planned = [self._plan(t) for t in full] + [self._plan(_row_of(t)) for t in rows]
        base = next((k for k, (_, owned) in enumerate(planned[:len(full)]) if owned), 0)  # reuse a temporary
        var, owned = planned[base]
        others = [v for k, (v, _) in enumerate(planned) if k != base]
        if not others and not masks:
            return var, owned
        data = {"x": var, "others": others, "mask": bool(masks), "fresh": not owned}
        if owned:
            return self._again(e, var, "add", **data)
        return self._new(e, "add", **data)

    def _plan_Transpose(self, e):
        if _is_row_causal_mask(e):
            return self._new(e, "causal_mask")
        var, owned = self._plan(e.arg)
        return self._new(e, "swap", owned, x=var)

    def _plan_Softmax(self, e):
        var, owned = self._plan(e.arg)
        axis = -2 if e.axis == 0 else -1
        if owned:
            return self._again(e, var, "softmax", x=var, axis=axis, copy=False)
        return self._new(e, "softmax", x=var, axis=axis, copy=True)

    def _plan_BlockMatrix(self, e):
        B = e.blocks
        return self._new(e, "block", rows=[[self._plan(B[i, j])[0] for j in range(B.cols)] for i in range(B.rows)])

    def _plan_Identity(self, e):
        return self._new(e, "constant")

    _plan_ZeroMatrix = _plan_OneMatrix = _plan_Identity

    def _plan_Exp(self, e):
        arg = e.args[0]
        if isinstance(arg, ShiftRows) and self.uses.get(arg, 1) <= 1:  # exp(X - c 1ᵀ) in one sweep
            x, owned = self._plan(arg.args[0])
            c, _ = self._plan(arg.args[1])
            res = (self._again(e, x, "shift_exp", x=x, c=c, copy=False) if owned
                   else self._new(e, "shift_exp", x=x, c=c, copy=True))
            self.memo[arg] = (res[0], False)
            return res
        var, owned = self._plan(arg)
        if owned:
            return self._again(e, var, "exp", x=var, copy=False)
        return self._new(e, "exp", x=var, copy=True)

    def _plan_Exp2(self, e):
        var, owned = self._plan(e.args[0])
        if owned:
            return self._again(e, var, "exp2", x=var, copy=False)
        return self._new(e, "exp2", x=var, copy=True)

    def _plan_Log(self, e):
        var, owned = self._plan(e.args[0])
        if owned:
            return self._again(e, var, "log", x=var, copy=False)
        return self._new(e, "log", x=var, copy=True)

    def _plan_rowwise(self, e, x, other, op):
        var, owned = self._plan(x)
        o, _ = self._plan(other)
        if owned:
            return self._again(e, var, "binary_", x=var, other=o, op=op)
        return self._new(e, "binary", x=var, other=o, op=op)

    def _plan_ShiftRows(self, e):
        return self._plan_rowwise(e, e.args[0], e.args[1], "-")

    def _plan_ScaleRows(self, e):
        return self._plan_rowwise(e, e.args[1], e.args[0], "*")

    def _plan_DivideRows(self, e):
        return self._plan_rowwise(e, e.args[0], e.args[1], "/")

    # -- printing the pairs --------------------------------------------------------------------
    def doprint(self, expr, assign_to=None):
        """One side of a pair of :meth:`cse`, or its result (``into(t, out)``)."""
        if isinstance(expr, Statement):
            return expr.code
        if isinstance(expr, Result):
            return f"{self.helper('into')}({self._code(expr.args[0])}, out)"
        if expr in self.steps:
            kind, data = self.steps[expr]
            code = getattr(self, f"_step_{kind}")(expr, **data)
            return f"{code}  {_shape_comment(expr)}"
        if isinstance(expr, Temporary) or expr in self.inputs:
            return self._code(expr)
        raise LoweringError(f"KernelPrinter prints the steps of its own CSE: call sympy.lambdify(args, expr, "
                            f"printer=printer, cse=printer.cse); {sp.sstr(expr)[:60]} is not one of them")

    def _code(self, x) -> str:
        return x.name if isinstance(x, Temporary) else self.inputs[x]

    def _out(self, e) -> str:
        return ", out=out" if e == self.into_out else ""

    def _coeff_code(self, c) -> str:
        if has_entries(c):
            return self.entry_coeff(c)
        return f"float({self.scalar.doprint(sp.sympify(c))})"

    def _dim_code(self, d) -> str:
        return self.scalar.doprint(sp.sympify(d))

    def _scaled(self, c, code: str) -> str:
        return code if c == 1 else f"{self._coeff_code(c)} * {code}"

    def _step_repeat(self, e, x, rows):
        return f"{self.call('numpy.repeat', self._code(x), self._dim_code(rows), 'axis=-2')}"

    def _step_rowsum(self, e, x, c):
        return self._scaled(c, f"{self.helper('rowsum')}({self._code(x)})")

    def _step_colsum(self, e, x, c):
        return self._scaled(c, self.call("numpy.sum", self._code(x), "axis=-2", "keepdims=True"))

    def _step_scale_(self, e, x, c):
        if has_entries(c):  # one coefficient per batch element: the batch may be larger than x's
            return f"{self.helper('ufunc_')}({self._module_format('numpy.multiply')}, {self._code(x)}, " \
                   f"{self._coeff_code(c)})"
        return self.call("numpy.multiply", self._code(x), self._coeff_code(c), f"out={self._code(x)}")

    def _step_scaled(self, e, x, c):
        return self._scaled(c, self._code(x))

    def _step_mm(self, e, xs):
        return f"{self.helper('mm')}({', '.join(self._code(x) for x in xs)}{self._out(e)})"

    def _step_static_chain(self, e, xs, order):
        mm = self.helper("mm")

        def nest(node, top=False):
            if isinstance(node, int):
                return self._code(xs[node])
            return f"{mm}({nest(node[0])}, {nest(node[1])}{self._out(e) if top else ''})"

        return nest(order, top=True)

    def _step_chain(self, e, xs, c):
        coeff = "1" if c == 1 else self._coeff_code(c)
        return f"{self.helper('chain')}({coeff}, {', '.join(self._code(x) for x in xs)}{self._out(e)})"

    def _step_add(self, e, x, others, mask, fresh):
        code, owned = self._code(x), not fresh
        for o in others:
            if owned:
                code = f"{self.helper('iadd')}({code}, {self._code(o)})"
            elif e == self.into_out:
                code = self.call("numpy.add", code, self._code(o), "out=out")
            else:
                code = f"{code} + {self._code(o)}"
            owned = True
        if mask:
            code = f"{self.helper('causal_mask_')}({code if owned else code + '.copy()'})"
        return code

    def _step_causal_mask(self, e):
        n, m = e.shape
        return f"{self.helper('causal_mask')}({self._dim_code(n)}, {self._dim_code(m)}, dtype)"

    def _step_swap(self, e, x):
        return self.call("numpy.swapaxes", self._code(x), -1, -2)

    def _step_softmax(self, e, x, axis, copy):
        return f"{self.helper('softmax_')}({self._code(x)}{'.copy()' if copy else ''}, {axis})"

    def _step_block(self, e, rows):
        text = ", ".join("[" + ", ".join(self._code(x) for x in row) + "]" for row in rows)
        return f"{self.helper('block')}([{text}])"

    def _step_constant(self, e):
        if isinstance(e, sp.Identity):
            return self.call("numpy.eye", self._dim_code(e.rows), "dtype=dtype")
        fn = "numpy.zeros" if isinstance(e, sp.ZeroMatrix) else "numpy.ones"
        return self.call(fn, f"({self._dim_code(e.rows)}, {self._dim_code(e.cols)})", "dtype=dtype")

    def _step_shift_exp(self, e, x, c, copy):
        return f"{self.helper('shift_exp_')}({self._code(x)}{'.copy()' if copy else ''}, {self._code(c)})"

    def _step_exp(self, e, x, copy):
        return self.call("numpy.exp", self._code(x)) if copy else f"{self.helper('exp_')}({self._code(x)})"

    def _step_exp2(self, e, x, copy):
        return self.call("numpy.exp2", self._code(x)) if copy else f"{self.helper('exp2_')}({self._code(x)})"

    def _step_log(self, e, x, copy):
        return self.call("numpy.log", self._code(x), *(() if copy else (f"out={self._code(x)}",)))

    def _step_binary_(self, e, x, other, op):
        ufunc = self._module_format(_UFUNC_NAMES[op])
        return f"{self.helper('ufunc_')}({ufunc}, {self._code(x)}, {self._code(other)})"

    def _step_binary(self, e, x, other, op):
        if e == self.into_out:
            return self.call(_UFUNC_NAMES[op], self._code(x), self._code(other), "out=out")
        return f"{self._code(x)} {op} {self._code(other)}"

    def _step_feature_map(self, e, x):
        return self.feature_map_call(e, self._code(x), "None")

    def _step_expression(self, e, known):
        self.known = known
        try:
            return self._print(e)
        finally:
            self.known = {}
