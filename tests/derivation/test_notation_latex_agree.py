"""Both front ends read an expression the same way: render a syntax tree as plain notation
and as LaTeX, parse each rendering back, and compare (Hypothesis draws the trees)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from symattn.derivation import ast
from symattn.derivation.grammar import VOCABULARY
from symattn.derivation.latex import LatexParser, tokenize_latex
from symattn.derivation.notation import NotationParser
from symattn.derivation.tokens import tokenize_plain

P = (0, 0)

names = st.builds(
    lambda base, sub, sup: ast.Name(P, base, sub, sup),
    st.sampled_from(["Q", "K", "V", "W", "X", "head"]),
    st.one_of(st.none(), st.builds(lambda v: ast.Num(P, v), st.integers(1, 3)),
              st.sampled_from([ast.Name(P, "h"), ast.Name(P, "model"), ast.Name(P, "k")]),
              st.just(ast.Index(P, ast.Name(P, "h"), "+", ast.Num(P, 1)))),
    st.one_of(st.none(), st.sampled_from(["Q", "K", "O", "QX"])),
)
leaves = st.one_of(names, names, st.builds(lambda v: ast.Num(P, v), st.integers(1, 99)))


def grouped(x):
    return ast.Group(P, x)


def extend(inner):
    factor = st.one_of(
        inner.filter(lambda n: not isinstance(n, (ast.Add, ast.Sum, ast.Div, ast.Num)))
        .map(lambda x: ast.T(P, x)),
        inner.filter(lambda n: not isinstance(n, ast.Num)),
        inner.map(grouped),
        st.builds(lambda x, ax: ast.Call(P, ast.Name(P, "Softmax"), (x,), ax), inner,
                  st.sampled_from([None, "row", "col"])),
        st.builds(lambda a, b, c: ast.Call(P, ast.Name(P, "Attention"), (a, b, c)), inner, inner, inner),
        st.builds(lambda r: ast.Block(P, r), st.lists(st.lists(names, min_size=2, max_size=2).map(tuple),
                                                      min_size=1, max_size=2).map(tuple)),
    )
    product = st.lists(factor.filter(lambda n: not isinstance(n, (ast.Add, ast.Sum, ast.Div))),
                       min_size=2, max_size=3).map(lambda fs: ast.Mul(P, tuple(fs)))
    return st.one_of(
        factor, product,
        st.builds(lambda a, b: ast.Add(P, ((1, a), (-1, b))), product | factor, product | factor)
        .map(grouped),
        st.builds(lambda a: ast.Div(P, a, ast.Sqrt(P, ast.Name(P, "d", ast.Name(P, "k")))), product | factor)
        .map(grouped),
        st.builds(lambda b: ast.Sum(P, "h", ast.Name(P, "H"), b), product | factor).map(grouped),
    )


exprs = st.recursive(leaves, extend, max_leaves=8)


def norm(n):
    """Forget what the renderings cannot keep: parentheses, nesting of products and sums."""
    if isinstance(n, ast.Group):
        return norm(n.body)
    if isinstance(n, ast.Call) and n.target.base not in VOCABULARY and len(n.args) == 1:
        return norm(ast.Mul(n.pos, (n.target, n.args[0])))
    if isinstance(n, ast.Mul):
        out = []
        for f in n.factors:
            f = norm(f)
            out.extend(f.factors if isinstance(f, ast.Mul) else [f])
        return ast.Mul(P, tuple(out))
    if isinstance(n, ast.Add):
        return ast.Add(P, tuple((s, norm(t)) for s, t in n.terms))
    if isinstance(n, ast.T):
        return ast.T(P, norm(n.arg))
    if isinstance(n, ast.Div):
        return ast.Div(P, norm(n.num), norm(n.den))
    if isinstance(n, ast.Sqrt):
        return ast.Sqrt(P, norm(n.arg))
    if isinstance(n, ast.Sum):
        return ast.Sum(P, n.index, n.upper, norm(n.body))
    if isinstance(n, ast.Call):
        return ast.Call(P, n.target, tuple(norm(a) for a in n.args), n.axis)
    if isinstance(n, ast.Block):
        return ast.Block(P, tuple(tuple(norm(c) for c in r) for r in n.rows))
    return n


def read_notation(text):
    p = NotationParser(tokenize_plain(text))
    node = p.expr()
    assert p.at("nl"), text
    return node


def read_latex(text):
    p = LatexParser(tokenize_latex(text, math=True))
    node = p.expr()
    assert p.at("eof"), text
    return node


@settings(max_examples=150, deadline=None)
@given(exprs)
def test_notation_and_latex_renderings_read_back_the_same(node):
    want = norm(node)
    assert norm(read_notation(node.text())) == want, node.text()
    assert norm(read_latex(node.latex())) == want, node.latex()
