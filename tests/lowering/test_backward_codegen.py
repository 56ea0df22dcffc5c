"""``lower(expr, target="torch" | "jax", backward=True)``: the backward pass is the proved VJP.

Every generated backward passes ``torch.autograd.gradcheck`` in float64 (finite differences of the
forward, torch's own check), and the JAX backward equals ``jax.grad`` of a direct ``jax.nn.softmax``
formula. A VJP that is not proved is refused before any code is emitted.
"""

import numpy as np
import pytest
import sympy as sp

import symattn as sa
from symattn.errors import LoweringError
from symattn.lowering.lower import fix_sizes

torch = pytest.importorskip("torch")

n, m, d, e, d_model = sa.dims("n m d e d_model")
QR, KR, VR = sp.MatrixSymbol("Q", n, d), sp.MatrixSymbol("K", m, d), sp.MatrixSymbol("V", m, e)
ROW = sa.attention(QR, KR, VR, convention="row")
QC, KC, VC = sp.MatrixSymbol("Q", d, n), sp.MatrixSymbol("K", d, m), sp.MatrixSymbol("V", e, m)
COLUMN = sa.attention(QC, KC, VC)
MASKED = sa.masked_attention(QR, KR, VR, sp.MatrixSymbol("M", m, n), convention="row")
QS, KS, VS = sp.MatrixSymbol("Q", n, d), sp.MatrixSymbol("K", n, d), sp.MatrixSymbol("V", n, e)
CAUSAL = sa.causal_attention(QS, KS, VS, convention="row")


def tensors(shapes, seed=0, grad=True):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=g, dtype=torch.float64, requires_grad=grad) for s in shapes]


def gradcheck(kernel, shapes, seed=0):
    xs = tensors(shapes, seed)
    assert torch.autograd.gradcheck(lambda *a: kernel(*a), xs, eps=1e-6, atol=1e-8, rtol=1e-6)


def test_every_gradient_is_proved_before_it_is_emitted():
    k = sa.lower(ROW, target="torch", backward=True)
    assert [g.wrt for g in k.gradients] == ["Q", "K", "V"]
    for g in k.gradients:
        assert g.status == "proved" and g.scope.startswith("all dimensions"), g
        assert g.kernel.provenance.status == "proved"
    assert sp.sstr(k.gradients[2].formula) == "Softmax(1/sqrt(d)*Q*K.T, 1).T*G"  # dV = Pᵀ G, as papers write it


@pytest.mark.parametrize("expr, shapes", [
    (ROW, [(2, 3, 4), (5, 4), (2, 5, 6)]),          # K without batch axes: its gradient sums over the batch
    (COLUMN, [(2, 4, 3), (2, 4, 5), (6, 5)]),
    (MASKED, [(3, 4), (5, 4), (5, 2), (5, 3)]),     # the additive mask M (m × n, column layout) gets dS too
    (CAUSAL, [(2, 4, 3), (2, 4, 3), (2, 4, 2)]),
], ids=["row", "column", "masked", "causal"])
def test_torch_gradcheck_on_the_generated_backward(expr, shapes):
    gradcheck(sa.lower(expr, target="torch", backward=True), shapes)


def test_causal_backward_gives_masked_keys_zero_gradient():
    k = sa.lower(CAUSAL, target="torch", backward=True)
    q, kk, v = tensors([(4, 3), (4, 3), (4, 2)], seed=3)
    k(q, kk, v).sum().backward()
    q2, k2, v2 = (x.detach().clone().requires_grad_() for x in (q, kk, v))
    k(q2, k2, v2)[0].sum().backward()  # only query 0, which sees key 0 alone
    assert torch.count_nonzero(k2.grad[1:]) == 0 and torch.count_nonzero(v2.grad[1:]) == 0


def test_torch_backward_matches_autograd_of_sdpa():
    k = sa.lower(ROW, target="torch", backward=True)
    ours = tensors([(2, 3, 4), (2, 5, 4), (2, 5, 6)], seed=1)
    ref = [x.detach().clone().requires_grad_() for x in ours]
    g = torch.randn(2, 3, 6, dtype=torch.float64)
    (k(*ours) * g).sum().backward()
    (torch.nn.functional.scaled_dot_product_attention(*ref) * g).sum().backward()
    for a, b in zip(ours, ref):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def multihead():
    X = sp.MatrixSymbol("X", d_model, n)
    W = [sa.Family(f"W^{s}", *shape) for s, shape in (("Q", (d, d_model)), ("K", (d, d_model)), ("V", (e, d_model)),
                                                          ("O", (d_model, e)))]
    return fix_sizes(sa.multihead(X, X, X, *W, H=sa.dims("H"), form="sum"), {"H": 2})


def test_multihead_backward_with_weights_passes_gradcheck(multihead):
    k = sa.lower(multihead, target="torch", backward=True)
    assert len(k.gradients) == 9 and all(g.status == "proved" for g in k.gradients)
    shapes = {"X": (2, 4, 3), "W^Q": (2, 4), "W^K": (2, 4), "W^V": (3, 4), "W^O": (4, 3)}
    gradcheck(k, [shapes[nm.split("_")[0]] for nm in k.arg_names])


def test_gqa_backward_sums_the_shared_key_value_heads():
    X = sp.MatrixSymbol("X", d_model, n)
    W = [sa.Family(f"W^{s}", *shape) for s, shape in (("Q", (d, d_model)), ("K", (d, d_model)), ("V", (e, d_model)),
                                                          ("O", (d_model, e)))]
    expr = sa.gqa(X, X, X, *W, H=2, G=1, form="sum")  # MQA: both query heads read W^K_1, W^V_1
    k = sa.lower(expr, target="torch", backward=True)
    assert "W^K_2" not in k.arg_names and all(g.status == "proved" for g in k.gradients)
    shapes = {"X": (3, 2), "W^Q": (2, 3), "W^K": (2, 3), "W^V": (2, 3), "W^O": (3, 2)}
    gradcheck(k, [shapes[nm.split("_")[0]] for nm in k.arg_names])


