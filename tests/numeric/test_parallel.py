"""Work items on every core, scratch buffers and out= : the same numbers as the plain paths."""

import threading

import numpy as np
import pytest

import symattn.numeric as sn
from symattn.errors import ShapeError
from symattn.lowering.targets import numpy as runtime
from symattn.numeric import blocked, parallel, workspace
from symattn.numeric.kernels import get

RNG = np.random.default_rng(7)


def mha_inputs(b=3, n=40, d_model=16, H=4, dtype=np.float64, rng=RNG):
    x = rng.normal(size=(b, n, d_model)).astype(dtype)
    w = [(rng.normal(size=(d_model, d_model)) / 4).astype(dtype) for _ in range(4)]
    return x, w


def reference(x, w, H):
    """Multi-head attention written out head by head."""
    w_q, w_k, w_v, w_o = w
    d = x.shape[-1] // H
    heads = []
    for h in range(H):
        cols = slice(h * d, (h + 1) * d)
        s = (x @ w_q[:, cols]) @ np.swapaxes(x @ w_k[:, cols], -1, -2) / np.sqrt(d)
        p = np.exp(s - s.max(-1, keepdims=True))
        heads.append(p / p.sum(-1, keepdims=True) @ (x @ w_v[:, cols]))
    return np.concatenate(heads, axis=-1) @ w_o


def test_kernel_writes_into_out_and_returns_it():
    k = get("scores")
    q, kk = RNG.normal(size=(2, 5, 3)), RNG.normal(size=(2, 7, 3))
    out = np.empty((2, 5, 7))
    res = k(q, kk, out=out)
    assert res is out
    np.testing.assert_allclose(out, q @ np.swapaxes(kk, -1, -2))
    assert "mm(Q, t0, out=out)" in k.source  # made there, not copied


def test_kernel_out_with_a_bias_stays_in_place_and_without_out_is_fresh():
    k = get("output_bias")
    z, w, b = RNG.normal(size=(2, 5, 6)), RNG.normal(size=(6, 4)), RNG.normal(size=(1, 4))
    out = np.empty((2, 5, 4))
    assert k(Z=z, **{"W^O": w, "b^O": b}, H=2, d_v=3, out=out) is out
    fresh = k(Z=z, **{"W^O": w, "b^O": b}, H=2, d_v=3)
    assert not np.shares_memory(fresh, out)
    np.testing.assert_allclose(out, z @ w + b)
    np.testing.assert_allclose(fresh, out)


def test_scratch_buffers_are_reused_per_thread_and_large_ones_are_fresh():
    a = workspace.take("t", (3, 4), np.float64)
    b = workspace.take("t", (2, 2), np.float32)
    assert np.shares_memory(a, b)
    other = []
    t = threading.Thread(target=lambda: other.append(workspace.take("t", (3, 4), np.float64)))
    t.start()
    t.join()
    assert not np.shares_memory(a, other[0])  # each thread has its own
    big = (workspace.LIMIT // 8 + 1,)
    assert not np.shares_memory(workspace.take("big", big, np.float64), workspace.take("big", big, np.float64))
    workspace.release()


def test_results_are_fresh_arrays_call_after_call():
    x, w = mha_inputs()
    first = sn.multihead_attention(x, x, x, *w, num_heads=4)
    kept = first.copy()
    second = sn.multihead_attention(2 * x, 2 * x, 2 * x, *w, num_heads=4)
    assert not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, kept)  # the second call did not write into the first result


