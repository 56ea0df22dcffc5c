"""The LaTeX front end: the papers' subset parses; hostile input is rejected fast, nothing runs."""

import builtins
import time
from pathlib import Path

import pytest
import sympy.parsing.sympy_parser as sympy_parser

from symattn.derivation import ast, check_statements
from symattn.derivation.latex import parse_latex
from symattn.derivation.notation import parse_notation
from symattn.errors import DerivationError, ParseError

GUARD = 5.0  # seconds: a guard against hangs, not a benchmark (the requirement is ~1 s)


def test_transpose_marks_all_mean_transpose():
    for mark in (r"^{\mathsf{T}}", r"^\top", "^T", "^{T}", r"^\intercal"):
        (st,) = parse_latex(rf"$$ \mathbf{{K}}{mark} \mathbf{{Q}} = \mathbf{{A}} $$")
        assert isinstance(st.first, ast.Mul) and isinstance(st.first.factors[0], ast.T), mark


def test_papers_subset_parses():
    text = r"""
    % a comment
    $$ \mathbf{Q} \in M^{d_{k} \times n}, \quad \mathbf{K} \in \mathbb{R}^{d_{k} \times m} $$
    \[ \mathrm{softmax} \left( \frac{\mathbf{K}^\top \mathbf{Q}}{\sqrt{d_k}} \right) =
       \operatorname{Softmax}\left[ \frac{1}{\sqrt{d_{k}}} \mathbf{K}^{\mathsf{T}} \mathbf{Q} \right]
       \tag{1} \]
    """
    stmts = parse_latex(text)
    assert [type(s).__name__ for s in stmts] == ["Declare", "Declare", "Chain"]
    r = check_statements(stmts)
    assert r.ok and r.steps[0].method == "rewriting (A)"


def test_head_range_and_families_in_latex():
    stmts = parse_latex(r"$$ h = 1, \cdots, H $$ $$ \mathbf{W}_{h}^{O} \in M^{d \times e} $$")
    assert isinstance(stmts[0], ast.HeadRange) and stmts[0].index == "h"
    assert stmts[1].names[0] == ast.Name((0, 0), "W", ast.Name((0, 0), "h"), "O")


def test_text_outside_formulas_is_prose_and_skipped():
    stmts = parse_latex("$$ Q = Q $$\nThe next step, with \\textbf{bold} words and a comma.\n$$ K = K $$\n")
    assert [type(s).__name__ for s in stmts] == ["Chain", "Chain"]
    assert stmts[1].pos == (3, 4)


def test_unsupported_command_names_the_subset():
    with pytest.raises(ParseError, match=r"unsupported LaTeX command \\input"):
        parse_latex(r"$$ \input{/etc/passwd} $$")


def _hostile():
    deep = "$$ " + "(" * 500 + "Q" + ")" * 500 + " $$"
    braces = "$$ " + "{" * 500 + "Q" + "}" * 500 + " $$"
    return [
        ("deep parentheses", deep, "nested more than"),
        ("deep braces", braces, "nested more than"),
        ("deep frac", "$$ " + r"\frac{" * 300 + "Q" + "}{2}" * 300 + " $$", "nested more than"),
        ("huge exponent", "$$ Q^{999999999999999999} $$", "digits; at most 6"),
        ("power", "$$ Q^{1/0} $$", "denominator 0"),
        ("python", "$$ __import__('os').system('touch /tmp/pwned') $$", "line 1, column"),
        ("python eval", r"$$ \operatorname{eval}(\text{1+1}) $$", "is not a name"),
        ("unbalanced open", r"$$ \frac{Q}{ $$", "line 1"),
        ("unbalanced brace in word", r"$$ \mathbf{Q $$", "never closed|not closed"),
        ("unclosed formula", r"$$ Q = Q", "never closed"),
        ("1 MB line", "$$ " + "Q" * (1 << 20) + " $$", "characters long"),
        ("long line", "$$ " + "Q " * 5000 + " $$", "characters long"),
    ]


@pytest.mark.parametrize("name, text, message", _hostile(), ids=[h[0] for h in _hostile()])
def test_hostile_latex_is_rejected_quickly_and_nothing_runs(name, text, message, monkeypatch, tmp_path):
    def forbidden(*a, **k):
        raise AssertionError("user text reached an evaluator")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    monkeypatch.setattr(sympy_parser, "parse_expr", forbidden)
    start = time.perf_counter()
    with pytest.raises(DerivationError, match=message):
        check_statements(parse_latex(text))
    assert time.perf_counter() - start < GUARD


@pytest.mark.parametrize("text, message", [
    ("Q: d x n\nQ = __import__(os)\n", "line 2, column 5"),
    ("Q: d x n\nQ = Q" + "(" * 400 + "Q" + ")" * 400 + "\n", "nested more than"),
    ("Q: d x n\nQ = Q^99999999\n", "digits"),
    ("Q: " + "d" * (1 << 20) + " x n\n", "characters long"),
    ("exec('import os')\n", "unexpected character"),
])
def test_hostile_notation_is_rejected_quickly(text, message, monkeypatch):
    monkeypatch.setattr(builtins, "eval", lambda *a, **k: pytest.fail("eval called"))
    monkeypatch.setattr(builtins, "exec", lambda *a, **k: pytest.fail("exec called"))
    start = time.perf_counter()
    with pytest.raises(DerivationError, match=message):
        r = check_statements(parse_notation(text))
        raise DerivationError(r.steps[0].error)  # an ill-formed step carries the message
    assert time.perf_counter() - start < GUARD


@pytest.mark.parametrize("text, message", [
    (r"$$ \frac{Q}{ $$", r"line 1, column 13: found the end of the formula in the denominator of \\frac\n"
                         r"  expected an expression, then '}' closing the '{' at line 1, column 12"),
    ("$$ Q} $$", "line 1, column 5: found '}' that closes nothing"),
    ("$$ {Q $$", "line 1, column 6: found the end of the formula\n  expected '}' closing the '{' at line 1, "
                 "column 4"),
    (r"$$ \begin{bmatrix} Q & K \end{pmatrix} $$", r"\\end{pmatrix} closes \\begin{bmatrix}"),
    (r"\begin{align*} Q &= K", r"line 1, column 1: \\begin{align\*} is never closed"),
])
def test_unbalanced_latex_points_at_the_bracket(text, message):
    with pytest.raises(ParseError, match=message):
        parse_latex(text)


def test_family_declared_before_its_head_index_is_an_error():
    want = r"line 2, column 4: W_i\^Q was declared before the head index i"
    with pytest.raises(DerivationError, match=want):
        check_statements(parse_latex("$$ W_i^Q \\in M^{d \\times k} $$\n$$ i = 1, \\cdots, h $$\n"))


def test_checking_the_examples_never_hands_text_to_a_sympy_parser(monkeypatch):
    import sympy

    from symattn.commands.check import load

    real = sympy.sympify

    def no_strings(a, *args, **kw):
        assert not isinstance(a, str), f"sympify was given text: {a!r}"
        return real(a, *args, **kw)

    monkeypatch.setattr(sympy, "sympify", no_strings)
    monkeypatch.setattr(sympy_parser, "parse_expr", lambda *a, **k: pytest.fail("parse_expr called"))
    monkeypatch.setattr(builtins, "eval", lambda *a, **k: pytest.fail("eval called"))
    for name in ("seed000_multihead.tex", "seed002_multihead_row.tex", "seed000_multihead.txt"):
        path = Path(__file__).resolve().parents[2] / "examples" / name
        assert load(str(path), 20.0).ok, name
