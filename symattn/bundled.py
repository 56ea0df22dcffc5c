"""The example derivations shipped inside the package, found by name.

The repository's ``examples/`` folder is installed as ``symattn/examples`` (in the repository,
``symattn/examples`` links to it), so ``symattn check --example NAME`` works without a checkout.
A name is the file's path below that folder, ``/``-separated; a shorter name (the path without
its extension, the file name with or without it) is accepted when it fits one file only:

>>> names = examples()
>>> "seed000_multihead.tex" in names and "seed000_multihead.txt" in names
True
>>> example("seed000_row_form.tex").name
'seed000_row_form.tex'
>>> example("vaswani2017").relative_to(folder()).as_posix()
'papers/vaswani2017.tex'
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .errors import InputError

SUFFIXES = (".tex", ".latex", ".ltx", ".txt")  # LaTeX (as ``symattn check`` reads it) and the plain notation


def folder() -> Path:
    """The folder of the bundled examples (in the installed package, or the repository's ``examples/``)."""
    return Path(str(resources.files("symattn") / "examples"))


def examples() -> dict[str, Path]:
    """Every bundled derivation (a file with one of the ``SUFFIXES``), by name, sorted by name."""
    root = folder()
    if not root.is_dir():
        return {}
    found = (p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file())
    return dict(sorted((p.relative_to(root).as_posix(), p) for p in found))


def summary(path: Path, width: int = 100) -> str:
    """The first line of a derivation's opening comment (``%`` in LaTeX, ``#`` in the notation),
    shortened to ``width`` characters; '' when the file opens with no comment."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            text = line.strip()
            if text.startswith(("%:", "#:")):
                continue  # a directive such as ``%: convention: row``, not prose
            if not text.startswith(("%", "#")):
                return ""
            text = text.lstrip("%#").strip()
            return text if len(text) <= width else text[: width - 3].rsplit(" ", 1)[0] + "..."
    return ""


def _fits(name: str, key: str) -> bool:
    """Whether the example ``name`` (its path below the folder) is what ``key`` names: the path or
    the file name, each with or without its extension."""
    base = name.rsplit("/", 1)[-1]
    return key in (name, name.rsplit(".", 1)[0], base, base.rsplit(".", 1)[0])


def example(name: str) -> Path:
    """The bundled example called ``name``: its path as ``--list-examples`` prints it
    (``papers/vaswani2017.tex``), or any shorter name that fits one file only: the path without
    its extension, the file name (``vaswani2017.tex``), the file name without its extension
    (``vaswani2017``).

    Raises :class:`InputError` naming the bundled examples when no file fits, and naming every
    file that fits when more than one does (nothing is picked silently)."""
    names = examples()
    key = name.strip().removeprefix("examples/")
    if key in names:
        return names[key]  # the exact path, as --list-examples prints it
    fits = [n for n in names if _fits(n, key)]
    if len(fits) == 1:
        return names[fits[0]]
    if fits:
        raise InputError(f"the example name {name!r} fits {len(fits)} files: {', '.join(fits)}; "
                         "give one of these paths (as --list-examples prints them)")
    listing = ", ".join(names) or "none are installed"
    raise InputError(f"no bundled example is called {name!r}; the bundled examples are: {listing}")
