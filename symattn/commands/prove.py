"""``symattn prove [NAMES...] [--json] [--gallery] [--wide] [--trace]``."""

from __future__ import annotations

import json
import sys
import time

from .. import __version__


def _table(results, wide: bool) -> str:
    head = ("theorem", "statement", "verdict", "scope", "method", "seconds")
    rows = []
    for r in results:
        st = r.theorem.statement
        if not wide and len(st) > 60:
            st = st[:59] + "…"
        verdict = r.status + (", general" if r.general else "")
        if r.theorem.expect != "proved":
            verdict += f" (expected {r.theorem.expect})"
        rows.append((r.theorem.name, st, verdict, r.scope, r.method, f"{r.seconds:.2f}"))
    widths = [max(len(str(x[k])) for x in rows + [head]) for k in range(len(head))]
    line = lambda row: "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()  # noqa: E731
    out = [line(head), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def cmd_prove(args) -> int:
    from ..theorems import load_library, prove

    library = load_library()
    want = "refuted" if args.gallery else "proved"
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
    results = [prove(th) for th in selected]
    total = time.perf_counter() - start
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2, default=str, ensure_ascii=False))
    else:
        print(_table(results, args.wide))
        failed = [r for r in results if not r.ok]
        print(f"\n{len(results) - len(failed)} of {len(results)} as expected in {total:.1f} s "
              f"(symattn {__version__})")
        for r in results:
            if args.trace or not r.ok or (args.gallery and r.status == "refuted"):
                print(f"\n== {r.theorem.name}: {r.theorem.statement}")
                if r.theorem.explanation:
                    print(f"   why: {r.theorem.explanation}")
                if r.error:
                    print(f"   error: {r.error}")
                for v in r.verdicts:
                    if args.trace or v.status != "proved":
                        print("   " + v.explain().replace("\n", "\n   "))
    return 0 if all(r.ok for r in results) else 1


def register(sub) -> None:
    p = sub.add_parser("prove", help="prove the bundled theorem library and print the table")
    p.add_argument("names", nargs="*", help="theorems to prove (default: all)")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    p.add_argument("--gallery", action="store_true",
                   help="run the gallery of mistakes: each must be refuted with a counterexample")
    p.add_argument("--wide", action="store_true", help="do not shorten the statements")
    p.add_argument("--trace", action="store_true", help="print the proof trace of every claim")
    p.set_defaults(run=cmd_prove)
