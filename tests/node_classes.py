"""The node classes of :mod:`symattn.defs`, enumerated from its modules (for the tests that check every
node: the registries, the shapes)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import sympy as sp

import symattn.defs


def defs_nodes() -> list[type]:
    """The public matrix node classes defined in the modules of symattn.defs."""
    out = []
    for info in pkgutil.iter_modules(symattn.defs.__path__):
        mod = importlib.import_module(f"symattn.defs.{info.name}")
        for name, cls in inspect.getmembers(mod, inspect.isclass):
            if cls.__module__ == mod.__name__ and issubclass(cls, sp.MatrixExpr) and not name.startswith("_") \
                    and not inspect.isabstract(cls) and name != "Binder":
                out.append(cls)
    return out
