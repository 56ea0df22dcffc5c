"""``symattn prove [NAMES...] [--json] [--gallery] [--wide] [--trace] [--jobs N] [--cached] [--refresh [--ship]]``;
``symattn prove --trust [--no-check]``.

Theorems are proved in parallel processes (``--jobs``, default one per core); the table, the JSON
and the exit status are the same as one after another. Every claim is proved now unless
``--cached`` is given: then a theorem whose proved verdicts are all in the verdict cache is
reported from there, marked "cached" in the table with the cache key. The proved verdicts are
written to the user's verdict cache; ``--refresh`` proves the whole library and rewrites the cache
(with ``--ship``, also the file shipped with the package).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import textwrap
import time

import numpy as np

from .._version import __version__
from ..defs.shapes import show

HEAD = ("theorem", "statement", "verdict", "scope", "method", "seconds")
#: the columns that are shortened (with …) to fit the terminal, and how narrow each may get
SHRINK = {1: 16, 3: 12, 4: 10}


def terminal_width() -> int | None:
    """The width to fit: $COLUMNS when set, else the terminal's; None when the output is no
    terminal (a pipe or a file gets the full lines)."""
    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    try:
        if sys.stdout.isatty():
            return shutil.get_terminal_size().columns
    except (AttributeError, ValueError, OSError):
        pass
    return None


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _rows(results, wide: bool) -> list[tuple]:
    rows = []
    for r in results:
        st = r.theorem.statement
        if not wide and len(st) > 60:
            st = st[:59] + "…"
        verdict = r.status + (", general" if r.general else "")
        if r.theorem.expect != "proved":
            verdict += f" (expected {r.theorem.expect})"
        seconds = "cached" if r.cached else f"{r.seconds:.2f}"
        rows.append((r.theorem.name, st, verdict, r.scope, r.method, seconds))
    return rows


def _table(results, wide: bool, width: int | None = None) -> str:
    """The table, one row per theorem. With ``width`` (and not ``wide``), the statement, scope and
    method columns are shortened until the rows fit; when even that is too wide, each theorem is
    shown as a block of lines wrapped at ``width``."""
    rows = _rows(results, wide)
    widths = [max(len(str(x[k])) for x in rows + [HEAD]) for k in range(len(HEAD))]
    if width is not None and not wide:
        total = lambda: sum(widths) + 2 * (len(widths) - 1)  # noqa: E731
        while total() > width:
            k = max((k for k in SHRINK if widths[k] > SHRINK[k]), key=lambda k: widths[k], default=None)
            if k is None:
                return _blocks(_rows(results, True), width)
            widths[k] -= 1
        rows = [tuple(_cut(str(c), w) for c, w in zip(row, widths)) for row in rows]
    line = lambda row: "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()  # noqa: E731
    out = [line(HEAD), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def _blocks(rows, width: int) -> str:
    """Each theorem as a block: its name, then the verdict and time, statement, scope and method,
    wrapped at ``width`` (for terminals too narrow for the table)."""
    width = max(width, 20)
    out = []
    for name, statement, verdict, scope, method, seconds in rows:
        when = "cached" if seconds == "cached" else f"{seconds} s"
        out.append(_cut(name, width))
        for text in (f"{verdict}; {when}", statement, f"scope: {scope}", f"method: {method}"):
            out += textwrap.wrap(text, width, initial_indent="    ", subsequent_indent="      ") or ["    "]
    return "\n".join(out)


def _matrix(name: str, value, indent: str) -> list[str]:
    """``name = [[...]]`` with the rows aligned under each other."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return [f"{indent}{name} = {arr.item()}"]
    text = np.array2string(arr, precision=4, suppress_small=True, separator=" ", max_line_width=100)
    lead = f"{indent}{name} = "
    lines = text.splitlines()
    return [lead + lines[0]] + [" " * len(lead) + ln for ln in lines[1:]]


