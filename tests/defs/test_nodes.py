"""Properties of the definition nodes that the other tests leave unpinned (found by mutation testing).

Each test states what the seed's definition says: which sum a Softmax entry divides by, how a
node prints, which axis a transpose lands on, what an error says.
"""

import pytest
import sympy as sp

import symattn as sa
from symattn.defs.softmax import Softmax, softmax_explicit
from symattn.errors import ConventionError, NotAMatrixError

m, n = sa.dims("m n")
X = sp.MatrixSymbol("X", m, n)


def _summed_index_and_limits(entry):
    (total,) = entry.atoms(sp.Sum)
    ((k, lo, hi),) = total.limits
    return total, k, lo, hi


@pytest.mark.parametrize("axis", [0, 1])
def test_softmax_entry_is_exp_over_the_sum_along_its_axis(axis):
    i, j = sp.symbols("i j", integer=True)
    e = Softmax(X, axis)[i, j]
    total, k, lo, hi = _summed_index_and_limits(e)
    assert (lo, hi) == ((0, m - 1) if axis == 0 else (0, n - 1))
    summand = sp.exp(X[k, j]) if axis == 0 else sp.exp(X[i, k])
    assert total.function == summand
    assert sp.simplify(e - sp.exp(X[i, j]) / total) == 0
    assert k.is_integer is True, "the normalizing sum runs over integer positions"


@pytest.mark.parametrize("axis", [0, 1])
def test_softmax_entry_at_explicit_size_equals_explicit_softmax(axis):
    Y = sp.MatrixSymbol("Y", 2, 3)
    M = sp.ImmutableMatrix([[1, 2, 0], [3, 5, -1]])
    symbolic = Softmax(Y, axis).as_explicit().subs(Y, M).doit()
    exact = softmax_explicit(M, axis)
    assert all(sp.simplify(symbolic[r, c] - exact[r, c]) == 0 for r in range(2) for c in range(3))


def test_softmax_explicit_normalizes_columns_and_rows():
    M = sp.ImmutableMatrix([[0, 1, 2], [2, 0, 1]])
    cols, rows = softmax_explicit(M, 0), softmax_explicit(M, 1)
    assert cols.shape == rows.shape == (2, 3)
    assert [sp.simplify(sum(cols[:, j])) for j in range(3)] == [1, 1, 1]
    assert [sp.simplify(sum(rows[i, :])) for i in range(2)] == [1, 1]
    assert cols[0, 1] == sp.E / (sp.E + 1)
    assert rows[0, 1] == sp.E / (1 + sp.E + sp.exp(2))


def test_softmax_default_axis_is_columns():
    assert sa.softmax(X) == Softmax(X, 0) == Softmax(X)
    assert sa.softmax(X).axis == 0 and sa.softmax(X, 1).axis == 1
    assert softmax_explicit(sp.ImmutableMatrix([[0, 0], [0, 0]]))[0, 0] == sp.Rational(1, 2)
    assert softmax_explicit(sp.ImmutableMatrix([[0, 0, 0], [0, 0, 0]]))[0, 0] == sp.Rational(1, 2)


def test_softmax_doit_evaluates_explicit_arguments_on_the_same_axis():
    M = sp.ImmutableMatrix([[0, 1, 2], [2, 0, 1]])
    Y = sp.MatrixSymbol("Y", 2, 3)
    for axis in (0, 1):
        assert Softmax(M, axis).doit() == softmax_explicit(M, axis)
        assert Softmax(sp.MatMul(sp.Identity(2), M), axis).doit() == softmax_explicit(M, axis)
        kept = Softmax(sp.MatMul(sp.Identity(2), Y), axis).doit(deep=False)
        assert isinstance(kept, Softmax) and kept.axis == axis and kept.arg == sp.MatMul(sp.Identity(2), Y)
        assert Softmax(sp.MatMul(sp.Identity(2), Y), axis).doit() == Softmax(Y, axis)
        assert Softmax(Y, axis).doit() == Softmax(Y, axis)


def test_softmax_prints_its_axis_only_when_it_is_rows():
    assert sp.sstr(Softmax(X, 0)) == "Softmax(X)"
    assert sp.sstr(Softmax(X, 1)) == "Softmax(X, 1)"
    assert sp.latex(Softmax(X, 0)) == r"\operatorname{Softmax}\left(X\right)"
    assert sp.latex(Softmax(X, 1)) == r"\operatorname{softmax}_{\mathrm{row}}\left(X\right)"


@pytest.mark.parametrize("axis", [0, 1, sp.Integer(0), sp.Integer(1)])
def test_softmax_accepts_both_axes_also_as_sympy_integers(axis):
    assert Softmax(X, axis).axis == int(axis)
    assert Softmax(X, axis).T.doit() == Softmax(X.T, 1 - int(axis))  # .T stays as written; doit applies the law


