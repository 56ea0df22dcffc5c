"""Teaching material: readable printing, both conventions side by side, pictures, the HTML report.

The modules are imported on use (``symattn.teach.printing`` is light and used by the proof
engine's verdicts; the others import the theorem library).
"""
