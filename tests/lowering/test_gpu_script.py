"""``benchmarks/gpu.py`` runs unchanged where there is no GPU: it says so and exits 0, and its checks
pass on the CPU (``--device cpu``), so on a machine with CUDA it measures, not debugs."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu.py"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=900)


def test_the_gpu_script_passes_its_checks_on_the_cpu():
    done = _run("--device", "cpu", "--quick", "--no-timing")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[-1] == "all checks passed"
    checks = [ln for ln in lines if ln.startswith("  ok ") or ln.startswith("  FAIL")]
    assert len(checks) >= 20 and all(ln.startswith("  ok ") for ln in checks)
    for dtype in ("float32", "bfloat16", "float16"):
        assert any(f"torch.{dtype} module" in ln for ln in checks)


def test_without_cuda_the_script_says_so_and_exits_0():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    done = _run()
    assert done.returncode == 0 and "no CUDA device" in done.stdout
