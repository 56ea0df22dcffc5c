"""The field corpus (``examples/field/``) through ``symattn check``.

Derivations from papers the bundled examples do not cover, typeset as their papers typeset them,
each with a corrupted copy carrying one slip (``EXPECTED.toml`` names its line). A file either
matches its expectation (the original passes; the corrupted copy fails first at its slip's line,
refuted with a certificate or ill-formed by a shape error) or is refused at parse with a clear
message. ``REFUSED`` lists the refused ones as data, with the line and the start of the message: a
file that the reader learns to read must leave the list and then match its expectation. A file that
is neither (a true step refuted or unknown, a false step proved, a failure at another line) fails
here: that is a misreading, to be reported, not hidden.

``benchmarks/field_numeric.py`` checks every expectation numerically, without the checker.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomllib

from symattn.cli import main

FIELD = Path(__file__).resolve().parents[2] / "examples" / "field"
with open(FIELD / "EXPECTED.toml", "rb") as _f:
    EXPECTED = tomllib.load(_f)

# file -> (line, start of the message) of its refusal at parse. Shrinks as the reader grows.
REFUSED: dict[str, tuple[int, str]] = {
    'ba2016.tex': (5, 'the square root of a matrix'),
    'ba2016_corrupted.tex': (5, 'the square root of a matrix'),
    'bahdanau2015.tex': (8, "found '_'"),
    'bahdanau2015_corrupted.tex': (8, "found '_'"),
    'beltagy2020.tex': (7, 'the file uses \\max or \\leftarrow, so it is re'),
    'beltagy2020_corrupted.tex': (7, 'the file uses \\max or \\leftarrow, so it is re'),
    'child2019.tex': (5, 'the file uses \\max or \\leftarrow, so it is re'),
    'child2019_corrupted.tex': (5, 'the file uses \\max or \\leftarrow, so it is re'),
    'choromanski2021.tex': (8, 'unsupported LaTeX command \\leftrightarrow'),
    'choromanski2021_corrupted.tex': (8, 'unsupported LaTeX command \\leftrightarrow'),
    'dai2019.tex': (5, "found '_'"),
    'dai2019_corrupted.tex': (5, "found '_'"),
    'dao2024.tex': (5, "found ','"),
    'dao2024_corrupted.tex': (5, "found ','"),
    'deepseek2024.tex': (8, 'a double subscript in a subscript (A_{t,:}) i'),
    'deepseek2024_corrupted.tex': (8, 'a double subscript in a subscript (A_{t,:}) i'),
    'elhage2021_one_layer.tex': (9, "found 'H'"),
    'elhage2021_one_layer_corrupted.tex': (9, "found 'H'"),
    'kitaev2020.tex': (6, 'unsupported LaTeX command \\geq: inequalities '),
    'kitaev2020_corrupted.tex': (6, 'unsupported LaTeX command \\geq: inequalities '),
    'lin2017.tex': (5, "found ','"),
    'lin2017_corrupted.tex': (5, "found ','"),
    'luong2015.tex': (8, "found 'h' as a value of the cases environment"),
    'luong2015_corrupted.tex': (8, "found 'h' as a value of the cases environment"),
    'parikh2016.tex': (8, "found '_'"),
    'parikh2016_corrupted.tex': (8, "found '_'"),
    'peng2023.tex': (7, 'unknown symbol a_t-1'),
    'peng2023_corrupted.tex': (7, 'unknown symbol a_t-1'),
    'press2022.tex': (10, "found 'h'"),
    'press2022_corrupted.tex': (10, "found 'h'"),
    'rabe2021.tex': (5, '\\le is not read: an inequality is not part of'),
    'rabe2021_corrupted.tex': (5, '\\le is not read: an inequality is not part of'),
    'ramsauer2021.tex': (9, 'unsupported LaTeX command \\nabla'),
    'ramsauer2021_corrupted.tex': (9, 'unsupported LaTeX command \\nabla'),
    'shaw2018.tex': (6, 'the file uses \\max or \\leftarrow, so it is re'),
    'shaw2018_corrupted.tex': (6, 'the file uses \\max or \\leftarrow, so it is re'),
    'shazeer2020.tex': (10, 'a Kronecker product of three factors'),
    'shazeer2020_corrupted.tex': (10, 'a Kronecker product of three factors'),
    'su2021_complex.tex': (6, 'the superscript ^* can only label a name'),
    'su2021_complex_corrupted.tex': (6, 'the superscript ^* can only label a name'),
    'sun2023.tex': (6, "found '|'"),
    'sun2023_corrupted.tex': (6, "found '|'"),
    'tsai2019.tex': (7, "found '_'"),
    'tsai2019_corrupted.tex': (7, "found '_'"),
    'xiong2020.tex': (5, 'a double subscript in a subscript (A_{t,:}) i'),
    'xiong2020_corrupted.tex': (5, 'a double subscript in a subscript (A_{t,:}) i'),
    'yang2024.tex': (7, 'unsupported LaTeX command \\prod: products ove'),
    'yang2024_corrupted.tex': (7, 'unsupported LaTeX command \\prod: products ove'),
    'zhang2019.tex': (4, 'an expression on its own is neither a declara'),
    'zhang2019_corrupted.tex': (4, 'an expression on its own is neither a declara'),
}


def run_check(path: Path, capsys):
    rc = main(["check", "--json", str(path)])
    return rc, json.loads(capsys.readouterr().out)


def test_corpus_is_complete():
    stems = {Path(n).stem.removesuffix("_corrupted") for n in EXPECTED}
    assert len(stems) >= 20
    on_disk = {p.name for p in FIELD.glob("*.tex")}
    assert on_disk == set(EXPECTED), on_disk ^ set(EXPECTED)
    for n, e in EXPECTED.items():
        assert e["source"]
        if n.endswith("_corrupted.tex"):
            assert e["passes"] is False and e["slip_line"] >= 1 and e["slip"]
            good = (FIELD / n.replace("_corrupted", "")).read_text(encoding="utf-8").split("\n")
            bad = (FIELD / n).read_text(encoding="utf-8").split("\n")
            assert len(good) == len(bad)
            diff = [k + 1 for k, (a, b) in enumerate(zip(good, bad)) if a != b and k > 0]
            assert diff == [e["slip_line"]], (n, diff)
            assert f"slip at line {e['slip_line']}" in bad[0] and "slip: " in bad[0]
        else:
            assert e["passes"] is True
    assert set(REFUSED) <= set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_field_file(name, capsys):
    exp = EXPECTED[name]
    rc, report = run_check(FIELD / name, capsys)
    if name in REFUSED:
        line, start = REFUSED[name]
        err = report.get("error")
        assert rc == 2 and err, f"{name} is no longer refused: remove it from REFUSED ({report.get('ok')})"
        assert err["message"].startswith(start) and err["line"] == line, err
        assert err.get("expected") or len(err["message"]) > 10, err
        return
    assert "error" not in report, report["error"]
    steps = report["steps"]
    if exp["passes"]:
        bad = [(s["line"], s["status"], s.get("error", "")) for s in steps if s["status"] != "proved"]
        assert rc == 0 and report["ok"] and steps, f"a TRUE step not proved (misreading?): {bad}"
        return
    failing = [s for s in steps if s["status"] != "proved"]
    assert rc == 1 and failing, "the FALSE step was proved (misreading)"
    first = failing[0]
    assert first["line"] == exp["slip_line"], (first["line"], exp["slip_line"], first["status"])
    if first["status"] == "refuted":
        assert first["counterexample"]["certificate"], first
    else:
        error = first.get("error", "")
        assert first["status"] == "ill-formed" and ("cannot multiply" in error or "shape" in error), first
