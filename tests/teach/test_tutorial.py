"""docs/tutorial.ipynb runs from top to bottom in a fresh Jupyter kernel (nbclient), without errors.

The notebook checks its own results (a proved identity, a refuted mistake, a lowered kernel
against PyTorch's attention); a cell that raises fails this test. Skips without nbclient/ipykernel.
"""

import pathlib

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")

NOTEBOOK = pathlib.Path(__file__).resolve().parents[2] / "docs" / "tutorial.ipynb"


def test_the_tutorial_runs_in_a_fresh_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMATTN_CACHE_DIR", str(tmp_path / "cache"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code), "a code cell did not run"
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    shown = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
                    for c in code for o in c.get("outputs", []))
    try:
        import torch  # noqa: F401
    except ImportError:
        return
    assert "matches torch SDPA" in shown, "with torch installed, the tutorial compares its kernel with SDPA"
