"""docs/notation.md is the LaTeX reader's specification: every example in it is checked here.

Each ```tex block opens with ``% expect: proved`` (every step proved), ``% expect: refuted`` (the last
step refuted with a counterexample, the others proved) or ``% expect: refused: TEXT`` (the file is
refused, or its last step is ill-formed, with a message holding TEXT).
"""

import re
from pathlib import Path

import pytest

from symattn.derivation import check_statements
from symattn.derivation.complex_reader import is_complex_document
from symattn.derivation.latex import parse_latex
from symattn.derivation.latex_document import check_latex
from symattn.errors import DerivationError

CATALOGUE = Path(__file__).resolve().parents[2] / "docs" / "notation.md"
BLOCKS = re.findall(r"```tex\n(.*?)```", CATALOGUE.read_text(encoding="utf-8"), re.S)


def _expectation(block):
    first = block.splitlines()[0]
    m = re.fullmatch(r"% expect: (proved|refuted|unknown|refused: (.+))", first.strip())
    assert m, f"an example without its expectation: {first!r}"
    return ("refused", m.group(2)) if m.group(2) else (m.group(1), None)


def test_the_catalogue_has_examples_of_every_kind():
    kinds = [_expectation(b)[0] for b in BLOCKS]
    assert len(BLOCKS) >= 12 and {"proved", "refuted", "unknown", "refused"} <= set(kinds)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example{k + 1}" for k in range(len(BLOCKS))])
def test_every_example_of_the_catalogue_reads_as_documented(block):
    kind, message = _expectation(block)
    try:
        if is_complex_document(block):  # read by the complex reader (a real or an imaginary part)
            report = check_latex(block, source="notation.md")
        else:
            report = check_statements(parse_latex(block), source="notation.md", dialect="latex")
    except DerivationError as exc:
        assert kind == "refused", f"refused, but documented as {kind}: {exc}"
        assert message in str(exc), str(exc)
        return
    statuses = [s.status for s in report.steps]
    if kind == "proved":
        assert statuses and all(s == "proved" for s in statuses), report.steps
    elif kind == "refuted":
        assert statuses[-1] == "refuted" and all(s == "proved" for s in statuses[:-1]), statuses
    elif kind == "unknown":
        assert statuses and all(s == "unknown" for s in statuses), statuses
    else:
        assert statuses[-1] == "ill-formed", statuses
        assert message in report.steps[-1].error, report.steps[-1].error