@pytest.mark.parametrize("axis", [2, -1, True, False, "0", sp.Integer(2)])
def test_softmax_refuses_other_axes_and_says_what_they_mean(axis):
    with pytest.raises(ConventionError, match=r"axis must be 0 \(normalize each column, as seed 000\) or 1 "
                       r"\(normalize each row, as the Transformer paper\), got "):
        sa.softmax(X, axis)


def test_softmax_of_a_non_matrix_names_the_type():
    with pytest.raises(NotAMatrixError, match=r"^softmax: X must be a matrix expression, got Symbol: m$"):
        sa.softmax(m)
    with pytest.raises(NotAMatrixError, match=r"^softmax: X must be a matrix expression \(for example "):
        Softmax(m)


d_k, d_v, d_model = sa.dims("d_k d_v d_model")
Qc, Kc, Vc = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)


def test_attention_row_convention_with_each_kind_of_score():
    f = sa.ScoreFunction("f")
    assert sa.attention(Qc.T, Kc.T, Vc.T, score=f, convention="row") == Softmax(f.row(Qc.T, Kc.T), 1) * Vc.T
    assert sa.attention(Qc, Kc, Vc, score=f) == Vc * Softmax(f(Qc, Kc), 0)
    assert sa.attention(Qc.T, Kc.T, Vc.T, score="dot", convention="row") == Softmax(Qc.T * Kc, 1) * Vc.T
    assert sa.attention(Qc, Kc, Vc, score="dot") == Vc * Softmax(Kc.T * Qc, 0)
    scaled = sa.attention(Qc.T, Kc.T, Vc.T, score="scaled_dot", convention="row")
    assert scaled == sa.attention(Qc.T, Kc.T, Vc.T, convention="row") == Softmax(Qc.T * Kc / sp.sqrt(d_k), 1) * Vc.T
    by_hand = sa.attention(Qc.T, Kc.T, Vc.T, score=lambda q, k: q * k.T, convention="row")
    assert by_hand == Softmax(Qc.T * Kc, 1) * Vc.T


@pytest.mark.parametrize("which", ["Q", "K", "V"])
def test_attention_names_the_argument_that_is_not_a_matrix(which):
    args = {"Q": Qc, "K": Kc, "V": Vc}
    args[which] = 3
    with pytest.raises(NotAMatrixError) as err:
        sa.attention(args["Q"], args["K"], args["V"])
    assert str(err.value) == (f"attention(Q, K, V): {which} must be a matrix expression (for example "
                              f"sympy.MatrixSymbol('{which}', d_k, n)), got int: 3")


def test_attention_key_value_pairing_message_in_both_conventions():
    from symattn.errors import ShapeError

    with pytest.raises(ShapeError) as err:
        sa.attention(Qc, Kc, sp.MatrixSymbol("V", d_v, n))
    assert str(err.value) == ("attention(Q, K, V): K and V must hold the same number m of columns (one value per "
                              "key).\n  K: d_k × m\n  V: d_v × n\n  m and n are not known to be equal")
    with pytest.raises(ShapeError) as err:
        sa.attention(Qc.T, Kc.T, sp.MatrixSymbol("V", n, d_v), convention="row")
    assert str(err.value) == ("attention(Q, K, V): K and V must hold the same number m of rows (one value per "
                              "key).\n  K: m × d_k\n  V: n × d_v\n  m and n are not known to be equal")


@pytest.mark.parametrize("convention, score, message", [
    ("column", lambda q, k: q.T * k,
     "the score f(Q, K) must be m × n; its rows do not fit.\n  f(Q, K): n × m\n  Q      : d_k × n\n"
     "  K      : d_k × m\n  the dimensions n and m are not known to be equal"),
    ("column", lambda q, k: sp.MatrixSymbol("S", m, m),
     "the score f(Q, K) must be m × n; its columns do not fit.\n  f(Q, K): m × m\n  Q      : d_k × n\n"
     "  K      : d_k × m\n  the dimensions m and n are not known to be equal"),
    ("row", lambda q, k: k * q.T,
     "the score f(Q, K) must be n × m; its rows do not fit.\n  f(Q, K): m × n\n  Q      : n × d_k\n"
     "  K      : m × d_k\n  the dimensions m and n are not known to be equal"),
])
def test_a_score_callable_of_the_wrong_shape_is_named_with_its_operands(convention, score, message):
    from symattn.errors import ShapeError

    q, k, v = (Qc, Kc, Vc) if convention == "column" else (Qc.T, Kc.T, Vc.T)
    with pytest.raises(ShapeError) as err:
        sa.attention(q, k, v, score=score, convention=convention)
    assert str(err.value) == "attention(Q, K, V): " + message


