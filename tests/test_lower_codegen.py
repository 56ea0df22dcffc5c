"""``symattn codegen``: standalone modules with a header and a self-test that can fail."""

import subprocess
import sys

import pytest

from symattn import __version__
from symattn.cli import main

RUN_WITHOUT_SYMPY = (
    "import runpy, sys\n"
    "sys.modules['sympy'] = None  # importing sympy would fail\n"
    "runpy.run_path(sys.argv[1], run_name='__main__')\n"
    "assert 'symattn' not in sys.modules\n"
)


def write(tmp_path, *args):
    out = tmp_path / "kernel_module.py"
    assert main(["codegen", *args, "--out", str(out)]) == 0
    return out


def run(path):
    return subprocess.run([sys.executable, "-c", RUN_WITHOUT_SYMPY, str(path)], capture_output=True,
                          text=True, cwd=path.parent)


@pytest.mark.parametrize("theorem, claim", [("scale_folds_into_query_projection", 2),
                                            ("attention_pooling_folds_projections", 0),
                                            ("fused_qkv_projection", 0)])
def test_generated_module_self_tests_without_sympy(tmp_path, theorem, claim):
    path = write(tmp_path, theorem, "--claim", str(claim))
    text = path.read_text()
    assert f"Theorem {theorem}:" in text and "Verdict: proved, general" in text
    assert f"symattn {__version__}" in text and " UTC" in text
    assert "import sympy" not in text
    res = run(path)
    assert res.returncode == 0, res.stderr
    assert "self-test passed" in res.stdout


def test_self_test_fails_when_the_kernel_is_wrong(tmp_path):
    path = write(tmp_path, "kv_cache_step_needs_no_mask")
    text = path.read_text()
    wrong = text.replace("softmax_(t1, -1)", "softmax_(t1, -2)")  # normalize the wrong axis
    assert wrong != text
    path.write_text(wrong)
    res = run(path)
    assert res.returncode != 0 and "AssertionError" in res.stderr


def test_codegen_errors_are_clear(tmp_path, capsys):
    assert main(["codegen", "no_such_theorem", "--out", str(tmp_path / "x.py")]) == 2
    assert "no theorem named no_such_theorem" in capsys.readouterr().err
    out = str(tmp_path / "x.py")
    assert main(["codegen", "heads_concatenate_before_output_projection", "--out", out]) == 1
    assert "symbolic head count H" in capsys.readouterr().err
    assert main(["codegen", "fused_qkv_projection", "--claim", "7", "--out", str(tmp_path / "x.py")]) == 2
