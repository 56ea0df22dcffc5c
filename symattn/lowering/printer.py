"""The batched NumPy printer: a matrix expression becomes the body of a Python function.

Matrices are the last two axes of every array; leading axes are batch axes and
broadcast. The printing rules, one method per node (``_print_<Node>``):

- MatMul: ``A 1`` and ``1ᵀ A`` (a OneMatrix column or row) as row and column sums;
  otherwise ``chain(c, A, B, ...)``, the cheapest parenthesization from the shapes (a
  matrix-chain dynamic program, static when every dimension is a number, at run time
  otherwise), the scalar c applied to the smallest operand; two factors print as ``mm(A, B)``,
  which is ``A @ B`` computed as one GEMM over all rows when B has no batch axes;
- Transpose: ``np.swapaxes(x, -1, -2)`` (a view; SymPy's ``.T`` breaks batches);
- Softmax: max-shifted exp normalized along the right axis, in place on a temporary;
- the row causal mask CausalMask(m, n, offset=m - n)ᵀ in a sum: the scores masked with -inf in
  place; ``1 b`` (a OneMatrix column times a row b, a bias) in a sum: ``b`` broadcast over the rows;
- BlockMatrix: concatenation with broadcast batch axes; Exp, ShiftRows, ScaleRows,
  DivideRows elementwise (in place on temporaries; exp(X - c 1ᵀ), exp and row sums of large
  temporaries in row chunks on every core, see ``runtime``);
- scalars: SymPy's Python printer (math.sqrt, ...) inside ``float(...)``, so float32 stays float32;
- every other node (sums, stacks and concatenations over heads, family members, slices, explicit
  matrices, masks, RoPE blocks, RowOf, score functions): one expression of
  :class:`~symattn.lowering.numpy_printer.BatchedNumPyPrinter`, the printer stock ``sympy.lambdify``
  uses, with the temporaries computed so far known to it by name (:meth:`BatchedPrinter.expression_printer`).

Every subexpression is computed once (common subexpressions share a temporary), and a
temporary is modified in place only when it has a single use.
"""

from __future__ import annotations

import keyword
import re

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr
from sympy.printing.pycode import PythonCodePrinter

