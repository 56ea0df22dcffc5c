"""No identity by name, capture-avoiding binders, and assumptions that are modelled.

Each test here reproduces a way a claim written by someone else got a wrong verdict: a user symbol
named like one of the engine's own symbols, a binder that captured a user's index, an assumption that
was shown but not used. The names the engine uses are read from the engine (not typed here) where
that is possible.
"""

import pytest
import sympy as sp
from test_api import multihead_derivation

import symattn as sa
from symattn.defs.dims import bound_index
from symattn.defs.heads import HeadStack, head_sum, substitute
from symattn.errors import ClaimError, DerivationError
from symattn.proof import instances

n, m, H, G, r, d = sa.dims("n m H G r d")


def _exp_symbol_name():
    """The name strategy D gives to its first exp atom (read from the engine, not typed)."""
    table = {}
    instances._exp_atoms_to_symbols(sp.exp(sp.Symbol("x")), table)
    return next(iter(table.values())).name


def test_a_user_scalar_named_like_an_exp_atom_is_not_that_atom():
    X = sp.MatrixSymbol("X", 2, 1)
    name = _exp_symbol_name()
    e0, e1 = sp.Symbol(name, positive=True), sp.Symbol(name.replace("0", "1"), positive=True)
    lhs = sp.ImmutableMatrix([[e0 / (e0 + e1)], [e1 / (e0 + e1)]])
    # false: e0, e1 are any positive numbers, not exp(X_00), exp(X_10)
    v = sa.verify(lhs, sa.softmax(X), at=[{}], search_counterexample=False)
    assert v.status != "proved"
    assert sa.verify(lhs, sa.softmax(X)).status == "refuted"


def test_a_user_scalar_named_like_an_entry_symbol_is_not_that_entry():
    X = sp.MatrixSymbol("X", 2, 2)
    # the names strategy D would give the entries of X: read them off a symbolic environment
    env = instances.symbolic_env({"X": (2, 2)})["X"]
    lookalike = sp.ImmutableMatrix(2, 2, lambda i, j: sp.Symbol(env[i, j].name))
    v = sa.verify(X, lookalike, at=[{}], search_counterexample=False)
    assert v.status != "proved"
    assert sa.verify(X, lookalike).status == "refuted"


def test_a_family_member_and_a_matrix_that_print_alike_are_refused():
    W = sa.Family("W", n, n)
    W_2 = sp.MatrixSymbol("W_2", n, n)
    with pytest.raises(ClaimError, match="named like a member of the family W"):
        sa.verify(head_sum(W[sa.h], H) + W_2, 2 * W_2)
    with pytest.raises(ClaimError, match="both named W_2"):
        sa.verify(W[2], W_2)


def test_a_permutation_and_a_matrix_sharing_a_name_are_refused():
    P, M = sa.Permutation("P", n), sp.MatrixSymbol("P", n, n)
    with pytest.raises(ClaimError, match="both named P"):
        sa.verify(P * P.T, M * M.T)


def test_a_dimension_and_a_plain_scalar_that_print_alike_are_refused():
    X = sp.MatrixSymbol("X", n, n)
    with pytest.raises(ClaimError, match="both named n"):
        sa.verify(sp.Symbol("n") * X, n * X)


def test_substituting_a_user_scalar_never_reaches_the_names_of_functions_families_permutations():
    f = sa.ScoreFunction("f")
    Q, K = sp.MatrixSymbol("Q", d, n), sp.MatrixSymbol("K", d, m)
    W = sa.Family("W", d, d)
    P = sa.Permutation("P", n)
    e = f(W[1] * Q, K) * P
    for name in ("f", "W", "P"):
        assert e.xreplace({sp.Symbol(name): sp.Integer(2)}) == e


def test_nested_head_sums_bind_distinct_indices():
    A, B = sa.Family("A", n, n), sa.Family("B", n, n)
    nested = head_sum(lambda h: head_sum(lambda h2: A[h] * B[h2], H), H)
    product = head_sum(lambda h: A[h], H) * head_sum(lambda h: B[h], H)
    diagonal = head_sum(lambda h: A[h] * B[h], H)
    outer, inner = nested, nested.body
    assert outer.index != inner.index
    at = [{n: 2, H: 2}]
    assert sa.verify(nested, product, at=at).status != "refuted"
    assert sa.verify(nested, diagonal, at=at).status != "proved"
    # the engine agrees with itself: the same claims at H = 2 given directly
    nested2 = head_sum(lambda h: head_sum(lambda h2: A[h] * B[h2], 2), 2)
    assert sa.verify(nested2, product.subs(H, 2).doit()).status == "proved"
    assert sa.verify(nested2, diagonal.subs(H, 2).doit()).status == "refuted"