def test_inner_dimension_mismatch_names_q_and_k_in_both_conventions():
    from symattn.errors import ShapeError

    K2 = sp.MatrixSymbol("K", d_model, m)
    with pytest.raises(ShapeError) as err:
        sa.attention(Qc, K2, Vc)
    assert str(err.value) == ("attention(Q, K, V): cannot form Kᵀ·Q.\n  Q: d_k × n\n  K: d_model × m\n"
                              "  the dimensions d_k and d_model are not known to be equal")
    with pytest.raises(ShapeError) as err:
        sa.attention(Qc.T, K2.T, Vc.T, convention="row")
    assert str(err.value) == ("attention(Q, K, V): cannot form Q·Kᵀ.\n  Q: n × d_k\n  K: m × d_model\n"
                              "  the dimensions d_k and d_model are not known to be equal")


H = sa.dims("H")
W_Q = sa.Family("W^Q", d_k, d_model)
Xm = sp.MatrixSymbol("X", d_model, n)


def test_family_members_print_name_and_shape():
    from symattn.defs.heads import FamilyMember

    assert sp.sstr(W_Q[2]) == "W^Q_2" and W_Q[2].name == "W^Q_2"
    assert sp.sstr(W_Q[H + 1]) == "W^Q_(H + 1)"
    assert sp.latex(W_Q[2]) == r"\mathbf{W}_{2}^{Q}"
    assert sp.latex(sa.Family("W", d_k, d_model)[3]) == r"\mathbf{W}_{3}"
    assert W_Q[2].shape == (d_k, d_model) and W_Q[2].family_name == "W^Q" and W_Q[2].index == 2
    assert isinstance(W_Q[2], FamilyMember) and W_Q[2] != W_Q[3]
    assert W_Q[H].free_symbols == {H, d_k, d_model}
    assert W_Q.T[2] == W_Q[2].T and W_Q.T.T[2] == W_Q[2]
    assert repr(W_Q) == "Family('W^Q', d_k, d_model)" and repr(W_Q.T) == "Family('W^Q', d_k, d_model).T"
    from sympy.matrices.expressions.matexpr import MatrixElement

    assert W_Q[2][0, 1] == MatrixElement(W_Q[2], 0, 1)


@pytest.mark.parametrize("index", [0, -1, sp.Rational(1, 2), "a", "2", sp.Symbol("x"), 1.0])
def test_a_family_index_must_be_a_positive_integer(index):
    from symattn.errors import HeadError

    with pytest.raises(HeadError, match=r"^family W\^Q: the head index must be a positive integer or an integer "
                                        r"expression such as h or H \+ 1, got "):
        W_Q[index]


def test_a_family_index_may_be_a_positive_integer_expression():
    assert W_Q[n].index == n and W_Q[H + 1].index == H + 1 and W_Q[sp.Integer(3)].index == 3


def _nodes():
    return (sa.head_sum(lambda h: W_Q[h] * Xm, H), sa.head_stack(lambda h: W_Q[h] * Xm, H),
            sa.head_concat(lambda h: W_Q[h] * Xm, H))


def test_nodes_over_heads_have_the_shapes_of_a_sum_a_stack_and_a_concatenation():
    s, st, c = _nodes()
    assert (s.shape, st.shape, c.shape) == ((d_k, n), (H * d_k, n), (d_k, H * n))
    assert all(x.count == H for x in (s, st, c))
    assert all(x.index not in x.free_symbols and H in x.free_symbols for x in (s, st, c))
    assert s.term(3) == W_Q[3] * Xm


def test_nodes_over_heads_print_their_index_range():
    s, st, c = _nodes()
    assert (sp.sstr(s), sp.sstr(st), sp.sstr(c)) == (
        "HeadSum(W^Q_h*X, h=1..H)", "HeadStack(W^Q_h*X, h=1..H)", "HeadConcat(W^Q_h*X, h=1..H)")
    assert sp.latex(s) == r"\sum_{h=1}^{H} \mathbf{W}_{h}^{Q} X"
    assert sp.latex(st) == (r"\begin{bmatrix} \mathbf{W}_{1}^{Q} X \\ \vdots \\ \mathbf{W}_{H}^{Q} X "
                            r"\end{bmatrix}")
    assert sp.latex(c) == r"\begin{bmatrix} \mathbf{W}_{1}^{Q} X & \cdots & \mathbf{W}_{H}^{Q} X \end{bmatrix}"


