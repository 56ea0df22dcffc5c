"""Variable-length batches for :class:`symattn.torch.MultiheadAttention`: ``lengths``, and nested tensors.

A batch of sequences of different lengths is run as one padded batch (N, L, E), each sequence in the
first ``lengths[i]`` positions of its row, the rest padding:

- the padding keys are hidden by a key-padding mask (True from position ``lengths[i]`` on, merged with
  a ``key_padding_mask`` that is given too), so each sequence attends only to its own keys;
- the output (and the returned weights) are 0 at the padding query positions, as torch's fast path
  gives them when it pads a nested result (``to_padded_tensor(0.0)``).

Each valid row is then what the sequence gives when it runs alone through ``nn.MultiheadAttention``:
masked keys get weight exp(-inf) = 0, so the padding adds nothing to a row's softmax or to its sum
over the values (``tests/lowering/test_torch_varlen.py`` compares the two in float64).

Nested tensors (``torch.nested``, strided or jagged layout, batch-first: sequence i is ``nt[i]`` of
shape (L_i, E)) are padded with zeros, run with their lengths, and the output is made nested again in
the input's layout. Gradients flow through all of it. All of this is code, not a theorem.
"""

from __future__ import annotations

import torch

from ..errors import InputError, ShapeError


def lengths_tensor(lengths, n: int, size: int, device) -> torch.Tensor:
    """``lengths`` (a 1-D integer tensor or a sequence of ints, one per batch element) as an int64
    tensor on ``device``, checked: n entries, each in 1..size (the padded sequence length)."""
    if isinstance(lengths, torch.Tensor):
        if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == torch.bool:
            raise InputError(f"lengths: expected integers, got dtype {lengths.dtype}")
        t = lengths.to(device=device, dtype=torch.int64)
    else:
        values = list(lengths)
        if any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise InputError(f"lengths: expected integers, got {values!r}")
        t = torch.tensor(values, dtype=torch.int64, device=device)
    if t.dim() != 1 or t.shape[0] != n:
        raise ShapeError(f"lengths: expected one length per batch element, shape ({n},), got {tuple(t.shape)}")
    if not torch.compiler.is_compiling():  # a data-dependent check: not traced
        low, high = int(t.min()), int(t.max())
        if low < 1 or high > size:
            raise InputError(f"lengths: each must be in 1..{size} (the padded sequence length), got "
                             f"{t.tolist()}; a sequence of length 0 has no key to attend to")
    return t


def padding_of(lengths: torch.Tensor, size: int) -> torch.Tensor:
    """(N, size) boolean: True at the padding, positions >= lengths[i] (True = ignore, torch's convention)."""
    return torch.arange(size, device=lengths.device)[None, :] >= lengths[:, None]


def merged_key_padding(pad: torch.Tensor, key_padding_mask):
    """The lengths' padding merged with a given ``key_padding_mask`` (boolean: either hides a key;
    float: the padding gets -inf added)."""
    if key_padding_mask is None:
        return pad
    if key_padding_mask.dtype == torch.bool:
        return key_padding_mask | pad
    return key_padding_mask.masked_fill(pad, float("-inf"))


def zero_padded_queries(out: torch.Tensor, weights, pad: torch.Tensor):
    """The output (N, L, E) and the weights ((N, L, S) or (N, H, L, S), or None) with 0 at the
    padding query rows."""
    out = out.masked_fill(pad[:, :, None], 0.0)
    if weights is not None:
        rows = pad[:, :, None] if weights.dim() == 3 else pad[:, None, :, None]
        weights = weights.masked_fill(rows, 0.0)
    return out, weights


def nested_lengths(nt: torch.Tensor) -> list:
    """The lengths of the sequences of a batch-first nested tensor (each (L_i, E))."""
    if nt.layout == torch.jagged:
        return nt.offsets().diff().tolist()
    return [int(s[0]) for s in nt._nested_tensor_size().tolist()]


def from_nested(nt: torch.Tensor, name: str):
    """(the padded (N, L_max, E) tensor, the lengths) of a nested tensor of 3 dimensions."""
    if nt.dim() != 3:
        raise ShapeError(f"{name}: a nested tensor of sequences (L_i, E) has 3 dimensions, got {nt.dim()}")
    return torch.nested.to_padded_tensor(nt, 0.0), nested_lengths(nt)


def to_nested(padded: torch.Tensor, lengths: list, layout) -> torch.Tensor:
    """The rows padded[i, :lengths[i]] as a nested tensor of ``layout`` (autograd flows through)."""
    parts = [padded[i, :n] for i, n in enumerate(lengths)]
    return torch.nested.as_nested_tensor(parts, layout=layout)