def test_the_placeholder_form_binds_only_free_occurrences():
    A = sa.Family("A", n, n)
    inner = head_sum(A[sa.h], H)                       # binds h
    outer = head_sum(inner * A[sa.h], H)              # binds the free h of A_h only
    assert outer.index != inner.index
    assert outer.body.args[0] == inner


def test_alpha_equivalent_constructions_give_identical_trees():
    A, B = sa.Family("A", n, n), sa.Family("B", n, n)
    one = head_sum(lambda a: head_sum(lambda b: A[a] * B[b], H), H)
    two = head_sum(lambda x: head_sum(lambda y: A[x] * B[y], H), H)
    assert one == two


def test_substitution_into_a_binder_renames_instead_of_capturing():
    A = sa.Family("A", n, n)
    inner = head_sum(A[sa.h], H)
    free = bound_index("h", 0, type(inner.index))
    assert free == inner.index
    # put the (free) index of the inner sum into a body that binds it: it must stay free
    x = sp.Symbol("x", integer=True, positive=True)
    e = head_sum(lambda k: A[k] * A[x], H)
    out = substitute(e, {x: free})
    assert out.index != free and out.body.has(A[free])
    assert out.term(3) == A[3] * A[free]


def test_repeat_kv_heads_does_not_capture_user_scalars_named_g_or_j():
    K = sa.Family("K", d, m)
    for name in ("g", "j"):
        c = sp.Symbol(name, integer=True, positive=True)
        lhs = sa.repeat_kv_heads(lambda g, c=c: c * K[g], G, r)
        rhs = c * sa.repeat_kv_heads(K, G, r)
        assert c in lhs.free_symbols
        v = sa.verify(lhs, rhs)
        assert v.status != "refuted", v.explain()
    inner = sa.repeat_kv_heads(K, G, r)
    assert isinstance(inner, HeadStack) and inner.index != inner.body.index


def test_rope_blocks_do_not_capture_a_user_scalar_named_i():
    i = sp.Symbol("i", integer=True, positive=True)
    R = sa.rope(i, 2, sp.Function("theta"))
    assert i in R.free_symbols and R.index != i


# assumptions: modelled (substituted, named in the scope) or refused --------------------------------


def test_an_assumption_on_every_member_of_a_family_is_used():
    claim = ("MultiHead(Q, K, V)", "sum_{h=1}^{H} W_h^O Attention(W_h^Q Q, W_1^K K, W_1^V V)")
    without = multihead_derivation().chain(*claim).check().steps[0]
    assert without.status == "refuted"
    d = multihead_derivation().assume("W_i^K", "W_1^K").assume("W_i^V", "W_1^V")
    (s,) = d.chain(*claim).check().steps
    assert s.status == "proved", s.scope
    assert "under W_i^K = W_1^K, W_i^V = W_1^V" in s.scope
    assert s.as_dict()["assumptions"] == ["W_i^K = W_1^K", "W_i^V = W_1^V"]


def test_an_assumption_about_nothing_declared_is_refused():
    d = multihead_derivation().assume("W_i^k", "W_1^K")
    with pytest.raises(DerivationError, match=r"W_i\^k, which is not declared"):
        d.chain("Q", "Q").check()


def test_an_assumption_about_one_member_is_refused_for_a_symbolic_member():
    d = multihead_derivation().assume("W_2^K", "W_1^K")
    (s,) = d.chain("W_2^K Q", "W_1^K Q").check().steps
    assert s.status == "proved" and "under W_2^K = W_1^K" in s.scope
    (s,) = multihead_derivation().assume("W_2^K", "W_1^K").chain("W_h^K Q", "W_1^K Q").check().steps
    assert s.status == "ill-formed" and "one member only" in s.error


def test_a_step_the_assumption_does_not_reach_does_not_name_it():
    d = multihead_derivation().assume("W^K", "W^Q")
    r = d.chain("W_h^K Q", "W_h^Q Q").chain("W_h^V Q", "W_h^V Q").check()
    assert "under W^K = W^Q" in r.steps[0].scope
    assert "under" not in r.steps[1].scope


def test_nested_sums_in_a_derivation_bind_their_own_indices():
    d = sa.Derivation()
    d.declare("A_h, B_h", "n", "n", heads="h in 1..H")
    nested = "sum_{h=1}^{H} sum_{g=1}^{H} A_h B_g"
    r = d.chain(nested, "(sum_{h=1}^{H} A_h) (sum_{g=1}^{H} B_g)").check()
    assert r.steps[0].status != "refuted", r.steps[0].error
    r = sa.Derivation().declare("A_h, B_h", "n", "n", heads="h in 1..H").chain(
        nested, "sum_{h=1}^{H} A_h B_h").check()
    assert r.steps[0].status != "proved"