def _refutation(r, v) -> list[str]:
    """A student's view of one refuted claim: the claim, why it is wrong, the counterexample."""
    cex = v.counterexample
    flat = lambda e: show(e, 200).replace("\n", "")  # noqa: E731
    out = [f"   checked:  lhs = {flat(v.lhs)}", f"             rhs = {flat(v.rhs)}"]
    if r.theorem.explanation:
        out.append(f"   why it is wrong: {r.theorem.explanation}")
    dims = ", ".join(f"{k} = {val}" for k, val in cex.dims.items()) or "the stated sizes"
    out.append(f"   counterexample at {dims}, with these exact inputs:")
    for name, val in cex.values.items():
        out += _matrix(name, val, "     ")
    for name, how in cex.functions.items():
        out.append(f"     {name} instantiated as {how}")
    out += _matrix("lhs", cex.lhs, "     ") + _matrix("rhs", cex.rhs, "     ")
    i, j = cex.entry
    a, b = float(cex.lhs[i, j]), float(cex.rhs[i, j])
    out.append(f"   entry ({i}, {j}) differs: lhs = {a:.6g}, rhs = {b:.6g}")
    out.append(f"     exactly, lhs - rhs = {flat(cex.difference)}")
    out.append(f"     certificate: {cex.certificate}")
    return out


def cmd_trust(args) -> int:
    """List the trust base and check every entry (exactly at sizes <= 4, in float64 at larger ones)."""
    from ..proof.trust import TRUST_BASE, check_trust_base, table, unlisted_rule_functions

    names = args.names or None
    if names:
        unknown = sorted(set(names) - {r.name for r in TRUST_BASE})
        if unknown:
            print(f"symattn prove --trust: no rule named {', '.join(unknown)}; known: "
                  f"{', '.join(r.name for r in TRUST_BASE)}", file=sys.stderr)
            return 2
    base = [r for r in TRUST_BASE if names is None or r.name in names]
    start = time.perf_counter()
    checks = [] if args.no_check else check_trust_base(base)
    total = time.perf_counter() - start
    print(table(checks, base))
    unlisted = unlisted_rule_functions()
    failed = [c.rule.name for c in checks if not c.ok]
    axioms = sum(r.family is None for r in base)
    print(f"\n{len(base)} entries ({len(base) - axioms} rules checked by instances, {axioms} axioms)")
    if not args.no_check:
        print(f"{len(checks) - len(failed)} of {len(checks)} checks passed in {total:.1f} s (symattn {__version__})")
    if failed:
        print(f"failed: {', '.join(failed)}")
    if unlisted:
        print(f"rule functions with no entry in the trust base: {', '.join(unlisted)}")
    return 1 if failed or unlisted else 0


def _cache_note(results, width: int | None = None) -> list[str]:
    """The footnote of a table with cached rows: which theorems, and the key of each (wrapped at ``width``)."""
    cached = [r for r in results if r.cached]
    if not cached:
        return []
    out = [f"\ncached: {len(cached)} of {len(results)} theorems were not proved in this run; their verdicts were "
           "read from the verdict cache (proved earlier, under the keys below; --refresh proves them again):"]
    files = sorted({v.cache_file for r in cached for v in r.verdicts})
    out += [f"  {r.theorem.name}: key {r.cache_key[:16]}" for r in cached]
    out.append(f"  read from: {', '.join(files)}")
    if width is None:
        return out
    return [w for line in out for w in textwrap.wrap(line, max(width, 20), subsequent_indent="    ",
                                                      replace_whitespace=False, drop_whitespace=True) or [""]]


#: options of the theorem library that --trust does not take (the trust base has its own table)
LIBRARY_ONLY = ("json", "gallery", "trace", "cached", "refresh", "ship")


