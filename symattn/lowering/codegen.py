"""Standalone NumPy modules from proved theorems (``symattn codegen THEOREM --out FILE.py``).

The module imports only NumPy and the standard library. Its header records the statement,
the verdict, the symattn version and the date; it carries the runtime helpers, the kernel,
and a self-test: the kernel on fixed inputs at a small size must reproduce the *other*
side of the claim (the definition, when the kernel is the rewritten side), evaluated by
symattn's evaluator when the module was written.
"""

from __future__ import annotations

import datetime
import itertools

import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.core.symbol import Str
from sympy.matrices.expressions.matexpr import MatrixExpr

from .._version import __version__
from ..defs.feature_map import FeatureMap
from ..defs.heads import FamilyMember
from ..defs.numeric_nodes import RowOf
from ..defs.structured import Symmetric
from ..errors import LoweringError
from ..proof.evaluate import evaluate
from ..proof.instances import dimension_symbols
from .feature_maps import is_coordinate
from .kernel import (
    FunctionInput,
    LayerWeights,
    ScalarInput,
    StackedFamily,
    build_kernel_source,
    input_leaves,
)
from .layers import lowering_dimensions
from .lower import fix_sizes, lower_theorem, proved_result, theorem_side
from .targets import common
from .targets import numpy as numpy_runtime
from .targets.standalone import helpers


def small_dims(expr_a, expr_b, shift: int = 0) -> dict:
    """Small sizes for the dimension symbols (2, 3, 4, 2, ... in the order of their names, starting
    ``shift`` places later; even ones where a symbol is assumed even)."""
    syms = set(lowering_dimensions(expr_a)) | set(lowering_dimensions(expr_b))
    out = {}
    for k, s in enumerate(sorted(syms, key=str)):
        value = 2 + (k + shift) % 3
        out[s] = value + value % 2 if s.is_even else value
    return out


def _literal(a: np.ndarray) -> str:
    text = repr(np.asarray(a, dtype=float).tolist())
    text = text.replace("nan", 'float("nan")').replace("inf", 'float("inf")')
    return f"np.array({text})"


#: instances of uninterpreted functions for the self-test: Python source (the module's) and the
#: same function for symattn's evaluator
SCORE_SOURCE = "lambda Q, K: 0.5 * (np.swapaxes(K, -1, -2) @ Q)"
SCALAR_SOURCE = "lambda *i: 1 / (sum(i) + 1)"


def feature_source(D: int, C: int) -> str:
    """A feature map R^D -> R^C for the self-test, phi(x)_c = 1 + x_{c mod D}²: an index and elementwise
    arithmetic only, so it runs on NumPy, PyTorch and JAX arrays alike (:func:`feature_instance`)."""
    return f"lambda x: 1 + x[..., {[c % D for c in range(C)]}] ** 2"


def feature_instance(e):
    """phi[c](x_1, ..., x_D) of :func:`feature_source`'s map, exactly: 1 + x_{c mod D + 1}²."""
    c = int(e.func.__name__.rsplit("[", 1)[1].rstrip("]"))
    return 1 + e.args[c % len(e.args)] ** 2


def _scalar_instance(args):
    return 1 / (sp.Add(*args) + 1)


def _family_size(expr, family: str, dims: dict) -> int:
    """The largest head index at which ``expr`` reads ``family`` (indices over their binders' ranges)."""
    from .numpy_printer import walk_binders

    best = [0]

    def visit(e, context):
        if isinstance(e, FamilyMember) and e.family_name == family:
            ranges = [(i, int(sp.sympify(c).subs(dims))) for i, c in context if i in e.index.free_symbols]
            for values in itertools.product(*[range(1, c + 1) for _, c in ranges]):
                k = e.index.subs(dims).subs({i: v for (i, _), v in zip(ranges, values)})
                best[0] = max(best[0], int(k))

    walk_binders(expr, visit)
    return best[0]


def self_test_data(kernel, other, seed: int = 0) -> dict:
    """Inputs at small sizes, the kernel's arguments, and the other side evaluated by symattn.

    Sizes at which the other side has entries that are not finite (a causal mask with more
    queries than keys leaves a query with no key: NaN) are passed over for the next choice, so
    that the self-test compares numbers."""
    data = None
    for shift in range(3):
        data = _self_test_data(kernel, other, seed, shift)
        if np.isfinite(data["expected"]).all():
            break
    return data


