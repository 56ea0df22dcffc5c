r"""Jupyter notebooks as derivation files: the markdown cells, read in order as one Markdown text.

Code cells (and raw cells) are not read. The markdown cells are joined, each from a new line, and
read by :mod:`.markdown`; a position in the joined text is given back as a cell and a line in it
(cells counted from 1 at the top of the notebook, code cells included, as a reader counts them).

>>> nb = '{"cells": [{"cell_type": "code", "source": "x = 1"}, {"cell_type": "markdown", "source": ["# A\\n", "$Q$"]}]}'
>>> cells = read_notebook(nb)
>>> cells.text
'\n$Q$'
>>> cells.locate(2)
(2, 2)
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from ..errors import DerivationError, ParseError
from .model import DEFAULT_BUDGET, Report

EXPECTED = "a Jupyter notebook (.ipynb): a JSON object whose \"cells\" is a list of cells"


@dataclass(frozen=True)
class Cells:
    """The markdown cells joined: ``text``, and for each cell its number and the line it starts at."""

    text: str
    starts: tuple  # ((cell number, first line in text), ...), in order

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, line in that cell) of a line of the joined text."""
        cell, first = next(((c, f) for c, f in reversed(self.starts) if f <= line), (0, 1))
        return cell, line - first + 1

    def relocate(self, exc: DerivationError) -> DerivationError:
        """The same error, its line counted in its cell; ``exc.cell`` is the cell's number."""
        if not exc.line or not self.starts:
            return exc
        cell, line = self.locate(exc.line)
        return in_cell(exc, cell, line)


def in_cell(exc: DerivationError, cell: int, line: int) -> DerivationError:
    """A copy of ``exc`` at ``line`` of cell ``cell``, its message saying so."""
    out = copy.copy(exc)
    out.cell, out.line = cell, line
    tail = f"\n  expected {exc.expected}" if exc.expected else ""
    out.args = (f"cell {cell}, line {line}, column {exc.column}: {exc.detail}{tail}",)
    return out


def _cells(text: str) -> list:
    """The notebook's list of cells, or a ParseError that says what was found."""
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"not a notebook: the JSON is malformed ({exc.msg})", exc.lineno, exc.colno,
                         EXPECTED) from None
    if not isinstance(nb, dict):
        raise ParseError(f"not a notebook: the JSON is a {type(nb).__name__}, not an object", 1, 1, EXPECTED)
    if "cells" not in nb:
        old = " (a notebook of format 3: convert it with jupyter nbconvert --to notebook)" \
            if "worksheets" in nb else ""
        raise ParseError(f"not a notebook: the JSON object has no \"cells\"{old}", 1, 1, EXPECTED)
    if not isinstance(nb["cells"], list):
        raise ParseError(f"not a notebook: \"cells\" is a {type(nb['cells']).__name__}, not a list", 1, 1,
                         EXPECTED)
    return nb["cells"]


def _source(cell, number: int) -> str:
    """The text of a cell: ``source`` is a string or a list of strings."""
    src = cell.get("source", "")
    if isinstance(src, list) and all(isinstance(x, str) for x in src):
        return "".join(src)
    if not isinstance(src, str):
        raise ParseError(f"cell {number} of the notebook has a \"source\" that is a {type(src).__name__}", 1, 1,
                         "a string or a list of strings")
    return src


def read_notebook(text: str) -> Cells:
    """The markdown cells of a notebook's JSON text, converted (:func:`.markdown.markdown_to_latex`)
    and joined."""
    from .markdown import markdown_to_latex

    parts, starts, line = [], [], 1
    for number, cell in enumerate(_cells(text), start=1):
        if not isinstance(cell, dict):
            raise ParseError(f"cell {number} of the notebook is a {type(cell).__name__}, not an object", 1, 1,
                             EXPECTED)
        if cell.get("cell_type") != "markdown":
            continue
        try:
            tex = markdown_to_latex(_source(cell, number))
        except DerivationError as exc:
            raise in_cell(exc, number, exc.line) from None
        parts.append(tex)
        starts.append((number, line))
        line += tex.count("\n") + 1
    return Cells("\n".join(parts), tuple(starts))


def check_notebook(text: str, *, source: str = "<notebook>", budget: float = DEFAULT_BUDGET,
                   diagnose: bool = True) -> Report:
    """Check the derivation in a notebook's markdown cells.

    An error is raised at its cell (``exc.cell``) and its line in that cell; the steps of the
    report keep positions in the joined cells, and a note of the report says where each cell starts.
    """
    from .latex_document import check_latex

    cells = read_notebook(text)
    try:
        report = check_latex(cells.text, source=source, budget=budget, diagnose=diagnose)
    except DerivationError as exc:
        raise cells.relocate(exc) from None
    report.notes.append(_where(cells))
    return report


def _where(cells: Cells) -> str:
    if not cells.starts:
        return "the notebook has no markdown cells: nothing was read (code cells are not read)"
    first = ", ".join(f"cell {c} at line {f}" for c, f in cells.starts)
    return f"markdown cells read in order, lines counted through them: {first}"
