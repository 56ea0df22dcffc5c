"""Teaching material: readable printing, both conventions side by side, pictures, the HTML report.

The top floor. Readable printing lives on the ground floor (:mod:`symattn.printing`, which the
proof engine's traces use); :mod:`symattn.teach.display` attaches the notebook displays of the
lower floors' objects through :mod:`symattn.displays` when it is imported (``import symattn``
does), so nothing below imports teach. The other modules are imported on use.
"""
