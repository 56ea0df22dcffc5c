"""A kernel object of the numeric core (kernels.NORMALIZE, ...) calls its compiled function directly;
the result and the errors are the kernel's own."""

import numpy as np
import pytest

from symattn.errors import InputError, ShapeError
from symattn.numeric import kernels


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "X": rng.normal(size=(2, 5, 8)),
        "W_cat": rng.normal(size=(8, 12)),
        "b_cat": rng.normal(size=(1, 12)),
        "U": rng.normal(size=(3, 5, 4)),
        "l": rng.uniform(1, 2, size=(3, 5, 1)),
    }


@pytest.mark.parametrize("with_out", [False, True])
def test_run_equals_the_kernel_called_by_keywords(with_out):
    a = _arrays()
    cases = [
        ("qkv_apply_bias", (), {"X": a["X"], "W_cat": a["W_cat"], "b_cat": a["b_cat"],
                                "H": 2, "G": 1, "d_k": 2, "d_v": 6}),
        ("normalize", (), {"U": a["U"], "l": a["l"]}),
        ("normalize", (a["U"],), {"l": a["l"]}),  # an input by position, the other by keyword
    ]
    for name, args, kw in cases:
        want = kernels.get(name)(*args, **kw)
        out = np.empty_like(want) if with_out else None
        got = kernels.kernel(name)(*args, out=out, **kw)
        np.testing.assert_array_equal(got, want)
        if with_out:
            assert got is out


def test_run_keeps_the_kernels_messages():
    a = _arrays()
    with pytest.raises(InputError, match="no input 'V'"):
        kernels.NORMALIZE(U=a["U"], l=a["l"], V=a["U"])
    with pytest.raises(InputError, match="missing input"):
        kernels.NORMALIZE(U=a["U"])
    with pytest.raises(InputError, match="given twice"):
        kernels.NORMALIZE(a["U"], U=a["U"], l=a["l"])
    with pytest.raises(ShapeError):
        kernels.NORMALIZE(U=a["U"], l=a["l"][:, :4])


def test_run_checks_shapes_and_out_on_the_direct_path():
    a = _arrays()
    kernels.NORMALIZE(U=a["U"], l=a["l"])  # the direct path is set up for this call pattern
    with pytest.raises(ShapeError):
        kernels.NORMALIZE(U=a["U"], l=a["l"][:, :4])
    with pytest.raises(ShapeError, match="out"):
        kernels.NORMALIZE(U=a["U"], l=a["l"], out=np.empty((3, 5, 5)))


def test_run_is_recorded_by_trace():
    a = _arrays()
    with kernels.trace() as used:
        kernels.NORMALIZE(U=a["U"], l=a["l"])
    assert used == [kernels.get("normalize")]


def test_every_kernel_of_the_core_is_an_object_made_when_the_module_loads():
    """The core names its kernels through objects (kernels.SCORES, ...), one per name of NAMES, and the
    specs build exactly those names."""
    assert set(kernels.KERNELS) == set(kernels.NAMES) == set(kernels.names())
    assert kernels.SCORES is kernels.kernel("scores") and kernels.SCORES.name == "scores"
    kernels.spec("scores")  # builds the specs, and checks that their names are NAMES
    assert set(kernels._SPECS) == set(kernels.NAMES)


def test_a_misspelt_kernel_fails_when_the_module_that_names_it_loads(tmp_path, monkeypatch):
    """A typo in a kernel's name is an error at import (an ImportError, or a KeyError that lists the
    kernels), not at the first call that reaches it."""
    with pytest.raises(ImportError, match="SCORSE"):
        exec("from symattn.numeric.kernels import SCORSE", {})
    with pytest.raises(KeyError, match="no kernel 'scorse' in the numeric core; the kernels are qkv_fused_bias"):
        kernels.kernel("scorse")
    with pytest.raises(KeyError, match="no kernel 'merge_stpe'"):
        kernels.NumericKernel("merge_stpe")
    (tmp_path / "uses_a_typo.py").write_text("from symattn.numeric import kernels\n\n"
                                             "STEP = kernels.kernel('merge_stpe')\n\n\n"
                                             "def later(s):\n    return STEP(S_2=s)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(KeyError, match="merge_stpe"):
        __import__("uses_a_typo")


def test_blocked_prepare_takes_no_dead_parameters_and_lowers_every_tile_kernel():
    import inspect

    from symattn.numeric import blocked

    assert list(inspect.signature(blocked.prepare).parameters) == []
    blocked.prepare()
    assert all(k.name in kernels._KERNELS for k in blocked.TILE_KERNELS)
