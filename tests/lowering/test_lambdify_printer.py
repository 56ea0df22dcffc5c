"""``sa.lower``'s NumPy kernel is stock ``sympy.lambdify`` with symattn's printer and CSE: lower calls
lambdify, the kernel's source is lambdify's, and a user's own lambdify with the printer gives the same
kernel body and the same numbers."""

import inspect

import numpy as np
import pytest
import sympy as sp

import symattn as sa
from symattn.defs.numeric_nodes import Exp
from symattn.lowering import lower
from symattn.lowering.lower import kernel_namespace, lambdify_printer
from symattn.lowering.printer import KernelPrinter, Result, Statement, Temporary

n, m, d_k, d_v, d, H = sa.dims("n m d_k d_v d H")
Q, K = sp.MatrixSymbol("Q", n, d_k), sp.MatrixSymbol("K", m, d_k)
V = sp.MatrixSymbol("V", m, d_v)
ROW = sa.attention(Q, K, V, convention="row")


def _multihead():
    X = sp.MatrixSymbol("X", d, n)
    W_Q, W_K = sa.Family("W^Q", d_k, d), sa.Family("W^K", d_k, d)
    W_V, W_O = sa.Family("W^V", d_v, d), sa.Family("W^O", d, d_v)
    return sa.multihead(X, X, X, W_Q, W_K, W_V, W_O, H=H, form="sum")


def _body(source: str) -> str:
    """The function's body: everything after its def line."""
    return source.split("\n", 1)[1]


def _inputs(kernel, rng, batch=(2,)):
    """Random float64 inputs for the kernel's arguments at n=3, m=4, d_k=2, d_v=3, d=5, H=2."""
    sizes = {n: 3, m: 4, d_k: 2, d_v: 3, d: 5, H: 2}
    values = {}
    for x in kernel.args:
        shape = tuple(int(sp.sympify(s).subs(sizes)) for s in x.shape)
        heads = (sizes[H],) if type(x).__name__ == "StackedFamily" else ()
        values[x.name] = rng.normal(size=batch + heads + shape)
    return values


def test_lower_calls_sympy_lambdify_with_symattns_printer_and_cse(monkeypatch):
    calls = []
    stock = sp.lambdify

    def spy(args, expr, **options):
        fn = stock(args, expr, **options)
        calls.append((args, expr, options, fn))
        return fn

    monkeypatch.setattr(sp, "lambdify", spy)
    A, B = sp.MatrixSymbol("A_spy", n, d_k), sp.MatrixSymbol("B_spy", m, d_k)  # not in lower's cache
    k = lower(sa.softmax(A * B.T, 1) * B)
    assert len(calls) == 1
    args, expr, options, fn = calls[0]
    assert expr == k.expr and [str(a) for a in args] == ["A_spy", "B_spy", "out"]
    assert isinstance(options["printer"], KernelPrinter) and options["cse"] == options["printer"].cse
    assert options["dummify"] is False and "docstring_limit" in options
    assert k.fn is fn and fn.__doc__.startswith("Created with lambdify")
    assert k.source == inspect.getsource(fn) and k.source.startswith("def _lambdifygenerated(A_spy, B_spy, out):")


@pytest.mark.parametrize("expr", [ROW, sa.attention(Q.T, K.T, V.T), _multihead()], ids=["row", "column", "multihead"])
def test_users_own_lambdify_with_symattns_printer_gives_lower_s_kernel(expr):
    k = lower(expr)
    printer, params = lambdify_printer(expr)
    assert [str(p) for p in params] == [k.names[x] for x in k.args] + ["out"]
    f = sp.lambdify(params, expr, modules=[kernel_namespace()], printer=printer, cse=printer.cse)
    assert _body(inspect.getsource(f)) == _body(k.source)
    values = _inputs(k, np.random.default_rng(0))
    got = f(*(values[x.name] for x in k.args), None)
    np.testing.assert_array_equal(got, k(**values))
    assert got.shape[0] == 2  # the batch axis