def test_work_items_and_the_serial_fallback_agree_with_the_reference(monkeypatch):
    x, w = mha_inputs(n=70)
    monkeypatch.setattr(blocked, "ITEM_BYTES", 2**12)  # many items: head groups and query tiles
    split = sn.multihead_attention(x, x, x, *w, num_heads=4)
    monkeypatch.setattr(parallel, "can_split", lambda: False)
    serial = sn.multihead_attention(x, x, x, *w, num_heads=4)
    np.testing.assert_allclose(split, reference(x, w, 4), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(serial, split, rtol=1e-12, atol=1e-14)


def test_blas_threads_are_restored_after_a_call_and_after_an_error():
    controllers = parallel._numpy_blas()
    if not controllers or runtime.cores() < 2:
        pytest.skip("no controllable BLAS or a single core: items run in order, BLAS untouched")
    before = [c.num_threads for c in controllers]
    x, w = mha_inputs()
    sn.multihead_attention(x, x, x, *w, num_heads=4)
    assert [c.num_threads for c in controllers] == before

    def boom(item):
        if item == 3:
            raise ValueError("item 3")

    with pytest.raises(ValueError, match="item 3"):
        parallel.run_items(boom, range(8))
    assert [c.num_threads for c in controllers] == before


def test_every_item_runs_once_and_the_first_error_reaches_the_caller():
    seen = []
    lock = threading.Lock()

    def record(item):
        with lock:
            seen.append(item)

    parallel.run_items(record, range(50))
    assert sorted(seen) == list(range(50))
    with pytest.raises(ZeroDivisionError):
        runtime.share(lambda i: 1 / (i - 7), range(10))


def test_concurrent_calls_from_several_threads_each_get_their_own_answer():
    inputs = [mha_inputs(rng=np.random.default_rng(s)) for s in range(4)]
    results = [None] * 4

    def call(i):
        x, w = inputs[i]
        for _ in range(3):
            results[i] = sn.multihead_attention(x, x, x, *w, num_heads=4)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (x, w), res in zip(inputs, results):
        np.testing.assert_allclose(res, reference(x, w, 4), rtol=1e-10, atol=1e-12)


def test_core_out_must_have_the_result_shape_and_dtype():
    q, k, v = RNG.normal(size=(2, 5, 3)), RNG.normal(size=(2, 7, 3)), RNG.normal(size=(2, 7, 4))
    with pytest.raises(ShapeError, match=r"out should be \(2, 5, 4\) float64, got \(2, 5, 3\)"):
        sn.blocked_core(q, k, v, out=np.empty((2, 5, 3)))
    out = np.empty((2, 4, 5)).swapaxes(-1, -2)  # a strided view is fine
    sn.blocked_core(q, k, v, out=out)
    np.testing.assert_allclose(out, sn.blocked_core(q, k, v))


def test_a_mask_with_batch_axes_the_inputs_lack_is_refused():
    q, k, v = RNG.normal(size=(5, 3)), RNG.normal(size=(7, 3)), RNG.normal(size=(7, 4))
    with pytest.raises(ShapeError, match="do not broadcast"):
        sn.blocked_core(q, k, v, mask=np.zeros((2, 5, 7)))


def test_bias_rows_added_in_chunks_match_plain_addition(monkeypatch):
    monkeypatch.setattr(runtime, "CHUNK", 64)  # force the chunked path on a small array
    a = RNG.normal(size=(3, 50, 8))
    b = RNG.normal(size=(1, 8))
    expected = a + b
    if runtime.cores() > 1:
        assert runtime._row_chunks(a) is not None
    res = runtime.iadd(a, b)
    assert res is a
    np.testing.assert_array_equal(res, expected)


def test_batch_rows_fold_into_one_product_only_without_a_copy():
    a, w = RNG.normal(size=(4, 6, 5)), RNG.normal(size=(5, 3))
    np.testing.assert_allclose(runtime.mm(a, w), a @ w)
    strided = a.swapaxes(0, 1)  # not C-contiguous: the batched product
    np.testing.assert_allclose(runtime.mm(strided, w), strided @ w)
    out = np.empty((4, 6, 3))
    assert runtime.mm(a, w, out=out) is out
    np.testing.assert_allclose(out, a @ w)


def test_the_shift_is_chosen_per_tile_so_repeated_calls_agree_bit_for_bit(monkeypatch):
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=(8, 64, 16)).astype(np.float32) for _ in range(3))
    q[0, 0] *= 200  # one tile needs the shifted form, the others not
    with sn.trace() as used:
        first = sn.blocked_core(q, k, v, tile=32)
    shifted, unshifted = get("deferred"), get("exp_product")
    assert sum(k is shifted for k in used) == 1 and sum(k is unshifted for k in used) == 4
    for _ in range(20):
        np.testing.assert_array_equal(sn.blocked_core(q, k, v, tile=32), first)
    monkeypatch.setattr(parallel, "can_split", lambda: False)
    np.testing.assert_array_equal(sn.blocked_core(q, k, v, tile=32), first)


