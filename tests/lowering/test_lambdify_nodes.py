"""Stock ``sympy.lambdify`` on every node class symattn exports: a batched NumPy function that agrees
with symattn's evaluator (``symattn.proof.evaluate``) on each matrix of a batch."""

import inspect

import numpy as np
import pytest
import sympy as sp
from sympy.core.function import AppliedUndef

import symattn as sa
import symattn.defs
from symattn.defs.feature_map import FeatureMap
from symattn.defs.heads import Binder
from symattn.defs.mask import Visible
from symattn.defs.numeric_nodes import DivideRows, Exp, Exp2, Log, RowOf, ScaleRows, ShiftRows
from symattn.defs.permutation import PermIndex, PermutationSymbol
from symattn.lowering.hooks import node_classes
from symattn.proof.evaluate import evaluate

n, m, d_k, d_v, d, H, p, L = sa.dims("n m d_k d_v d H p L")
SIZES = {n: 3, m: 4, d_k: 2, d_v: 3, d: 4, H: 3, p: 2, L: 2}
BATCH = 2
Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)
X, c = sp.MatrixSymbol("X", m, n), sp.MatrixSymbol("c", m, 1)
k_, t_, a_ = sp.Symbol("k", integer=True), sp.Symbol("t", integer=True), sp.Symbol("a", integer=True)
WQ, WK = sa.Family("WQ", d_k, d), sa.Family("WK", d_k, d)
WV, WO = sa.Family("WV", d_v, d), sa.Family("WO", d, d_v)
Xd = sp.MatrixSymbol("Xd", d, n)
h = sa.h


def exported_node_classes() -> set:
    """The SymPy node classes symattn exports (``symattn``, ``symattn.defs``) and the nodes of its
    definitions, without the abstract bases of other ones."""
    found = {c for mod in (sa, symattn.defs) for name, c in vars(mod).items()
             if inspect.isclass(c) and issubclass(c, sp.Basic) and not name.startswith("_")}
    found |= {c for c in node_classes() if not c.__name__.startswith("_")}
    return {c for c in found if not any(o is not c and issubclass(o, c) for o in found)}


Y2 = sp.MatrixSymbol("Y", n, 2)


S_LAYER, A_LAYER = sp.MatrixSymbol("S", m, n), sp.MatrixSymbol("A", m, m)


def _deep():
    """L layers S_l = S_{l-1} + A_l softmax(S_{l-1}) on X, each layer with its own A."""
    return sa.layer_stack(S_LAYER + A_LAYER * sa.softmax(S_LAYER), S_LAYER, X, L, weights=[A_LAYER])


def _multihead_sum():
    return sa.multihead(Xd, Xd, Xd, WQ, WK, WV, WO, H=H, form="sum")


#: class -> (expression holding it, lambdify arguments, scalar values, function instances)
EXAMPLES = {
    sa.Softmax: lambda: (sa.attention(Q, K, V), [Q, K, V], {}, {}),
    Exp: lambda: (Exp(X), [X], {}, {}),
    Exp2: lambda: (Exp2(X), [X], {}, {}),
    Log: lambda: (Log(sa.softmax(X)), [X], {}, {}),
    ShiftRows: lambda: (ShiftRows(X, c), [X, c], {}, {}),
    ScaleRows: lambda: (ScaleRows(c, X), [c, X], {}, {}),
    DivideRows: lambda: (DivideRows(X, Exp(c)), [X, c], {}, {}),
    RowOf: lambda: (RowOf(X, k_), [X, k_], {k_: 1}, {}),
    sa.CausalMask: lambda: (sa.softmax(X + sa.CausalMask(m, n, offset=1)), [X], {}, {}),
    sa.PaddingMask: lambda: (sa.softmax(X + sa.PaddingMask(m, n, L)), [X, L], {}, {}),
    sa.Permutation: lambda: (X * sa.Permutation("P", n), [X, sa.Permutation("P", n)], {}, {}),
    sa.Symmetric: lambda: (sa.Symmetric("S", m) * X, [sa.Symmetric("S", m), X], {}, {}),
    sa.Score: lambda: (sa.attention(Q, K, V, score=sa.ScoreFunction("f")), [Q, K, V, sp.Symbol("f")], {},
                       {"f": lambda q, k: np.swapaxes(k, -1, -2) @ q - 1.0}),
    # g(X) is f(X, 1) to the evaluator and g(X) to lambdify: the callable takes the second argument or not
    symattn.defs.Apply: lambda: (symattn.defs.Apply("g", X) * Y2, [X, Y2, sp.Symbol("g")], {},
                                 {"g": lambda x, *_: x * x - 1.0}),
    sa.FamilyMember: lambda: (WO[1] * sp.MatrixSymbol("Z", d_v, n), [WO[1], sp.MatrixSymbol("Z", d_v, n)], {}, {}),
    sa.HeadSum: lambda: (_multihead_sum(), [Xd, WQ[h], WK[h], WV[h], WO[h]], {}, {}),
    sa.HeadStack: lambda: (sa.head_stack(WV[h] * Xd, H), [Xd, WV[h]], {}, {}),
    sa.HeadConcat: lambda: (sa.head_concat(WV[h] * Xd, H), [Xd, WV[h]], {}, {}),
    sa.BlockDiag: lambda: (sa.rope(a_, p) * sp.MatrixSymbol("x", 2 * p, n), [sp.MatrixSymbol("x", 2 * p, n), a_, p],
                           {a_: 3}, {}),
    sa.LayerStack: lambda: (_deep(), [X, A_LAYER], {}, {}),
    FeatureMap: lambda: (sa.softmax(FeatureMap("phi", X, d)).T * c, [X, c, sp.Symbol("phi")], {},
                         {"phi": lambda x: np.exp(x @ np.array(W_PHI, dtype=float))}),
}

