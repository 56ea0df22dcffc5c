"""symattn prove: the table, --json, exit codes; works from any directory."""

import json
import subprocess
import sys

import sympy as sp

import symattn as sa
from symattn.cli import main
from symattn.theorems import REGISTRY, load_library, theorem


def test_prove_json_from_another_directory(tmp_path):
    out = subprocess.run([sys.executable, "-m", "symattn", "prove", "--json", "column_row_transpose"],
                         cwd=tmp_path, capture_output=True, text=True, check=True)
    rows = json.loads(out.stdout)
    assert [r["name"] for r in rows] == ["column_row_transpose"]
    row = rows[0]
    assert {"name", "status", "general", "method", "seconds"} <= set(row)
    assert row["status"] == "proved" and row["general"] is True


def test_prove_table_has_a_row_per_theorem(capsys):
    assert main(["prove", "single_head_reduces_to_attention", "multihead_block_equals_head_sum"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert header == ["theorem", "statement", "verdict", "scope", "method", "seconds"]
    assert "single_head_reduces_to_attention" in out and "proved, general" in out
    assert "2 of 2 as expected" in out


def test_unknown_theorem_name_exits_2(capsys):
    assert main(["prove", "no_such_theorem"]) == 2
    assert "no theorem named no_such_theorem" in capsys.readouterr().err


def test_prove_exits_nonzero_when_a_theorem_is_not_proved(capsys):
    load_library()
    n = sa.dims("n")
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    theorem("_test_commutes", "AB = BA")(lambda: (A * B, B * A))
    try:
        assert main(["prove", "_test_commutes"]) == 1
        out = capsys.readouterr().out
        assert "refuted" in out and "counterexample" in out
    finally:
        del REGISTRY["_test_commutes"]


def test_help_texts_are_plain_text_without_markup(capsys):
    """The help of symattn and of every subcommand reads as plain text (no reST roles or literals)."""
    import pkgutil

    import pytest

    from symattn import commands

    names = [m.name for m in pkgutil.iter_modules(commands.__path__)]
    assert {"check", "codegen", "prove"} <= set(names)
    for argv in [["--help"]] + [[name, "--help"] for name in names]:
        with pytest.raises(SystemExit):
            main(argv)
        text = capsys.readouterr().out
        assert text.strip(), argv
        for markup in (":mod:", ":func:", ":class:", "``"):
            assert markup not in text, (argv, markup, text)


def test_every_subcommand_help_has_a_description_after_its_usage(capsys):
    """``symattn COMMAND --help`` says what the command does, not only its options."""
    import pkgutil

    import pytest

    from symattn import commands

    for name in (m.name for m in pkgutil.iter_modules(commands.__path__)):
        with pytest.raises(SystemExit):
            main([name, "--help"])
        paragraphs = capsys.readouterr().out.split("\n\n")
        assert len(paragraphs) > 2, name
        second = paragraphs[1].strip()
        assert not second.startswith(("positional arguments", "options")), (name, second)
        assert len(second.split()) >= 12, (name, second)


def test_check_reads_standard_input_with_a_format(monkeypatch, capsys):
    import io
    import pathlib

    text = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "papers" / "vaswani2017.tex").read_text()
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["check", "--format", "tex", "-", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["source"] == "<stdin>" and len(report["steps"]) == 3
    monkeypatch.setattr("sys.stdin", io.StringIO("Q: n x\n"))
    assert main(["check", "-"]) == 2
    assert capsys.readouterr().err.startswith("<stdin>:1:7: ParseError")
