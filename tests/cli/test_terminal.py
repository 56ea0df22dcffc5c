"""symattn prove and symattn check at the command line: the table fits the terminal, parallel runs
give the serial results, cached rows say so, --refresh rewrites the cache; options that make no
sense (--json with --markdown, a budget <= 0, no processes) are refused by argparse."""

import json

import pytest
import sympy as sp

import symattn as sa
from symattn import theorems
from symattn.cli import main
from symattn.commands.prove import HEAD, _table
from symattn.proof import kernel, verdict_cache
from symattn.proof.verdict import AuditRecord, Candidate
from symattn.theorems import REGISTRY, Result, Theorem, load_library, theorem

FAST = ["kv_cache_step_needs_no_mask", "mean_pool_is_uniform_attention", "softmax_columns_sum_to_one"]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMATTN_CACHE_DIR", str(tmp_path / "user"))
    monkeypatch.delenv("SYMATTN_VERDICT_CACHE", raising=False)
    monkeypatch.setattr(verdict_cache, "SHIPPED", tmp_path / "shipped.json")
    verdict_cache.forget()
    yield tmp_path
    verdict_cache.forget()


def _results():
    """Two results with long cells, built without proving anything."""
    long = "softmax(c·1ᵀ + S) = softmax(S) for every column c, in both conventions, scaled and unscaled"
    out = []
    for k in range(2):
        th = Theorem(f"a_theorem_with_a_rather_long_name_{k}", long, lambda: [])
        found = Candidate(True, "induction on H (C) + entrywise (B) + rewriting (A)",
                          "all dimensions (d_k, d_model, d_v, m, n, s, t) and every H >= 1", ())
        v = kernel._sealed(found, AuditRecord(1, (), "audit: a record made for this display test"))
        out.append(Result(th, [v], 1.25 + k))
    return out


def test_the_table_fits_the_width_it_is_given():
    rows = _results()
    full = _table(rows, False).splitlines()
    assert max(map(len, full)) > 150  # too wide for the widths below
    for width in (150, 120):
        lines = _table(rows, False, width).splitlines()
        assert max(map(len, lines)) <= width, width
        assert lines[0].split() == list(HEAD)
        assert "a_theorem_with_a_rather_long_name_1" in lines[3] and "…" in lines[3]
    narrow = _table(rows, False, 50).splitlines()  # no room for the table: one block per theorem
    assert max(map(len, narrow)) <= 50
    assert "a_theorem_with_a_rather_long_name_0" in narrow and any("proved, general" in ln for ln in narrow)
    assert _table(rows, True, 50) == _table(rows, True)  # --wide: full lines whatever the width


def test_prove_honours_COLUMNS(monkeypatch, capsys, cache_dir):
    monkeypatch.setenv("COLUMNS", "90")
    assert main(["prove", "--jobs", "1", *FAST]) == 0
    out = capsys.readouterr().out
    table = out.split("\n\n")[0].splitlines()
    assert max(map(len, table)) <= 90 and "kv_cache_step_needs_no_mask" in out
    monkeypatch.delenv("COLUMNS")
    assert main(["prove", "--jobs", "1", FAST[0]]) == 0  # captured output is no terminal: full lines
    assert capsys.readouterr().out.splitlines()[0].split() == list(HEAD)


def test_check_refuses_json_together_with_markdown(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "--json", "--markdown", "examples/seed000_row_form.tex"])
    assert exc.value.code == 2
    assert "--markdown: not allowed with argument --json" in capsys.readouterr().err


