"""``symattn report [NAMES...] --html DIR [--check FILE ...] [--jobs N]``: a static HTML page of the library, the
gallery and derivations. Theorems are proved in ``--jobs`` processes at once, as by ``symattn prove``."""

from __future__ import annotations

import sys


def cmd_report(args) -> int:
    from .. import __version__
    from ..errors import DerivationError, SymattnError
    from ..teach.report import write_report
    from ..theorems import load_library, prove_all
    from .check import load

    refusal = _directory_refusal(args.html)
    if refusal:  # before any proof: a mistyped DIR is found at once
        print(f"symattn report: {refusal}", file=sys.stderr)
        return 2
    library = load_library()
    if args.names:
        unknown = [nm for nm in args.names if nm not in library]
        if unknown:
            print(f"symattn report: no theorem named {', '.join(unknown)}; known: {', '.join(sorted(library))}",
                  file=sys.stderr)
            return 2
        chosen = [library[nm] for nm in dict.fromkeys(args.names)]  # a name given twice is shown once
    else:
        chosen = list(library.values())
    reports = []
    for path in args.check or []:
        try:
            reports.append(load(path, args.budget))
        except OSError as exc:
            hint = (f"; {path} is a theorem: put theorem names before --check, which takes every word after it "
                    "as a file") if path in library else ""
            print(f"symattn report: cannot read {path}: {exc.strerror or exc}{hint}", file=sys.stderr)
            return 2
        except (DerivationError, SymattnError) as exc:
            print(f"symattn report: {path}: {exc}", file=sys.stderr)
            return 2
    proved = prove_all(chosen, jobs=args.jobs, html=True)  # in the order of ``chosen``, with their expressions
    results = [r for r in proved if r.theorem.expect == "proved"]
    gallery = [r for r in proved if r.theorem.expect != "proved"]
    try:
        out = write_report(args.html, results, gallery, reports, version=__version__)
    except OSError as exc:
        print(f"symattn report: cannot write into {args.html}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    bad = [r.theorem.name for r in results + gallery if not r.ok] + [rep.source for rep in reports if not rep.ok]
    print(f"wrote {out}: {len(results)} theorems, {len(gallery)} mistakes, {len(reports)} derivation(s)")
    if bad:
        print(f"not as expected: {', '.join(bad)}")
    return 1 if bad else 0


def _directory_refusal(directory: str) -> str:
    """Why ``--html DIR`` cannot take index.html ('' when it can): an empty name, a file, or a path
    through a file."""
    import os

    if not directory.strip():
        return "--html needs a directory name, got an empty one"
    probe = os.path.abspath(directory)
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        where = "is" if probe == os.path.abspath(directory) else f"is inside {probe}, which is"
        return f"cannot write into {directory}: it {where} a file, not a directory"
    return ""


def register(sub) -> None:
    from ..theorems import default_jobs
    from .prove import positive_int

    p = sub.add_parser("report", help="write a self-contained HTML report of the library, the gallery and derivations",
                       description="Prove the theorem library and the gallery of mistakes, check the derivations "
                                   "given with --check, and write DIR/index.html: a table of contents, statements, "
                                   "verdicts, scopes, methods, traces in math notation, counterexamples with "
                                   "heatmaps and their colour legend, the pictures of each topic (shapes, the "
                                   "causal mask, GQA's grouping, a RoPE rotation, score variance against d_k); "
                                   "math as MathML that wraps in a narrow window (no network needed to view it). "
                                   "Exits 1 if anything is not as expected.")
    p.add_argument("names", nargs="*", help="theorems and gallery items to include (default: all)")
    p.add_argument("--html", required=True, metavar="DIR", help="the directory to write index.html into")
    p.add_argument("--check", nargs="+", metavar="FILE",
                   help="derivations to check and include (.tex or notation); put theorem NAMES before --check")
    p.add_argument("--budget", type=float, default=20.0, help="seconds per derivation step (default 20)")
    p.add_argument("--jobs", "-j", type=positive_int, default=default_jobs(), metavar="N",
                   help=f"prove theorems in N processes at once (default: one per core, here {default_jobs()})")
    p.set_defaults(run=cmd_report)