#: the feature map of the FeatureMap example, phi(x) = exp(x W): R^n -> R^d (n = 3, d = 4), exactly
W_PHI = [[sp.Rational(1, 2), -1, 0, sp.Rational(1, 4)], [0, sp.Rational(1, 3), 1, -sp.Rational(1, 2)],
         [1, 0, -sp.Rational(1, 4), sp.Rational(1, 5)]]


def _instantiate_feature_maps(concrete):
    """The coordinate functions phi[c](x_1, ..., x_n) of a feature map at concrete sizes written out
    as exp(Σ_k x_k W[k][c]), the phi of the FeatureMap example, for the evaluator."""
    def coordinate(e):
        return isinstance(e, AppliedUndef) and getattr(e.func, "symattn_feature_map", False)

    def written(e):
        col = int(e.func.__name__.rsplit("[", 1)[1].rstrip("]"))
        return sp.exp(sum(a * W_PHI[k][col] for k, a in enumerate(e.args)))

    return concrete.replace(coordinate, written)


def _values(rng, expr, args):
    """Random batched values for the matrices, permutation matrices for P, symmetric ones for S, and
    the stacked heads of the families (no batch axis: they broadcast); the evaluator's values; the
    names of the batched ones."""
    values, env, batched = {}, {}, set()
    weights = {W for stack in sp.preorder_traversal(expr) if isinstance(stack, sa.LayerStack) for W in stack.weights}
    for x in args:
        if x in weights:  # one matrix per layer on axis -3, a batch on axis 0
            shape = tuple(int(sp.sympify(s).subs(SIZES)) for s in x.shape)
            stack = rng.normal(size=(BATCH, SIZES[L]) + shape)
            values[x.name] = stack
            env.update({f"{x.name}_{j + 1}": stack[:, j] for j in range(SIZES[L])})
            batched.update(f"{x.name}_{j + 1}" for j in range(SIZES[L]))
        elif isinstance(x, sa.FamilyMember) and x.index == h:
            shape = tuple(int(sp.sympify(s).subs(SIZES)) for s in x.shape)
            stack = rng.normal(size=(SIZES[H],) + shape)
            values[str(x)] = stack
            env.update({f"{x.family_name}_{j + 1}": stack[j] for j in range(SIZES[H])})
        elif isinstance(x, (sp.MatrixSymbol, sa.Permutation, sa.FamilyMember)):
            shape = tuple(int(sp.sympify(s).subs(SIZES)) for s in x.shape)
            if isinstance(x, sa.Permutation):
                v = np.stack([np.eye(shape[0])[rng.permutation(shape[0])] for _ in range(BATCH)])
            else:
                v = rng.normal(size=(BATCH,) + shape)
                v = sa.Symmetric.impose(v) if isinstance(x, sa.Symmetric) else v
            values[x.name] = env[x.name] = v
            batched.add(x.name)
    return values, env, batched


def _argument(x, values, scalars, functions):
    if isinstance(x, sp.Symbol) and x in SIZES:
        return SIZES[x]
    if isinstance(x, sp.Symbol) and x in scalars:
        return scalars[x]
    if isinstance(x, sp.Symbol) and x.name in functions:
        return functions[x.name]
    return values[str(x) if isinstance(x, sa.FamilyMember) and x.index == h else x.name]


