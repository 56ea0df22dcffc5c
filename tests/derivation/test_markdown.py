r"""symattn check on Markdown notes and Jupyter notebooks: the formulas checked as a .tex file checks
them, every error at the line and column of the original file, code and escaped dollars not read."""

import contextlib
import io
import json
import pathlib
import re
import time

import pytest

from symattn.cli import main
from symattn.commands.check import file_format
from symattn.derivation.documents import check_latex
from symattn.derivation.markdown import check_markdown, markdown_to_latex
from symattn.derivation.notebook import check_notebook, read_notebook
from symattn.errors import DerivationError, ParseError

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ["seed000_multihead_corrupted.tex", "seed000_row_form.tex", "papers/ainslie2023_corrupted.tex",
            "papers/milakov2018_corrupted.tex"]  # the last: numbers and vectors, read by the scalar reader

TRANSPOSE_NOTE = r"""# Notes on transposes

Let $\mathbf{A} \in M^{n \times n}$ and $\mathbf{B} \in M^{n \times n}$; `$HOME` is code.

- a slip:
  $$ (\mathbf{A}\mathbf{B})^{\top} = \mathbf{A}^{\top}\mathbf{B}^{\top} $$
"""


HEADER = ["# A derivation, as notes", "", "Shell: `echo $HOME`, and a price of \\$5.", "",
          "```python", "cost = '$$ not math $$'  # $x$", "```", "", "    $$ also code $$", ""]


def as_note(tex: str) -> str:
    """A Markdown note made of a .tex derivation, line for line after a header (a heading, inline code,
    a code fence and an indented code block full of dollars): its comments become prose, its
    directives HTML comments."""
    out = list(HEADER)
    for line in tex.splitlines():
        if line.startswith("%:"):
            out.append(f"<!-- symattn:{line[2:]} -->")
        elif line.startswith("%"):
            out.append(line.lstrip("% ").replace("$", "\\$"))
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def verdicts(report) -> list:
    return [(s.number, s.lhs, s.relation, s.rhs, s.status) for s in report.steps]


@pytest.mark.parametrize("name", EXAMPLES)
def test_a_note_checks_like_its_tex_file(name):
    tex = (ROOT / "examples" / name).read_text(encoding="utf-8")
    note = as_note(tex)
    want = check_latex(tex, source=name)
    got = check_markdown(note, source="note.md")
    assert verdicts(got) == verdicts(want)
    assert [s.status for s in got.steps] != ["proved"] * len(got.steps) or "corrupted" not in name
    assert [(s.pos[0] - len(HEADER), s.pos[1]) for s in got.steps] == [s.pos for s in want.steps]


def test_a_step_position_is_in_the_markdown_file():
    r = check_markdown(TRANSPOSE_NOTE, source="t.md")
    (step,) = r.steps
    assert step.status == "refuted" and step.pos == (6, 36)
    assert TRANSPOSE_NOTE.splitlines()[5][35] == "="


@pytest.mark.parametrize("note, found, at", [
    ("# 注\n\nここで$\\nabla_{a} b$です。\n", "\\nabla", (3, 5)),
    ("Text\n\n```\n$ $\n```\n\n$$ \\mathbf{Q} \\in M^{n \\times n}\n", "never closed", (7, 1)),
    ("> quoted\n> $$ \\mathbf{Q} \\in M^{n \\times n},\n>  \\mathbf{K} \\nabla \\mathbf{Q} $$\n", "\\nabla", (3, 15)),
    ("a\n\n    code\n\nb\n\\begin{align*} x &= \\max y \\end{align*}\n", "found 'y'", (6, 26)),
    ("<!-- symattn: convention: diagonal -->\n", "diagonal", (1, 27)),
])
def test_errors_point_into_the_markdown(note, found, at):
    with pytest.raises(DerivationError) as info:
        check_markdown(note)
    assert found in str(info.value) and (info.value.line, info.value.column) == at


def test_code_is_not_read():
    note = ("```\n$$ \\unknown $$\n```\n~~~tex\n$x$\n~~~\n`$y$` and ``a ` $z$ `` b\n\n    $w$\n\n"
            "<code>$v$</code> <pre>\n$u$\n</pre> <!-- $t$ --> <https://x.org/$s$>\n")
    tex = markdown_to_latex(note)
    assert "$" not in tex and tex.count("\n") == note.count("\n")


def test_quoted_fences_and_link_addresses_are_not_read():
    assert markdown_to_latex("> ```\n> echo $HOME $PATH\n> ```\n$x$\n") == "\n\n\n$x$\n"
    assert markdown_to_latex("> ```math\n> A = B\n> ```\n") == "  $$\n  A = B\n  $$\n"
    assert markdown_to_latex("[a](https://x.org/?q=$1) and $y$\n").strip() == "$y$"


