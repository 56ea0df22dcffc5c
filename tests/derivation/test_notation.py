"""The plain notation: statements, and errors that name the line, the column and what fits."""

import re

import pytest

from symattn.derivation import ast, check_statements, parse_notation
from symattn.errors import ParseError


def test_statements_of_the_notation():
    stmts = parse_notation("score: f\nW_h^Q: d_k x d_model for h in 1..H\nhead_h := Attention(Q, K, V)\n"
                           "A = B\n  = C\n")
    assert [type(s).__name__ for s in stmts] == ["ScoreDecl", "Declare", "Define", "Chain"]
    assert stmts[1].names[0] == ast.Name((0, 0), "W", ast.Name((0, 0), "h"), "Q")
    assert len(stmts[3].links) == 2


def test_syntax_error_names_line_column_and_expectation():
    want = (r"line 2, column 10: found the end of the line in the arguments of Softmax\n"
            r"  expected ',' or '\)' closing the '\(' at line 2, column 8")
    with pytest.raises(ParseError, match=want):
        parse_notation("Q: d x n\nSoftmax(Q\n")


def test_unknown_symbol_is_reported_with_the_declared_names():
    r = check_statements(parse_notation("Q: d x n\nQ = Q R\n"))
    (s,) = r.steps
    assert s.status == "ill-formed"
    assert "line 2, column 7: unknown symbol R" in s.error and "expected a declared name (Q, d, n)" in s.error


def test_juxtaposed_names_get_a_hint():
    r = check_statements(parse_notation("Q: d x d\nW: d x d\nQ = QW\n"))
    assert "a product is written with a space: Q W" in r.steps[0].error


def test_shape_misfit_names_both_factors_and_their_shapes():
    r = check_statements(parse_notation("Q: d_k x n\nK: d_k x m\nQ^T Q = K Q\n"))
    err = r.steps[0].error
    assert "line 3, column 11: cannot multiply K (d_k × m) by Q (d_k × n)" in err
    assert "a transpose missing?" in err


def test_ellipsis_pattern_must_be_readable():
    r = check_statements(parse_notation("X_h: d x n for h in 1..H\nX_1 = [X_1; ...; X_1^T]\n"))
    assert "cannot read the pattern from X_1 to X_1^T" in r.steps[0].error


@pytest.mark.parametrize("text, message", [
    ("Q: d x n\nQ = Q^2\n", "the exponent \\^2 is not supported"),
    ("Q: d x n\nQ = Q_1_2\n", "a second subscript"),
    ("convention: diagonal\n", "unknown convention 'diagonal'"),
    ("Q: d x n\nQ = sum_{h=0}^{H} Q\n", "the sum starts at '0'"),
])
def test_malformed_notation_is_rejected(text, message):
    with pytest.raises(ParseError, match=message):
        parse_notation(text)


def _bomb(levels):
    names = [f"A{k}" for k in range(levels + 1)]
    lines = ["Q: d x d", f"{names[0]} := Q Q"]
    lines += [f"{b} := {a} {a}" for a, b in zip(names, names[1:])]
    return "\n".join(lines + [f"Q = {names[-1]}"]) + "\n"


@pytest.mark.parametrize("text, message", [
    (_bomb(30), r"line 12, column 8: the expression grows beyond 5000 terms"),  # at A11 := A10 A10
    ("Q: d x n\nA := A\n", "line 2, column 6: unknown symbol A"),
    ("Q: d x n\nQ = Q" + "^T" * 1500 + "\n", "more than 48 superscripts"),
    ("Q: d x d\nQ" + " = Q" * 900 + "\n", "more than 200 steps"),
], ids=["definition bomb", "self reference", "superscript chain", "step flood"])
def test_expression_bombs_are_rejected_quickly(text, message):
    import time

    from symattn.errors import DerivationError

    start = time.perf_counter()
    with pytest.raises(DerivationError, match=message):
        check_statements(parse_notation(text))
    assert time.perf_counter() - start < 5.0  # a guard against hangs, not a benchmark


# --- the score setting: every documented value can be written -------------------

SCORED = "Q: d_k x n\nK, V: d_k x m\nAttention(Q, K, V) = V softmax(K^T Q / sqrt(d_k))\n"


@pytest.mark.parametrize("score, proved", [("scaled_dot", True), ("dot", False), ("f", False)])
def test_every_documented_score_reads_in_the_notation_in_latex_and_from_python(score, proved):
    """scaled_dot, the documented default, was a ParseError ("found '_'") in all three."""
    import symattn as sa
    from symattn.derivation.documents import check_latex

    plain = check_statements(parse_notation(f"score: {score}\n" + SCORED))
    latex = check_latex(f"%: score: {score}\n\\[Q \\in M^{{d_k \\times n}}, K \\in M^{{d_k \\times m}}, "
                        f"V \\in M^{{d_k \\times m}}\\]\n\\[\\mathrm{{Attention}}(Q, K, V) = V \\mathrm{{softmax}}"
                        f"(K^T Q / \\sqrt{{d_k}})\\]\n")
    d = sa.Derivation(score=score).declare("Q", "d_k", "n").declare("K, V", "d_k", "m")
    python = d.chain("Attention(Q, K, V)", "V softmax(K^T Q / sqrt(d_k))").check()
    for report in (plain, latex, python):
        assert [s.status == "proved" for s in report.steps] == [proved], report.steps
    assert check_statements(parse_notation(SCORED)).steps[0].status == "proved"  # scaled_dot is the default


@pytest.mark.parametrize("score, message", [
    ("softmax", "softmax is a word of the notation, not a name for the score function"),
    ("Attention", "Attention is a word of the notation"),
    ("exp", "exp is a word of the notation"),
    ("scaled", "the score scaled is not one symattn knows"),
    ("scaled_Dot", "the score scaled_Dot is not one symattn knows"),
    ("f_1", "the score f_1 is not one symattn knows (a score function's name is one word)"),
])
def test_a_score_that_is_a_word_of_the_notation_or_not_one_word_is_refused(score, message):
    """Derivation(score="softmax") became an uninterpreted function named softmax."""
    import symattn as sa

    with pytest.raises(ParseError, match=re.escape(message)) as info:
        parse_notation(f"score: {score}\n")
    assert "scaled_dot" in info.value.expected
    with pytest.raises(ParseError, match=re.escape(f"Derivation(score={score!r}): {message}")):
        sa.Derivation(score=score)
