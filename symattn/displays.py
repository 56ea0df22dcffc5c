"""Displays of the package's objects, attached from the top floor.

Verdicts, counterexamples, theorems, their results and derivation reports live on lower floors;
their notebook displays (``_repr_markdown_``, ``_repr_html_``) and readable text are written in
:mod:`symattn.teach.display`, which registers them here when it is imported (``import symattn``
does). So no lower floor imports teach: an object asks :func:`show` for its display by name.
"""

from __future__ import annotations

#: display name -> function of the object
REGISTRY: dict = {}


def register(**displays) -> None:
    """Attach displays by name (``verdict_html=...``)."""
    REGISTRY.update(displays)


def show(name: str, obj, fallback=None):
    """The display ``name`` of ``obj``; without one registered, ``fallback(obj)`` (or None, which a
    notebook takes as "no such display")."""
    fn = REGISTRY.get(name)
    if fn is None:
        return None if fallback is None else fallback(obj)
    return fn(obj)