def test_escaped_and_lone_dollars_are_not_math():
    assert markdown_to_latex("costs \\$5 or \\$6, and a lone $ is a dollar\n").strip() == ""
    assert markdown_to_latex("$ x $ is math, as MathJax reads it\n") == "$ x $\n"
    assert markdown_to_latex("a \\$ b $x$ c\n") == "       $x$\n"
    assert markdown_to_latex("a $x\n\ny$\n").strip() == ""  # a formula does not cross a blank line


def test_a_list_item_keeps_its_indented_display():
    note = "1. scores:\n\n    $$ \\mathbf{Q} \\in M^{n \\times n} $$\n\nnot code:\n\n    $$ x $$\n"
    assert markdown_to_latex(note).splitlines() == ["", "", "    $$ \\mathbf{Q} \\in M^{n \\times n} $$", "", "", "",
                                                   ""]


def test_formulas_keep_their_columns_and_comments_are_dropped():
    note = "ここで $$ a % comment $$ と \\(b\\), \\[c\\]\n> \\begin{align*} x\n> &= y \\end{align*}\n```math\nA\n```\n"
    assert markdown_to_latex(note).splitlines() == [
        "    $$ a           $$   \\(b\\)  \\[c\\]", "  \\begin{align*} x", "  &= y \\end{align*}", "$$", "A", "$$"]


@pytest.mark.parametrize("note, why", [
    ("<!-- symattn convention: row -->\n", "not a directive"),
    ("<!-- symattn:\nconvention: row -->\n", "not a directive"),
    ("<!-- symattn: convention: row --> $x$\n", "on its line"),
    ("```\ncode\n", "never closed"),
    ("<!-- forgot\n", "never closed"),
])
def test_mistakes_in_the_markdown_are_refused(note, why):
    with pytest.raises(ParseError, match=why):
        markdown_to_latex(note)


def test_a_directive_becomes_a_tex_directive_in_place():
    assert markdown_to_latex("<!--symattn:score: dot-->\n") == "          %:score: dot\n"
    assert markdown_to_latex("<!-- just a comment $x$ -->\n") == "\n"


def test_many_unclosed_openers_are_read_in_linear_time():
    start = time.perf_counter()
    for text in ("` " * 100_000, "\\[ " * 100_000, "<code> " * 50_000, "\\( a " * 50_000):
        assert markdown_to_latex(text).strip() == ""
    assert markdown_to_latex("$a " * 100_001).count("$") == 100_000  # pairs, and a lone dollar
    assert time.perf_counter() - start < 20


def test_the_example_of_the_docs_checks_as_shown():
    doc = (ROOT / "docs" / "markdown.md").read_text(encoding="utf-8")
    note = re.search(r"````markdown\n(.*?)````\n", doc, re.S).group(1)
    r = check_markdown(note, source="notes.md")
    assert r.ok and [(s.status, s.pos) for s in r.steps] == [("proved", (17, 2))]
    head, w = "\\operatorname{head}_{h}", "\\mathbf{W}_{h}^{O}"
    slip = note.replace(f"{head} {w}\n", f"{w} {head}\n")
    (step,) = check_markdown(slip).steps
    assert step.status == "ill-formed" and step.diagnosis is not None
    code = re.findall(r"```python\n(.*?)```", doc, re.S)[-1]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {})  # the documentation's own example, not user input
    assert out.getvalue() == "['proved'] (3, 33)\n'" + " " * 23 + "$y$\\n'\n"


# notebooks ---------------------------------------------------------------------------------------


def notebook(*cells) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": kind, "metadata": {}, "source": src.splitlines(keepends=True)} for kind, src in cells]})


NOTEBOOK = notebook(
    ("markdown", "# Transposes\n\nLet $\\mathbf{A} \\in M^{n \\times n}$ and $\\mathbf{B} \\in M^{n \\times n}$."),
    ("code", "import numpy as np\nprint('$$ \\\\unknown $$')"),
    ("markdown", "The slip:\n$$ (\\mathbf{A}\\mathbf{B})^{\\top} = \\mathbf{A}^{\\top}\\mathbf{B}^{\\top} $$\n"),
    ("raw", "$$ \\unknown $$"),
    ("markdown", "And the rule:\n\n$$ (\\mathbf{A}\\mathbf{B})^{\\top} = \\mathbf{B}^{\\top}\\mathbf{A}^{\\top} $$"),
)