def test_transposes_of_nodes_over_heads():
    from symattn.defs.heads import HeadConcat, HeadStack, HeadSum

    s0, st0, c0 = _nodes()
    assert all(isinstance(x.T, sp.Transpose) and x.T.arg == x for x in (s0, st0, c0))  # .T stays as written
    s, st, c = (x.T.doit() for x in (s0, st0, c0))  # doit applies each node's transpose law
    assert isinstance(s, HeadSum) and isinstance(st, HeadConcat) and isinstance(c, HeadStack)
    assert s.term(2) == (W_Q[2] * Xm).T and st.term(2) == (W_Q[2] * Xm).T and c.term(2) == (W_Q[2] * Xm).T
    assert (s.shape, st.shape, c.shape) == ((n, d_k), (n, H * d_k), (H * n, d_k))
    assert (s0.T.shape, st0.T.shape, c0.T.shape) == ((n, d_k), (n, H * d_k), (H * n, d_k))


def test_peeling_splits_off_the_last_head():
    s, st, c = _nodes()
    last = W_Q[H] * Xm
    assert s.peel() == sp.MatAdd(s.func(s.body, s.index, H - 1), last)
    assert st.peel() == sp.BlockMatrix([[st.func(st.body, st.index, H - 1)], [last]])
    assert c.peel() == sp.BlockMatrix([[c.func(c.body, c.index, H - 1), last]])


def test_a_concrete_head_count_gives_the_explicit_sum_and_blocks():
    one, two = W_Q[1] * Xm, W_Q[2] * Xm
    for s, st, c in (_nodes_at(2), tuple(x.subs(H, 2).doit() for x in _nodes())):
        assert s == one + two
        assert st == sp.BlockMatrix([[one], [two]])
        assert c == sp.BlockMatrix([[one, two]])
    s, st, c = _nodes()
    kept = s.subs(H, 2).doit(deep=False)
    assert kept == one + two


def _nodes_at(k):
    return (sa.head_sum(lambda h: W_Q[h] * Xm, k), sa.head_stack(lambda h: W_Q[h] * Xm, k),
            sa.head_concat(lambda h: W_Q[h] * Xm, k))


def test_a_symbolic_count_stays_a_node_after_doit():
    for x in _nodes():
        assert x.doit() == x


def test_the_body_of_a_node_over_heads_may_not_change_shape_with_the_index():
    from symattn.errors import HeadError

    for f, name in ((sa.head_sum, "head_sum"), (sa.head_stack, "head_stack"), (sa.head_concat, "head_concat")):
        with pytest.raises(HeadError, match=rf"^{name}: the shape of the body may not depend on the index h$"):
            f(lambda h: sp.MatrixSymbol("B", h, n), H)


a_scalar = sp.Symbol("a")


def test_replacing_a_whole_node_over_heads_inside_a_larger_expression():
    s = sa.head_sum(lambda h: W_Q[h] * Xm, H)
    A = sp.MatrixSymbol("A", d_k, n)
    assert sp.MatAdd(s, A).xreplace({s: A}) == sp.MatAdd(A, A)


def test_substitution_never_touches_the_bound_index_and_renames_it_to_avoid_capture():
    from symattn.defs.dims import h as HEAD
    from symattn.defs.heads import substitute

    s = sa.head_sum(lambda h: a_scalar * W_Q[h] * Xm, H)
    assert substitute(s, {}) is s and substitute(s, {a_scalar: a_scalar}) is s
    assert s.subs(s.index, 5) == s and s.xreplace({s.index: 5}) == s
    assert s.subs(a_scalar, 3).term(2) == 3 * W_Q[2] * Xm and s.xreplace({a_scalar: 3}).term(2) == 3 * W_Q[2] * Xm
    assert s.subs(H, 4).count == 4 and s.xreplace({H: 4}).count == 4
    for t in (s.subs(a_scalar, HEAD), s.xreplace({a_scalar: HEAD}), substitute(s, {a_scalar: HEAD})):
        assert t.index != HEAD and HEAD in t.free_symbols
        assert t.term(2) == HEAD * W_Q[2] * Xm


def test_fresh_indices_are_above_every_index_in_sight():
    from symattn.defs.dims import h as HEAD
    from symattn.defs.heads import fresh_index

    s = sa.head_sum(lambda h: a_scalar * W_Q[h] * Xm, H)
    assert sp.sstr(fresh_index(s.index, s)) == "h'"
    assert sp.sstr(fresh_index(s.index, s.subs(a_scalar, HEAD))) == "h''"
    assert type(fresh_index(s.index, s)) is type(s.index)


def test_nested_nodes_over_heads_bind_distinct_indices_and_a_term_reaches_inside():
    from symattn.defs.heads import HeadSum

    inner = sa.head_sum(lambda g: W_Q[g] * Xm, H)
    outer = sa.head_sum(lambda h: sa.head_sum(lambda g: W_Q[g] * Xm * a_scalar, H) * 0 + inner, H)
    assert not outer.rebinds_index() and not inner.rebinds_index()
    body = inner.body
    rebound = HeadSum(HeadSum(body, inner.index, H), inner.index, H)
    assert rebound.rebinds_index()
    mixed = sa.head_sum(lambda h: sa.head_sum(lambda g: W_Q[g] * W_Q[h].T * W_Q[g] * Xm, H), H)
    assert mixed.index != mixed.body.index
    assert mixed.term(2) == sa.head_sum(lambda g: W_Q[g] * W_Q[2].T * W_Q[g] * Xm, H)


