"""Lowering: proved matrix expressions become batched NumPy kernels."""

from .kernel import Kernel as Kernel
from .kernel import Provenance as Provenance
from .lower import kernel_namespace as kernel_namespace
from .lower import lambdify_printer as lambdify_printer
from .lower import lower as lower
from .lower import lower_theorem as lower_theorem
from .lower import proved_result as proved_result
from .lower import theorem_side as theorem_side
from .numpy_printer import BatchedNumPyPrinter as BatchedNumPyPrinter
from .targets.common import chain_order as chain_order

# isort: split
from .hooks import install as _install

_install()  # stock sympy.lambdify prints symattn's nodes (see hooks)