def test_users_own_lambdify_with_default_modules_runs_the_same_body():
    printer, params = lambdify_printer(ROW)
    f = sp.lambdify(params, ROW, printer=printer, cse=printer.cse)  # modules: lambdify's default (NumPy)
    rng = np.random.default_rng(1)
    q, kk, v = rng.normal(size=(2, 3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    np.testing.assert_allclose(f(q, kk, v, None), lower(ROW)(q, kk, v), rtol=1e-13)


def test_the_cse_computes_each_subexpression_once_after_the_statements():
    S = Q * K.T
    expr = sa.softmax(S, 1) * V + sp.MatMul(S, sp.OneMatrix(m, m), V)  # S is used twice
    printer, _ = lambdify_printer(expr)
    pairs, result = printer.cse(expr)
    statements = [p for p in pairs if isinstance(p[1], Statement)]
    steps = pairs[len(statements):]
    assert all(isinstance(r, Statement) for _, r in pairs[:len(statements)]) and statements
    assert all(not isinstance(r, Statement) for _, r in steps)
    assert all(isinstance(t, (Temporary, sp.MatrixSymbol)) for t, _ in steps)
    assert len({r for _, r in steps}) == len(steps)
    assert sum(r == S for _, r in steps) == 1 and isinstance(result, Result)


def test_a_temporary_with_two_uses_is_not_overwritten():
    S = Q * K.T
    W = sp.MatrixSymbol("W", m, d_v)
    expr = sa.softmax(S, 1) * V + Exp(S) * W  # S is read by Softmax and by Exp
    k = lower(expr)
    assert "softmax_(t1.copy(), -1)" in k.source and "numpy.exp(t1)" in k.source
    rng = np.random.default_rng(2)
    q, kk, v, w = (rng.normal(size=s) for s in ((3, 2), (4, 2), (4, 3), (4, 3)))
    s = q @ kk.T
    p = np.exp(s - s.max(axis=1, keepdims=True))
    want = p / p.sum(axis=1, keepdims=True) @ v + np.exp(s) @ w
    np.testing.assert_allclose(k(Q=q, K=kk, V=v, W=w), want, rtol=1e-12)


def test_a_donated_input_is_overwritten_and_only_then():
    S = sp.MatrixSymbol("S", n, m)
    expr = Exp(S) * V
    kept, donated = lower(expr), lower(expr, donate=[S])
    assert "S = exp_(S)" in donated.source and "numpy.exp(S)" in kept.source
    rng = np.random.default_rng(3)
    s, v = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    want = np.exp(s) @ v
    s_kept = s.copy()
    np.testing.assert_allclose(kept(S=s_kept, V=v), want, rtol=1e-13)
    np.testing.assert_array_equal(s_kept, s)
    s_donated = s.copy()
    np.testing.assert_allclose(donated(S=s_donated, V=v), want, rtol=1e-13)
    np.testing.assert_allclose(s_donated, np.exp(s), rtol=1e-13)  # overwritten in place


def test_the_result_is_made_in_out_when_given():
    k = lower(ROW)
    assert "mm(t1, V, out=out)" in k.source
    rng = np.random.default_rng(4)
    q, kk, v = rng.normal(size=(2, 3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    buf = np.empty((2, 3, 3))
    assert k(q, kk, v, out=buf) is buf
    np.testing.assert_allclose(buf, k(q, kk, v), rtol=1e-13)


def test_a_dimension_named_like_a_helper_does_not_hide_it():
    mm, chain = sa.dims("mm chain")
    A, B, C = sp.MatrixSymbol("A", mm, chain), sp.MatrixSymbol("B", chain, mm), sp.MatrixSymbol("C", mm, chain)
    k = lower(A * B * C)  # lambdify puts the symbols mm and chain into the function's globals
    rng = np.random.default_rng(5)
    a, b, c = rng.normal(size=(2, 3)), rng.normal(size=(3, 2)), rng.normal(size=(2, 3))
    np.testing.assert_allclose(k(a, b, c), a @ b @ c, rtol=1e-13)


def test_inputs_named_like_temporaries_keep_their_values():
    A, B = sp.MatrixSymbol("t0", n, m), sp.MatrixSymbol("t1", n, m)
    k = lower(sa.softmax(A * B.T, 1) * A)
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    s = a @ b.T
    p = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(k(a, b), p / p.sum(axis=1, keepdims=True) @ a, rtol=1e-12)


def test_the_printer_without_its_cse_says_what_to_pass():
    printer, params = lambdify_printer(ROW)
    with pytest.raises(sa.LoweringError, match=r"cse=printer.cse"):
        sp.lambdify(params, ROW, printer=printer)


def test_codegen_writes_lambdify_s_body_under_a_signature_of_keywords():
    from symattn.lowering.kernel import build_kernel_source, compile_source, without_unused_sizes

    k = lower(_multihead())
    src, names, _, extra = build_kernel_source(k.expr, k.args, fname="kernel")
    head, doc, body = src.split("\n", 2)
    assert head == "def kernel(X, W_Q, W_K, W_V, W_O, *, out=None):" and doc.startswith('    """') and not extra
    assert body == without_unused_sizes(_body(k.source))  # lambdify's body, a size nothing reads not named
    values = _inputs(k, np.random.default_rng(7))
    np.testing.assert_array_equal(compile_source(src)(**{names[x]: values[x.name] for x in k.args}), k(**values))