@pytest.mark.parametrize("make", [sa.head_sum, sa.head_stack, sa.head_concat])
def test_doit_on_a_node_over_heads_evaluates_its_body_unless_deep_is_false(make):
    lazy = make(lambda h: sp.MatMul(sp.Identity(d_k), W_Q[h] * Xm), H)
    assert lazy.doit() == make(lambda h: W_Q[h] * Xm, H)
    assert lazy.doit(deep=False) == lazy
    assert lazy.subs(H, 2).doit(deep=False) == make(lambda h: sp.MatMul(sp.Identity(d_k), W_Q[h] * Xm), 2)


Qd, Kd, Vd = (sp.MatrixSymbol(s, d_model, c) for s, c in (("Q", n), ("K", m), ("V", m)))
WQ2 = [sp.MatrixSymbol(f"A{i}", d_k, d_model) for i in (1, 2)]
WK2 = [sp.MatrixSymbol(f"B{i}", d_k, d_model) for i in (1, 2)]
WV2 = [sp.MatrixSymbol(f"C{i}", d_v, d_model) for i in (1, 2)]
WO2 = [sp.MatrixSymbol(f"D{i}", d_model, d_v) for i in (1, 2)]


def _heads(convention):
    if convention == "column":
        return [sa.attention(WQ2[i] * Qd, WK2[i] * Kd, WV2[i] * Vd) for i in (0, 1)]
    return [sa.attention(Qd.T * WQ2[i].T, Kd.T * WK2[i].T, Vd.T * WV2[i].T, convention="row") for i in (0, 1)]


def test_multihead_with_two_heads_in_the_column_convention():
    h1, h2 = _heads("column")
    stacked = sp.BlockMatrix([[h1], [h2]])
    assert sa.multihead(Qd, Kd, Vd, WQ2, WK2, WV2, WO2) == sp.BlockMatrix([WO2]) * stacked
    assert sa.multihead(Qd, Kd, Vd, WQ2, WK2, WV2, WO2, form="sum") == WO2[0] * h1 + WO2[1] * h2
    WO = sp.MatrixSymbol("WO", d_model, 2 * d_v)
    assert sa.multihead(Qd, Kd, Vd, WQ2, WK2, WV2, WO) == WO * stacked
    assert sa.multihead(Qd, Kd, Vd, WQ2, WK2, WV2, WO2, H=2) == sa.multihead(Qd, Kd, Vd, WQ2, WK2, WV2, WO2)


def test_multihead_with_two_heads_in_the_row_convention():
    h1, h2 = _heads("row")
    T = [[w.T for w in ws] for ws in (WQ2, WK2, WV2, WO2)]
    side = sp.BlockMatrix([[h1, h2]])
    out = sa.multihead(Qd.T, Kd.T, Vd.T, *T, convention="row")
    assert out == side * sp.BlockMatrix([[WO2[0].T], [WO2[1].T]])
    assert sa.multihead(Qd.T, Kd.T, Vd.T, *T, convention="row", form="sum") == h1 * WO2[0].T + h2 * WO2[1].T
    WO = sp.MatrixSymbol("WO", d_model, 2 * d_v)
    assert sa.multihead(Qd.T, Kd.T, Vd.T, *T[:3], WO.T, convention="row") == side * WO.T


