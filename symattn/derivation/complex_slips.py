r"""The usual slips of a complex-number derivation (RoPE's complex form), tried on a refuted step.

Each candidate corrects the right side of the step in one place, and is kept only when the corrected
step is proved (:func:`~symattn.derivation.complex_prove.prove_pairs`, audited like any step):

- the relative position reversed: a difference ``n - m`` where ``m - n`` makes the step hold;
- a conjugate dropped: ``\overline{z}`` or ``z^{*}`` where z makes it hold (or the other way, as written);
- the exponent's sign: ``e^{x}`` where ``e^{-x}`` makes it hold.
"""

from __future__ import annotations

from ..errors import DerivationError
from .complex_prove import claim_pairs, prove_pairs
from .complex_reader import N
from .diagnose import Diagnosis


def _replace(node, target, new):
    """``node`` with the subtree ``target`` (the same object) replaced by ``new``."""
    if node is target:
        return new
    if isinstance(node, tuple):
        return tuple(_replace(x, target, new) for x in node)
    if not isinstance(node, N):
        return node
    parts = _replace(node.parts, target, new)
    return node if parts == node.parts else N(node.kind, parts, node.pos, node.span)


def _subtrees(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(reversed(n))
        elif isinstance(n, N):
            yield n
            stack.extend(reversed(n.parts))


def _text(text, node) -> str:
    a, b = node.span
    return " ".join(text[a:b].split())


def candidates(b: N, text: str):
    """(slip, detail, corrected right side, its text) for each one-place correction of ``b``."""
    side = _text(text, b)
    start = b.span[0]

    def written(node, new_text):
        if new_text[:1] != "(" and _text(text, node)[:1] == "(" and _text(text, node)[-1:] == ")":
            new_text = f"({new_text})"  # the span of a parenthesized node holds its parentheses
        a, z = node.span[0] - start, node.span[1] - start
        flat = text[b.span[0]:b.span[1]]
        return " ".join((flat[:a] + new_text + flat[z:]).split()) if 0 <= a <= z <= len(flat) else side

    for n in _subtrees(b):
        if n.kind == "add" and len(n.parts) == 2 and n.parts[1].kind == "neg":
            x, y = n.parts[0], n.parts[1].parts[0]
            swapped = N("add", (y, N("neg", (x,), n.pos, n.span)), n.pos, n.span)
            old = f"{_text(text, x)} - {_text(text, y)}"
            yield ("the relative position reversed", f"{old} written where {_text(text, y)} - {_text(text, x)} "
                   "makes the step hold", _replace(b, n, swapped), written(n, f"{_text(text, y)}-{_text(text, x)}"))
        if n.kind == "conj":
            inner = n.parts[0]
            yield ("a conjugate too many", f"{_text(text, n)} written where {_text(text, inner)} makes the step "
                   "hold", _replace(b, n, inner), written(n, _text(text, inner)))
        if n.kind == "exp":
            arg = n.parts[0]
            flipped = N("exp", (N("neg", (arg,), arg.pos, arg.span),), n.pos, n.span)
            yield ("the exponent's sign", f"e^{{{_text(text, arg)}}} written where e^{{-({_text(text, arg)})}} makes "
                   "the step hold", _replace(b, n, flipped), written(n, f"e^{{-({_text(text, arg)})}}"))


def diagnose(meaning, a: N, b: N, members, text: str):
    """The first candidate slip whose correction proves the step, as a Diagnosis; or None."""
    order = ("the relative position reversed", "a conjugate too many", "the exponent's sign")
    for slip, detail, corrected, shown in sorted(candidates(b, text), key=lambda c: order.index(c[0])):
        try:
            pairs, _ = claim_pairs(meaning, a, corrected, members)
        except DerivationError:
            continue
        v = prove_pairs(pairs)
        if v is not None and v.proved:
            return Diagnosis(slip, detail, shown, f"proved ({v.method})", True)
    return None