def _self_test_data(kernel, other, seed: int, shift: int) -> dict:
    from ..defs.permutation import Permutation

    dims = small_dims(kernel.expr, other, shift)
    rng = np.random.default_rng(seed)
    env, inputs, scalars, functions = {}, {}, {}, {}
    leaves = list(kernel.args) + [x for x in input_leaves(other) if x not in kernel.args]

    def value(x, shape):
        if isinstance(x, Permutation):
            return np.eye(shape[0])[rng.permutation(shape[0])]
        v = rng.normal(size=shape).round(3)
        return Symmetric.impose(v) if isinstance(x, Symmetric) else v

    maps = {e.function: e for side in (kernel.expr, other) for e in sp.preorder_traversal(side)
            if isinstance(e, FeatureMap)}
    rows_of = [e for e in sp.preorder_traversal(kernel.expr) if isinstance(e, RowOf)]
    indices = {a for e in rows_of for a in e.args[1].free_symbols}
    # a row index: 1, the second row, which every small size has, unless a size fixed to 1 leaves one row
    row = 1 if all(int(sp.sympify(e.args[0].rows).subs(dims)) >= 2 for e in rows_of) else 0
    for x in leaves:
        if isinstance(x, ScalarInput):  # a row index (above); else 2, 3, ...
            scalars[x.name] = row if x.symbol in indices else 2 + len(scalars)
        elif isinstance(x, FunctionInput) and x.function in maps:
            D, C = (int(sp.sympify(d).subs(dims)) for d in (maps[x.function].arg.cols, maps[x.function].features))
            functions[x.name] = feature_source(D, C)
        elif isinstance(x, FunctionInput):
            functions[x.name] = SCORE_SOURCE if isinstance(x.function, Str) else SCALAR_SOURCE
        else:
            shape = tuple(int(sp.sympify(d).subs(dims)) for d in x.shape)
            if isinstance(x, LayerWeights):  # W_1..W_L: the weights of the layers, as LayerStack.unfold names them
                count = int(sp.sympify(x.depth).subs(dims))
                members = [env.setdefault(f"{x.name}_{k}", value(x, shape)) for k in range(1, count + 1)]
                inputs[x.name] = np.stack(members)
            elif isinstance(x, StackedFamily):  # members W_1..W_count (shared with a side that names them)
                count = max(_family_size(kernel.expr, x.name, dims), _family_size(other, x.name, dims), 1)
                members = [env.setdefault(f"{x.name}_{k}", value(x, shape)) for k in range(1, count + 1)]
                inputs[x.name] = np.stack(members)
            else:
                inputs[x.name] = env.setdefault(x.name, value(x, shape))
    concrete = other.subs(dims).doit()
    for x in leaves:
        if isinstance(x, ScalarInput):
            concrete = concrete.subs(x.symbol, scalars[x.name])
        elif isinstance(x, FunctionInput) and not isinstance(x.function, Str):
            concrete = concrete.replace(lambda e, f=x.function: isinstance(e, AppliedUndef) and e.func == f,
                                        lambda e: _scalar_instance(e.args))
    concrete = concrete.replace(is_coordinate, feature_instance)  # phi at concrete sizes: its coordinates
    concrete = concrete.doit()
    fns = {k: eval(v, {"np": np}) for k, v in functions.items() if v == SCORE_SOURCE}  # our own constants
    try:
        with np.errstate(invalid="ignore"):  # a query with no visible key: NaN (another size is tried)
            expected = evaluate(concrete, env, functions=fns)
    except Exception as exc:  # noqa: BLE001 - reported as a clear error
        raise LoweringError(f"cannot evaluate the other side for the self-test: {exc}") from exc
    return {"dims": dims, "inputs": inputs, "scalars": scalars, "functions": functions,
            "expected": np.asarray(expected, dtype=float)}


