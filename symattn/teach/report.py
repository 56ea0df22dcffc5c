"""A self-contained static HTML report: the theorem library, the gallery of mistakes, derivations.

:func:`build_page` lays out already-proved results (:class:`symattn.theorems.Result`) and checked
derivations (:class:`symattn.derivation.Report`) as one HTML5 page: math as presentation MathML
(browsers render it natively; long formulas are cut into pieces that wrap, :mod:`symattn.teach.wrap`),
pictures as inline SVG (the shapes of each topic, the causal mask, GQA's grouping, a RoPE rotation, the
score variance against d_k), style inline; no script, no font or file from the network. A table of
contents links every section. :func:`write_report` writes it to ``DIR/index.html``.
"""

from __future__ import annotations

import datetime
import re
from html import escape
from pathlib import Path

from . import svg
from .conventions import TOPICS, explain_topic, to_html
from .display import badge, report_html, result_html

STYLE = """
body { font-family: 'DejaVu Sans', Arial, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em;
       color: #1b1b1b; line-height: 1.45; overflow-wrap: break-word; }
math { font-family: 'DejaVu Math TeX Gyre', 'STIX Two Math', 'Latin Modern Math', math; }
h1 { border-bottom: 3px solid #2e4053; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #aab7b8; }
nav.toc { border: 1px solid #d5dbdb; border-radius: 6px; padding: .4em 1em; background: #f8f9f9; }
nav.toc ol { margin: .2em 0; } nav.toc ol ol { columns: 17em; font-size: .9em; }
nav.toc a { text-decoration: none; color: #1a5276; overflow-wrap: anywhere; }
a.top { font-size: .8em; float: right; text-decoration: none; }
section.theorem, section.derivation { border: 1px solid #d5dbdb; border-radius: 6px; padding: .4em 1em;
       margin: 1em 0; background: #fbfcfc; }
section.theorem h3 { margin: .3em 0; font-size: 1.05em; }
code { overflow-wrap: anywhere; }
table.meta th { text-align: left; padding-right: 1em; color: #555; font-weight: normal; }
table.summary { border-collapse: collapse; max-width: 100%; }
table.summary td, table.summary th { border: 1px solid #ccd1d1; padding: 2px 8px; overflow-wrap: anywhere; }
ol.steps { padding-left: 0; list-style: none; }
li.step { border-top: 1px solid #e5e8e8; padding: .4em 0; }
div.stephead { color: #444; font-size: .92em; } div.stephead .method { color: #666; }
div.equation { margin: .4em 0 .2em 1em; line-height: 2.2; }
ol.trace { font-size: .9em; color: #333; overflow-wrap: anywhere; line-height: 2; }
svg { max-width: 100%; height: auto; }
figure.picture { margin: 1em 0; } figure.picture figcaption { color: #444; font-size: .92em; }
details { margin: .3em 0; }
summary { cursor: pointer; color: #1a5276; }
.counterexample { border-left: 4px solid #b03a2e; padding-left: .8em; margin: .6em 0; }
.counterexample li { margin: .3em 0; }
.certificate { color: #555; font-size: .9em; }
pre.detail { background: #f4f6f6; padding: .6em; white-space: pre-wrap; overflow-wrap: anywhere; }
div.explain { border-top: 1px solid #d5dbdb; margin-top: 1.5em; }
div.explain table, div.explain svg { margin: .6em 0; }
div.explain { overflow-x: auto; }
table.sidebyside th { text-align: left; vertical-align: top; padding: 4px 10px; color: #1a5276; }
"""


def _summary_table(results) -> str:
    rows = "".join(
        f"<tr><td><a href='#{escape(r.theorem.name)}'><code>{escape(r.theorem.name)}</code></a></td>"
        f"<td>{badge(r.status, r.general)}</td><td>{escape(r.scope)}</td><td>{escape(r.method)}</td></tr>"
        for r in results)
    return ("<table class='summary'><tr><th>theorem</th><th>verdict</th><th>scope</th><th>method</th></tr>"
            f"{rows}</table>")


