"""Derivations from papers, typeset as the papers typeset them, through ``symattn check``.

Every ``examples/papers/NAME.tex`` must pass: each step proved. Its copy ``NAME_corrupted.tex``
differs in one formula line and names its slip in its first line (``slip: ...``); the check must
fail at that line, with a certified counterexample (or a shape error, for a slip that breaks the
shapes), and the diagnosis must name the slip. A file that the checker cannot read yet is marked
``xfail(strict=True)`` with the construct it is missing, so that reading it turns the mark into a
failure to be removed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from symattn.cli import main

PAPERS = Path(__file__).resolve().parents[2] / "examples" / "papers"
NAMES = sorted(p.stem for p in PAPERS.glob("*.tex") if not p.stem.endswith("_corrupted"))

# The construct each file needs that the reader or the engine does not have yet.
MISSING = {
}

# Files the reader reads whole, whose original still has a step the engine leaves unknown
# (the corrupted copy fails at its slip as required).
UNPROVED: dict[str, str] = {}

# Corrupted copies the reader reads whose false step the engine cannot refute yet.
UNREFUTED: dict[str, str] = {}


def run_check(path: Path, capsys):
    rc = main(["check", "--json", str(path)])
    out = capsys.readouterr().out
    return rc, json.loads(out)


def slip_of(path: Path) -> tuple[int, str]:
    """The line where the corrupted copy differs from its original, and the slip it names."""
    name = path.stem.removesuffix("_corrupted")
    good = (PAPERS / f"{name}.tex").read_text(encoding="utf-8").split("\n")
    bad = path.read_text(encoding="utf-8").split("\n")
    assert len(good) == len(bad), f"{path.name} must keep the line numbers of {name}.tex"
    diff = [k + 1 for k, (a, b) in enumerate(zip(good, bad)) if a != b and not a.startswith("%")]
    assert len(diff) == 1, f"{path.name} differs from {name}.tex in lines {diff}; one slip per copy"
    m = re.search(r"slip: (.+)$", bad[0])
    assert m, f"the first line of {path.name} names the slip ('slip: ...')"
    return diff[0], m.group(1).strip()


def marked(names, missing):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=missing[n])) if n in missing else n
            for n in names]


def test_every_paper_has_a_corrupted_copy():
    assert len(NAMES) >= 12
    for n in NAMES:
        assert (PAPERS / f"{n}_corrupted.tex").exists(), n
        slip_of(PAPERS / f"{n}_corrupted.tex")


@pytest.mark.parametrize("name", marked(NAMES, {**MISSING, **UNPROVED}))
def test_paper_passes_as_typeset(name, capsys):
    rc, report = run_check(PAPERS / f"{name}.tex", capsys)
    bad = [(s["step"], s["line"], s["status"], s.get("error", "")) for s in report["steps"] if s["status"] != "proved"]
    assert rc == 0 and report["ok"] and report["steps"], bad or report


@pytest.mark.parametrize("name", marked(NAMES, {**MISSING, **UNREFUTED}))
def test_corrupted_copy_fails_at_its_slip(name, capsys):
    path = PAPERS / f"{name}_corrupted.tex"
    line, slip = slip_of(path)
    rc, report = run_check(path, capsys)
    assert rc == 1 and not report["ok"]
    failing = [s for s in report["steps"] if s["status"] != "proved"]
    assert failing, "no step fails"
    first = failing[0]
    assert first["line"] == line, (first["line"], line, first)
    if first["status"] == "refuted":
        cex = first["counterexample"]
        assert cex["certificate"], first
    else:
        error = first.get("error", "")
        assert first["status"] == "ill-formed" and ("cannot multiply" in error or "shape" in error), first
    assert first.get("diagnosis") and first["diagnosis"]["slip"] == slip, first.get("diagnosis")
