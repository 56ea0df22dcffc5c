"""symattn.numeric on Dask arrays: lazy, per chunk of batch elements, equal to NumPy; on a real cluster."""

import numpy as np
import pytest

import symattn.numeric as sn
from symattn.errors import InputError, ShapeError

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _weights(rng, d_model, widths, dtype=np.float32):
    return [(rng.standard_normal((d_model, w)) / np.sqrt(d_model)).astype(dtype) for w in widths]


@pytest.fixture
def small():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 16, 32)).astype(np.float32)
    y = rng.standard_normal((6, 9, 32)).astype(np.float32)
    return rng, x, y


def _counting(monkeypatch):
    """Count the calls of the NumPy multi-head function (each chunk calls it once)."""
    import symattn.numeric.multihead as mh

    calls = []
    real = mh.multihead_attention

    def counted(*args, **kwargs):
        calls.append(args[0].shape)
        return real(*args, **kwargs)

    monkeypatch.setattr(mh, "multihead_attention", counted)
    return calls


def test_multihead_on_dask_is_lazy_chunked_by_batch_and_equals_numpy(small, monkeypatch):
    rng, x, _ = small
    w_q, w_k, w_v, w_o = _weights(rng, 32, (32, 32, 32, 32))
    b = [rng.standard_normal((1, 32)).astype(np.float32) for _ in range(4)]
    lazy = da.from_array(x, chunks=(2, 16, 32))
    calls = _counting(monkeypatch)
    got = sn.multihead_attention(lazy, lazy, lazy, w_q, w_k, w_v, w_o, num_heads=4, causal=True,
                                 b_q=b[0], b_k=b[1], b_v=b[2], b_o=b[3])
    assert isinstance(got, da.Array) and got.chunks == ((2, 2, 2), (16,), (32,)) and got.dtype == np.float32
    assert [s[0] for s in calls] == [0]  # only the probe on an empty batch ran: nothing is computed yet
    want = sn.multihead_attention(x, x, x, w_q, w_k, w_v, w_o, num_heads=4, causal=True,
                                  b_q=b[0], b_k=b[1], b_v=b[2], b_o=b[3])
    out = got.compute(scheduler="sync")
    assert sorted(s[0] for s in calls[1:]) == [2, 2, 2]  # one call per chunk of two batch elements
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