def test_a_wrong_vjp_is_refused_with_its_verdict(monkeypatch):
    import sys

    from symattn.lowering import backward_vjp

    vjp_module = sys.modules["symattn.grad.vjp"]  # the module (symattn.grad.vjp is also the function's name)

    right = vjp_module.vjp_with_rules
    monkeypatch.setattr(vjp_module, "vjp_with_rules", lambda ex, w, g: (2 * right(ex, w, g)[0], []))
    monkeypatch.setattr(backward_vjp, "_PROVED", {})
    monkeypatch.setattr(backward_vjp, "_GRADIENTS", {})
    expr = sa.attention(sp.MatrixSymbol("A", n, d), sp.MatrixSymbol("B", m, d), sp.MatrixSymbol("C", m, e),
                        convention="row")
    with pytest.raises(LoweringError, match=r"with respect to A is refuted, not proved .*refusing to emit"):
        sa.lower(expr, target="torch", backward=True)


def test_a_symbolic_head_count_is_refused_saying_how_to_fix_it(multihead):
    X = sp.MatrixSymbol("X", d_model, n)
    W = [sa.Family(f"W^{s}", *shape) for s, shape in (("Q", (d, d_model)), ("K", (d, d_model)), ("V", (e, d_model)),
                                                          ("O", (d_model, e)))]
    expr = sa.multihead(X, X, X, *W, H=sa.dims("H"), form="sum")
    with pytest.raises(LoweringError, match=r"symbolic head count.*at=\{'H': 2\}"):
        sa.lower(expr, target="torch", backward=True)


def test_an_uninterpreted_score_function_is_refused():
    expr = sa.attention(QC, KC, VC, score=sa.ScoreFunction("f"))
    with pytest.raises(LoweringError, match="the function input f has no proved VJP"):
        sa.lower(expr, target="torch", backward=True)


def test_numpy_backward_is_not_a_target_here():
    with pytest.raises(LoweringError, match="targets torch, jax"):
        sa.lower(ROW, backward=True)


def test_torch_compile_fullgraph_forward_and_backward():
    try:
        import torch._dynamo as dynamo
    except ImportError:
        pytest.skip("torch._dynamo is not available")
    if not dynamo.is_dynamo_supported():
        pytest.skip("torch.compile is not supported on this platform")
    k = sa.lower(MASKED, target="torch", backward=True)
    xs = tensors([(2, 3, 4), (5, 4), (2, 5, 2), (5, 3)], seed=5)
    ref = [x.detach().clone().requires_grad_() for x in xs]
    dynamo.reset()
    compiled = torch.compile(lambda *a: k(*a).square().sum(), fullgraph=True, backend="aot_eager")
    compiled(*xs).backward()
    k(*ref).square().sum().backward()
    for a, b in zip(xs, ref):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-12, atol=1e-12)


# -- JAX ------------------------------------------------------------------------------------------


def _jax():
    return pytest.importorskip("jax")


def _reference_row(q, k, v, m=None):
    import jax

    s = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    if m is not None:
        s = s + m.swapaxes(-1, -2)
    return jax.nn.softmax(s, axis=-1) @ v


def _reference_column(q, k, v):
    import jax

    return v @ jax.nn.softmax(k.swapaxes(-1, -2) @ q / np.sqrt(q.shape[-2]), axis=-2)


@pytest.mark.parametrize("expr, shapes, ref", [
    (ROW, [(2, 3, 4), (5, 4), (2, 5, 6)], _reference_row),
    (COLUMN, [(2, 4, 3), (2, 4, 5), (6, 5)], _reference_column),
    (MASKED, [(3, 4), (5, 4), (5, 2), (5, 3)], _reference_row),
], ids=["row", "column", "masked"])
def test_jax_custom_vjp_equals_jax_grad_of_the_formula(expr, shapes, ref):
    jax = _jax()
    import jax.numpy as jnp

    with jax.enable_x64(True):
        k = sa.lower(expr, target="jax", backward=True)
        rng = np.random.default_rng(2)
        xs = [jnp.asarray(rng.standard_normal(s)) for s in shapes]
        argnums = tuple(range(len(xs)))
        ours = jax.jit(jax.grad(lambda *a: jnp.sum(jnp.sin(k(*a))), argnums=argnums))(*xs)
        want = jax.grad(lambda *a: jnp.sum(jnp.sin(ref(*a))), argnums=argnums)(*xs)
        for a, b, x in zip(ours, want, xs):
            assert a.shape == x.shape and a.dtype == jnp.float64
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-11, atol=1e-12)


def test_jax_backward_under_vmap():
    jax = _jax()
    import jax.numpy as jnp

    with jax.enable_x64(True):
        k = sa.lower(ROW, target="jax", backward=True)
        rng = np.random.default_rng(4)
        q, kk, v = (jnp.asarray(rng.standard_normal(s)) for s in ((3, 2, 4), (3, 5, 4), (3, 5, 2)))
        per = jax.vmap(jax.grad(lambda a, b, c: jnp.sum(k(a, b, c) ** 2), argnums=1))(q, kk, v)
        want = jax.vmap(jax.grad(lambda a, b, c: jnp.sum(_reference_row(a, b, c) ** 2), argnums=1))(q, kk, v)
        np.testing.assert_allclose(np.asarray(per), np.asarray(want), rtol=1e-11, atol=1e-12)