def test_subnormal_products_send_the_tile_to_the_shifted_form():
    """Scores near -35 in float32 and |v| ~ 1e-28: exp(s) v is subnormal without a shift."""
    rng = np.random.default_rng(5)
    q = np.zeros((4, 8), np.float32)
    k = np.zeros((64, 8), np.float32)
    v = (rng.normal(size=(64, 3)) * 1e-28).astype(np.float32)
    mask = np.full((4, 64), -35.0, np.float32)
    out = sn.blocked_core(q, k, v, mask=mask)
    exact = np.broadcast_to(v.astype(np.float64).mean(axis=0), (4, 3))  # equal scores: the mean
    np.testing.assert_allclose(out, exact, rtol=1e-5)


def test_after_an_error_no_new_item_starts_and_running_ones_finish_first(monkeypatch):
    import time

    monkeypatch.setattr(runtime, "cores", lambda: 3)
    runtime._POOL.clear()  # a pool with two helpers
    finished, started = [], []

    def item(i):
        started.append(i)
        if i == 0:
            time.sleep(0.05)
            raise RuntimeError("item 0")
        time.sleep(0.3)
        finished.append(i)

    with pytest.raises(RuntimeError, match="item 0"):
        runtime.share(item, range(20))
    assert sorted(finished) == sorted(i for i in started if i != 0)  # nothing still running
    assert len(started) <= 4  # the two helpers had begun items 1 and 2, then stopped
    runtime._POOL.clear()


def test_a_column_is_not_added_as_a_row_on_the_chunked_path(monkeypatch):
    monkeypatch.setattr(runtime, "CHUNK", 16)
    a, col = np.zeros((64, 64)), np.arange(64.0).reshape(64, 1)
    np.testing.assert_array_equal(runtime.iadd(a, col), np.zeros((64, 64)) + col)


def test_kernel_out_of_the_wrong_shape_or_dtype_is_refused():
    k = get("output")
    z, w = RNG.normal(size=(2, 5, 6)), RNG.normal(size=(6, 4))
    for bad in (np.empty((5, 2, 4)), np.empty((2, 5, 4), np.float32), np.empty((3, 2, 5, 4))):
        with pytest.raises(ShapeError, match=r"out: the result is \(2, 5, 4\) float64"):
            k(Z=z, **{"W^O": w}, H=2, d_v=3, out=bad)


def test_core_out_may_not_overlap_an_input():
    from symattn.errors import InputError

    q, k = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 3))
    v = RNG.normal(size=(5, 3))
    with pytest.raises(InputError, match="out overlaps v"):
        sn.blocked_core(q, k, v, out=v)


