"""Start-up costs: the first call of the numeric core in a fresh process, and ``symattn prove``.

    python benchmarks/bench_startup.py [--runs 3] [--skip-prove]

Each measurement runs in a fresh Python process and reports wall time and CPU time (user + system
of the process and its children; on a shared machine the CPU time is the steadier number):

- ``import``: ``import symattn.numeric``;
- ``cold call, cached``: import plus the first ``multihead_attention`` call (the README's example),
  with the verdicts of its claims in a verdict cache written by a first run (so nothing is proved);
- ``cold call, proving``: the same with the verdict cache turned off (every claim proved first);
- ``symattn prove --jobs 1`` and ``symattn prove`` (one process per core), each proving every claim.

The verdict cache of these runs lives in a temporary directory; the user's cache is not touched.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

COLD = """
import numpy as np
import symattn.numeric as sn
rng = np.random.default_rng(0)
B, n, d_model, H, G = 2, 16, 64, 8, 2
x = rng.standard_normal((B, n, d_model)).astype(np.float32)
w_q = rng.standard_normal((d_model, d_model)).astype(np.float32) / 8
w_k, w_v = (rng.standard_normal((d_model, G * 8)).astype(np.float32) / 8 for _ in range(2))
w_o = rng.standard_normal((d_model, d_model)).astype(np.float32) / 8
y = sn.multihead_attention(x, x, x, w_q, w_k, w_v, w_o, num_heads=H, num_kv_heads=G, causal=True)
"""


def timed(argv: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child and its children) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def report(label: str, runs: list[tuple[float, float]]) -> None:
    wall = statistics.median(w for w, _ in runs)
    cpu = statistics.median(c for _, c in runs)
    print(f"{label:<34} wall {wall:6.2f} s   cpu {cpu:6.2f} s   ({len(runs)} runs, medians)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-prove", action="store_true", help="only the import and the first call")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="symattn-bench-verdicts-") as cache:
        env = {**os.environ, "PYTHONPATH": str(REPO), "SYMATTN_CACHE_DIR": cache}
        env.pop("SYMATTN_VERDICT_CACHE", None)
        py = sys.executable
        report("import symattn.numeric", [timed([py, "-c", "import symattn.numeric"], env) for _ in range(args.runs)])
        timed([py, "-c", COLD], env)  # writes the verdicts of the call's claims
        report("cold call, cached", [timed([py, "-c", COLD], env) for _ in range(args.runs)])
        off = {**env, "SYMATTN_VERDICT_CACHE": "off"}
        report("cold call, proving", [timed([py, "-c", COLD], off) for _ in range(args.runs)])
        if not args.skip_prove:
            prove = [py, "-m", "symattn", "prove"]
            report("symattn prove --jobs 1", [timed(prove + ["--jobs", "1"], env) for _ in range(args.runs)])
            report(f"symattn prove (--jobs {os.cpu_count()})", [timed(prove, env) for _ in range(args.runs)])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"(load average {load:.1f} on {os.cpu_count()} cores at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
