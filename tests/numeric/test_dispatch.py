"""kernels.run calls a kernel's compiled function directly; the result and the errors are the kernel's own."""

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
        got = kernels.run(name, *args, out=out, **kw)
        np.testing.assert_array_equal(got, want)
        if with_out:
            assert got is out


def test_run_keeps_the_kernels_messages():
    a = _arrays()
    with pytest.raises(InputError, match="no input 'V'"):
        kernels.run("normalize", U=a["U"], l=a["l"], V=a["U"])
    with pytest.raises(InputError, match="missing input"):
        kernels.run("normalize", U=a["U"])
    with pytest.raises(InputError, match="given twice"):
        kernels.run("normalize", a["U"], U=a["U"], l=a["l"])
    with pytest.raises(ShapeError):
        kernels.run("normalize", U=a["U"], l=a["l"][:, :4])


def test_run_checks_shapes_and_out_on_the_direct_path():
    a = _arrays()
    kernels.run("normalize", U=a["U"], l=a["l"])  # the direct path is set up for this call pattern
    with pytest.raises(ShapeError):
        kernels.run("normalize", U=a["U"], l=a["l"][:, :4])
    with pytest.raises(ShapeError, match="out"):
        kernels.run("normalize", U=a["U"], l=a["l"], out=np.empty((3, 5, 5)))


def test_run_is_recorded_by_trace():
    a = _arrays()
    with kernels.trace() as used:
        kernels.run("normalize", U=a["U"], l=a["l"])
    assert used == [kernels.get("normalize")]
