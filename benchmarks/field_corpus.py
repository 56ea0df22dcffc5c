"""Run ``symattn check`` on every file of ``examples/field/`` and compare with ``EXPECTED.toml``.

The measurement of the reader's gap: per file the time, the verdict (passes / fails at line L with
the failing step's status / refused at parse with the message) and whether it matches the
expectation (originals pass; a corrupted copy fails first at its slip's line). Misreadings are
counted apart: a step of an original refuted (a true step refuted) and a corrupted copy whose
slipped step is proved (a false step proved). A corrupted copy whose original fails at the same line
does not count as a match (the reader fails there with or without the slip). The three slowest files
are named at the end.

    PYTHONPATH=. python benchmarks/field_corpus.py [--json OUT.json] [NAME ...]

Each file runs in its own ``python -m symattn check --json`` process (timeout 300 s).

``--peel`` measures past the first refusal: the line a file is refused at is blanked (line numbers
kept) and the file checked again, until it is read or 12 lines are gone; it prints every blocking
message in order, then the verdicts of the steps that are left (a refuted step of an original or a
proved slip of a corrupted copy is flagged as a misreading). A blanked declaration can make a later
message an artefact of the blanking ("not declared"); the first message of each file is exact.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
FIELD = ROOT / "examples" / "field"
TIMEOUT = 300


def expectations() -> dict:
    with open(FIELD / "EXPECTED.toml", "rb") as f:
        return tomllib.load(f)


def check(path: Path) -> tuple[float, dict]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-m", "symattn", "check", "--json", str(path)],
                           capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, {"crash": f"timeout after {TIMEOUT} s"}
    dt = time.perf_counter() - t0
    try:
        return dt, json.loads(p.stdout)
    except json.JSONDecodeError:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
        return dt, {"crash": f"rc {p.returncode}: {tail[0][:200]}"}


def outcome(report: dict) -> dict:
    """kind: passes | fails | refused | crash, with line, status and message."""
    if "crash" in report:
        return {"kind": "crash", "message": report["crash"]}
    if "error" in report:
        e = report["error"]
        return {"kind": "refused", "line": e.get("line"), "message": e.get("message", "")}
    steps = report.get("steps", [])
    if report.get("ok") and steps:
        return {"kind": "passes", "steps": len(steps)}
    bad = [s for s in steps if s["status"] != "proved"]
    if not bad:
        return {"kind": "fails", "line": None, "status": "no steps", "message": ""}
    f = bad[0]
    diag = (f.get("diagnosis") or {}).get("slip", "")
    return {"kind": "fails", "line": f.get("line"), "status": f["status"],
            "message": (f.get("error") or diag or "")[:160],
            "statuses": [(s.get("line"), s["status"]) for s in steps]}


def judge(name: str, exp: dict, out: dict, original: dict | None = None) -> tuple[bool, str]:
    """(matches, misreading) for one file; ``original`` is the outcome of a corrupted copy's original.

    A corrupted copy does not match when its original fails at the same line too: the failure is then
    the reader's, not the slip's (it would fail there with or without the slip).
    """
    if exp["passes"]:
        ok = out["kind"] == "passes"
        mis = ""
        if out["kind"] == "fails":
            refuted = [ln for ln, st in out["statuses"] if st == "refuted"]
            if refuted:
                mis = f"TRUE step refuted at line(s) {refuted}"
        return ok, mis
    line = exp["slip_line"]
    ok = out["kind"] == "fails" and out["line"] == line and out["status"] in ("refuted", "ill-formed")
    if ok and original is not None and original["kind"] == "fails" and original["line"] == line:
        ok = False
    mis = ""
    if out["kind"] == "passes":
        mis = f"FALSE step proved (slip at line {line})"
    elif out["kind"] == "fails" and any(ln == line and st == "proved" for ln, st in out["statuses"]):
        mis = f"FALSE step proved (slip at line {line})"
    return ok, mis


def verdict_text(out: dict) -> str:
    k = out["kind"]
    if k == "passes":
        return f"passes ({out['steps']} steps)"
    if k == "fails":
        return f"fails at line {out['line']} ({out['status']}{': ' + out['message'] if out['message'] else ''})"
    if k == "refused":
        return f"refused at parse, line {out.get('line')}: {out['message']}"
    return f"crash: {out['message']}"


def peel(path: Path, exp: dict, tmp: Path) -> dict:
    lines = path.read_text(encoding="utf-8").split("\n")
    blockers = []
    for _ in range(12):
        tmp.write_text("\n".join(lines), encoding="utf-8")
        _, rep = check(tmp)
        out = outcome(rep)
        if out["kind"] != "refused" or not out.get("line") or not (1 <= out["line"] <= len(lines)):
            break
        blockers.append((out["line"], out["message"]))
        lines[out["line"] - 1] = ""
    steps = out.get("statuses", []) if out["kind"] == "fails" else []
    if out["kind"] == "passes":
        steps = [(s.get("line"), s["status"]) for s in rep.get("steps", [])]
    mis = ""
    if exp["passes"] and any(st == "refuted" for _, st in steps):
        mis = "TRUE step refuted: " + str([ln for ln, st in steps if st == "refuted"])
    if not exp["passes"] and any(ln == exp["slip_line"] and st == "proved" for ln, st in steps):
        mis = f"FALSE step proved at line {exp['slip_line']}"
    return {"blockers": blockers, "final": out, "steps": steps, "misreading": mis}


def main(argv: list[str]) -> int:
    if "--peel" in argv:
        argv = [a for a in argv if a != "--peel"]
        exp = expectations()
        names = [n for n in sorted(exp) if not argv or Path(n).stem in argv or n in argv]
        tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"field_peel_{os.getpid()}.tex"
        res = {}
        for n in names:
            r = peel(FIELD / n, exp[n], tmp)
            res[n] = r
            print(f"== {n}" + (f"   <-- {r['misreading']}" if r["misreading"] else ""))
            for ln, msg in r["blockers"]:
                print(f"   blocked at line {ln}: {msg[:150]}")
            print(f"   then: {verdict_text(r['final'])[:160]}; steps {r['steps']}", flush=True)
        tmp.unlink(missing_ok=True)
        mis = [n for n, r in res.items() if r["misreading"]]
        print(f"\n{len(names)} files peeled; misreadings after peeling: {mis or 'none'}")
        return 0
    js = None
    if "--json" in argv:
        i = argv.index("--json")
        js = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    exp = expectations()
    names = [n for n in sorted(exp) if not argv or Path(n).stem in argv or n in argv]
    rows, counts = [], {"match": 0, "refused": 0, "mismatch": 0, "misread": 0}
    outs: dict[str, dict] = {}
    for n in names:
        dt, rep = check(FIELD / n)
        out = outcome(rep)
        outs[n] = out
        orig = outs.get(n.replace("_corrupted.tex", ".tex")) if "_corrupted" in n else None
        ok, mis = judge(n, exp[n], out, orig)
        if not ok and not mis and orig and orig["kind"] == "fails" and orig["line"] == out.get("line"):
            mis_note = "  (its original fails at this line too: the reader's failure, not the slip's)"
        else:
            mis_note = ""
        tag = "MATCH" if ok else ("MISREAD" if mis else ("refused" if out["kind"] == "refused" else "mismatch"))
        counts["match" if ok else ("misread" if mis else ("refused" if out["kind"] == "refused" else "mismatch"))] += 1
        print(f"{n:34s} {dt:6.1f}s  {tag:8s} {verdict_text(out)}{'  <-- ' + mis if mis else ''}{mis_note}", flush=True)
        rows.append({"file": n, "seconds": round(dt, 2), "outcome": out, "matches": ok, "misreading": mis})
    print(f"\n{len(names)} files: {counts['match']} match their expectation, {counts['refused']} refused at parse, "
          f"{counts['mismatch']} other mismatches, {counts['misread']} misreadings")
    slow = sorted(rows, key=lambda r: -r["seconds"])[:3]
    print("slowest: " + ", ".join(f"{r['file']} {r['seconds']:.1f} s" for r in slow))
    if js:
        Path(js).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
