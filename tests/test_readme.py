"""Every Python block of the README and of its documentation pages runs as written, alone, and
prints what it says.

Each ```python block runs in a fresh namespace (so a block that forgets an import fails), unless
its first line is ``# (continues the block above)``: it then runs after the blocks it continues. A bare
expression whose line ends in ``# -> TEXT`` is evaluated and its ``str`` or ``repr`` must match
TEXT, where ``...`` stands for any text. The plain-notation example is a file under examples/ that
the README shows verbatim, and that file passes ``symattn check``.
"""

import ast
import io
import pathlib
import re
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# the pages the README's sections moved to; their Python blocks are checked as the README's are
PAGES = ("README.md", "docs/proving.md", "docs/gradients.md", "docs/derivations.md", "docs/theorems.md",
         "docs/teaching.md", "docs/code.md", "docs/layout.md")
TEXTS = {page: (ROOT / page).read_text(encoding="utf-8") for page in PAGES}
# (page, index in the page, block): a block continues only the blocks of its own page
BLOCKS = [(page, k, b) for page in PAGES
          for k, b in enumerate(re.findall(r"```python\n(.*?)```", TEXTS[page], flags=re.S))]
CONTINUES = "# (continues the block above)\n"


def _claims(block: str) -> dict[int, str]:
    """Line number -> the TEXT of a ``# -> TEXT`` comment on that line."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(block).readline):
        if tok.type == tokenize.COMMENT and tok.string.startswith("# -> "):
            out[tok.start[0]] = tok.string[len("# -> "):].strip()
    return out


def _matches(pattern: str, value) -> bool:
    regex = ".*?".join(re.escape(part) for part in pattern.split("..."))
    return any(re.fullmatch(regex, text, flags=re.S) for text in (str(value), repr(value)))


def test_the_readme_has_python_blocks_with_claimed_output():
    readme = [b for page, _, b in BLOCKS if page == "README.md"]
    assert len(readme) >= 2 and sum(len(_claims(b)) for b in readme) >= 3, "the README states few outputs"
    assert len(BLOCKS) >= 12
    assert sum(len(_claims(b)) for _, _, b in BLOCKS) >= 30, "the pages state few outputs; the test would check little"


def test_the_readme_links_every_page_and_stays_short():
    for page in PAGES[1:]:
        assert f"]({page})" in README, f"the README does not link {page}"
    assert README.count("\n") < 200, "the README is meant to be short: move detail to a page under docs/"


def test_the_output_check_can_fail():
    assert _matches("('proved', True, ...)", ("proved", True, "A"))
    assert not _matches("('proved', True, ...)", ("refuted", True, "A"))
    assert not _matches("CausalMask(n)", "CausalMask(n, n)")


@pytest.mark.parametrize("page, k, block", BLOCKS, ids=[f"{p}-block{k + 1}" for p, k, _ in BLOCKS])
def test_readme_python_block_runs_alone_and_prints_what_it_says(page, k, block):
    namespace: dict = {"__name__": f"readme_block_{k + 1}"}
    own = [b for p, _, b in BLOCKS if p == page]
    first = k
    while own[first].startswith(CONTINUES):
        assert first > 0, f"{page} python block {k + 1} continues no block"
        first -= 1
    for earlier in own[first:k]:  # the blocks this one continues, run first without checks
        exec(compile(earlier, page, "exec"), namespace)
    claims = _claims(block)
    checked = set()
    for stmt in ast.parse(block).body:
        where = f"{page} python block {k + 1}, line {stmt.lineno}"
        try:
            if isinstance(stmt, ast.Expr) and stmt.end_lineno in claims:
                value = eval(compile(ast.Expression(stmt.value), where, "eval"), namespace)
                said = claims[stmt.end_lineno]
                assert _matches(said, value), f"{where}: the README says {said!r}, the code gives {value!r}"
                checked.add(stmt.end_lineno)
            else:
                exec(compile(ast.Module([stmt], type_ignores=[]), where, "exec"), namespace)
        except AssertionError:
            raise
        except Exception as exc:
            raise AssertionError(f"{where} fails: {exc!r}\n{ast.get_source_segment(block, stmt)}") from exc
    assert checked == set(claims), f"'# -> ' comments not on a bare expression: lines {set(claims) - checked}"


def test_the_plain_notation_example_is_a_file_that_checks():
    from symattn.cli import main

    path = ROOT / "examples" / "readme_notation.txt"
    body = path.read_text(encoding="utf-8")
    for page in ("README.md", "docs/derivations.md"):
        assert f"```\n{body}```" in TEXTS[page], f"{page}'s plain-notation block differs from examples/readme_notation.txt"
    assert main(["check", str(path)]) == 0


def test_every_file_a_readme_shell_command_names_exists():
    """The commands of the README's ```sh blocks run as written: each path they name is in the repository
    (a placeholder such as ``derivation.txt`` would fail for whoever copies the line)."""
    import shlex

    named = []
    for block in re.findall(r"```sh\n(.*?)```", "".join(TEXTS.values()), flags=re.S):
        for line in block.splitlines():
            words = shlex.split(line.split("  #", 1)[0], comments=True)
            if "symattn" not in words:
                continue
            named += [w for w in words if re.search(r"\.(tex|txt|md|ipynb|py)$", w)]
    assert len(named) >= 6
    missing = [w for w in named if not (ROOT / w).is_file()]
    assert not missing, f"README shell commands name files that do not exist: {missing}"


def test_the_readme_counts_the_trust_base_as_the_code_does():
    """The README's count of the trust base is the length of ``TRUST_BASE`` (it went stale twice by hand)."""
    from symattn.proof.trust import TRUST_BASE

    said = re.search(r"There are (\d+) entries: (\d+) rules checked by instances\s+and (\d+) axioms",
                     TEXTS["docs/theorems.md"])
    assert said, "docs/theorems.md no longer states the size of the trust base in the form this test reads"
    axioms = sum(r.family is None for r in TRUST_BASE)
    assert tuple(map(int, said.groups())) == (len(TRUST_BASE), len(TRUST_BASE) - axioms, axioms)