def generate(name: str, claim: int = 0, side: str = "rhs", seed: int = 0, at=None) -> str:
    """The source of a standalone module computing one side of one claim of a proved theorem.

    ``at``: sizes fixed first ({"H": 4}: one input per head), the fallback; by default every size,
    the head count included, is read from the arrays."""
    res = proved_result(name)
    if res.status != "proved":
        raise LoweringError(f"theorem {name} is {res.status}, not proved; no code is generated for it")
    kernel = lower_theorem(name, claim, side, at=at)
    other = other_side(name, claim, side, at)
    fixed = "".join(f" --at {k}={v}" for k, v in (at or {}).items())
    data = self_test_data(kernel, other, seed)
    dims = data["dims"]
    src, names, dimnames, _ = build_kernel_source(kernel.expr, kernel.args, fname="kernel")
    extra = {dimnames[d]: int(dims[d]) for d in kernel.extra_dims}
    v = res.verdicts[claim]
    verdict = v.status + (", general" if v.general else "")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    unused = sorted(set(data["inputs"]) - {x.name for x in kernel.args})
    stacked = [x.name for x in kernel.args if isinstance(x, StackedFamily)]
    header = f'''"""Generated by symattn {__version__} on {stamp}: do not edit, regenerate instead.

    symattn codegen {name} --claim {claim} --side {side}{fixed} --out FILE.py

Theorem {name}: {res.theorem.statement}
Verdict: {verdict}; scope: {v.scope}; method: {v.method}
Claim {claim}: {sp.sstr(theorem_side(name, claim, "lhs"))}
         = {sp.sstr(theorem_side(name, claim, "rhs"))}
This module computes the {side}: {sp.sstr(kernel.expr)}
Inputs, in order: {", ".join(input_label(x, names) for x in kernel.args)} (arrays: batch axes first, matrices in the
last two axes{"; the families " + ", ".join(stacked) + " with their heads on axis -3" if stacked else ""}){
"; sizes by keyword: " + ", ".join(extra) if extra else ""}.{
" The other side also reads " + ", ".join(unused) + ", which provably has no effect here." if unused else ""}

Requires only NumPy. Run it (python FILE.py) to self-test against the {"lhs" if side == "rhs" else "rhs"},
the symbolic definition evaluated by symattn at {", ".join(f"{k}={val}" for k, val in
                                                      sorted((str(a), b) for a, b in dims.items()))}.
"""
'''
    test = f'''

{self_test_constants(data, kernel.args, names, extra)}


def self_test():
    """The kernel at a small size against the other side of the claim, evaluated by symattn."""
    rest = {{**SELF_TEST_SIZES, **SELF_TEST_SCALARS, **SELF_TEST_FUNCTIONS}}
    got = kernel(**SELF_TEST_INPUTS, **rest)
    np.testing.assert_allclose(got, SELF_TEST_EXPECTED, rtol=1e-9, atol=1e-9)
    got32 = kernel(**{{k: v.astype(np.float32) for k, v in SELF_TEST_INPUTS.items()}}, **rest)
    assert got32.dtype == np.float32 or not SELF_TEST_INPUTS
    np.testing.assert_allclose(got32, SELF_TEST_EXPECTED, rtol=1e-4, atol=1e-4)
    return True


if __name__ == "__main__":
    self_test()
    print("self-test passed: {name}, claim {claim}, {side}")
'''
    runtime = helpers(src + test, [numpy_runtime, common], {"numpy": (None, "numpy", None),
                                                            "math": (None, "math", None)})
    return header + runtime + "\n\n\n" + src + test


def other_side(name: str, claim: int, side: str, at=None):
    """The side of the claim that the self-test compares with, fixed at the sizes ``at`` where it
    has those dimensions."""
    other = theorem_side(name, claim, "lhs" if side == "rhs" else "rhs")
    if at:
        present = {str(d) for d in dimension_symbols(other)}
        other = fix_sizes(other, {k: v for k, v in at.items() if str(k) in present})
    return other


def self_test_constants(data: dict, args, names: dict, sizes: dict) -> str:
    """The self-test's data as Python source (SELF_TEST_INPUTS, _SIZES, _SCALARS, _FUNCTIONS,
    _EXPECTED), keyed by the kernel's keywords ``names``; inputs the kernel does not take are left out."""
    by_name = {x.name: x for x in args}
    inputs = ",\n".join(f"    {names[by_name[k]]!r}: {_literal(a)}" for k, a in data["inputs"].items() if k in by_name)
    scalars = {names[by_name[k]]: a for k, a in data["scalars"].items() if k in by_name}
    functions = ",\n".join(f"    {names[by_name[k]]!r}: {f}" for k, f in data["functions"].items() if k in by_name)
    return f"""SELF_TEST_INPUTS = {{
{inputs}
}}
SELF_TEST_SIZES = {sizes!r}
SELF_TEST_SCALARS = {scalars!r}
SELF_TEST_FUNCTIONS = {{
{functions}
}}
SELF_TEST_EXPECTED = {_literal(data["expected"])}"""


def input_label(x, names: dict) -> str:
    """An input's name in the header, with the kernel's keyword for it when that differs
    (``W^Q_1 (keyword W_Q_1)``)."""
    keyword = names.get(x, x.name)
    return x.name if keyword == x.name else f"{x.name} (keyword {keyword})"


def matrix_sides(library=None) -> list:
    """(theorem, claim, side) for every side that is a matrix, of every proved library theorem."""
    from ..statements import is_gradient_claim
    from ..theorems import load_library

    library = load_library() if library is None else library
    out = []
    for name, th in sorted(library.items()):
        if th.expect != "proved":
            continue
        for k, (lhs, rhs) in enumerate(th.claims()):
            if is_gradient_claim(lhs, rhs):  # candidate = vjp(E, W, G): the sides are not two formulas
                continue
            for side, e in (("lhs", lhs), ("rhs", rhs)):
                if isinstance(e, (MatrixExpr, sp.MatrixBase)):
                    out.append((name, k, side))
    return out


def run_self_test(source: str) -> bool:
    """Run a generated module's self-test in this process (the module's own code, fresh namespace)."""
    namespace = {"__name__": "symattn_generated"}
    exec(compile(source, "<symattn generated module>", "exec"), namespace)  # generated by generate()
    return namespace["self_test"]()
