"""``symattn check FILE [--json] [--markdown] [--wide] [--budget S]``: check a derivation step by step.

``symattn check --list-examples`` lists the derivations shipped with the package, and
``symattn check --example NAME`` checks one of them, so the examples work without a checkout."""

from __future__ import annotations

import argparse
import math
import sys

from ..derivation.documents import FORMATS, file_format  # noqa: F401 (the CLI's --format choices)
from ..errors import DerivationError, SymattnError

STDIN, STDIN_NAME = "-", "<stdin>"  # FILE '-' reads standard input (its format: --format, else the notation)


def load(path: str, budget: float, fmt: str | None = None):
    """Parse and check the file (``-``: standard input): LaTeX, Markdown, a notebook's markdown
    cells or the plain notation."""
    from ..derivation.documents import MAX_CHARS, MAX_NOTEBOOK_CHARS, check_file, check_text

    if path != STDIN:
        return check_file(path, budget=budget, fmt=fmt)
    kind = file_format(STDIN_NAME, fmt)
    text = sys.stdin.read((MAX_NOTEBOOK_CHARS if kind == "notebook" else MAX_CHARS) + 1)
    return check_text(text, kind, source=STDIN_NAME, budget=budget)


def _located(file: str, exc: DerivationError) -> str:
    """``FILE:LINE:COLUMN: Kind: message``, or ``FILE: cell C, line L, column K: Kind: detail`` in a notebook."""
    cell = getattr(exc, "cell", None)
    if cell is None:
        return f"{file}:{exc.line}:{exc.column}: {type(exc).__name__}: {exc}"
    tail = f"\n  expected {exc.expected}" if exc.expected else ""
    return f"{file}: cell {cell}, line {exc.line}, column {exc.column}: {type(exc).__name__}: {exc.detail}{tail}"


def _error(args, message: str, exc=None) -> int:
    """An unreadable file: the message on stderr, and with --json a JSON error object on stdout; exit 2."""
    print(message, file=sys.stderr)
    if getattr(args, "json", False):
        import json

        err = {"kind": type(exc).__name__ if exc is not None else "Error", "message": message}
        if isinstance(exc, DerivationError):
            err.update(message=exc.detail, line=exc.line, column=exc.column, expected=exc.expected)
            if getattr(exc, "cell", None) is not None:
                err["cell"] = exc.cell
        print(json.dumps({"source": args.file, "ok": False, "error": err, "steps": []}, indent=2,
                         ensure_ascii=False))
    return 2


def list_examples() -> int:
    """Print the bundled examples, one a line: the name ``--example`` takes, and the file's first comment."""
    from ..bundled import examples, summary

    names = examples()
    if not names:
        print("symattn check: no bundled examples are installed", file=sys.stderr)
        return 2
    width = max(map(len, names))
    for name, path in names.items():
        print(f"{name:<{width}}  {summary(path)}".rstrip())
    return 0


def cmd_check(args) -> int:
    from ..derivation import report as R

    if args.list_examples:
        return list_examples()
    if args.example is not None:
        from ..bundled import example

        if args.file is not None:
            print(f"symattn check: give a FILE or --example NAME, not both ({args.file!r} and {args.example!r})",
                  file=sys.stderr)
            return 2

        try:
            args.file = str(example(args.example))
        except SymattnError as exc:
            print(f"symattn check: {exc}", file=sys.stderr)
            return 2
    elif args.file is None:
        print("symattn check: give a FILE, --example NAME or --list-examples", file=sys.stderr)
        return 2
    source, args.file = args.file, STDIN_NAME if args.file == STDIN else args.file  # messages say <stdin>
    try:
        report = load(source, args.budget, getattr(args, "format", None))
    except OSError as exc:
        return _error(args, f"symattn check: cannot read {args.file}: {exc.strerror}", exc)
    except UnicodeDecodeError as exc:
        return _error(args, f"symattn check: {args.file} is not UTF-8 text (byte {exc.start})", exc)
    except DerivationError as exc:
        return _error(args, _located(args.file, exc), exc)
    except SymattnError as exc:
        return _error(args, f"{args.file}: {type(exc).__name__}: {exc}", exc)
    if args.json:
        print(R.to_json(report))
    elif args.markdown:
        print(R.to_markdown(report), end="")
    else:
        print(R.table(report, args.wide))
    return 0 if report.ok else 1


def positive_seconds(text: str) -> float:
    """An argparse type: a time budget in seconds, a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds (for example 20), got {text}")
    return value


def register(sub) -> None:
    p = sub.add_parser(
        "check", help="check a derivation (.txt notation, .tex, .md or .ipynb) step by step",
        description="Check a derivation step by step: every step e_(k-1) = e_k is proved for all dimensions, "
                    "proved at given dimensions, refuted with a certified counterexample, or left unknown. "
                    "Prints the step table and, for the first step that is not proved, its counterexample and "
                    "the likely slip (a transpose dropped, softmax on the other axis, the scale dropped, ...). "
                    "FILE is LaTeX (.tex), Markdown (.md), a notebook (.ipynb) or the plain notation (anything "
                    "else), or '-' for standard input; --example NAME checks a derivation shipped with symattn "
                    "(--list-examples lists them). Exit status: 0 when every step is proved, 1 when one is not, "
                    "2 when the file cannot be read.")
    p.add_argument("file", nargs="?", help="the derivation: .tex (LaTeX subset), .md (Markdown with LaTeX "
                                           "formulas), .ipynb (its markdown cells) or plain notation; '-' reads "
                                           "standard input (give --format unless it is the notation)")
    p.add_argument("--example", metavar="NAME", help="check a bundled example instead of a FILE (see --list-examples)")
    p.add_argument("--list-examples", action="store_true", help="list the bundled examples and exit")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="read FILE as LaTeX, the plain notation, Markdown or a notebook (default: by its suffix "
                        "in any case: .tex .latex .ltx, .md .markdown, .ipynb; anything else is the notation)")
    fmt = p.add_mutually_exclusive_group()  # two formats of one report: give one
    fmt.add_argument("--json", action="store_true", help="print the report as JSON (an error object if FILE "
                                                       "cannot be read)")
    fmt.add_argument("--markdown", action="store_true", help="print the report as Markdown with LaTeX")
    p.add_argument("--wide", action="store_true", help="do not shorten the claims in the table")
    p.add_argument("--budget", type=positive_seconds, default=20.0, help="seconds per step (default 20)")
    p.set_defaults(run=cmd_check)