def test_every_exported_node_class_has_an_example():
    missing = sorted(c.__name__ for c in exported_node_classes() - set(EXAMPLES) - {Visible, PermIndex})
    assert not missing, f"no lambdify example for {missing}"
    assert Binder not in exported_node_classes()  # an abstract base: its subclasses are the nodes


@pytest.mark.parametrize("cls", sorted(EXAMPLES, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_stock_lambdify_is_batched_and_agrees_with_the_evaluator(cls):
    expr, args, scalars, functions = EXAMPLES[cls]()
    assert any(isinstance(x, cls) for x in sp.preorder_traversal(expr)) or expr.has(cls)
    f = sp.lambdify(args, expr)  # stock SymPy: no printer given
    rng = np.random.default_rng(sorted(EXAMPLES, key=lambda c: c.__name__).index(cls))
    values, env, batched = _values(rng, expr, args)
    got = f(*[_argument(x, values, scalars, functions) for x in args])
    concrete = _instantiate_feature_maps(expr.subs(SIZES).subs(scalars).doit())
    for b in range(BATCH):
        env_b = {k: v[b] if k in batched else v for k, v in env.items()}
        want = evaluate(concrete, env_b, functions=functions)
        np.testing.assert_allclose(got[b], want, rtol=1e-10, atol=1e-12)


def test_lambdify_reads_the_head_count_from_the_stacked_arrays():
    f = sp.lambdify([Xd, WQ[h], WK[h], WV[h], WO[h]], _multihead_sum())
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 3))
    for heads in (1, 2, 5):
        ws = [rng.normal(size=(heads, *s)) for s in ((2, 4), (2, 4), (3, 4), (4, 3))]
        concrete = _multihead_sum().subs({**SIZES, H: heads}).doit()
        env = {"Xd": x, **{f"{nm}_{j + 1}": w[j] for nm, w in zip(("WQ", "WK", "WV", "WO"), ws) for j in range(heads)}}
        np.testing.assert_allclose(f(x, *ws), evaluate(concrete, env), rtol=1e-10)


def test_visible_and_permutation_index_print_for_numpy_and_python():
    k, t = sp.symbols("k t", integer=True)
    f = sp.lambdify([k, t], Visible(k, t))
    ks = np.arange(5)
    np.testing.assert_array_equal(f(ks, 2), [float(Visible(int(j), 2)) for j in ks])
    g = sp.lambdify([k, t], Visible(k, t), modules="math")
    assert g(1, 2) == 0.0 and g(3, 2) == -np.inf
    sigma = PermutationSymbol("sigma")
    perm = np.array([2, 0, 1])
    forward = sp.lambdify([sigma, k], PermIndex(sigma, 3, k, 0))
    inverse = sp.lambdify([sigma, k], PermIndex(sigma, 3, k, 1))
    assert [forward(perm, j) for j in range(3)] == [2, 0, 1]
    assert [inverse(perm, forward(perm, j)) for j in range(3)] == [0, 1, 2]


def test_a_pure_sympy_expression_prints_as_before():
    A, B = sp.MatrixSymbol("A", 2, 3), sp.MatrixSymbol("B", 3, 2)
    source = inspect.getsource(sp.lambdify([A, B], A * B.T.T))
    assert ").dot(" in source and "matmul" not in source


def test_user_lambdify_of_attention_is_a_batched_kernel():
    f = sp.lambdify([Q, K, V], sa.attention(Q, K, V))
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(5, 2, 3)), rng.normal(size=(5, 2, 4)), rng.normal(size=(5, 3, 4))
    got = f(q, k, v)
    assert got.shape == (5, 3, 3)
    concrete = sa.attention(Q, K, V).subs({n: 4, m: 3, d_k: 2, d_v: 3})
    for b in range(5):
        want = evaluate(concrete, {"Q": q[b], "K": k[b], "V": v[b]})
        np.testing.assert_allclose(got[b], want, rtol=1e-12)


def test_a_printer_for_another_library_subclasses_the_batched_printer():
    from sympy.printing.numpy import NumPyPrinter

    from symattn.lowering.hooks import install_printmethod
    from symattn.lowering.numpy_printer import BatchedNumPyPrinter

    class OtherLibrary(BatchedNumPyPrinter):
        runtime_module = "other.runtime"

        def _module_format(self, fqn, register=True):
            return super()._module_format(fqn.replace("numpy.", "xp.", 1), register)

    class StockOther(NumPyPrinter):
        def __init__(self, settings=None):
            super().__init__(settings)
            self.printmethod = "_othercode"

    install_printmethod("_othercode", OtherLibrary)
    printer = StockOther()
    code = printer.doprint(sa.attention(Q, K, V))
    assert "xp.matmul(" in code and "xp.swapaxes(" in code and "numpy." not in code
    assert "softmax_of" in printer.module_imports["other.runtime"]