def test_cross_gqa_attention_rechunks_keys_like_the_queries(small):
    rng, x, y = small
    w_q, w_k, w_v, w_o = _weights(rng, 32, (32, 16, 16, 32))
    got = sn.multihead_attention(da.from_array(x, chunks=(2, 16, 32)), da.from_array(y, chunks=(3, 9, 32)), y,
                                 w_q, w_k, w_v, w_o, num_heads=4, num_kv_heads=2)
    assert got.chunks[0] == (2, 2, 2)
    want = sn.multihead_attention(x, y, y, w_q, w_k, w_v, w_o, num_heads=4, num_kv_heads=2)
    np.testing.assert_allclose(got.compute(scheduler="sync"), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("convention", ["row", "column"])
def test_attention_on_dask_equals_numpy_in_both_conventions(small, convention):
    _, x, y = small
    if convention == "column":
        x, y = (np.ascontiguousarray(np.swapaxes(a, -1, -2)) for a in (x, y))
    got = sn.attention(da.from_array(x, chunks=(4,) + x.shape[1:]), y, y, convention=convention)
    want = sn.attention(x, y, y, convention=convention)
    assert got.shape == want.shape and got.chunks[0] == (4, 2)
    np.testing.assert_allclose(got.compute(scheduler="sync"), want, rtol=1e-6, atol=1e-6)


def test_pooling_on_dask_equals_numpy(small):
    rng, x, _ = small
    w_q, w_k, w_v, w_o = _weights(rng, 32, (32, 32, 32, 32))
    q = rng.standard_normal((1, 32)).astype(np.float32)
    lazy = da.from_array(x, chunks=(1, 16, 32))
    got = sn.attention_pool(lazy, q, w_q, w_k, w_v, w_o, num_heads=4)
    assert got.chunks == ((1,) * 6, (1,), (32,))
    np.testing.assert_allclose(got.compute(scheduler="sync"), sn.attention_pool(x, q, w_q, w_k, w_v, w_o, num_heads=4),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(sn.mean_pool(lazy).compute(scheduler="sync"), sn.mean_pool(x), rtol=1e-6, atol=1e-6)


def test_dask_inputs_are_checked_before_anything_is_computed(small):
    rng, x, _ = small
    w_q, w_k, w_v, w_o = _weights(rng, 32, (32, 32, 32, 16))
    lazy = da.from_array(x, chunks=(2, 16, 32))
    with pytest.raises(ShapeError, match=r"w_o should be \(num_heads·d_v, d_model\) = \(32, 32\), got \(32, 16\)"):
        sn.multihead_attention(lazy, lazy, lazy, w_q, w_k, w_v, w_o, num_heads=4)
    with pytest.raises(InputError, match="x: attention works on real floating-point arrays; got dtype int64"):
        sn.mean_pool(da.zeros((2, 3, 4), dtype=np.int64))
    with pytest.raises(InputError, match="mask: on Dask arrays attention takes a mask of at most 2 axes"):
        sn.attention(lazy, lazy, lazy, mask=np.ones((6, 16, 16), dtype=bool))
    with pytest.raises(ShapeError, match="batch axes do not broadcast"):
        sn.attention(lazy, x[:4], x[:4])


def test_multihead_and_pooling_on_a_local_cluster_of_worker_processes(tmp_path):
    """A real scheduler with two worker processes, each with a memory limit smaller than the input
    (the input is made on the workers, chunk by chunk, and never whole in one of them)."""
    distributed = pytest.importorskip("distributed")
    limit = 64 * 2**20
    # the limit is what the workers' managed memory spills to disk at; a worker process with NumPy,
    # SymPy and symattn loaded is itself near this size, so pausing and restarting on the process's
    # whole memory are turned off (they would stop a worker before it holds any data)
    settings = {"distributed.worker.memory.target": 0.5, "distributed.worker.memory.spill": 0.6,
                "distributed.worker.memory.pause": False, "distributed.worker.memory.terminate": False}
    B, n, d_model, H = 4608, 64, 64, 4
    x = da.random.default_rng(7).standard_normal((B, n, d_model), chunks=(256, n, d_model), dtype=np.float32)
    assert x.nbytes > limit and x.numblocks[0] == 18  # 72 MiB in 18 chunks of 4 MiB
    rng = np.random.default_rng(8)
    w_q, w_k, w_v, w_o = _weights(rng, d_model, (d_model,) * 4)
    q = rng.standard_normal((1, d_model)).astype(np.float32)
    with dask.config.set(settings):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=limit,
                                      dashboard_address=None, local_directory=str(tmp_path)) as cluster, \
                distributed.Client(cluster) as client:
            workers = client.scheduler_info()["workers"].values()
            assert len(workers) == 2 and all(w["memory_limit"] == limit for w in workers)
            y = sn.multihead_attention(x, x, x, w_q, w_k, w_v, w_o, num_heads=H, causal=True)
            p = sn.attention_pool(x, q, w_q, w_k, w_v, w_o, num_heads=H)
            got_y, got_p = client.compute([y, p], sync=True)
            ran = client.run(lambda: __import__("os").getpid())
    assert len(set(ran.values())) == 2 and __import__("os").getpid() not in ran.values()
    x_np = x.compute(scheduler="sync")  # the same values (the generator is seeded per chunk)
    for b0 in range(0, B, 1536):  # NumPy on the whole array in a few slices, to bound the test's memory
        s = slice(b0, b0 + 1536)
        np.testing.assert_allclose(got_y[s], sn.multihead_attention(x_np[s], x_np[s], x_np[s], w_q, w_k, w_v, w_o,
                                                                    num_heads=H, causal=True), rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(got_p, sn.attention_pool(x_np, q, w_q, w_k, w_v, w_o, num_heads=H),
                               rtol=2e-5, atol=2e-5)


def test_decode_step_and_blocked_core_on_dask_equal_numpy(small):
    rng, x, _ = small
    cache_k, cache_v = x[:, :-1], x[:, :-1] * 0.5
    q_t = x[:, -1:]
    lazy = da.from_array(q_t, chunks=(2, 1, 32))
    out, K, V = sn.kv_decode_step(lazy, q_t, q_t * 0.5, da.from_array(cache_k, chunks=(3, 15, 32)), cache_v)
    assert all(isinstance(a, da.Array) for a in (out, K, V)) and out.chunks[0] == (2, 2, 2)
    want = sn.kv_decode_step(q_t, q_t, q_t * 0.5, cache_k, cache_v)
    for got, ref in zip((out, K, V), want):
        np.testing.assert_allclose(got.compute(scheduler="sync"), ref, rtol=1e-6, atol=1e-6)
    q = x * 0.25
    got = sn.blocked_core(da.from_array(q, chunks=(3, 16, 32)), x, x, causal=True, block_size=4)
    np.testing.assert_allclose(got.compute(scheduler="sync"), sn.blocked_core(q, x, x, causal=True, block_size=4),
                               rtol=1e-6, atol=1e-6)
    with pytest.raises(InputError, match="out: on Dask arrays blocked_core returns a new Dask array"):
        sn.blocked_core(da.from_array(q), x, x, out=np.empty_like(q))


def test_dask_weights_are_not_computed_to_build_the_graph(small, monkeypatch):
    """Weights given as Dask arrays (persisted on a cluster) are read by the chunks, never by the probe."""
    rng, x, _ = small
    w = _weights(rng, 32, (32, 32, 32, 32))
    lazy_w = [da.from_array(a, chunks=a.shape) for a in w]
    computed = []
    real = da.Array.compute
    monkeypatch.setattr(da.Array, "compute", lambda self, **kw: computed.append(self.shape) or real(self, **kw))
    got = sn.multihead_attention(da.from_array(x, chunks=(2, 16, 32)), x, x, *lazy_w, num_heads=4)
    assert computed == []
    np.testing.assert_allclose(real(got, scheduler="sync"), sn.multihead_attention(x, x, x, *w, num_heads=4),
                               rtol=1e-6, atol=1e-6)


def test_numpy_weights_are_scattered_once_to_the_default_client(small):
    """With a distributed client as the default scheduler, NumPy weights are scattered to the
    workers once (by the hash of their bytes) and reused by later calls; equal bytes share one
    Future, changed bytes get another; a graph built with another scheduler set holds the
    weights themselves and computes without the client."""
    distributed = pytest.importorskip("distributed")
    from symattn.numeric import dask_arrays

    rng, x, _ = small
    w = _weights(rng, 32, (32, 32, 32, 32))
    lazy = da.from_array(x, chunks=(2, 16, 32))
    want = sn.multihead_attention(x, x, x, *w, num_heads=4)
    with distributed.Client(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as client:
        first = sn.multihead_attention(lazy, lazy, lazy, *w, num_heads=4)
        kept = dict(dask_arrays._SCATTERED[client])
        assert len(kept) == 4 and all(f.status == "finished" for f in kept.values())
        again = sn.multihead_attention(lazy, lazy, lazy, *[a.copy() for a in w], num_heads=4)
        assert dask_arrays._SCATTERED[client] == kept  # equal bytes: the same Futures, nothing sent again
        changed = w[:3] + [w[3] * 2]
        other = sn.multihead_attention(lazy, lazy, lazy, *changed, num_heads=4)
        assert len(dask_arrays._SCATTERED[client]) == 5
        got = client.compute([first, again, other], sync=True)
        with dask.config.set(scheduler="sync"):
            local = sn.multihead_attention(lazy, lazy, lazy, *w, num_heads=4)
    np.testing.assert_array_equal(got[0], got[1])
    np.testing.assert_allclose(got[0], want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[2], sn.multihead_attention(x, x, x, *changed, num_heads=4), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(local.compute(scheduler="sync"), want, rtol=1e-6, atol=1e-6)  # the client is gone


def test_gather_joins_the_chunks_on_the_client_and_equals_compute(small):
    """gather() fetches each chunk from the worker that holds it and joins them on the client: the
    same array as .compute(); the result does not stay on the workers; without a distributed
    client it is .compute(); anything but a Dask array is refused."""
    distributed = pytest.importorskip("distributed")
    from symattn.numeric.dask_arrays import gather

    rng, x, _ = small
    w = _weights(rng, 32, (32, 32, 32, 32))
    lazy = da.from_array(x, chunks=(2, 16, 32))
    want = sn.multihead_attention(x, x, x, *w, num_heads=4)
    with distributed.Client(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as client:
        y = sn.multihead_attention(lazy, lazy, lazy, *w, num_heads=4)
        got = gather(y)
        assert type(got) is np.ndarray and got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, y.compute())
        two_axes = da.from_array(np.arange(24.0).reshape(4, 6), chunks=(2, 3))  # chunks along both axes
        np.testing.assert_array_equal(gather(two_axes), np.arange(24.0).reshape(4, 6))
        names = {y.name, two_axes.name}

        def held(dask_scheduler):
            return [k for k in dask_scheduler.tasks if isinstance(k, tuple) and k[0] in names]

        for _ in range(500):  # the chunks are released once they have arrived
            if not client.run_on_scheduler(held):
                break
            __import__("time").sleep(0.01)
        assert client.run_on_scheduler(held) == []
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gather(sn.multihead_attention(lazy, lazy, lazy, *w, num_heads=4)), want,
                               rtol=1e-6, atol=1e-6)  # no client: .compute()
    with pytest.raises(InputError, match="gather: expected a Dask array, got ndarray"):
        gather(x)


def test_the_probe_runs_once_per_function_options_shapes_and_constants(small, monkeypatch):
    """A second call with the same function, options, shapes and constant bytes reuses the
    probe's outcome (and builds an equal graph); changing an option, a shape or a weight's bytes
    probes again and names a different output; every result equals NumPy's."""
    rng, x, _ = small
    w = _weights(rng, 32, (32, 32, 32, 32))
    lazy = da.from_array(x, chunks=(2, 16, 32))
    import collections

    from symattn.numeric import checks, dask_arrays

    monkeypatch.setattr(dask_arrays, "_PROBED", collections.OrderedDict())  # nothing kept from other tests
    calls = []
    real = checks.divide  # the NumPy function calls it once (it is not in the closure the probe is keyed on)
    monkeypatch.setattr(checks, "divide", lambda *args: calls.append(args) or real(*args))

    def probes():  # once per run of the NumPy function: the divisor of w_q's columns by the heads
        return sum(1 for args in calls if "w_q" in args[1])

    first = sn.multihead_attention(lazy, lazy, lazy, *w, num_heads=4)
    again = sn.multihead_attention(lazy, lazy, lazy, *[a.copy() for a in w], num_heads=4)
    assert probes() == 1 and again.name == first.name
    causal = sn.multihead_attention(lazy, lazy, lazy, *w, num_heads=4, causal=True)
    heads = sn.multihead_attention(lazy, lazy, lazy, *w, num_heads=2)
    changed = sn.multihead_attention(lazy, lazy, lazy, *w[:3], w[3] * 2, num_heads=4)
    shorter = sn.multihead_attention(lazy[:, :8], lazy[:, :8], lazy[:, :8], *w, num_heads=4)
    assert probes() == 5
    assert len({first.name, causal.name, heads.name, changed.name, shorter.name}) == 5
    cases = [(first, x, w, {}), (causal, x, w, {"causal": True}), (heads, x, w, {"num_heads": 2}),
             (changed, x, w[:3] + [w[3] * 2], {}), (shorter, x[:, :8], w, {})]
    for got, xs, ws, options in cases:
        np.testing.assert_allclose(got.compute(scheduler="sync"),
                                   sn.multihead_attention(xs, xs, xs, *ws, **{"num_heads": 4, **options}),
                                   rtol=1e-6, atol=1e-6)
    with pytest.raises(ShapeError, match="w_o should be"):  # a failed probe is not kept: it fails again
        sn.multihead_attention(lazy, lazy, lazy, *w[:3], w[3][:, :16], num_heads=4)
    with pytest.raises(ShapeError, match="w_o should be"):
        sn.multihead_attention(lazy, lazy, lazy, *w[:3], w[3][:, :16], num_heads=4)
