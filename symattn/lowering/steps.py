"""``Step``: one step of a drop-in layer's forward and the theorem behind it (the ``provenance`` of
``symattn.torch.MultiheadAttention`` and of ``symattn.jax``'s functions). No framework import."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """One step of the forward: what it does, when it runs, and the theorem (claim, side, verdict)
    whose proved side it is, or ``theorem=None`` when the step is code written by hand."""

    step: str
    when: str
    theorem: str | None
    claim: int | None = None
    side: str = ""
    status: str = "code"
    note: str = ""

    def __str__(self):
        src = (f"{self.theorem}, claim {self.claim}, {self.side} ({self.status})" if self.theorem
               else f"code{': ' + self.note if self.note else ''}")
        return f"{self.step} [{self.when}]: {src}"
