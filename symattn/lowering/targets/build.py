"""Kernels for other array libraries: ``lower(expr, target="array-api" | "torch" | "jax")``.

The printer is the NumPy printer's (:class:`~symattn.lowering.printer.BatchedPrinter`: the same
common subexpressions, chain ordering, mask and bias recognition), with every node printed as a
call of a helper that makes a new array instead of writing into one:

- ``array-api``: the namespace ``xp`` comes from the inputs at run time
  (``array_api_compat.array_namespace``), so one kernel runs on NumPy, PyTorch, JAX, CuPy and Dask
  arrays; arrays are made with the inputs' dtype and on their device (:mod:`.array_api`);
- ``torch``: native PyTorch calls (``torch.softmax``, ``Tensor.mT``, ``masked_fill``;
  :mod:`.torch`), and row attention softmax(c A Bᵀ [+ M] [+ causal mask]) V as one
  call of ``scaled_dot_product_attention`` (its fused kernels never hold the n × m scores);
  NumPy inputs become tensors;
- ``jax``: ``jax.numpy`` as the namespace (:mod:`.jax`); NumPy inputs become JAX arrays. The kernel is a pure
  function of its arrays, so ``jax.jit(kernel.fn)`` compiles it.

Products are ``@`` (each library's batched matmul). Sizes are bound from the input shapes and
checked as in the NumPy kernels; ``out=`` is refused (JAX and Dask arrays cannot be written into).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy as sp

from ...defs.softmax import Softmax
from ...errors import LoweringError
from ..kernel import Kernel, Provenance, preamble, without_unused_sizes
from ..numpy_printer import has_entries
from ..printer import (
    BatchedPrinter,
    _is_broadcast_row,
    _is_row_causal_mask,
    _row_of,
)
from . import array_api, check_target
from .common import chain_order
from .expressions import ArrayAPIExpressionPrinter

_INPUTS = {"array-api": "inputs", "torch": "inputs_torch", "jax": "inputs_jax"}
_OPS = {"array-api": "Ops", "torch": "TorchOps", "jax": "Ops"}
_HELPERS = ("Ops", "TorchOps", "solve_size", "attend", "linear", "transpose", "softmax", "rowsum", "colsum",
            "repeat_rows", "causal_masked", "causal_mask", "block", "eye", "zeros", "ones", "exp", "exp2", "log",
            "chain", "bind", "check_size", "no_out")


class TargetPrinter(BatchedPrinter):
    """The batched printer for array-API, torch and JAX kernels: each node becomes a new array
    (nothing is modified in place), made through the helpers of the target's runtime; the nodes it
    does not specialise are printed by :class:`ArrayAPIExpressionPrinter`."""

    def expression_printer(self):
        known = {e: var for e, (var, _) in self.memo.items()}
        return ArrayAPIExpressionPrinter({"fully_qualified_modules": True}, dims=self.dims,
                                         names={**self.inputs, **self.scalars}, stacked=self.stacked,
                                         known=known, dtype="dtype")

    def emit(self, e, code: str, owned: bool = False):
        return super().emit(e, code, False)

    def _scaled(self, e, c, code: str):
        return self.emit(e, code if c == 1 else f"{self.coeff(c)} * {code}")

    def _print_MatMul(self, e):
        c, mats = e.as_coeff_matrices()
        if len(mats) >= 2 and isinstance(mats[0], sp.OneMatrix) and mats[0].cols == 1:  # 1 b: rows repeated
            rest = sp.MatMul(c, *mats[1:]).doit(deep=False) if len(mats) > 2 or c != 1 else mats[1]
            var, _ = self._print(rest)
            return self.emit(e, f"repeat_rows(xp, {var}, {self.dim(mats[0].rows)})")
        if len(mats) == 2 and isinstance(mats[1], sp.OneMatrix) and mats[1].cols == 1:  # A 1: row sums
            return self._scaled(e, c, f"rowsum(xp, {self._print(mats[0])[0]})")
        if len(mats) == 2 and isinstance(mats[0], sp.OneMatrix) and mats[0].rows == 1:  # 1ᵀ A: column sums
            return self._scaled(e, c, f"colsum(xp, {self._print(mats[1])[0]})")
        names = [self._print(m)[0] for m in mats]
        if len(names) == 1:
            return self._scaled(e, c, names[0])
        if len(names) == 2 and c == 1:
            return self.emit(e, f"{names[0]} @ {names[1]}")
        if c == 1 and all(sp.sympify(d).is_Integer for m in mats for d in m.shape):
            order = chain_order([tuple(int(d) for d in m.shape) for m in mats])
            return self.emit(e, _parenthesize(order, names, top=True))
        coeff = "1" if c == 1 else self.coeff(c)
        return self.emit(e, f"chain(xp, {coeff}, {', '.join(names)})")

    def _print_MatAdd(self, e):
        terms = [t for t in e.args if not isinstance(t, sp.ZeroMatrix)]
        if len(terms) == 1:
            return self._print(terms[0])
        masks = [t for t in terms if _is_row_causal_mask(t)]
        rows = [t for t in terms if _is_broadcast_row(t)]
        full = [t for t in terms if t not in masks and t not in rows]
        if not full:
            raise LoweringError(f"cannot lower a sum of masks and broadcast rows alone: {sp.sstr(e)[:80]}")
        names = [self._print(t)[0] for t in full] + [self._print(_row_of(t))[0] for t in rows]
        code = " + ".join(names)
        if masks:
            var, _ = self.emit(e, code) if len(names) > 1 else (names[0], False)
            return self.emit(e, f"causal_masked(xp, {var}, device)")
        return self.emit(e, code)

    def _print_Transpose(self, e):
        if _is_row_causal_mask(e):
            n, m = e.shape
            return self.emit(e, f"causal_mask(xp, {self.dim(n)}, {self.dim(m)}, dtype, device)")
        return self.emit(e, f"transpose(xp, {self._print(e.arg)[0]})")

    def _print_Softmax(self, e):
        return self.emit(e, f"softmax(xp, {self._print(e.arg)[0]}, {-2 if e.axis == 0 else -1})")

    def _print_BlockMatrix(self, e):
        B = e.blocks
        rows = [", ".join(self._print(B[i, j])[0] for j in range(B.cols)) for i in range(B.rows)]
        return self.emit(e, "block(xp, [" + ", ".join(f"[{r}]" for r in rows) + "])")

    def _print_Identity(self, e):
        return self.emit(e, f"eye(xp, {self.dim(e.rows)}, dtype, device)")

    def _print_ZeroMatrix(self, e):
        return self.emit(e, f"zeros(xp, {self.dim(e.rows)}, {self.dim(e.cols)}, dtype, device)")

    def _print_OneMatrix(self, e):
        return self.emit(e, f"ones(xp, {self.dim(e.rows)}, {self.dim(e.cols)}, dtype, device)")

    def _print_Exp(self, e):
        return self.emit(e, f"exp(xp, {self._print(e.args[0])[0]})")

    def _print_Exp2(self, e):
        return self.emit(e, f"exp2(xp, {self._print(e.args[0])[0]})")

    def _print_Log(self, e):
        return self.emit(e, f"log(xp, {self._print(e.args[0])[0]})")

    def _binary(self, e, x, other, op):
        return self.emit(e, f"{self._print(x)[0]} {op} {self._print(other)[0]}")

    def _print_ShiftRows(self, e):
        return self._binary(e, e.args[0], e.args[1], "-")

    def _print_ScaleRows(self, e):
        return self._binary(e, e.args[1], e.args[0], "*")

    def _print_DivideRows(self, e):
        return self._binary(e, e.args[0], e.args[1], "/")


class TorchPrinter(TargetPrinter):
    """The target printer with two native calls more: row attention softmax(c A Bᵀ [+ M] [+ causal]) V,
    when the softmax has no other use, becomes ``attend`` (``scaled_dot_product_attention``), and a
    product plus a bias row, A W + 1 b, becomes ``linear`` (one ``addmm``)."""

    def _print_MatAdd(self, e):
        terms = [t for t in e.args if not isinstance(t, sp.ZeroMatrix)]
        if len(terms) == 2 and sum(_is_broadcast_row(t) for t in terms) == 1:
            product = next(t for t in terms if not _is_broadcast_row(t))
            row = next(t for t in terms if _is_broadcast_row(t))
            if isinstance(product, sp.MatMul) and not _is_row_causal_mask(product):
                c, mats = product.as_coeff_matrices()
                if c == 1 and len(mats) == 2:
                    a, w = (self._print(m)[0] for m in mats)
                    return self.emit(e, f"linear(xp, {a}, {w}, {self._print(_row_of(row))[0]})")
        return super()._print_MatAdd(e)

    def _print_MatMul(self, e):
        c, mats = e.as_coeff_matrices()
        parts = _row_attention(c, mats)
        if parts is None or self.uses.get(mats[0], 1) > 1 or has_entries(parts[0]):
            return super()._print_MatMul(e)
        scale, a, b, v, mask, causal = parts
        names = [self._print(x)[0] for x in (a, b, v)]
        m = self._print(mask)[0] if mask is not None else "None"
        return self.emit(e, f"attend(xp, {', '.join(names)}, {self.coeff(scale)}, {m}, {causal})")


def _row_attention(c, mats):
    """(scale, A, B, V, M or None, causal) when c·mats is softmax(scale·A Bᵀ + M + causal, 1)·V, else None."""
    if c != 1 or len(mats) != 2 or not isinstance(mats[0], Softmax) or mats[0].axis != 1:
        return None
    arg = mats[0].arg
    terms = list(arg.args) if isinstance(arg, sp.MatAdd) else [arg]
    causal = [t for t in terms if _is_row_causal_mask(t)]
    rest = [t for t in terms if not _is_row_causal_mask(t) and not isinstance(t, sp.ZeroMatrix)]
    products = [t for t in rest if isinstance(t, sp.MatMul) and isinstance(t.as_coeff_matrices()[1][-1], sp.Transpose)
                and len(t.as_coeff_matrices()[1]) == 2]
    if len(causal) > 1 or not products or len(rest) > 2:
        return None
    scores = products[0]
    others = [t for t in rest if t is not scores]
    if any(_is_broadcast_row(t) for t in others):
        return None
    scale, (a, bt) = scores.as_coeff_matrices()
    return scale, a, bt.arg, mats[1], (others[0] if others else None), bool(causal)


def _parenthesize(order, names, top=False) -> str:
    if isinstance(order, int):
        return names[order]
    text = " @ ".join(_parenthesize(o, names) for o in order)
    return text if top else f"({text})"


def build_target_source(expr, args, target: str, fname: str = "kernel") -> tuple[str, dict, dict, list]:
    """The source of a function computing ``expr`` from the inputs ``args`` (in order) with ``target``'s
    helpers, the names, the dimension names and the dimensions taken as keywords (as
    ``kernel.build_kernel_source``). Raises LoweringError when a node has only a NumPy lowering."""
    check_target(target)
    taken = {"np", "numpy", "math", "xp", "ops", "dtype", "device", "bound", "out", fname, *_HELPERS,
             *_INPUTS.values()}
    pre = preamble(expr, args, taken)
    names, dims, extra = pre.names, pre.dims, pre.extra
    printer = (TorchPrinter if target == "torch" else TargetPrinter)(
        pre.inputs, dims, scalars=pre.scalars, stacked=pre.stacked,
        features={d: (dims[d], str(d)) for d in pre.features})
    body, out = printer.doprint(expr)
    numpy_only = [ln for ln in body if re.search(r"\b(np|numpy)\.", ln.partition("  #")[0])]
    if numpy_only:
        raise LoweringError(f"cannot lower {sp.sstr(expr)[:80]} to {target}: a node has only a NumPy "
                            f"lowering ({numpy_only[0].strip()})")
    head = [f"def {fname}({pre.signature(args)}):",
            f'    """{sp.sstr(expr)} on {target} arrays (batch axes first, matrices in the last two)."""',
            "    no_out(out)",
            f"    {pre.unpack}, xp, dtype, device = {_INPUTS[target]}([{pre.pairs}])",
            "    bound = {}"]
    if any("ops." in ln for ln in body):
        head.insert(-1, f"    ops = {_OPS[target]}(xp, dtype, device)")
    src = without_unused_sizes("\n".join(head + ["    " + ln for ln in pre.lines + body] + [f"    return {out}", ""]))
    return src, names, dims, extra


def runtime_modules(target: str) -> list:
    """The runtime modules whose helpers a kernel of ``target`` calls, the most specific first (imported
    on first use: torch's needs PyTorch): the target's own, then the array-API helpers and the shared ones."""
    from . import common

    if target == "torch":
        from . import torch as own
    elif target == "jax":
        from . import jax as own
    else:
        return [array_api, common]
    return [own, array_api, common]


def runtime_namespace(target: str) -> dict:
    """The helpers a kernel of ``target`` calls, by name."""
    ns = {"math": __import__("math")}
    for module in reversed(runtime_modules(target)):
        ns.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    return ns

def compile_target(src: str, target: str, fname: str = "kernel"):
    namespace = runtime_namespace(target)
    code = compile(src, f"<symattn {target} kernel {fname}>", "exec")
    exec(code, namespace)  # the source is generated by the printer from a SymPy tree, never user text
    return namespace[fname]


@dataclass
class TargetKernel(Kernel):
    """A kernel for an array library other than NumPy (``target``): called like a NumPy
    :class:`Kernel` (positionally in :attr:`args` order or by name), without ``out=``."""

    target: str = "array-api"

    def __repr__(self):
        prov = f", from {self.provenance.theorem}" if self.provenance else ""
        return f"Kernel[{self.target}]({sp.sstr(self.expr)[:60]}, args={list(self.arg_names)}{prov})"


_CACHE: dict = {}


def lower_for_target(expr, args, target: str, provenance: Provenance | None = None) -> TargetKernel:
    """The kernel of ``expr`` for ``target`` (cached), after ``lower`` has checked and substituted it."""
    check_target(target)
    key = (expr, tuple(args), target, provenance)
    if key not in _CACHE:
        src, names, dims, extra = build_target_source(expr, args, target)
        _CACHE[key] = TargetKernel(expr, tuple(args), src, compile_target(src, target), names, provenance, dims,
                                   extra, target=target)
    return _CACHE[key]
