"""Checks of numeric inputs with messages that name the argument and both sizes."""

from __future__ import annotations

import numpy as np

from ..errors import HeadError, InputError, ShapeError


def array(name: str, value, min_ndim: int = 2) -> np.ndarray:
    """``value`` as a real floating-point array with at least ``min_ndim`` axes."""
    a = np.asarray(value)
    if a.dtype.kind != "f":
        what = {"i": "integer", "u": "unsigned integer", "b": "boolean", "c": "complex"}.get(
            a.dtype.kind, "non-numeric")
        raise InputError(f"{name}: expected a real floating-point array, got dtype {a.dtype} ({what}); "
                         "convert with .astype(numpy.float32) or .astype(numpy.float64)")
    if a.ndim < min_ndim:
        raise InputError(f"{name}: expected at least {min_ndim} axes, got shape {a.shape}")
    if 0 in a.shape[-2:]:
        raise ShapeError(f"{name}: a matrix needs at least one row and one column, got shape {a.shape}")
    return a


def batches(what: str, **arrays) -> tuple:
    """The broadcast of the batch axes (all but the last two) of the named arrays, or a ShapeError."""
    try:
        return np.broadcast_shapes(*(a.shape[:-2] for a in arrays.values() if a is not None))
    except ValueError:
        shapes = ", ".join(f"{nm} {a.shape}" for nm, a in arrays.items() if a is not None)
        raise ShapeError(f"{what}: the batch axes (all but the last two) do not broadcast: {shapes}") from None


def scale_factor(scale, d_k: int) -> float:
    """1/sqrt(d_k) by default, else the given real number."""
    if scale is None:
        return 1 / float(np.sqrt(d_k))
    if isinstance(scale, bool) or not isinstance(scale, (int, float, np.integer, np.floating)):
        raise InputError(f"scale: expected a real number (default 1/sqrt(d_k)), got {scale!r}")
    return float(scale)


def optional(name: str, value, min_ndim: int = 1):
    return None if value is None else array(name, value, min_ndim)


def same(what: str, a_name: str, a_size: int, b_name: str, b_size: int) -> None:
    if a_size != b_size:
        raise ShapeError(f"{what}: {a_name} is {a_size} but {b_name} is {b_size}")


def divide(what: str, total_name: str, total: int, parts_name: str, parts: int) -> int:
    if parts < 1:
        raise HeadError(f"{parts_name} must be a positive integer, got {parts}")
    if total % parts:
        raise HeadError(f"{what}: {total_name} = {total} is not divisible by {parts_name} = {parts}")
    return total // parts


def bias_row(name: str, b, width: int, dtype):
    """A bias given as (width,) or (1, width), as a (1, width) row."""
    if b is None:
        return None
    b = array(name, b, 1)
    if b.shape[-1] != width or (b.ndim == 2 and b.shape[0] != 1) or b.ndim > 2:
        raise ShapeError(f"{name}: expected shape ({width},) or (1, {width}), got {b.shape}")
    b = b[None, :] if b.ndim == 1 else b
    return b.astype(dtype, copy=False)


def additive_mask(mask, n: int, m: int, dtype):
    """A float mask added to the scores (0 keeps, -inf removes), or a boolean one (True = attend)."""
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.dtype.kind == "b":
        mask = np.where(mask, 0.0, -np.inf).astype(dtype)
    elif mask.dtype.kind == "f":
        mask = mask.astype(dtype, copy=False)
    else:
        raise InputError(f"mask: expected a boolean (True = attend) or float (added to the scores) array, "
                         f"got dtype {mask.dtype}")
    if mask.ndim < 2 or mask.shape[-2:] != (n, m):
        raise ShapeError(f"mask: expected shape (..., {n}, {m}) (queries × keys), got {mask.shape}")
    return mask


def head_counts(num_heads, num_kv_heads):
    """(H, G) from num_heads and num_kv_heads (None: G = H), each a positive integer, H divisible
    by G; HeadError otherwise."""
    for name, v in (("num_heads", num_heads), ("num_kv_heads", num_kv_heads)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1):
            raise HeadError(f"{name} must be a positive integer, got {v!r}")
    H = int(num_heads)
    G = H if num_kv_heads is None else int(num_kv_heads)
    if H % G:
        raise HeadError(f"num_heads = {H} is not divisible by num_kv_heads = {G}: each key/value group "
                        "must serve the same number of query heads")
    return H, G