@pytest.mark.parametrize("budget", ["0", "-1", "nan", "soon"])
def test_check_refuses_a_budget_that_is_not_a_positive_number_of_seconds(budget, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "--budget", budget, "examples/seed000_row_form.tex"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --budget" in err and ("positive number of seconds" in err or "number of seconds" in err)


@pytest.mark.parametrize("jobs", ["0", "-2", "two"])
def test_prove_refuses_fewer_than_one_process(jobs, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["prove", "--jobs", jobs, FAST[0]])
    assert exc.value.code == 2 and "argument --jobs" in capsys.readouterr().err


def _without_seconds(rows):
    for r in rows:
        r.pop("seconds")
        for c in r["claims"]:
            c.pop("seconds")
    return rows


def test_parallel_prove_gives_the_serial_json_and_exit_status(capsys, cache_dir):
    load_library()
    n = sa.dims("n")
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    theorem("_test_commutes_cli", "AB = BA")(lambda: (A * B, B * A))
    try:
        outs = []
        for jobs in ("1", "2"):
            assert main(["prove", "--json", "--jobs", jobs, *FAST, "_test_commutes_cli"]) == 1
            outs.append(_without_seconds(json.loads(capsys.readouterr().out)))
        assert outs[0] == outs[1]
        assert [r["name"] for r in outs[1]] == FAST + ["_test_commutes_cli"]
        assert [r["status"] for r in outs[1]] == ["proved"] * 3 + ["refuted"]
    finally:
        del REGISTRY["_test_commutes_cli"]


def test_cached_rows_say_so_with_their_keys(capsys, cache_dir):
    assert main(["prove", "--jobs", "1", FAST[0]]) == 0
    first = capsys.readouterr().out
    assert "cached" not in first
    assert main(["prove", "--jobs", "1", "--cached", FAST[0], FAST[1]]) == 0
    out = capsys.readouterr().out
    rows = {ln.split()[0]: ln for ln in out.splitlines()[2:4]}
    assert rows[FAST[0]].rstrip().endswith("cached") and not rows[FAST[1]].rstrip().endswith("cached")
    key = theorems.claim_key(load_library()[FAST[0]], 0)
    result_key = Result(load_library()[FAST[0]], [verdict_cache.lookup(key)]).cache_key
    assert f"{FAST[0]}: key {result_key[:16]}" in out and "1 of 2 theorems were not proved in this run" in out
    assert main(["prove", "--json", "--jobs", "1", "--cached", FAST[0]]) == 0
    claim = json.loads(capsys.readouterr().out)[0]["claims"][0]
    assert claim["cached"]["key"] == key and "cached (key" in claim["method"]


def test_refresh_proves_the_library_again_and_rewrites_the_cache(capsys, cache_dir, monkeypatch):
    library = load_library()
    monkeypatch.setattr(theorems, "REGISTRY", {name: library[name] for name in FAST})
    user = cache_dir / "user"
    user.mkdir()
    stale = {"status": "proved", "general": True, "method": "rewriting (A)", "scope": "all", "trace": []}
    (user / "verdicts.json").write_text(json.dumps({"format": verdict_cache.FORMAT, "entries": {"0" * 64: stale}}))
    assert main(["prove", "--refresh", "--ship", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "cached" not in out.split("\n\n")[0] and "verdict cache rewritten" in out
    keys = {theorems.claim_key(library[name], k) for name in FAST for k in range(len(library[name].claims()))}
    for path in (user / "verdicts.json", verdict_cache.SHIPPED):
        assert set(json.loads(path.read_text())["entries"]) == keys
    assert main(["prove", "--refresh", FAST[0]]) == 2
    assert main(["prove", "--ship", FAST[0]]) == 2
    assert "--refresh" in capsys.readouterr().err


def test_parallel_trace_reads_as_the_serial_one(capsys, cache_dir):
    """Trace lines come back from a worker as they were shown there (an expression rebuilt from a
    pickle may be evaluated further: floor(1/2 + 100 e^14/(e^12 + e^14)) would print as 88)."""
    import re

    names = ["worked_example_thinking_machines", FAST[0]]
    outs = []
    for jobs in ("1", "2"):
        assert main(["prove", "--trace", "--jobs", jobs, *names]) == 0
        outs.append(re.sub(r"\d+\.\d+", "#", capsys.readouterr().out))
    assert outs[0] == outs[1]
    assert "⌊" in outs[1]


@pytest.mark.parametrize("argv, message", [
    (["prove", "--no-check"], "--no-check lists the trust base without checking it; use it with --trust"),
    (["prove", "column_row_transpose", "--no-check"], "use it with --trust"),
    (["prove", "--trust", "--json"], "--json is for the theorem library, not the trust base"),
    (["prove", "--trust", "--gallery", "--cached"], "--gallery, --cached are for the theorem library"),
])
def test_prove_refuses_an_option_it_would_ignore(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and not captured.out