def test_a_free_head_index_is_not_captured_by_a_sum_in_the_same_step():
    d = sa.Derivation().declare("A_h, B_h", "n", "n", heads="h in 1..H")
    # A_h is one (any) head; the sum runs over g: H copies of A_h B_g summed, not Σ A_g B_g
    r = d.chain("sum_{g=1}^{H} A_h B_g", "A_h sum_{g=1}^{H} B_g").check()
    assert r.steps[0].status == "proved", (r.steps[0].status, r.steps[0].error)
    r = sa.Derivation().declare("A_h, B_h", "n", "n", heads="h in 1..H").chain(
        "sum_{g=1}^{H} A_h B_g", "sum_{g=1}^{H} A_g B_g").check()
    assert r.steps[0].status != "proved"


def test_subs_and_xreplace_respect_binders():
    A = sa.Family("A", n, n)
    e = head_sum(A[sa.h], H)
    assert e.subs(sa.h, 3) == e and e.xreplace({sa.h: 3}) == e     # the index is bound
    x = sp.Symbol("x", integer=True, positive=True)
    f = head_sum(lambda k: A[k] * A[x], H)
    for g in (f.subs(x, sa.h), f.xreplace({x: sa.h})):              # a free h goes in: no capture
        assert sa.h in g.free_symbols and g.term(2) == A[2] * A[sa.h]


def test_verify_takes_scalar_claims():
    x = sp.Symbol("x", real=True)
    assert sa.verify(sp.exp(2 * x), sp.exp(x) ** 2).status == "proved"
    assert sa.verify(x + 1, x).status == "refuted"
    with pytest.raises(ClaimError, match="at= is for matrix claims"):
        sa.verify(x, x, at=[{}])
    with pytest.raises(ClaimError, match="both named x"):
        sa.verify(sp.Symbol("x"), x)


def test_ordering_the_limits_of_a_sum_keeps_an_index_bound_twice_in_place():
    from symattn.proof import sums

    k = sp.Dummy("k", integer=True)
    a = sp.IndexedBase("a")
    x = sp.Sum(sp.Sum(a[k], (k, 0, 1)), (k, 0, 0))     # SymPy stores it as one Sum with two limits
    assert sums.order_limits(x).doit() == x.doit() == a[0] + a[1]


def test_elementwise_exp_and_log_are_public_and_decided():
    X = sp.MatrixSymbol("X", n, m)
    assert sa.verify(sa.Exp(sa.Log(X)), X).status == "proved"
    assert sa.verify(sa.Exp(2 * X), sa.Exp(X)).status == "refuted"
    # Softmax is Exp normalized: each column of Exp(X) divided by its sum
    assert sa.verify(sa.softmax(X), sa.Exp(X) * sp.OneMatrix(m, m)).status == "refuted"
    assert sa.Log(X).shape == X.shape and sa.Exp(X).T.shape == (m, n)


def test_a_family_member_is_named_as_it_prints():
    W = sa.Family("W^Q", d, d)
    for k in (2, H + 1, sa.h):
        assert W[k].name == sp.sstr(W[k])
    with pytest.raises(ClaimError, match=r"both named W\^Q_\(H \+ 1\)"):
        sa.verify(W[H + 1], sp.MatrixSymbol("W^Q_(H + 1)", d, d))


def test_a_bound_index_never_prints_like_a_user_symbol_in_its_body():
    A, B = sa.Family("A", n, n), sa.Family("B", n, n)
    for name in ("h", "h'"):
        c = sp.Symbol(name, integer=True, positive=True)
        e = head_sum(lambda a, c=c: head_sum(lambda b: c * A[a] * B[b], H), H)
        names = {e.index.name, e.body.index.name}
        assert c.name not in names and len(names) == 2, sp.sstr(e)
        assert sa.verify(e, c * head_sum(A[sa.h], H) * head_sum(B[sa.h], H)).status == "proved"


@pytest.mark.parametrize("user", ["i", "j", "k"])
def test_a_readable_entry_line_names_its_entry_as_the_expression_does(user):
    """With a user scalar named like an entry index, the readable trace renames the entry index in
    the prose ("entry (l, j)") exactly as in the expression, and never uses the user's name for it."""
    import re

    from symattn.proof.verdict import readable

    n = sa.dims("n")
    c = sp.Symbol(user)
    A = sp.MatrixSymbol("A", n, n)
    v = sa.verify(sa.softmax(c * A), sa.softmax(c * A.T).T)  # false: the axis differs
    lines = [readable(t) for t in v.trace if re.search(r"entry \(\S+, \S+\) of lhs", str(t))]
    assert lines, v.trace
    for line in lines:
        r, col = re.search(r"entry \((\S+), (\S+)\) of lhs: (.*)", line).groups()[:2]
        body = line.split(": ", 2)[-1]
        assert user not in (r, col), line
        sub = str.maketrans("ijklmn", "ᵢⱼₖₗₘₙ")
        assert f"A{r.translate(sub)}{col.translate(sub)}" in body or f"A[{r}, {col}]" in body, line
