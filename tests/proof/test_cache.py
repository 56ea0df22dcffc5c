"""The verdict cache: a cold first call proves nothing when the verdicts are cached; an entry
whose key no longer matches (another claim, an edited definition, another version) is proved
again; a corrupt file is ignored with a warning; only proved verdicts are kept."""

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sympy as sp

import symattn as sa
from symattn import theorems
from symattn.defs.dims import BoundIndex
from symattn.proof import verdict_cache
from symattn.proof.verdict import Verdict
from symattn.theorems import claim_key, claim_verdict, load_library

REPO = Path(__file__).resolve().parents[2]
FAST = "kv_cache_step_needs_no_mask"  # one claim, proved by rewriting in a fraction of a second


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty user cache of the test's own, no shipped file, and a count of the claims proved."""
    monkeypatch.setenv("SYMATTN_CACHE_DIR", str(tmp_path / "user"))
    monkeypatch.delenv("SYMATTN_VERDICT_CACHE", raising=False)
    monkeypatch.setattr(verdict_cache, "SHIPPED", tmp_path / "shipped.json")
    verdict_cache.forget()
    proved = []
    decide = theorems._decide

    def counting(th, lhs, rhs):
        proved.append(th.name)
        return decide(th, lhs, rhs)

    monkeypatch.setattr(theorems, "_decide", counting)
    yield tmp_path / "user", proved
    verdict_cache.forget()


# -- a cold first call ---------------------------------------------------------------------------

COLD_CALL = textwrap.dedent("""
    import json, sys
    import numpy as np
    import symattn.proof.engine as engine
    import symattn.theorems as theorems

    forbid, proofs = sys.argv[1] == "forbid", []
    decide, check_request = theorems._decide, engine.check_request

    def guarded_decide(th, lhs, rhs):
        proofs.append(th.name)
        if forbid:
            raise AssertionError(f"claim of {th.name} proved on a cold call")
        return decide(th, lhs, rhs)

    def guarded_check(*args, **kw):  # every verify() passes here, however it is reached
        proofs.append("verify")
        if forbid:
            raise AssertionError("verify() ran on a cold call")
        return check_request(*args, **kw)

    theorems._decide, engine.check_request = guarded_decide, guarded_check
    import symattn.numeric as sn

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 16, 64)).astype(np.float32)
    w_q, w_o = (rng.standard_normal((64, 64)).astype(np.float32) / 8 for _ in range(2))
    w_k, w_v = (rng.standard_normal((64, 16)).astype(np.float32) / 8 for _ in range(2))
    with sn.trace() as used:
        y = sn.multihead_attention(x, x, x, w_q, w_k, w_v, w_o, num_heads=8, num_kv_heads=2, causal=True)
    methods = sorted({k.provenance.method for run in used for k in (run if isinstance(run, list) else [run])})
    print(json.dumps({"proofs": proofs, "y": y.astype(float).ravel()[:32].tolist(), "methods": methods}))
""")