def test_multihead_accepts_a_function_of_h_like_a_family():
    F = [sa.Family(nm, r, c) for nm, r, c in (("W^Q", d_k, d_model), ("W^K", d_k, d_model),
                                              ("W^V", d_v, d_model), ("W^O", d_model, d_v))]
    by_family = sa.multihead(Qd, Kd, Vd, *F, H=H)
    by_function = sa.multihead(Qd, Kd, Vd, lambda h: F[0][h], F[1], F[2], lambda h: F[3][h], H=H)
    assert by_family == by_function
    assert sp.sstr(by_family) == ("HeadConcat(W^O_h, h=1..H)*HeadStack(W^V_h*V*Softmax(1/sqrt(d_k)*K.T*W^K_h.T*"
                                  "W^Q_h*Q), h=1..H)")


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((WQ2, WK2, WV2, WO2), {"H": 3}, "HeadError", "multihead(Q, K, V): W^Q holds 2 heads but H = 3"),
    ((WQ2, WK2, WV2, WO2), {"form": "x"}, "ConventionError", "multihead: form must be 'block' or 'sum', got 'x'"),
    (([], WK2, WV2, WO2), {}, "HeadError", "multihead(Q, K, V): W^Q is an empty list; give one matrix per head"),
    ((5, WK2, WV2, WO2), {}, "HeadError", "multihead(Q, K, V): W^Q must be a list of matrices (one per head), a "
                                          "Family, or a function of the head index h; got int"),
    ((WQ2, WK2, WV2, sp.MatrixSymbol("WO", d_model, 3 * d_v)), {}, "ShapeError",
     "multihead(Q, K, V): cannot form W^O·[head_1; ...; head_H].\n  W^O                  : d_model × 3*d_v\n"
     "  [head_1; ...; head_H]: 2*d_v × n\n  the dimensions 3*d_v and 2*d_v are not known to be equal"),
])
def test_multihead_errors_say_which_weights_are_wrong(args, kwargs, error, message):
    import symattn.errors as errors

    with pytest.raises(getattr(errors, error)) as err:
        sa.multihead(Qd, Kd, Vd, *args, **kwargs)
    assert str(err.value) == message


def test_head_checks_each_projection_in_both_conventions():
    from symattn.errors import ShapeError

    with pytest.raises(ShapeError) as err:
        sa.head(Qd, Kd, Vd, sp.MatrixSymbol("A", d_k, n), WK2[0], WV2[0])
    assert str(err.value) == ("head(Q, K, V): cannot form W^Q·Q.\n  W^Q: d_k × n\n  Q  : d_model × n\n"
                              "  the dimensions n and d_model are not known to be equal")
    with pytest.raises(ShapeError) as err:
        sa.head(Qd.T, Kd.T, Vd.T, WQ2[0].T, WK2[0].T, sp.MatrixSymbol("C", n, d_v), convention="row")
    assert str(err.value) == ("head(Q, K, V): cannot form V·W^V.\n  V  : m × d_model\n  W^V: n × d_v\n"
                              "  the dimensions d_model and n are not known to be equal")
    assert sa.head(Qd, Kd, Vd, WQ2[0], WK2[0], WV2[0], score="dot") == WV2[0] * Vd * sa.softmax(
        Kd.T * WK2[0].T * WQ2[0] * Qd)


def test_paper_self_attention_adds_the_residual_and_uses_the_unscaled_score():
    from symattn.errors import ShapeError

    X = sp.MatrixSymbol("X", d_model, n)
    E = sp.MatrixSymbol("E", d_model, d_model)
    assert sa.paper_self_attention(X, [WQ2[0]], [WK2[0]], [E]) == X + E * X * sa.softmax(X.T * WK2[0].T * WQ2[0] * X)
    with pytest.raises(ShapeError) as err:
        sa.paper_self_attention(X, [WQ2[0]], [WK2[0]], [WV2[0]])
    assert str(err.value) == (
        "paper_self_attention(X): the residual X + Σ_h ... needs W_h^V to map back to X's dimension.\n"
        "  X                         : d_model × n\n  Σ_h (W_h^V X) Softmax[...]: d_v × n\n"
        "  the dimensions d_v and d_model are not known to be equal")


def test_masks_hold_zero_where_a_key_is_visible_and_minus_infinity_elsewhere():
    from symattn.defs.mask import CausalMask, PaddingMask, Visible

    oo = sp.oo
    assert CausalMask(3, 2, 1).as_explicit() == sp.Matrix([[0, 0], [0, 0], [-oo, 0]])
    assert CausalMask(2, 3).as_explicit() == sp.Matrix([[0, 0, 0], [-oo, 0, 0]])
    assert PaddingMask(3, 2, 1).as_explicit() == sp.Matrix([[0, 0], [-oo, -oo], [-oo, -oo]])
    assert (Visible(2, 2), Visible(3, 2), Visible(n, n), Visible(n + 1, n)) == (0, -oo, 0, -oo)
    assert isinstance(Visible(m, n), Visible)


def test_masks_print_their_sizes_and_only_a_nonzero_offset():
    from symattn.defs.mask import CausalMask, PaddingMask

    assert sp.sstr(CausalMask(m, n, 2)) == "CausalMask(m, n, offset=2)"
    assert sp.sstr(CausalMask(n)) == "CausalMask(n, n)"
    assert sp.sstr(PaddingMask(m, n, 2)) == "PaddingMask(m, n, 2)"


def test_a_causal_mask_that_hides_nothing_is_zero():
    from symattn.defs.mask import CausalMask

    assert CausalMask(3, 3, 2).doit() == sp.ZeroMatrix(3, 3)
    assert CausalMask(3, 3, 1).doit() == CausalMask(3, 3, 1)
    assert CausalMask(n, n, n - 1).doit() == sp.ZeroMatrix(n, n)
    assert CausalMask(n, n, n - 2).doit() == CausalMask(n, n, n - 2)


