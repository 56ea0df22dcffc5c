"""Doctest collection of the package: a module that imports an optional framework at its top is left out
when that framework is not installed, so the test command runs on a machine without torch or JAX (the tests
that need them skip; `.ci/run` installs both, so CI collects every module).

The optional imports are found by reading each module's top-level ``import`` statements, so a new module
that imports torch is covered without being listed here.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

OPTIONAL = ("torch", "jax", "jaxlib", "flax", "dask", "distributed", "array_api_compat", "mkl")


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def _missing_optional() -> set[str]:
    return {name for name in OPTIONAL if importlib.util.find_spec(name) is None}


def _ignored_modules() -> list[str]:
    missing = _missing_optional()
    if not missing:
        return []
    package = Path(__file__).resolve().parent / "symattn"
    return sorted(str(path) for path in package.rglob("*.py") if _top_level_imports(path) & missing)


collect_ignore = _ignored_modules()
