"""The NumPy backward of multi-head attention against torch autograd's backward of SDPA with projections.

    python benchmarks/backward.py                          # S1 S2 S3, float32 and float64, and memory
    python benchmarks/backward.py --shapes S2 --dtypes float32 --rounds 9 --no-memory
    python benchmarks/backward.py --memory-only --memory-n 16384

Timing: self-attention at the shapes of ``bench.py`` (S1-S3), both implementations in this one
process, one call of each per round in a random order (interleaved), median over the rounds.
Timed: symattn's ``multihead_attention_backward`` (given the forward's Saved) against torch's
``out.backward(d_out)`` after an untimed forward (SDPA with the input projection as one GEMM and
W^O, the way ``bench.py`` runs torch), both with every core of the process. The ratio printed is
symattn / torch (below 1: symattn faster). Forward + backward is printed beside it.

Memory: each implementation's backward at (1, n, 256, 4), causal, in a child process of its own;
the peak resident set during the backward (VmHWM, reset just before it through /proc/self/clear_refs)
minus the resident set just before it (inputs, weights and the forward's saved tensors already there).

On a shared machine the wall times are noisy (other processes take cores): read the ratios as
rough, and rerun before trusting a difference of 10-20%.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402  (before anything loads MKL: see bench.py)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import symattn.numeric as sn  # noqa: E402

SHAPES = {"S1": (8, 128, 256, 4), "S2": (8, 512, 512, 8), "S3": (1, 2048, 512, 8)}  # as bench.py


def _inputs(b, n, E, H, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(b, n, E)).astype(dtype)
    W = {nm: (rng.normal(size=(E, E)) / np.sqrt(E)).astype(dtype) for nm in ("w_q", "w_k", "w_v", "w_o")}
    dout = rng.normal(size=(b, n, E)).astype(dtype)
    return x, W, dout


class Symattn:
    def __init__(self, x, W, dout, H, causal=False):
        self.x, self.W, self.dout, self.opts = x, W, dout, {"num_heads": H, "causal": causal}

    def forward(self):
        self.out, self.saved = sn.multihead_attention(self.x, self.x, self.x, **self.W, return_saved=True,
                                                      **self.opts)

    def backward(self):
        return sn.multihead_attention_backward(self.dout, self.saved, self.x, self.x, self.x, **self.W, **self.opts)


class Torch:
    def __init__(self, x, W, dout, H, causal=False):
        self.H, self.causal = H, causal
        self.x = torch.tensor(x, requires_grad=True)
        self.w_qkv = torch.tensor(np.concatenate([W["w_q"], W["w_k"], W["w_v"]], axis=1), requires_grad=True)
        self.w_o = torch.tensor(W["w_o"], requires_grad=True)
        self.dout = torch.tensor(dout)

    def forward(self):
        F = torch.nn.functional
        for t in (self.x, self.w_qkv, self.w_o):
            t.grad = None
        qkv = (self.x @ self.w_qkv).unflatten(-1, (3, self.H, -1)).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=self.causal)
        self.out = o.transpose(1, 2).flatten(-2) @ self.w_o

    def backward(self):
        self.out.backward(self.dout)


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def time_shape(name, dtype, rounds):
    b, n, E, H = SHAPES[name]
    x, W, dout = _inputs(b, n, E, H, dtype)
    impls = {"symattn": Symattn(x, W, dout, H), "torch": Torch(x, W, dout, H)}
    times = {k: {"fwd": [], "bwd": []} for k in impls}
    for impl in impls.values():  # warm up (kernels lowered, buffers grown)
        impl.forward()
        impl.backward()
    for _ in range(rounds):
        order = list(impls)
        random.shuffle(order)
        for k in order:
            times[k]["fwd"].append(_timed(impls[k].forward))
            times[k]["bwd"].append(_timed(impls[k].backward))
    med = {k: {p: statistics.median(v) for p, v in t.items()} for k, t in times.items()}
    s, t = med["symattn"], med["torch"]
    print(f"{name} {np.dtype(dtype).name:8s} backward: symattn {s['bwd'] * 1e3:8.2f} ms  torch {t['bwd'] * 1e3:8.2f} ms"
          f"  ratio {s['bwd'] / t['bwd']:5.2f}   fwd+bwd: {(s['fwd'] + s['bwd']) * 1e3:8.2f} / "
          f"{(t['fwd'] + t['bwd']) * 1e3:8.2f} ms  ratio {(s['fwd'] + s['bwd']) / (t['fwd'] + t['bwd']):5.2f}",
          flush=True)
    return s["bwd"] / t["bwd"]


def _rss_mib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _reset_peak():
    """Reset the process's peak resident set (VmHWM) to its current size (Linux: clear_refs 5), so
    that the peak read after the backward is the backward's, not the import's or the forward's."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


def _peak_mib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_child(impl_name, n):
    """Run in a child: one forward, then the backward; print JSON (RSS before, peak during, seconds)."""
    x, W, dout = _inputs(1, n, 256, 4, np.float32)
    impl = (Symattn if impl_name == "symattn" else Torch)(x, W, dout, 4, causal=True)
    impl.forward()
    before = _rss_mib()
    _reset_peak()
    start = time.perf_counter()
    impl.backward()
    seconds = time.perf_counter() - start
    peak = _peak_mib()
    print(json.dumps({"before": before, "peak": peak, "seconds": seconds}))


def memory(n):
    dense = 4 * n * n * 4 / 2**20
    print(f"memory, backward at (1, {n}, 256, 4) float32 causal: one (heads, n, m) float32 array of scores "
          f"would be {dense:.0f} MiB")
    for impl in ("symattn", "torch"):
        out = subprocess.run([sys.executable, __file__, "--child", impl, str(n)], capture_output=True, text=True,
                             check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"  {impl:8s} peak RSS during the backward {r['peak']:8.1f} MiB, before it {r['before']:8.1f} MiB: "
              f"+{r['peak'] - r['before']:.1f} MiB ({r['seconds']:.1f} s)", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default="S1,S2,S3")
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--memory-n", type=int, default=32768)
    p.add_argument("--no-memory", action="store_true")
    p.add_argument("--memory-only", action="store_true")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return memory_child(a.child[0], int(a.child[1]))
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    if not a.memory_only:
        print(f"cores {len(os.sched_getaffinity(0))}, torch {torch.__version__}, rounds {a.rounds}, "
              "interleaved, median")
        for name in a.shapes.split(","):
            for dt in a.dtypes.split(","):
                time_shape(name, np.dtype(dt), a.rounds)
    if not a.no_memory:
        memory(a.memory_n)


if __name__ == "__main__":
    main()