def test_masked_and_causal_attention_in_both_conventions():
    from symattn.defs.mask import CausalMask, PaddingMask, causal_attention, masked_attention

    P = PaddingMask(m, n, 2)
    S_col, S_row = Kc.T * Qc / sp.sqrt(d_k), Qc.T * Kc / sp.sqrt(d_k)
    assert masked_attention(Qc, Kc, Vc, P) == Vc * Softmax(S_col + P, 0)
    assert masked_attention(Qc.T, Kc.T, Vc.T, P, convention="row") == Softmax(S_row + P.T, 1) * Vc.T
    assert causal_attention(Qc, Kc, Vc) == Vc * Softmax(S_col + CausalMask(m, n), 0)
    assert causal_attention(Qc, Kc, Vc, offset=2) == Vc * Softmax(S_col + CausalMask(m, n, 2), 0)
    assert causal_attention(Qc.T, Kc.T, Vc.T, convention="row", score="dot") == \
        Softmax(Qc.T * Kc + CausalMask(m, n).T, 1) * Vc.T
    f = sa.ScoreFunction("f")
    assert causal_attention(Qc, Kc, Vc, score=f) == Vc * Softmax(f(Qc, Kc) + CausalMask(m, n), 0)


@pytest.mark.parametrize("mask_shape, convention, what, scores_shape", [
    ((n, n), "column", "keys (rows)", "m × n"),
    ((m, m), "column", "queries (columns)", "m × n"),
    ((n, m), "row", "keys (rows)", "n × m"),
])
def test_a_mask_of_the_wrong_shape_is_named(mask_shape, convention, what, scores_shape):
    from symattn.defs.mask import PaddingMask, masked_attention
    from symattn.errors import ShapeError

    M = PaddingMask(*mask_shape, 2)
    q, k, v = (Qc, Kc, Vc) if convention == "column" else (Qc.T, Kc.T, Vc.T)
    with pytest.raises(ShapeError) as err:
        masked_attention(q, k, v, M, convention=convention)
    rows, cols = (sp.sstr(x) for x in mask_shape)
    assert str(err.value) == (f"masked_attention(Q, K, V): the mask must be keys × queries (m × n) in the column "
                              f"layout; its {what} do not fit.\n  mask: {rows} × {cols}\n  scores: {scores_shape}")


def test_a_renamed_bound_index_is_above_the_indices_of_the_substituted_value_too():
    from symattn.defs.dims import HeadIndex, bound_index

    s = sa.head_sum(lambda h: a_scalar * W_Q[h] * Xm, H)
    h0, h1 = bound_index("h", 0, HeadIndex), bound_index("h", 1, HeadIndex)
    assert s.index == h0
    t = s.subs(a_scalar, h0 + h1)
    assert t.index not in (h0, h1) and {h0, h1} <= t.free_symbols
    assert t.term(2) == (h0 + h1) * W_Q[2] * Xm


def test_the_head_index_is_known_to_be_positive_inside_the_body():
    A = sp.MatrixSymbol("A", d_k, n)
    for make in (sa.head_sum, sa.head_stack, sa.head_concat):
        assert make(lambda h: sp.Abs(h) * A, H) == make(lambda h: h * A, H)
        assert make(sp.Abs(sa.h) * A, H) == make(sa.h * A, H)


@pytest.mark.parametrize("make, op, what", [
    (sa.head_sum, "head_sum", "the summand"), (sa.head_stack, "head_stack", "the body"),
    (sa.head_concat, "head_concat", "the body")])
def test_a_body_that_is_not_a_matrix_is_named_with_the_constructor(make, op, what):
    from symattn.defs.heads import HeadStack, HeadSum, bind

    with pytest.raises(NotAMatrixError) as err:
        make(lambda h: 3, H)
    assert str(err.value) == (f"{op}: {what} must be a matrix expression (for example "
                              f"sympy.MatrixSymbol('{what}', d_k, n)), got int: 3")
    with pytest.raises(NotAMatrixError, match=r"^HeadSum: the summand must be"):
        bind(HeadSum, lambda h: 3, H)
    with pytest.raises(NotAMatrixError, match=r"^HeadStack: the body must be"):
        bind(HeadStack, lambda h: 3, H)


def test_scores_default_to_the_scaled_dot_product_in_the_column_convention():
    from symattn.defs.attention import scores

    assert scores(Qc, Kc) == Kc.T * Qc / sp.sqrt(d_k)
    assert scores(Qc.T, Kc.T, convention="row") == Qc.T * Kc / sp.sqrt(d_k)


