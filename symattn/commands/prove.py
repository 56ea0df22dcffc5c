"""``symattn prove [NAMES...] [--json] [--gallery] [--wide] [--trace]``; ``symattn prove --trust [--no-check]``."""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from .. import __version__
from ..defs.shapes import show


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


def cmd_prove(args) -> int:
    if getattr(args, "trust", False):
        return cmd_trust(args)
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


def register(sub) -> None:
    p = sub.add_parser("prove", help="prove the bundled theorem library and print the table")
    p.add_argument("names", nargs="*", help="theorems to prove (default: all)")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    p.add_argument("--gallery", action="store_true",
                   help="run the gallery of mistakes: each must be refuted with a counterexample")
    p.add_argument("--wide", action="store_true", help="do not shorten the statements")
    p.add_argument("--trace", action="store_true", help="print the proof trace of every claim")
    p.add_argument("--trust", action="store_true",
                   help="list the trust base (every rewrite rule and axiom) and check each rule exactly at all "
                        "sizes <= 4 and numerically at larger ones; NAMES select rules")
    p.add_argument("--no-check", action="store_true", help="with --trust: list the trust base without checking it")
    p.set_defaults(run=cmd_prove)