def _cold_call(mode: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", COLD_CALL, mode], env=env, capture_output=True, text=True,
                         cwd=REPO, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_cold_first_call_in_a_fresh_process_proves_nothing_once_verdicts_are_cached(tmp_path):
    env = {**os.environ, "SYMATTN_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    env.pop("SYMATTN_VERDICT_CACHE", None)
    shipped = verdict_cache.SHIPPED
    first = _cold_call("allow", env)
    if not first["proofs"]:
        # the package's shipped file already held every verdict: the call is cold without proving
        assert shipped.exists()
    else:
        assert (tmp_path / "verdicts.json").exists()
    second = _cold_call("forbid", env)  # raises inside the process if any claim is proved
    assert second["proofs"] == []
    assert second["y"] == pytest.approx(first["y"], rel=1e-6)
    assert second["methods"] and all("cached (key " in m for m in second["methods"]), second["methods"]


# -- keys ----------------------------------------------------------------------------------------

def test_a_verdict_proved_once_is_read_back_with_its_key(cache_dir):
    user, proved = cache_dir
    th = load_library()[FAST]
    v = claim_verdict(th, 0)
    assert proved == [FAST] and v.proved and not isinstance(v, verdict_cache.CachedVerdict)
    key = claim_key(th, 0)
    stored = json.loads((user / "verdicts.json").read_text())["entries"]
    assert list(stored) == [key] and stored[key]["theorem"] == FAST and stored[key]["method"] == v.method
    verdict_cache.forget()  # read from the file, as a new process would
    again = claim_verdict(th, 0)
    assert proved == [FAST]
    assert isinstance(again, verdict_cache.CachedVerdict) and again.cache_key == key
    assert (again.status, again.general, again.scope, again.proved_by) == (v.status, v.general, v.scope, v.method)
    assert f"cached (key {key[:16]})" in again.method
    assert "from the verdict cache" in again.trace[0] and key in again.trace[0] and str(user) in again.trace[0]
    assert again.as_dict()["cached"]["key"] == key
    assert claim_verdict(th, 0, cached=False) is not again and proved == [FAST, FAST]


def test_another_version_is_proved_again(cache_dir, monkeypatch):
    _, proved = cache_dir
    th = load_library()[FAST]
    claim_verdict(th, 0)
    key = claim_key(th, 0)
    monkeypatch.setattr(verdict_cache, "__version__", "999.0")
    assert claim_key(th, 0) != key
    verdict_cache.forget()
    assert not isinstance(claim_verdict(th, 0), verdict_cache.CachedVerdict)
    assert proved == [FAST, FAST]


def test_an_edited_definition_is_proved_again(cache_dir, monkeypatch, tmp_path):
    _, proved = cache_dir
    th = load_library()[FAST]
    claim_verdict(th, 0)
    key = claim_key(th, 0)
    copy = tmp_path / "pkg"
    for part in ("defs", "proof", "grad"):
        shutil.copytree(REPO / "symattn" / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(verdict_cache, "_PACKAGE", copy)
    monkeypatch.setattr(verdict_cache, "_DIGESTS", {})
    assert claim_key(th, 0) == key  # the same text gives the same key
    with open(copy / "grad" / "rules.py", "a", encoding="utf-8") as fh:  # a VJP rule proves gradient claims
        fh.write("\n# an edit\n")
    monkeypatch.setattr(verdict_cache, "_DIGESTS", {})
    grad_key = claim_key(th, 0)
    assert grad_key != key
    with open(copy / "defs" / "softmax.py", "a", encoding="utf-8") as fh:
        fh.write("\n# an edit\n")
    monkeypatch.setattr(verdict_cache, "_DIGESTS", {})
    assert claim_key(th, 0) not in (key, grad_key)
    verdict_cache.forget()
    assert not isinstance(claim_verdict(th, 0), verdict_cache.CachedVerdict)
    assert proved == [FAST, FAST]


def test_a_changed_claim_under_the_same_name_is_proved_again(cache_dir, monkeypatch):
    _, proved = cache_dir
    th = load_library()[FAST]
    claim_verdict(th, 0)
    (lhs, rhs), = th.claims()

    def transposed():  # another claim (still true): both sides transposed
        return (lhs.T, rhs.T)

    transposed.__module__ = th.build.__module__
    key = claim_key(th, 0)
    other = dataclasses.replace(th, build=transposed)
    monkeypatch.setitem(theorems.REGISTRY, FAST, other)
    assert claim_key(other, 0) not in (key, None)
    verdict_cache.forget()
    v = claim_verdict(other, 0)
    assert v.proved and not isinstance(v, verdict_cache.CachedVerdict)
    assert proved == [FAST, FAST]


def test_the_key_reads_structure_names_classes_and_assumptions_not_dummy_numbers():
    n, m = sa.dims("n m")
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", m, n)
    key = lambda lhs, rhs: verdict_cache.claim_key(lhs, rhs, label="t")  # noqa: E731
    assert key(A * B, A * B) == key(A * B, A * B)
    assert key(A * B, A * B) != key(A * B, 2 * A * B)
    assert key(A * B, A * B) != verdict_cache.claim_key(A * B, A * B, label="other")
    assert key(A * B, A * B) != verdict_cache.claim_key(A * B, A * B, label="t", at=[{n: 2, m: 3}])
    k = sp.Symbol("k", integer=True, positive=True)
    assert key(k * A, k * A) != key(BoundIndex("k", integer=True, positive=True) * A, k * A)
    assert key(k * A, k * A) != key(sp.Symbol("k", integer=True) * A, k * A)
    d1, d2 = sp.Dummy("i"), sp.Dummy("i")
    fresh = sp.Dummy("i")  # made later: another number, the same structure
    assert key(d1 * A, d2 * A) == key(fresh * A, sp.Dummy("i") * A)
    assert key(d1 * A, d2 * A) != key(d1 * A, d1 * A)


def test_an_installed_copy_of_the_package_computes_the_same_key(tmp_path):
    """In a checkout the theorem library is a link (symattn/proofs -> proofs/); installed, it is a
    folder inside the package. A file shipped with the package must match in both."""
    shutil.copytree(REPO / "symattn", tmp_path / "symattn", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    assert not (tmp_path / "symattn" / "proofs").is_symlink()
    code = (f"from symattn.theorems import claim_key, load_library\n"
            f"print(claim_key(load_library()[{FAST!r}], 0))")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == claim_key(load_library()[FAST], 0)


# -- files ---------------------------------------------------------------------------------------

def test_a_corrupt_file_is_ignored_with_a_warning_and_replaced(cache_dir):
    user, proved = cache_dir
    user.mkdir(parents=True)
    (user / "verdicts.json").write_text("{ this is not json")
    th = load_library()[FAST]
    with pytest.warns(UserWarning, match="corrupt"):
        v = claim_verdict(th, 0)
    assert proved == [FAST] and v.proved
    data = json.loads((user / "verdicts.json").read_text())
    assert list(data["entries"]) == [claim_key(th, 0)]


def test_an_entry_that_is_not_a_proof_is_never_trusted(cache_dir):
    user, proved = cache_dir
    th = load_library()[FAST]
    key = claim_key(th, 0)
    user.mkdir(parents=True)
    bad = {"status": "unknown", "general": True, "method": "rewriting (A)", "scope": "all", "trace": []}
    (user / "verdicts.json").write_text(json.dumps({"format": verdict_cache.FORMAT, "entries": {key: bad}}))
    assert verdict_cache.lookup(key) is None
    assert not isinstance(claim_verdict(th, 0), verdict_cache.CachedVerdict) and proved == [FAST]
    (user / "verdicts.json").write_text(json.dumps({"format": 0, "entries": {}}))
    verdict_cache.forget()
    with pytest.warns(UserWarning, match="corrupt"):
        assert verdict_cache.lookup(key) is None
    assert not verdict_cache.remember(key, Verdict("unknown", False, "none", "not established", ()))
    assert key not in verdict_cache.pending()


def test_the_shipped_file_is_read_and_the_cache_can_be_turned_off(cache_dir, monkeypatch):
    user, proved = cache_dir
    th = load_library()[FAST]
    claim_verdict(th, 0)
    verdict_cache.flush(verdict_cache.SHIPPED, replace=True)
    (user / "verdicts.json").unlink()
    verdict_cache.forget()
    found = verdict_cache.lookup(claim_key(th, 0))
    assert found is not None and found.cache_file == str(verdict_cache.SHIPPED)
    monkeypatch.setenv("SYMATTN_VERDICT_CACHE", "off")
    verdict_cache.forget()
    assert verdict_cache.lookup(claim_key(th, 0)) is None
    assert not isinstance(claim_verdict(th, 0), verdict_cache.CachedVerdict) and proved == [FAST, FAST]
    assert not (user / "verdicts.json").exists()


def test_a_theorem_outside_the_library_is_not_cached(cache_dir):
    user, proved = cache_dir
    n = sa.dims("n")
    A = sp.MatrixSymbol("A", n, n)
    th = theorems.Theorem("_test_not_in_library", "A = A", lambda: (A, A))
    assert claim_key(th, 0) is None
    assert claim_verdict(th, 0).proved and claim_verdict(th, 0).proved
    assert proved == ["_test_not_in_library"] * 2 and not (user / "verdicts.json").exists()


def test_an_unwritable_cache_warns_and_the_claim_is_still_proved(cache_dir, monkeypatch, tmp_path):
    _, proved = cache_dir
    (tmp_path / "a_file").write_text("not a directory")
    monkeypatch.setenv("SYMATTN_CACHE_DIR", str(tmp_path / "a_file" / "cache"))
    th = load_library()[FAST]
    with pytest.warns(UserWarning) as caught:  # it can be read neither
        v = claim_verdict(th, 0)
    assert any("cannot write the verdict cache" in str(w.message) for w in caught)
    assert v.proved and proved == [FAST]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".verdicts-")] == []


def test_the_shipped_file_is_a_valid_cache_of_proved_library_claims():
    """The file shipped with the package parses, and holds only proved verdicts of library theorems
    (whether its keys are still current is for ``symattn prove --refresh --ship`` before a release)."""
    path = verdict_cache.SHIPPED
    if not path.exists():
        pytest.skip("no verdict cache is shipped in this checkout")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == verdict_cache.FORMAT and data["entries"]
    library = load_library()
    for key, entry in data["entries"].items():
        assert len(key) == 64 and verdict_cache._valid(entry), key
        assert entry["theorem"] in library and 0 <= entry["claim"] < len(library[entry["theorem"]].claims())


def test_a_claim_keeps_only_its_newest_entries(cache_dir):
    """Every edit of the sources gives each claim a new key; the file keeps the newest few per claim."""
    user, _ = cache_dir
    base = {"status": "proved", "general": True, "method": "rewriting (A)", "scope": "all", "trace": [],
            "theorem": FAST, "claim": 0}
    old = {f"{k:064x}": {**base, "written": float(k)} for k in range(verdict_cache.KEEP + 4)}
    other = {"f" * 64: {**base, "theorem": "another", "written": 0.0}}
    user.mkdir(parents=True)
    (user / "verdicts.json").write_text(json.dumps({"format": verdict_cache.FORMAT, "entries": {**old, **other}}))
    claim_verdict(load_library()[FAST], 0)  # proves (none of the keys is current) and writes the newest
    kept = json.loads((user / "verdicts.json").read_text())["entries"]
    newest = sorted(old, key=lambda k: old[k]["written"])[-(verdict_cache.KEEP - 1):]
    assert set(kept) == {claim_key(load_library()[FAST], 0), *newest, "f" * 64}