from ..defs.heads import FamilyMember, _OverHeads  # noqa: F401  (_OverHeads: re-exported)
from ..defs.mask import CausalMask
from ..defs.numeric_nodes import DivideRows, Exp, Log, ScaleRows, ShiftRows
from ..defs.softmax import Softmax
from ..errors import LoweringError
from .runtime import chain_order


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
    """Emit the statements computing ``expr`` from the named inputs.

    ``inputs``: leaf (MatrixSymbol or family member) -> Python identifier;
    ``dims``: dimension symbol -> Python identifier bound at run time.
    """

    def __init__(self, inputs: dict, dims: dict, donated=(), *, scalars=None, stacked=None):
        self.inputs = inputs
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
                res = self.emit(e, self.expression_printer()._print(e), owned=False)
        self.memo[e] = res
        return res[0], res[1] and self.uses.get(e, 1) <= 1

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
        return f"float({self.scalar.doprint(sp.sympify(c))})"

    def dim(self, d) -> str:
        return self.scalar.doprint(sp.sympify(d))

    # -- products ----------------------------------------------------------------------
    def _print_MatMul(self, e):
        c, mats = e.as_coeff_matrices()
        if len(mats) >= 2 and isinstance(mats[0], sp.OneMatrix) and mats[0].cols == 1:
            rest, _ = self._print(sp.MatMul(c, *mats[1:]).doit(deep=False) if len(mats) > 2 or c != 1
                                  else mats[1])
            return self.emit(e, f"np.repeat({rest}, {self.dim(mats[0].rows)}, axis=-2)")
        scale = "" if c == 1 else self.coeff(c) + " * "
        if len(mats) == 2 and isinstance(mats[1], sp.OneMatrix) and mats[1].cols == 1:  # A 1: row sums
            var, _ = self._print(mats[0])
            return self.emit(e, f"{scale}rowsum({var})")
        if len(mats) == 2 and isinstance(mats[0], sp.OneMatrix) and mats[0].rows == 1:  # 1ᵀ A: column sums
            var, _ = self._print(mats[1])
            return self.emit(e, f"{scale}np.sum({var}, axis=-2, keepdims=True)")
        vars_ = [self._print(m)[0] for m in mats]
        scale = "" if c == 1 else self.coeff(c)
        if len(vars_) == 1:
            var, owned = self._print(mats[0])
            if not scale:  # 1·A, left unevaluated when a size fixed to 1 turned a scale into 1
                return var, owned
            if owned:
                self.lines.append(f"{var} *= {scale}")
                return var, True
            return self.emit(e, f"{scale} * {var}")
        if len(vars_) == 2 and not scale:
            return self.emit(e, f"mm({vars_[0]}, {vars_[1]})")
        concrete = all(sp.sympify(d).is_Integer for m in mats for d in m.shape)
        if concrete and not scale:
            order = chain_order([tuple(int(d) for d in m.shape) for m in mats])
            return self.emit(e, _parenthesize(order, vars_))
        return self.emit(e, f"chain({scale or 1}, {', '.join(vars_)})")

    def _print_MatAdd(self, e):
        terms = [t for t in e.args if not isinstance(t, sp.ZeroMatrix)]  # X + 0 = X
        if len(terms) == 1:
            return self._print(terms[0])
        masks = [t for t in terms if _is_row_causal_mask(t)]
        rows = [t for t in terms if _is_broadcast_row(t)]
        full = [t for t in terms if t not in masks and t not in rows]
        if not full:
            raise LoweringError(f"cannot lower a sum of masks and broadcast rows alone: {sp.sstr(e)[:80]}")
        printed = [self._print(t) for t in full] + [self._print(_row_of(t)) for t in rows]
        base = next((k for k, (_, owned) in enumerate(printed[:len(full)]) if owned), 0)  # reuse a temporary
        var, owned = printed[base]
        for k, (other, _) in enumerate(printed):
            if k == base:
                continue
            if owned:
                self.lines.append(f"{var} = iadd({var}, {other})")
            else:
                var, owned = self.emit(e, f"{var} + {other}")
        if masks:
            if not owned:
                var, owned = self.emit(e, f"{var}.copy()")
            self.lines.append(f"causal_mask_({var})")
        return var, owned

    def _print_Transpose(self, e):
        if _is_row_causal_mask(e):
            n, m = e.shape
            return self.emit(e, f"causal_mask({self.dim(n)}, {self.dim(m)}, dtype)")
        var, owned = self._print(e.arg)
        return self.emit(e, f"np.swapaxes({var}, -1, -2)", owned)

    def _print_Softmax(self, e):
        var, owned = self._print(e.arg)
        axis = -2 if e.axis == 0 else -1
        if owned:
            self.lines.append(f"softmax_({var}, {axis})")
            return var, True
        return self.emit(e, f"softmax_({var}.copy(), {axis})")

    def _print_BlockMatrix(self, e):
        B = e.blocks
        rows = [", ".join(self._print(B[i, j])[0] for j in range(B.cols)) for i in range(B.rows)]
        return self.emit(e, "block([" + ", ".join(f"[{r}]" for r in rows) + "])")

    def _print_Identity(self, e):
        return self.emit(e, f"np.eye({self.dim(e.rows)}, dtype=dtype)")

    def _print_ZeroMatrix(self, e):
        return self.emit(e, f"np.zeros(({self.dim(e.rows)}, {self.dim(e.cols)}), dtype=dtype)")

    def _print_OneMatrix(self, e):
        return self.emit(e, f"np.ones(({self.dim(e.rows)}, {self.dim(e.cols)}), dtype=dtype)")

    def _print_Exp(self, e):
        arg = e.args[0]
        if isinstance(arg, ShiftRows) and self.uses.get(arg, 1) <= 1:  # exp(X - c 1ᵀ) in one sweep
            x, owned = self._print(arg.args[0])
            c, _ = self._print(arg.args[1])
            if not owned:
                x, owned = self.emit(arg, f"{x}.copy()")
            self.lines.append(f"shift_exp_({x}, {c})")
            self.memo[arg] = (x, False)
            return x, True
        var, owned = self._print(arg)
        if owned:
            self.lines.append(f"exp_({var})")
            return var, True
        return self.emit(e, f"np.exp({var})")

    def _print_Log(self, e):
        var, owned = self._print(e.args[0])
        if owned:
            self.lines.append(f"np.log({var}, out={var})")
            return var, True
        return self.emit(e, f"np.log({var})")

    def _inplace(self, e, x, other, op):
        var, owned = self._print(x)
        o, _ = self._print(other)
        if owned:
            self.lines.append(f"{var} {op}= {o}")
            return var, True
        return self.emit(e, f"{var} {op} {o}")

    def _print_ShiftRows(self, e):
        return self._inplace(e, e.args[0], e.args[1], "-")

    def _print_ScaleRows(self, e):
        return self._inplace(e, e.args[1], e.args[0], "*")

    def _print_DivideRows(self, e):
        return self._inplace(e, e.args[0], e.args[1], "/")


#: nodes with a method of their own here (in place on temporaries, chain ordering, masks, biases)
SPECIALISED = {"MatMul", "MatAdd", "Transpose", "Softmax", "BlockMatrix", "Identity", "ZeroMatrix",
               "OneMatrix", "Exp", "Log", "ShiftRows", "ScaleRows", "DivideRows"}


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


def _parenthesize(order, names) -> str:
    if isinstance(order, int):
        return names[order]
    left, right = (_parenthesize(o, names) for o in order)
    return f"mm({left}, {right})"


__all__ = ["BatchedPrinter", "identifier", "leaf", "_OverHeads", "Softmax", "Exp", "Log", "ShiftRows",
           "ScaleRows", "DivideRows"]


def _is_row_causal_mask(e) -> bool:
    """CausalMask(m, n, offset=m - n)ᵀ: the bottom-right aligned row mask the runtime applies."""
    if not (isinstance(e, sp.Transpose) and isinstance(e.arg, CausalMask)):
        return False
    M = e.arg
    keys, queries = M.shape
    return sp.expand(M.offset - (keys - queries)) == 0