def test_a_notebook_reads_its_markdown_cells_in_order():
    cells = read_notebook(NOTEBOOK)
    assert [c for c, _ in cells.starts] == [1, 3, 5]
    assert cells.locate(5) == (3, 2)
    r = check_notebook(NOTEBOOK, source="nb.ipynb")
    assert [s.status for s in r.steps] == ["refuted", "proved"]
    assert cells.locate(r.steps[0].pos[0]) == (3, 2) and cells.locate(r.steps[1].pos[0]) == (5, 3)
    assert any("cell 3 at line 4" in n for n in r.notes)


def test_a_notebook_error_names_its_cell():
    nb = notebook(("markdown", "Let $\\mathbf{A} \\in M^{n \\times n}$."), ("code", "x = 1"),
                  ("markdown", "Then:\n$$ \\mathbf{A} \\nabla \\mathbf{A} $$"))
    with pytest.raises(DerivationError) as info:
        check_notebook(nb)
    assert (info.value.cell, info.value.line, info.value.column) == (3, 2, 15)
    assert str(info.value).startswith("cell 3, line 2, column 15: unsupported LaTeX command \\nabla")
    with pytest.raises(ParseError) as info:  # an error of the Markdown itself
        check_notebook(notebook(("code", ""), ("markdown", "ok\n$$ never closed")))
    assert (info.value.cell, info.value.line, info.value.column) == (2, 2, 1)


@pytest.mark.parametrize("text, why", [
    ("{\"cells\": [", "JSON is malformed"),
    ("[1, 2]", "JSON is a list"),
    ("{\"worksheets\": []}", "format 3"),
    ("{\"cells\": {}}", "not a list"),
    ("{\"cells\": [3]}", "cell 1 of the notebook is a int"),
    ("{\"cells\": [{\"cell_type\": \"markdown\", \"source\": 7}]}", "\"source\" that is a int"),
])
def test_a_malformed_notebook_is_refused_with_a_reason(text, why):
    with pytest.raises(ParseError, match=why):
        check_notebook(text)


def test_a_notebook_without_markdown_cells_says_so():
    r = check_notebook(notebook(("code", "$x$")))
    assert r.steps == [] and "no markdown cells" in r.notes[-1]


# the command line --------------------------------------------------------------------------------


def test_file_formats_by_suffix():
    assert [file_format(p) for p in ("a.md", "A.MARKDOWN", "n.IPYNB", "x.tex", "x.txt")] == [
        "markdown", "markdown", "notebook", "tex", "notation"]
    assert file_format("a.md", "tex") == "tex"


def test_cli_exit_codes(tmp_path, capsys):
    good = TRANSPOSE_NOTE.replace("\\mathbf{A}^{\\top}\\mathbf{B}^{\\top}", "\\mathbf{B}^{\\top}\\mathbf{A}^{\\top}")
    (tmp_path / "good.markdown").write_text(good, encoding="utf-8")
    (tmp_path / "bad.md").write_text(TRANSPOSE_NOTE, encoding="utf-8")
    (tmp_path / "notes.txt").write_text(TRANSPOSE_NOTE, encoding="utf-8")
    (tmp_path / "broken.md").write_text("ok\n\n  $$ \\nabla $$\n", encoding="utf-8")
    (tmp_path / "nb.ipynb").write_text(NOTEBOOK, encoding="utf-8")
    (tmp_path / "torn.ipynb").write_text(NOTEBOOK[:50], encoding="utf-8")
    assert main(["check", str(tmp_path / "good.markdown")]) == 0
    assert main(["check", str(tmp_path / "bad.md")]) == 1
    assert main(["check", "--format", "markdown", str(tmp_path / "notes.txt")]) == 1
    assert main(["check", str(tmp_path / "nb.ipynb")]) == 1
    capsys.readouterr()
    assert main(["check", str(tmp_path / "broken.md")]) == 2
    assert f"{tmp_path / 'broken.md'}:3:6: ParseError" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "torn.ipynb")]) == 2
    assert "not a notebook: the JSON is malformed" in capsys.readouterr().err
    nb = notebook(("code", ""), ("markdown", "a\n  $$ \\nabla $$"))
    (tmp_path / "nabla.ipynb").write_text(nb, encoding="utf-8")
    assert main(["check", "--json", str(tmp_path / "nabla.ipynb")]) == 2
    captured = capsys.readouterr()
    assert f"{tmp_path / 'nabla.ipynb'}: cell 2, line 2, column 6: ParseError: " in captured.err
    err = json.loads(captured.out)["error"]
    assert (err["cell"], err["line"], err["column"]) == (2, 2, 6)