def test_a_score_callable_that_returns_no_matrix_is_named():
    with pytest.raises(NotAMatrixError) as err:
        sa.attention(Qc, Kc, Vc, score=lambda q, k: 3)
    assert str(err.value) == ("attention(Q, K, V): f(Q, K) must be a matrix expression (for example "
                              "sympy.MatrixSymbol('f(Q, K)', d_k, n)), got int: 3")


@pytest.mark.parametrize("first, W_Q, W_K, error, message", [
    (3, [WQ2[0]], [WK2[0]], NotAMatrixError,
     "X must be a matrix expression (for example sympy.MatrixSymbol('X', d_k, n)), got int: 3"),
    (None, [], [WK2[0]], "HeadError", "W^Q is an empty list; give one matrix per head"),
    (None, [WQ2[0]], WK2, "HeadError", "the weight lists have different numbers of heads (W^Q: 1, W^K: 2, W^V: 1)"),
])
def test_paper_self_attention_errors_name_the_operation(first, W_Q, W_K, error, message):
    import symattn.errors as errors

    X = sp.MatrixSymbol("X", d_model, n) if first is None else first
    error = getattr(errors, error) if isinstance(error, str) else error
    with pytest.raises(error) as err:
        sa.paper_self_attention(X, W_Q, W_K, [sp.MatrixSymbol("E", d_model, d_model)])
    assert str(err.value) == "paper_self_attention(X): " + message


def test_multihead_passes_the_score_to_every_head():
    f = sa.ScoreFunction("f")
    for score in ("dot", f):
        h = [sa.head(Qd, Kd, Vd, WQ2[i], WK2[i], WV2[i], score=score) for i in (0, 1)]
        assert sa.multihead(Qd, Kd, Vd, WQ2, WK2, WV2, WO2, score=score, form="sum") == WO2[0] * h[0] + WO2[1] * h[1]
    dot = sa.multihead(Qd, Kd, Vd, WQ2, WK2, WV2, WO2, score="dot", form="sum")
    assert dot == WO2[0] * WV2[0] * Vd * sa.softmax(Kd.T * WK2[0].T * WQ2[0] * Qd) + \
        WO2[1] * WV2[1] * Vd * sa.softmax(Kd.T * WK2[1].T * WQ2[1] * Qd)


@pytest.mark.parametrize("call, error, message", [
    (lambda: sa.head(3, Kd, Vd, WQ2[0], WK2[0], WV2[0]), NotAMatrixError,
     "head(Q, K, V): Q must be a matrix expression (for example sympy.MatrixSymbol('Q', d_k, n)), got int: 3"),
    (lambda: sa.head(Qd, Kd, Vd, WQ2[0], sp.MatrixSymbol("B", d_k, n), WV2[0]), "ShapeError",
     "head(Q, K, V): cannot form W^K·K.\n  W^K: d_k × n\n  K  : d_model × m\n"
     "  the dimensions n and d_model are not known to be equal"),
    (lambda: sa.multihead(Qd, Kd, Vd, WQ2, WK2, WV2, [], form="sum"), "HeadError",
     "multihead(Q, K, V): W^O is an empty list; give one matrix per head"),
    (lambda: sa.multihead(Qd.T, Kd.T, Vd.T, [w.T for w in WQ2], [w.T for w in WK2], [w.T for w in WV2],
                          sp.MatrixSymbol("WO", d_model, 3 * d_v).T, convention="row"), "ShapeError",
     "multihead(Q, K, V): cannot form [head_1 ... head_H]·W^O.\n  [head_1 ... head_H]: n × 2*d_v\n"
     "  W^O                : 3*d_v × d_model\n  the dimensions 2*d_v and 3*d_v are not known to be equal"),
])
def test_head_and_multihead_errors_name_the_operand(call, error, message):
    import symattn.errors as errors

    with pytest.raises(getattr(errors, error) if isinstance(error, str) else error) as err:
        call()
    assert str(err.value) == message


def test_masked_attention_names_an_argument_that_is_not_a_matrix():
    from symattn.defs.mask import CausalMask, masked_attention

    for which in "QKV":
        args = {"Q": Qc, "K": Kc, "V": Vc, which: 3}
        with pytest.raises(NotAMatrixError) as err:
            masked_attention(args["Q"], args["K"], args["V"], CausalMask(m, n))
        assert str(err.value) == (f"masked_attention(Q, K, V): {which} must be a matrix expression (for example "
                                  f"sympy.MatrixSymbol('{which}', d_k, n)), got int: 3")
    with pytest.raises(NotAMatrixError) as err:
        masked_attention(Qc, Kc, Vc, 3)
    assert str(err.value) == ("masked_attention(Q, K, V): mask must be a matrix expression (for example "
                              "sympy.MatrixSymbol('mask', d_k, n)), got int: 3")