@pytest.mark.parametrize("which", ["w_o", "key", "w_q"])
def test_mixed_precision_inputs_follow_numpy_promotion(which):
    rng = np.random.default_rng(11)
    x = rng.normal(size=(2, 5, 8)).astype(np.float32)
    w = [rng.normal(size=(8, 8)).astype(np.float32) / 3 for _ in range(4)]
    args = {"query": x, "key": x, "value": x, "w_q": w[0], "w_k": w[1], "w_v": w[2], "w_o": w[3]}
    args[which] = args[which].astype(np.float64)
    if which == "key":
        args["value"] = args["key"]
    out = sn.multihead_attention(**args, num_heads=2)
    assert out.dtype == np.float64
    wide = {k: np.asarray(a, np.float64) for k, a in args.items()}
    np.testing.assert_allclose(out, sn.multihead_attention(**wide, num_heads=2), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("H,G,causal,masked,biased", [
    (4, 4, False, False, True), (4, 2, True, False, False), (4, 1, False, True, True), (2, 2, True, True, False)])
def test_each_batch_element_as_one_item_equals_the_stepwise_path(monkeypatch, dtype, H, G, causal, masked, biased):
    rng = np.random.default_rng(H * 10 + G)
    b, n, d_model, d = 8, 12, 16, 4
    x = rng.normal(size=(2, b // 2, n, d_model)).astype(dtype)  # two batch axes
    w_q = (rng.normal(size=(d_model, H * d)) / 3).astype(dtype)
    w_k, w_v = ((rng.normal(size=(d_model, G * d)) / 3).astype(dtype) for _ in range(2))
    w_o = (rng.normal(size=(H * d, d_model)) / 3).astype(dtype)
    extra = {}
    if biased:
        extra = {"b_q": rng.normal(size=H * d), "b_k": rng.normal(size=G * d), "b_v": rng.normal(size=G * d),
                 "b_o": rng.normal(size=d_model)}
        extra = {k: v.astype(dtype) for k, v in extra.items()}
    if masked:
        extra["mask"] = rng.random((n, n)) < 0.7
        extra["mask"][:, 0] = True  # no fully masked row
    run = lambda: sn.multihead_attention(x, x, x, w_q, w_k, w_v, w_o, num_heads=H, num_kv_heads=G,  # noqa: E731
                                         causal=causal, **extra)
    from symattn.numeric import multihead

    if not multihead._per_element_fits(x, None, None, H, n, dtype):
        pytest.skip("one core or no controllable BLAS: the per-element path is not taken")
    with sn.trace() as used:
        whole = run()
    assert any(k.provenance.side.startswith("lhs, the subexpression") and "fused" in k.provenance.theorem
               for k in used)  # the weights side by side once: the per-element path ran
    monkeypatch.setattr(multihead, "_per_element_fits", lambda *a: False)
    stepwise = run()
    tol = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(whole, stepwise, **tol)
    assert whole.dtype == dtype


def test_kernels_are_lowered_in_the_calling_thread_never_in_a_work_item():
    """Lowering proves claims under a time budget kept by signals: only the main thread may."""
    import subprocess
    import sys

    code = (
        "import threading, numpy as np\n"
        "import symattn.numeric.kernels as K\n"
        "orig, seen = K.lower_theorem, []\n"
        "def spy(*a, **k):\n"
        "    seen.append(threading.current_thread() is threading.main_thread())\n"
        "    return orig(*a, **k)\n"
        "K.lower_theorem = spy\n"
        "import symattn.numeric as sn\n"
        "x = np.random.rand(8, 6, 8); w = [np.random.rand(8, 8) for _ in range(4)]\n"
        "sn.multihead_attention(x, x, x, *w, num_heads=2, b_q=np.zeros(8))\n"
        "sn.multihead_attention(x[:2], x[:2], x[:2], *w, num_heads=2, causal=True)\n"
        "print(len(seen), all(seen))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    count, main_only = out.split()
    assert int(count) >= 5 and main_only == "True"


def test_items_hold_blas_to_one_thread_also_when_called_from_another_thread(monkeypatch):
    """OpenBLAS ignores openblas_set_num_threads from every thread but the first that called it: a
    call of the core from a pool thread must still run its items with one BLAS thread, or fall back
    to running them one after another; and the count is restored afterwards."""
    from concurrent.futures import ThreadPoolExecutor

    if not parallel._numpy_blas():
        pytest.skip("no controllable BLAS")
    seen = []
    share = runtime.share

    def spy(fn, items):
        seen.extend(c.num_threads for c in parallel._numpy_blas())
        return share(fn, items)

    monkeypatch.setattr(runtime, "share", spy)
    before = [c.num_threads for c in parallel._numpy_blas()]
    for c in parallel._numpy_blas():
        c.set_num_threads(max(2, before[0]))  # this thread (the first to set it) owns the count now
    try:
        want = [c.num_threads for c in parallel._numpy_blas()]
        rng = np.random.default_rng(3)
        x = rng.standard_normal((4, 16, 32))
        w = [rng.standard_normal((32, 32)) / 6 for _ in range(4)]
        with ThreadPoolExecutor(1) as ex:
            got = ex.submit(sn.multihead_attention, x, x, x, *w, num_heads=4).result()
        np.testing.assert_allclose(got, sn.multihead_attention(x, x, x, *w, num_heads=4), rtol=1e-12, atol=1e-12)
        assert set(seen) <= {1}, seen  # items ran on one BLAS thread each (or serially: nothing shared)
        assert [c.num_threads for c in parallel._numpy_blas()] == want
    finally:
        for c, n in zip(parallel._numpy_blas(), before):
            c.set_num_threads(n)
