"""The lowering targets as one package: one bind, one preamble, one dimension_symbols; generated
modules that import what they declare, carry only the helpers they use, define nothing twice and
pass ruff."""

import ast
import shutil
import subprocess
import sys

import pytest
import sympy as sp

from symattn.lowering.targets import array_api, common
from symattn.lowering.targets import numpy as numpy_runtime
from symattn.lowering.targets.build import runtime_namespace
from symattn.lowering.targets.codegen import generate_target
from symattn.proof.instances import dimension_symbols, scalar_symbols

n, m, t, s, L = sp.symbols("n m t s L", integer=True, positive=True)
X = sp.MatrixSymbol("X", n, m)
Y = sp.MatrixSymbol("Y", n, m)


def test_one_bind_and_one_set_of_size_helpers_for_every_target():
    for name in ("bind", "check_size", "solve_size", "slice_bounds", "chain_order"):
        shared = getattr(common, name)
        assert getattr(numpy_runtime, name) is shared and getattr(array_api, name) is shared, name
        assert runtime_namespace("jax")[name] is shared, name


def test_one_dimension_symbols_for_the_proof_engine_and_the_lowering():
    """The lowering's sizes are the proof engine's, and the depth of each stack of layers (a loop count
    the kernel reads from the weights' axis -3; the prover treats stacks by induction on it)."""
    import symattn as sa
    from symattn.lowering import layers

    assert layers.dimension_symbols is dimension_symbols
    S, A = sp.MatrixSymbol("S", n, s), sp.MatrixSymbol("A", n, n)
    for e in (X + Y, X[t:t + s, :], sa.softmax(X.T * Y)):
        assert layers.lowering_dimensions(e) == dimension_symbols(e)
    stack = sa.layer_stack(S + A * S, S, X[:, t:t + s], L, weights=[A])
    assert layers.lowering_dimensions(stack) == sorted({*dimension_symbols(stack), L}, key=str) == [L, m, n, s, t]


def test_positions_are_dimensions_not_real_scalars():
    """The two copies had diverged: the lowering counted slice bounds and the offsets and lengths of
    masks as sizes, the proof engine as real scalars. Positions take whole-number values."""
    from symattn.defs.mask import CausalMask, PaddingMask

    assert dimension_symbols(X[t:t + s, :]) == [m, n, s, t]
    assert scalar_symbols(X[t:t + s, :]) == []
    S = sp.MatrixSymbol("S", m, n)
    assert dimension_symbols(S + PaddingMask(m, n, L)) == [L, m, n]
    assert dimension_symbols(S + CausalMask(m, n, t)) == [m, n, t]
    assert scalar_symbols(S + PaddingMask(m, n, L)) == []


def test_a_refuted_claim_about_a_slice_names_the_position_it_was_refuted_at():
    """Before, the slice start t was sampled as a scalar and left out of the counterexample, which
    could not be reproduced from what it said."""
    from symattn.proof.engine import verify

    v = verify(X[t:t + s, :], Y[t:t + s, :], budget=10)
    assert v.status == "refuted"
    assert "t=" in v.scope and "s=" in v.scope, v.scope


CLAIMS = [("scale_folds_into_query_projection", 0, "rhs"), ("fused_qkv_projection", 0, "lhs"),
          ("heads_concatenate_before_output_projection", 0, "lhs")]
TARGETS = ["numpy", "array-api", "torch", "jax"]
#: the third-party modules each target's module may import (the header says which it needs); an array-API
#: module imports torch or jax only to ask whether arrays of theirs are being traced, or for its self-test
ALLOWED = {"numpy": {"numpy"}, "array-api": {"numpy", "array_api_compat", "torch", "jax"},
           "torch": {"numpy", "torch"}, "jax": {"numpy", "jax"}}
STDLIB = {"math", "os", "threading", "concurrent"}


def _imports(tree) -> set:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, ast.unparse(node)
            out.add(node.module.split(".")[0])
    return out


@pytest.fixture(scope="module")
def modules():
    out = {}
    for target in TARGETS:
        for name, claim, side in CLAIMS:
            out[target, name] = generate_target(name, claim, side, target=target)
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_generated_modules_import_exactly_what_they_declare(modules, target):
    for (tgt, name), src in modules.items():
        if tgt != target:
            continue
        imported = _imports(ast.parse(src)) - STDLIB
        assert imported <= ALLOWED[target], (name, imported)
        assert "symattn" not in imported
        if target in ("torch", "jax"):
            assert "array_api_compat" not in src, name
        if target == "torch":
            assert "Requires PyTorch" in src and "torch" in imported
        if target == "array-api":
            assert "array_api_compat" in imported


@pytest.mark.parametrize("target", TARGETS)
def test_generated_modules_define_nothing_twice_and_carry_only_helpers_they_use(modules, target):
    for (tgt, name), src in modules.items():
        if tgt != target:
            continue
        tree = ast.parse(src)
        defined = [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
        defined += [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                    if isinstance(t, ast.Name)]
        twice = sorted({d for d in defined if defined.count(d) > 1})
        assert not twice, (name, twice)
        loaded = {x.id for x in ast.walk(tree) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}
        loaded |= {x.attr for x in ast.walk(tree) if isinstance(x, ast.Attribute)}
        entry = {"kernel", "self_test", "SELF_TEST_INPUTS", "SELF_TEST_SIZES", "SELF_TEST_SCALARS",
                 "SELF_TEST_FUNCTIONS", "SELF_TEST_EXPECTED", "_targets"}
        unused = sorted(d for d in defined if d not in loaded and d not in entry)
        assert not unused, (name, unused)


def test_the_torch_module_is_a_fraction_of_the_bundled_helpers(modules):
    """The torch module once carried every helper (712 lines, 640 of them helpers, some twice)."""
    src = modules["torch", "scale_folds_into_query_projection"]
    assert len(src.splitlines()) < 350


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_generated_modules_pass_ruff(modules, tmp_path):
    """The project's rules (pyproject.toml: E, F, W, I, B) but the line length: a kernel's lines hold
    expressions printed whole from SymPy trees."""
    paths = []
    for (target, name), src in modules.items():
        path = tmp_path / f"{name}_{target.replace('-', '_')}.py"
        path.write_text(src)
        paths.append(str(path))
    r = subprocess.run(["ruff", "check", "--no-cache", "--isolated", "--select", "E,F,W,I,B",
                        "--ignore", "E501,E741,B905", "--output-format", "concise", *paths],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("target", ["numpy", "torch"])
def test_a_generated_module_self_tests_in_a_process_without_symattn(modules, target, tmp_path):
    if target == "torch":
        pytest.importorskip("torch")
    path = tmp_path / "module.py"
    path.write_text(modules[target, "fused_qkv_projection"])
    r = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and "self-test passed" in r.stdout, r.stdout + r.stderr