# The picture a teacher would draw beside each topic, and what it shows.
PICTURES = {
    "attention": (svg.score_variance_picture,
                  "Why the scores are divided by √d_k: the variance of q·k grows like d_k, and q·k/√d_k keeps it 1, "
                  "so the softmax does not saturate as d_k grows."),
    "gqa": (svg.gqa_picture, "Grouped-query attention: which key/value head each query head reads."),
    "mask": (svg.causal_mask_picture, "The causal mask: each query sees itself and the keys before it."),
    "rope": (svg.rope_picture, "Rotary position embedding: a pair of coordinates turned by the angle m·θ."),
}


def _picture(topic: str) -> str:
    if topic not in PICTURES:
        return ""
    draw, caption = PICTURES[topic]
    return (f"<figure class='picture' id='picture-{escape(topic)}'>{draw()}<figcaption>{escape(caption)}"
            "</figcaption></figure>")


def _anchor(prefix: str, k: int, source: str) -> str:
    return f"{prefix}-{k}-" + re.sub(r"[^A-Za-z0-9_-]+", "-", source).strip("-")


def _toc(results, gallery, reports) -> str:
    def items(pairs):
        return "<ol>" + "".join(f"<li><a href='#{escape(a)}'>{escape(t)}</a></li>" for a, t in pairs) + "</ol>"

    out = ["<nav class='toc' id='contents'><h2>Contents</h2><ol>",
           "<li><a href='#conventions'>The two conventions</a>"
           + items((f"explain-{nm}", TOPICS[nm].title) for nm in TOPICS) + "</li>"]
    if results:
        out.append(f"<li><a href='#library'>Theorem library ({len(results)})</a>"
                   + items((r.theorem.name, r.theorem.name) for r in results) + "</li>")
    if gallery:
        out.append(f"<li><a href='#gallery'>Gallery of mistakes ({len(gallery)})</a>"
                   + items((r.theorem.name, r.theorem.name) for r in gallery) + "</li>")
    if reports:
        out.append(f"<li><a href='#derivations'>Derivations ({len(reports)})</a>"
                   + items((_anchor("derivation", k, rep.source), rep.source) for k, rep in enumerate(reports, 1))
                   + "</li>")
    return "".join(out) + "</ol></nav>"


def _heading(ident: str, title: str) -> str:
    return f"<h2 id='{ident}'>{escape(title)} <a class='top' href='#contents'>contents ↑</a></h2>"


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
        _toc(results, gallery, reports),
        _heading("conventions", "The two conventions"),
        "<p>Seed 000 writes vectors as columns (Q is d_k × n, Softmax over each column, V·Softmax(KᵀQ/√d_k)); "
        "the Transformer paper and PyTorch write them as rows (Q is n × d_k, softmax over each row, "
        "softmax(QKᵀ/√d_k)·V). Each definition below is built from symattn's own definitions in both "
        "conventions; the pictures are drawn to scale, and the red arrow runs along the axis the softmax "
        "normalizes.</p>",
    ]
    for name in TOPICS:  # each topic with its picture, where a teacher would draw one
        parts += [to_html(explain_topic(name, prove=False)), _picture(name)]
    if results:
        parts += [_heading("library", "Theorem library"), _summary_table(results)]
        parts += [result_html(r) for r in results]
    if gallery:
        parts += [_heading("gallery", "Gallery of mistakes"),
                  "<p>Each is a plausible slip, refuted with a counterexample whose difference is certified "
                  "nonzero exactly. The heatmaps show the attention weights of both sides where both have a "
                  "softmax, else the two sides' values; the certified entry is outlined in red.</p>",
                  _summary_table(gallery), "<div class='part' id='gallery-part'>"]
        parts += [result_html(r) for r in gallery] + ["</div>"]
    if reports:
        parts.append(_heading("derivations", "Derivations"))
        parts.append("<div class='part' id='derivations-part'>")
        parts += [report_html(rep, _anchor("derivation", k, rep.source)) for k, rep in enumerate(reports, 1)]
        parts.append("</div>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(directory, results, gallery=(), reports=(), **kw) -> Path:
    """Write :func:`build_page` to ``directory/index.html`` (the directory is created) and return the path."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(build_page(results, gallery, reports, **kw), encoding="utf-8")
    return path