def cmd_prove(args) -> int:
    if getattr(args, "trust", False):
        ignored = [f"--{name}" for name in LIBRARY_ONLY if getattr(args, name, False)]
        if ignored:
            print(f"symattn prove --trust: {', '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} for the "
                  "theorem library, not the trust base; --trust takes rule NAMES and --no-check", file=sys.stderr)
            return 2
        return cmd_trust(args)
    if getattr(args, "no_check", False):
        print("symattn prove: --no-check lists the trust base without checking it; use it with --trust "
              "(symattn prove --trust --no-check)", file=sys.stderr)
        return 2
    from ..proof import verdict_cache
    from ..theorems import load_library, prove_all

    library = load_library()
    want = "refuted" if args.gallery else "proved"
    if args.refresh and (args.names or args.gallery or args.cached):
        print("symattn prove: --refresh proves the whole library and rewrites the verdict cache; "
              "give it no NAMES, --gallery or --cached", file=sys.stderr)
        return 2
    if args.refresh and not verdict_cache.enabled():
        print("symattn prove: --refresh has no cache to rewrite: SYMATTN_VERDICT_CACHE turns it off", file=sys.stderr)
        return 2
    if args.ship and not args.refresh:
        print("symattn prove: --ship writes the verdict cache shipped with the package; use it with --refresh",
              file=sys.stderr)
        return 2
    if args.names:
        unknown = [nm for nm in args.names if nm not in library]
        if unknown:
            print(f"symattn prove: no theorem named {', '.join(unknown)}; known: "
                  f"{', '.join(sorted(library))}", file=sys.stderr)
            return 2
        selected = [library[nm] for nm in args.names]
    else:
        selected = [th for th in library.values() if th.expect == want]
    start = time.perf_counter()
    # the sides of proved claims are shown only by --trace (and refutations keep theirs)
    results = prove_all(selected, jobs=args.jobs, cached=args.cached, expressions=args.trace or args.gallery)
    total = time.perf_counter() - start
    written = []
    if args.refresh:
        written.append(verdict_cache.flush(replace=True))
        if args.ship:
            written.append(verdict_cache.flush(verdict_cache.SHIPPED, replace=True))
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2, default=str, ensure_ascii=False))
    else:
        width = None if args.wide else terminal_width()
        print(_table(results, args.wide, width))
        failed = [r for r in results if not r.ok]
        print(f"\n{len(results) - len(failed)} of {len(results)} as expected in {total:.1f} s "
              f"(symattn {__version__})")
        note = _cache_note(results, width)
        if note:
            print("\n".join(note))
        for path in written:
            if path is not None:
                print(f"verdict cache rewritten: {path}")
        for r in results:
            if args.gallery and r.status == "refuted" and not args.trace:
                print(f"\n== {r.theorem.name}: {r.theorem.statement}")
                v = next(v for v in r.verdicts if v.status == "refuted")
                print("\n".join(_refutation(r, v)))
            elif args.trace or not r.ok:
                print(f"\n== {r.theorem.name}: {r.theorem.statement}")
                if r.theorem.explanation:
                    print(f"   why: {r.theorem.explanation}")
                if r.error:
                    print(f"   error: {r.error}")
                for v in r.verdicts:
                    if args.trace or v.status != "proved":
                        print("   " + v.explain().replace("\n", "\n   "))
    return 0 if all(r.ok for r in results) else 1


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes (1, 2, ...), got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def register(sub) -> None:
    from ..theorems import default_jobs

    p = sub.add_parser(
        "prove", help="prove the bundled theorem library and print the table",
        description="Prove every claim of the bundled theorem library now, theorems in parallel processes, and "
                    "print the table (exit status 1 when a theorem is not as expected). The proved verdicts are "
                    "written to the user's verdict cache ($SYMATTN_CACHE_DIR, else ~/.cache/symattn), which the "
                    "numeric core reads so that its first call proves nothing; --cached reads it here too.")
    p.add_argument("names", nargs="*", help="theorems to prove (default: all)")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    p.add_argument("--gallery", action="store_true",
                   help="run the gallery of mistakes: each must be refuted with a counterexample")
    p.add_argument("--wide", action="store_true",
                   help="do not shorten the statements, nor any column to fit the terminal width (COLUMNS)")
    p.add_argument("--trace", action="store_true", help="print the proof trace of every claim")
    p.add_argument("--jobs", "-j", type=positive_int, default=default_jobs(), metavar="N",
                   help=f"prove theorems in N processes at once (default: one per core, here {default_jobs()})")
    p.add_argument("--cached", action="store_true",
                   help="report a theorem from the verdict cache when all its claims were proved before under the "
                        "same key (same claim, definitions, proof engine and version); the table marks it 'cached'")
    p.add_argument("--refresh", action="store_true",
                   help="prove the whole library again and rewrite the user's verdict cache with its verdicts")
    p.add_argument("--ship", action="store_true",
                   help="with --refresh: also rewrite the verdict cache shipped with the package "
                        "(symattn/_verdicts.json)")
    p.add_argument("--trust", action="store_true",
                   help="list the trust base (every rewrite rule and axiom) and check each rule exactly at all "
                        "sizes <= 4 and numerically at larger ones; NAMES select rules")
    p.add_argument("--no-check", action="store_true", help="with --trust: list the trust base without checking it")
    p.set_defaults(run=cmd_prove)
