r"""One entry point for a derivation file: :func:`check_file` reads LaTeX (``.tex``), Markdown notes
(``.md``), a notebook's markdown cells (``.ipynb``) or the plain notation (anything else), and checks
it. A LaTeX text of matrices goes to :mod:`.latex`, one of numbers and vectors (its formulas use
``\max``, ``\leftarrow`` or ``\gets``) to :mod:`.scalars`.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "step.tex")
>>> _ = open(path, "w").write(r"$$ A, B \in \mathbb{R}^{n \times n} $$ $$ (A B)^\top = B^\top A^\top $$")
>>> [s.status for s in check_file(path).steps]
['proved']
"""

from __future__ import annotations

from ..errors import SymattnError
from .latex_document import check_latex
from .model import DEFAULT_BUDGET, Report

TEX_SUFFIXES = (".tex", ".latex", ".ltx")
MARKDOWN_SUFFIXES = (".md", ".markdown")
NOTEBOOK_SUFFIXES = (".ipynb",)
FORMATS = ("tex", "notation", "markdown", "notebook")
MAX_CHARS = 1_000_000  # the readers refuse what is longer
MAX_NOTEBOOK_CHARS = 50_000_000  # a notebook carries its outputs (images): read more of it than of a text


def file_format(path: str, fmt: str | None = None) -> str:
    """``fmt`` when given, else by the suffix in any case: ``tex`` (``.tex``/``.latex``/``.ltx``),
    ``markdown`` (``.md``/``.markdown``), ``notebook`` (``.ipynb``), else ``notation``."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise SymattnError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
        return fmt
    name = str(path).lower()
    for suffixes, kind in ((TEX_SUFFIXES, "tex"), (MARKDOWN_SUFFIXES, "markdown"), (NOTEBOOK_SUFFIXES, "notebook")):
        if name.endswith(suffixes):
            return kind
    return "notation"


def check_file(path, *, budget: float = DEFAULT_BUDGET, fmt: str | None = None, diagnose: bool = True) -> Report:
    """Read and check the derivation file at ``path`` (its format by ``fmt`` or by its suffix)."""
    kind = file_format(path, fmt)
    limit = MAX_NOTEBOOK_CHARS if kind == "notebook" else MAX_CHARS
    with open(path, encoding="utf-8") as fh:
        text = fh.read(limit + 1)
    if len(text) > limit and kind == "notebook":
        raise SymattnError(f"the notebook is longer than {limit} characters; clear its outputs "
                           "(jupyter nbconvert --clear-output) or copy its markdown cells into a .md file")
    return check_text(text, kind, source=str(path), budget=budget, diagnose=diagnose)


def check_text(text: str, kind: str, *, source: str = "<text>", budget: float = DEFAULT_BUDGET,
               diagnose: bool = True) -> Report:
    """Check a derivation given as text in one of :data:`FORMATS`."""
    if kind == "tex":
        return check_latex(text, source=source, budget=budget, diagnose=diagnose)
    if kind == "markdown":
        from .markdown import check_markdown

        return check_markdown(text, source=source, budget=budget, diagnose=diagnose)
    if kind == "notebook":
        from .notebook import check_notebook

        return check_notebook(text, source=source, budget=budget, diagnose=diagnose)
    if kind != "notation":
        raise SymattnError(f"unknown format {kind!r}: one of {', '.join(FORMATS)}")
    from .model import check_statements
    from .notation import parse_notation

    return check_statements(parse_notation(text), source=source, budget=budget, diagnose=diagnose,
                            dialect="notation")