@pytest.mark.parametrize("cls", sorted(EXAMPLES, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_symattn_lower_agrees_with_stock_lambdify(cls):
    expr, args, scalars, functions = EXAMPLES[cls]()
    rng = np.random.default_rng(11)
    values, _, _ = _values(rng, expr, args)
    by_lambdify = sp.lambdify(args, expr)(*[_argument(x, values, scalars, functions) for x in args])
    k = sa.lower(expr)
    named = {}
    for x in k.args:
        if x.name in values:
            named[x.name] = values[x.name]
        elif f"{x.name}_h" in values:  # a stacked family: lambdify's argument W[h]
            named[x.name] = values[f"{x.name}_h"]
        elif x.name in functions:
            named[x.name] = functions[x.name]
        else:
            named[x.name] = next(v for s, v in scalars.items() if s.name == x.name)
    sizes = {str(s): SIZES[s] for s in k.extra_dims}
    np.testing.assert_allclose(k(**named, **sizes), by_lambdify, rtol=1e-12, atol=1e-12)


def test_stock_lambdify_names_the_inputs_whose_shapes_do_not_fit():
    from symattn.errors import InputError, ShapeError

    f = sp.lambdify([Q, K, V], sa.attention(Q, K, V))
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(2, 3)), rng.normal(size=(2, 4)), rng.normal(size=(3, 4))
    assert f(q, k, v).shape == (3, 3)
    with pytest.raises(ShapeError, match=r"dimension d_k: ") as err:
        f(q, rng.normal(size=(5, 4)), v)
    assert "K (5, 4) has 5 rows" in str(err.value) and "Q (2, 3) has 2 rows" in str(err.value)
    with pytest.raises(ShapeError, match=r"dimension m: .*V \(3, 6\)"):
        f(q, k, rng.normal(size=(3, 6)))
    with pytest.raises(InputError, match=r"Q: expected a matrix \(at least 2 axes\), got shape \(2,\)"):
        f(q[:, 0], k, v)
    assert f(q[None], k[None, None], v).shape == (1, 1, 3, 3)  # batch axes broadcast
    with pytest.raises(ShapeError, match=r"batch axes .* do not broadcast: .*K \(3, 2, 4\).*Q \(2, 2, 3\)"):
        f(np.stack([q, q]), np.stack([k, k, k]), v)
    g = sp.lambdify([Xd, WQ[h], WK[h], WV[h], WO[h]], _multihead_sum())
    ws = [rng.normal(size=(2, *s)) for s in ((2, 4), (2, 4), (3, 4), (4, 3))]
    assert g(rng.normal(size=(4, 3)), *ws).shape == (4, 3)
    with pytest.raises(InputError, match=r"WQ: expected the heads of a family"):
        g(rng.normal(size=(4, 3)), ws[0][0], *ws[1:])
    with pytest.raises(ShapeError, match=r"dimension d_v"):
        g(rng.normal(size=(4, 3)), *ws[:2], rng.normal(size=(2, 5, 4)), ws[3])


def test_a_row_outside_the_matrix_is_an_error_not_an_empty_row():
    from symattn.errors import ShapeError

    x = np.arange(12.0).reshape(2, 3, 2)
    f, kern = sp.lambdify([X, k_], RowOf(X, k_)), sa.lower(RowOf(X, k_))
    for g in (f, kern):
        np.testing.assert_allclose(g(x, 2), x[:, 2:3, :])
        for bad in (3, -1):
            with pytest.raises(ShapeError, match=rf"row k = {bad} of a matrix with 3 rows"):
                g(x, bad)


@pytest.mark.parametrize("cls", sorted(EXAMPLES, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_every_node_prints_with_sympys_own_printers(cls):
    """str, repr, LaTeX, the pretty printer and srepr all work on an expression holding the node
    (SymPy dispatches by class name, so a node named like a SymPy class must say how it prints)."""
    expr = EXAMPLES[cls]()[0]
    for show in (str, repr, sp.latex, sp.srepr, lambda e: sp.pretty(e, use_unicode=True),
                 lambda e: sp.pretty(e, use_unicode=False)):
        assert show(expr).strip()
