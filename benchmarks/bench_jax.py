"""symattn.jax.dot_product_attention against jax.nn.dot_product_attention, both under jax.jit.

    python benchmarks/bench_jax.py                                  # S1 S2 S3 and P4, float32
    python benchmarks/bench_jax.py --shapes S1 --rounds 9 --cases plain causal gqa --backward

Shapes (B, T, N, H) as JAX's layout, from (batch, length, d_model, heads) of the torch benchmark:
S1 (8, 128, 4, 64), S2 (8, 512, 8, 64), S3 (1, 2048, 8, 64), P4 (4, 1024, 8, 32). Cases: plain, causal,
bias + mask, and GQA (K = N/4 key/value heads). Each implementation is jitted once (forward, and with
``--backward`` the gradient of sum(out) with respect to query, key and value); interleaved in one
process, each round times every implementation once on the same inputs (``block_until_ready``). Prints
the median time of each and the ratio symattn / jax; with ``--backward`` also symattn with
``vjp="proved"`` (the core's proved VJPs as a custom_vjp). Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

from symattn.jax import dot_product_attention

SHAPES = {"S1": (8, 128, 4, 64), "S2": (8, 512, 8, 64), "S3": (1, 2048, 8, 64), "P4": (4, 1024, 8, 32)}
CASES = ("plain", "causal", "bias_mask", "gqa")


def inputs(shape, case, dtype):
    B, T, N, H = shape
    K = max(1, N // 4) if case == "gqa" else N
    rng = np.random.default_rng(0)
    q = jnp.asarray(rng.standard_normal((B, T, N, H)), dtype)
    k, v = (jnp.asarray(rng.standard_normal((B, T, K, H)), dtype) for _ in range(2))
    kw = {"is_causal": True} if case == "causal" else {}
    if case == "bias_mask":
        kw = {"bias": jnp.asarray(rng.standard_normal((1, N, T, T)), dtype),
              "mask": jnp.asarray(rng.random((B, 1, T, T)) > 0.1)}
    return (q, k, v), kw


def compiled(fn, kw, backward):
    """jit of fn(q, k, v, bias, mask), is_causal static; with backward the gradient wrt q, k, v."""
    causal = kw.get("is_causal", False)

    def call(q, k, v, bias, mask):
        return fn(q, k, v, bias, mask, is_causal=causal)

    if not backward:
        return jax.jit(call)
    return jax.jit(jax.grad(lambda *a: jnp.sum(call(*a)), argnums=(0, 1, 2)))


def bench(shape, case, dtype, rounds, backward):
    args, kw = inputs(SHAPES[shape], case, dtype)
    args = (*args, kw.get("bias"), kw.get("mask"))
    fns = {"symattn": compiled(dot_product_attention, kw, backward),
           "jax": compiled(jax.nn.dot_product_attention, kw, backward)}
    if backward:  # the core's backward as its proved VJPs (jax.custom_vjp) instead of JAX's autodiff
        fns["proved vjp"] = compiled(functools.partial(dot_product_attention, vjp="proved"), kw, backward)
    for f in fns.values():  # compile and warm up
        jax.block_until_ready(f(*args))
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for name, f in fns.items():
            start = time.perf_counter()
            jax.block_until_ready(f(*args))
            times[name].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--dtypes", nargs="+", default=["float32"], choices=["float32", "bfloat16"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--backward", action="store_true", help="also time forward + backward (jax.grad)")
    a = ap.parse_args()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; median of {a.rounds} rounds, interleaved")
    print(f"{'shape':5} {'case':10} {'dtype':9} {'pass':8} {'symattn ms':>11} {'jax ms':>9} {'ratio':>6}"
          f"  {'proved-vjp ms':>13} {'ratio':>6}")
    for dtype in a.dtypes:
        for shape in a.shapes:
            for case in a.cases:
                for backward in ([False, True] if a.backward else [False]):
                    t = bench(shape, case, getattr(jnp, dtype), a.rounds, backward)
                    print(f"{shape:5} {case:10} {dtype:9} {'fwd+bwd' if backward else 'forward':8} "
                          f"{t['symattn'] * 1e3:11.2f} {t['jax'] * 1e3:9.2f} {t['symattn'] / t['jax']:6.2f}"
                          + (f"  {t['proved vjp'] * 1e3:13.2f} {t['proved vjp'] / t['jax']:6.2f}" if backward else ""),
                          flush=True)


if __name__ == "__main__":
    main()
