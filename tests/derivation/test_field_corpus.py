"""The field corpus (``examples/field/``) through ``symattn check``.

Derivations from papers the bundled examples do not cover, typeset as their papers typeset them,
each with a corrupted copy carrying one slip (``EXPECTED.toml`` names its line). A file either
matches its expectation (the original passes; the corrupted copy fails first at its slip's line,
refuted with a certificate or ill-formed by a shape error) or is refused at parse with a clear
message. ``REFUSED`` lists the refused ones as data, with the line and the start of the message: a
file that the reader learns to read must leave the list and then match its expectation.

``UNREAD`` lists the files that are read but not understood: a step the reader cannot make sense of
(ill-formed: a name it does not know, a shape it gets from a notation it misreads), or unknown, or, for
a corrupted copy, a failure at the slip's line where its original fails too (the reader's failure,
not the slip's). Each is pinned with its line, status and the start of its message, as a refusal is.
What is never pinned: a true step of an original refuted, or a false step proved. Those fail here:
they are misreadings, to be fixed, not hidden.

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
    'child2019.tex': (6, 'a family (a(x_i, S_i))_{i \\in ...}, one value'),
    'child2019_corrupted.tex': (6, 'a family (a(x_i, S_i))_{i \\in ...}, one value'),
    'dao2024.tex': (7, 'a_{t:s}^{\\times}, the product of the members '),
    'dao2024_corrupted.tex': (7, 'a_{t:s}^{\\times}, the product of the members '),
    'deepseek2024.tex': (8, 'unknown symbol q_t,i^C (a member of a family '),
    'deepseek2024_corrupted.tex': (8, 'unknown symbol q_t,i^C (a member of a family '),
    'dosovitskiy2021.tex': (6, 'x^{1}_... indexed on top is not read: a membe'),
    'dosovitskiy2021_corrupted.tex': (6, 'x^{1}_... indexed on top is not read: a membe'),
    'jiang2023.tex': (7, 'the entry M_ij of the mask M := {0 if i-W <= '),
    'jiang2023_corrupted.tex': (7, 'the entry M_ij of the mask M := {0 if i-W <= '),
    'kitaev2020.tex': (6, 'unsupported LaTeX command \\supseteq: an inclu'),
    'kitaev2020_corrupted.tex': (6, 'unsupported LaTeX command \\supseteq: an inclu'),
    'rabe2021.tex': (5, 'k_{i} \\in \\mathbb{R}^{d} declares a family of'),
    'rabe2021_corrupted.tex': (5, 'k_{i} \\in \\mathbb{R}^{d} declares a family of'),
    'tsai2019.tex': (7, "M(x_q, S_{x_k}) after ';' is not a name: a pa"),
    'tsai2019_corrupted.tex': (7, "M(x_q, S_{x_k}) after ';' is not a name: a pa"),
    'xiong2020.tex': (9, 'MultiHeadAtt is not defined by the file and i'),
    'xiong2020_corrupted.tex': (9, 'MultiHeadAtt is not defined by the file and i'),
    'yang2024.tex': (6, 'a space whose entries lie in (0,1) is not rea'),
    'yang2024_corrupted.tex': (6, 'a space whose entries lie in (0,1) is not rea'),
    'zhai2021.tex': (11, "(softmax(K) ∘ V)_{t'}: one vector of a result"),
    'zhai2021_corrupted.tex': (11, "(softmax(K) ∘ V)_{t'}: one vector of a result"),
}


# file -> (line, status, start of the message) of the first step the reader gets wrong (see above).
UNREAD: dict[str, tuple[int, str, str]] = {
    'peng2021.tex': (10, 'ill-formed', 'the left side phi(x) phi(y) is ill-formed: li'),
    'peng2021_corrupted.tex': (10, 'ill-formed', 'the left side phi(x) phi(y) is ill-formed: li'),
    'qin2022_corrupted.tex': (11, 'unknown', 'the sides differ at the values below, and the'),
}


# seconds per step, twice the default: the budget is wall-clock, and a step the entrywise method proves in
# 5 s on an idle machine must not come out "unknown" on a loaded one
BUDGET = "40"


def run_check(path: Path, capsys):
    rc = main(["check", "--json", "--budget", BUDGET, str(path)])
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
    assert set(REFUSED) <= set(EXPECTED) and set(UNREAD) <= set(EXPECTED)
    assert not set(REFUSED) & set(UNREAD)
    for name, (_, status, _) in UNREAD.items():  # a refuted true step is never pinned
        assert status in ("ill-formed", "unknown") or "_corrupted" in name, (name, status)


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
    failing = [s for s in steps if s["status"] != "proved"]
    if name in UNREAD:
        line, status, start = UNREAD[name]
        assert failing, f"{name} is no longer unread: remove it from UNREAD"
        first = failing[0]
        said = first.get("error") or (first.get("diagnosis") or {}).get("slip", "") or ""
        assert (first["line"], first["status"]) == (line, status) and said.startswith(start), first
        if not exp["passes"]:  # whatever the reader gets wrong, the slipped step is never proved
            assert not any(s["line"] == exp["slip_line"] and s["status"] == "proved" for s in steps)
        else:
            assert not any(s["status"] == "refuted" for s in steps), "a TRUE step refuted (misreading)"
        return
    if exp["passes"]:
        bad = [(s["line"], s["status"], s.get("error", "")) for s in steps if s["status"] != "proved"]
        assert rc == 0 and report["ok"] and steps, f"a TRUE step not proved (misreading?): {bad}"
        return
    assert rc == 1 and failing, "the FALSE step was proved (misreading)"
    first = failing[0]
    assert first["line"] == exp["slip_line"], (first["line"], exp["slip_line"], first["status"])
    original = name.replace("_corrupted", "")
    assert not (original in UNREAD and UNREAD[original][0] == first["line"]), (
        f"{name} fails at its slip's line, but so does its original: the reader's failure, pin it in UNREAD")
    if first["status"] == "refuted":
        assert first["counterexample"]["certificate"], first
    else:
        error = first.get("error", "")
        assert first["status"] == "ill-formed" and ("cannot multiply" in error or "shape" in error), first
