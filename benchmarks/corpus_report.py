"""Run the adversarial corpus (tests/corpus.py) and print its counts and every failure.

    python benchmarks/corpus_report.py [--json FILE] [--budget SECONDS] [NAME ...]

Prints one line per entry (outcome, expected truth, seconds, method), then the counts per
expected truth (proved general / proved at dims / refuted / unknown / refused), then each
failure: a false claim proved, a true claim refuted, or a refusal where none is acceptable.
Exits 1 when there is a failure.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
import traceback

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))

import corpus  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="run only these entries")
    ap.add_argument("--json", help="write the per-entry results to this file")
    ap.add_argument("--budget", type=float, default=corpus.BUDGET, help="seconds per claim")
    args = ap.parse_args(argv)
    corpus.BUDGET = args.budget
    entries = [e for e in corpus.CORPUS if not args.names or e.name in args.names]
    rows, failures = [], []
    counts = {truth: dict.fromkeys(corpus.OUTCOMES, 0) for truth in (True, False)}
    start = time.perf_counter()
    for e in entries:
        t0 = time.perf_counter()
        try:
            outcome, v, why = corpus.decide(e)
            method = v.method if v is not None else why[:80]
        except Exception as exc:  # a construction error or an engine exception: reported, not hidden
            outcome, v, method = "error", None, f"{type(exc).__name__}: {exc}"[:200]
            traceback.print_exc(limit=2)
        seconds = time.perf_counter() - t0
        counts[e.expect][outcome] = counts[e.expect].get(outcome, 0) + 1
        failed = outcome == "error" or corpus.is_failure(e, outcome)
        if failed:
            failures.append((e, outcome, v, method))
        rows.append({"name": e.name, "expect": e.expect, "family": e.family, "outcome": outcome,
                     "seconds": round(seconds, 3), "method": method, "failed": failed})
        print(f"{'FAIL ' if failed else '     '}{e.name:62s} {str(e.expect):5s} {outcome:15s} "
              f"{seconds:6.2f}s  {method}", flush=True)
    total = time.perf_counter() - start
    print(f"\n{len(entries)} claims in {total:.1f} s (budget {corpus.BUDGET} s per claim)")
    print(f"{'expected':10s}" + "".join(f"{o:>16s}" for o in (*corpus.OUTCOMES, "error")))
    for truth in (True, False):
        print(f"{str(truth):10s}" + "".join(f"{counts[truth].get(o, 0):16d}" for o in (*corpus.OUTCOMES, "error")))
    for e, outcome, v, method in failures:
        print(f"\nFAILURE {e.name} (expected {e.expect}, family {e.family}): {outcome} by {method}")
        if v is not None:
            print(v.explain())
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"rows": rows, "seconds": total}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
