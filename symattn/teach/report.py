"""A self-contained static HTML report: the theorem library, the gallery of mistakes, derivations.

:func:`build_page` lays out already-proved results (:class:`symattn.theorems.Result`) and checked
derivations (:class:`symattn.derivation.Report`) as one HTML5 page: math as presentation MathML
(browsers render it natively), pictures as inline SVG, style inline; no script, no font or file
from the network. :func:`write_report` writes it to ``DIR/index.html``.
"""

from __future__ import annotations

import datetime
from html import escape
from pathlib import Path

from .conventions import TOPICS, explain_topic, to_html
from .display import badge, report_html, result_html

STYLE = """
body { font-family: 'DejaVu Sans', Arial, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em;
       color: #1b1b1b; line-height: 1.45; }
h1 { border-bottom: 3px solid #2e4053; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #aab7b8; }
section.theorem, section.derivation { border: 1px solid #d5dbdb; border-radius: 6px; padding: .4em 1em;
       margin: 1em 0; background: #fbfcfc; }
section.theorem h3 { margin: .3em 0; font-size: 1.05em; }
table.meta th { text-align: left; padding-right: 1em; color: #555; font-weight: normal; }
table.summary, table.steps { border-collapse: collapse; }
table.summary td, table.summary th, table.steps td, table.steps th { border: 1px solid #ccd1d1; padding: 2px 8px; }
table.steps { table-layout: fixed; width: 100%; }
div.scroll { overflow-x: auto; }
table.steps th:nth-child(1) { width: 3.5em; } table.steps th:nth-child(2) { width: 50%; }
table.steps th:nth-child(3) { width: 9em; }
ol.trace { font-family: 'DejaVu Sans Mono', monospace; font-size: .82em; color: #333; overflow-wrap: anywhere; }
svg { max-width: 100%; height: auto; }
details { margin: .3em 0; }
summary { cursor: pointer; color: #1a5276; }
.counterexample { border-left: 4px solid #b03a2e; padding-left: .8em; margin: .6em 0; }
.certificate { color: #555; font-size: .9em; }
math[display=block] { margin: .5em 0; overflow-x: auto; }
pre.detail { background: #f4f6f6; padding: .6em; overflow-x: auto; }
div.explain { border-top: 1px solid #d5dbdb; margin-top: 1.5em; }
div.explain table, div.explain svg { margin: .6em 0; }
table.sidebyside th { text-align: left; vertical-align: top; padding: 4px 10px; color: #1a5276; }
"""


def _summary_table(results) -> str:
    rows = "".join(
        f"<tr><td><a href='#{escape(r.theorem.name)}'><code>{escape(r.theorem.name)}</code></a></td>"
        f"<td>{badge(r.status, r.general)}</td><td>{escape(r.scope)}</td><td>{escape(r.method)}</td></tr>"
        for r in results)
    return ("<table class='summary'><tr><th>theorem</th><th>verdict</th><th>scope</th><th>method</th></tr>"
            f"{rows}</table>")


def build_page(results, gallery=(), reports=(), title: str = "symattn: theorems, mistakes, derivations",
               version: str = "") -> str:
    """The HTML page for ``results`` (the library), ``gallery`` (refuted mistakes) and ``reports``."""
    results, gallery, reports = list(results), list(gallery), list(reports)
    proved = sum(r.status == "proved" for r in results)
    refuted = sum(r.status == "refuted" for r in gallery)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p id='counts'>{proved} of {len(results)} theorems proved; {refuted} of {len(gallery)} mistakes "
        f"refuted with a certified counterexample; {len(reports)} derivation(s) checked. "
        f"Generated {stamp}{' by symattn ' + escape(version) if version else ''}.</p>",
        "<h2 id='conventions'>The two conventions</h2>",
        "<p>Seed 000 writes vectors as columns (Q is d_k × n, Softmax over each column, V·Softmax(KᵀQ/√d_k)); "
        "the Transformer paper and PyTorch write them as rows (Q is n × d_k, softmax over each row, "
        "softmax(QKᵀ/√d_k)·V). Each definition below is built from symattn's own definitions in both "
        "conventions; the pictures are drawn to scale, and the red arrow runs along the axis the softmax "
        "normalizes.</p>",
    ]
    parts += [to_html(explain_topic(name, prove=False)) for name in TOPICS]
    if results:
        parts += ["<h2 id='library'>Theorem library</h2>", _summary_table(results)]
        parts += [result_html(r) for r in results]
    if gallery:
        parts += ["<h2 id='gallery'>Gallery of mistakes</h2>",
                  "<p>Each is a plausible slip, refuted with a counterexample whose difference is certified "
                  "nonzero exactly. The heatmaps show the attention weights of both sides where both have a "
                  "softmax, else the two sides' values; the certified entry is outlined in red.</p>",
                  _summary_table(gallery)]
        parts += [result_html(r) for r in gallery]
    if reports:
        parts.append("<h2 id='derivations'>Derivations</h2>")
        parts += [report_html(rep) for rep in reports]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(directory, results, gallery=(), reports=(), **kw) -> Path:
    """Write :func:`build_page` to ``directory/index.html`` (the directory is created) and return the path."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(build_page(results, gallery, reports, **kw), encoding="utf-8")
    return path
