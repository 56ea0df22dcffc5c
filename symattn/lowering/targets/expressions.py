"""The expression printer of array-API, torch and JAX kernels.

The batched printer specialises the common nodes (products, sums, softmax, ...); every other node
(heads over a head axis, slices, explicit matrices, masks, RoPE blocks, family members) is printed
as one expression by the NumPy expression printer (``numpy_printer.BatchedNumPyPrinter``). This
subclass prints the same expressions for a kernel whose namespace comes from its inputs: each
``numpy.<fn>`` becomes a function of ``ops`` (:class:`.array_api.Ops`: the inputs' namespace,
dtype and device), and each runtime helper its ``ops`` method.
"""

from __future__ import annotations

from ...errors import LoweringError
from ..numpy_printer import BatchedNumPyPrinter

#: NumPy functions with the same name and meaning in the array-API standard (and jax.numpy)
_SAME = {"floor", "exp", "log", "argsort", "sqrt", "cos", "sin", "abs", "maximum", "minimum"}
#: NumPy functions the standard lacks, printed as an ``ops`` method with a fallback
_OPS = {"exp2"}


class ArrayAPIExpressionPrinter(BatchedNumPyPrinter):
    """Print a matrix expression as one expression over ``ops`` (the kernel's namespace helpers)."""

    def helper(self, name: str) -> str:
        return f"ops.{name}"

    def call(self, fqn: str, *args) -> str:
        name = fqn[len("numpy."):] if fqn.startswith("numpy.") else fqn
        text = ", ".join(str(a) for a in args)
        if name == "matmul" and len(args) == 2:
            return f"({args[0]} @ {args[1]})"
        if name == "swapaxes" and [str(a) for a in args[1:]] == ["-1", "-2"]:
            return f"ops.transpose({args[0]})"
        if name in ("eye", "zeros", "ones"):
            return f"ops.{name}({', '.join(str(a).replace('dtype=', '') for a in args)})"
        if name == "where":
            return f"ops.where({text})"
        if name in ("linalg.inv", "linalg.matrix_power"):
            return f"ops.xp.{name}({text})"
        if name in _SAME:
            return f"ops.f.{name}({text})"
        if name in _OPS:
            return f"ops.{name}({text})"
        raise LoweringError(f"no array-API counterpart of numpy.{name} in a kernel for another array library")

    def _module_format(self, fqn, register=True):
        if fqn == "numpy.inf":
            return "math.inf"
        if fqn == "numpy.pi":
            return "math.pi"
        if fqn.startswith("numpy."):
            name = fqn[len("numpy."):]
            if name in _SAME:
                return f"ops.f.{name}"
            if name in _OPS:
                return f"ops.{name}"
            raise LoweringError(f"no array-API counterpart of {fqn} in a kernel for another array library")
        return super()._module_format(fqn, register)
