"""PyTorch layers built from proved kernels: ``from symattn.torch import MultiheadAttention``.

``symattn.torch.MultiheadAttention`` is a drop-in replacement for ``torch.nn.MultiheadAttention``
(the same constructor, forward, returns and ``state_dict``), plus ``num_kv_heads`` for GQA/MQA; its
forward calls kernels lowered from the theorems of ``proofs/rewrites.py`` and ``module.provenance``
names the theorem (or says "code") behind each step. See :mod:`symattn.lowering.torch_layers`.

Importing this module does not import PyTorch (``import symattn`` never does); the first use of a
name below imports it, and says how to install it when it is missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for readers and type checkers; at run time the names come from __getattr__
    from .lowering.torch_layers import MultiheadAttention, Step, attention_mask

__all__ = ["MultiheadAttention", "Step", "attention_mask"]


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module 'symattn.torch' has no attribute {name!r}")
    try:
        from .lowering import torch_layers
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise
        raise ModuleNotFoundError(
            f"symattn.torch.{name} needs PyTorch, which is not installed: pip install \"symattn[torch]\"",
            name="torch") from exc
    return getattr(torch_layers, name)


def __dir__():
    return sorted(list(globals()) + __all__)
