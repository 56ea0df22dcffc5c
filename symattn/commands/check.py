"""``symattn check FILE [--json] [--markdown] [--wide] [--budget S]``: check a derivation step by step.

``symattn check --list-examples`` lists the derivations shipped with the package, and
``symattn check --example NAME`` checks one of them, so the examples work without a checkout."""

from __future__ import annotations

import argparse
import math
import sys

from ..errors import DerivationError, SymattnError

TEX_SUFFIXES = (".tex", ".latex", ".ltx")


def file_format(path: str, fmt: str | None = None) -> str:
    """``tex`` for ``.tex``/``.latex``/``.ltx`` in any case (or ``fmt`` when given), else ``notation``."""
    if fmt is not None:
        return fmt
    return "tex" if path.lower().endswith(TEX_SUFFIXES) else "notation"


def load(path: str, budget: float, fmt: str | None = None):
    """Parse and check the file: LaTeX (``.tex``, ``.latex``, or ``fmt="tex"``) or the plain notation."""
    from ..derivation import check_statements, parse_notation
    from ..derivation.latex import parse_latex

    with open(path, encoding="utf-8") as fh:
        text = fh.read(1_000_001)
    tex = file_format(path, fmt) == "tex"
    if tex:
        from ..derivation.scalars import is_scalar_document

        if is_scalar_document(text):  # \max, \leftarrow: numbers and vectors, read by the scalar reader
            from ..derivation.scalar_check import check_scalar_document

            return check_scalar_document(text, source=path, budget=budget)
    stmts = parse_latex(text) if tex else parse_notation(text)
    return check_statements(stmts, source=path, budget=budget, dialect="latex" if tex else "notation")


def _error(args, message: str, exc=None) -> int:
    """An unreadable file: the message on stderr, and with --json a JSON error object on stdout; exit 2."""
    print(message, file=sys.stderr)
    if getattr(args, "json", False):
        import json

        err = {"kind": type(exc).__name__ if exc is not None else "Error", "message": message}
        if isinstance(exc, DerivationError):
            err.update(message=exc.detail, line=exc.line, column=exc.column, expected=exc.expected)
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
    try:
        report = load(args.file, args.budget, getattr(args, "format", None))
    except OSError as exc:
        return _error(args, f"symattn check: cannot read {args.file}: {exc.strerror}", exc)
    except UnicodeDecodeError as exc:
        return _error(args, f"symattn check: {args.file} is not UTF-8 text (byte {exc.start})", exc)
    except DerivationError as exc:
        return _error(args, f"{args.file}:{exc.line}:{exc.column}: {type(exc).__name__}: {exc}", exc)
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
    p = sub.add_parser("check", help="check a derivation (.txt notation or .tex) step by step")
    p.add_argument("file", nargs="?", help="the derivation: .tex (LaTeX subset) or plain notation")
    p.add_argument("--example", metavar="NAME", help="check a bundled example instead of a FILE (see --list-examples)")
    p.add_argument("--list-examples", action="store_true", help="list the bundled examples and exit")
    p.add_argument("--format", choices=("tex", "notation"), default=None,
                   help="read FILE as LaTeX or as the plain notation (default: by its suffix; .tex and .latex "
                        "in any case are LaTeX)")
    fmt = p.add_mutually_exclusive_group()  # two formats of one report: give one
    fmt.add_argument("--json", action="store_true", help="print the report as JSON (an error object if FILE "
                                                       "cannot be read)")
    fmt.add_argument("--markdown", action="store_true", help="print the report as Markdown with LaTeX")
    p.add_argument("--wide", action="store_true", help="do not shorten the claims in the table")
    p.add_argument("--budget", type=positive_seconds, default=20.0, help="seconds per step (default 20)")
    p.set_defaults(run=cmd_check)
