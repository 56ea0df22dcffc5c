"""Rich display of verdicts, counterexamples, theorems and derivation reports.

Markdown with LaTeX (``_repr_markdown_``, for Jupyter and course pages) and HTML with MathML and
SVG pictures (``_repr_html_``, for Jupyter and :mod:`symattn.teach.report`); MathML renders in a
browser with no script and no network. The objects call these functions lazily from their
``_repr_*_`` methods.
"""

from __future__ import annotations

from html import escape

import numpy as np
import sympy as sp

from ..displays import register
from ..printing import latex, mathml, text
from .wrap import equation, trace_html, wrapped

BADGE = {"proved": "#1e8449", "refuted": "#b03a2e", "unknown": "#7d6608"}


def _line_latex(t) -> str:
    return t.latex() if hasattr(t, "latex") else str(t)


def _verdict_words(v) -> str:
    return v.status + (", general" if v.general else "")


def _matrix(value) -> sp.Matrix:
    arr = np.atleast_2d(np.asarray(value, dtype=object))
    return sp.ImmutableMatrix([[sp.nsimplify(x) if isinstance(x, float) else sp.sympify(x) for x in row]
                               for row in arr.tolist()])


def _float_matrix(value) -> sp.Matrix:
    arr = np.atleast_2d(np.asarray(value, dtype=float))
    return sp.ImmutableMatrix([[sp.Float(round(float(x), 4), 4) for x in row] for row in arr.tolist()])


# Markdown ------------------------------------------------------------------


def counterexample_markdown(cex, lhs=None, rhs=None) -> str:
    dims = ", ".join(f"{k} = {v}" for k, v in cex.dims.items()) or "the stated sizes"
    out = [f"**Counterexample** at {dims}, with these exact inputs:", ""]
    out += [f"- ${latex(sp.Symbol(name))} = {latex(_matrix(val))}$" for name, val in cex.values.items()]
    out += [f"- {name} instantiated as {how}" for name, how in cex.functions.items()]
    i, j = cex.entry
    out += ["", f"$\\text{{lhs}} \\approx {latex(_float_matrix(cex.lhs))}, \\quad "
                f"\\text{{rhs}} \\approx {latex(_float_matrix(cex.rhs))}$", "",
            f"Entry ({i}, {j}) differs: $\\text{{lhs}} - \\text{{rhs}} = {latex(cex.difference)}$", "",
            f"Certificate: {cex.certificate}"]
    return "\n".join(out) + "\n"


def verdict_markdown(v) -> str:
    out = [f"**{_verdict_words(v)}** ({v.scope}) by {v.method} in {v.seconds:.2f} s", ""]
    if v.lhs is not None and v.rhs is not None:
        out += ["$$", f"{latex(v.lhs)} \\;=\\; {latex(v.rhs)}", "$$", ""]
    out += [f"- {_line_latex(t)}" for t in v.trace]
    if v.counterexample is not None:
        out += ["", counterexample_markdown(v.counterexample, v.lhs, v.rhs)]
    return "\n".join(out) + "\n"


def result_markdown(res) -> str:
    """A proved (or refuted) library theorem: statement, verdict, scope, method and every claim."""
    th = res.theorem
    out = [f"### `{th.name}`", "", th.statement, "",
           f"**{res.status}{', general' if res.general else ''}** ({res.scope}) by {res.method}, "
           f"{res.seconds:.2f} s", ""]
    if th.explanation:
        out += [f"*Why:* {th.explanation}", ""]
    for k, v in enumerate(res.verdicts, 1):
        out += [f"#### claim {k}", "", verdict_markdown(v)]
    if res.error:
        out += [f"error: `{res.error}`"]
    return "\n".join(out) + "\n"


def theorem_markdown(th) -> str:
    """A theorem before it is proved: its statement and claims."""
    out = [f"### `{th.name}`", "", th.statement, "", f"expected: {th.expect}", ""]
    try:
        claims = th.claims()
    except Exception as exc:  # a builder that fails is shown, not hidden
        return "\n".join(out + [f"its claims cannot be built: `{type(exc).__name__}: {exc}`"]) + "\n"
    for lhs, rhs in claims:
        out.append(f"- ${latex(lhs)} = {latex(rhs)}$")
    return "\n".join(out) + "\n"


def _theorem_claims(th):
    """The claims of ``th``, or the exception its builder raised (shown, not hidden)."""
    try:
        return th.claims()
    except Exception as exc:
        return exc


def theorem_text(th) -> str:
    """A theorem before it is proved, in plain text: name, statement, what is expected, each claim."""
    out = [f"{th.name} (expected: {th.expect})", f"  {th.statement}"]
    if th.explanation:
        out.append(f"  why: {th.explanation}")
    claims = _theorem_claims(th)
    if isinstance(claims, Exception):
        return "\n".join(out + [f"  its claims cannot be built: {type(claims).__name__}: {claims}"])
    from ..printing import dummy_names

    for k, (lhs, rhs) in enumerate(claims, 1):
        names = dummy_names(lhs, rhs)
        out.append(f"  claim {k}: {text(lhs, 300, names)} = {text(rhs, 300, names)}")
    return "\n".join(out)


# HTML ----------------------------------------------------------------------


def badge(status: str, general: bool = False) -> str:
    color = BADGE.get(status, "#555")
    return (f"<span class='badge' style='background:{color};color:white;padding:1px 7px;border-radius:4px;"
            "white-space:nowrap'>"
            f"{escape(status + (', general' if general else ''))}</span>")


def counterexample_html(cex, lhs=None, rhs=None) -> str:
    from .svg import heatmap

    dims = ", ".join(f"{k} = {v}" for k, v in cex.dims.items()) or "the stated sizes"
    rows = "".join(f"<li>{mathml(sp.Eq(sp.Symbol(name), _matrix(val), evaluate=False))}</li>"
                   for name, val in cex.values.items())
    rows += "".join(f"<li>{escape(name)} instantiated as {escape(how)}</li>" for name, how in cex.functions.items())
    i, j = cex.entry
    return (f"<div class='counterexample'><p><b>Counterexample</b> at {escape(dims)}, with these exact inputs:</p>"
            f"<ul>{rows}</ul>{heatmap(cex, lhs, rhs)}"
            f"<p>Entry ({i}, {j}) differs: lhs − rhs = {wrapped(cex.difference)}</p>"
            f"<p class='certificate'>Certificate: {escape(cex.certificate)}</p></div>")


def verdict_html(v) -> str:
    head = (f"<p>{badge(v.status, v.general)} {escape(v.scope)} — by {escape(v.method)} "
            f"in {v.seconds:.2f} s</p>")
    claim = ""
    if v.lhs is not None and v.rhs is not None:
        claim = f"<div class='claim'>{_equation(v.lhs, v.rhs)}</div>"
    trace = "".join(f"<li>{trace_html(t)}</li>" for t in v.trace)
    out = f"<div class='verdict'>{head}{claim}<ol class='trace'>{trace}</ol>"
    if v.counterexample is not None:
        out += counterexample_html(v.counterexample, v.lhs, v.rhs)
    return out + "</div>"


def _equation(lhs, rhs) -> str:
    """lhs = rhs as MathML that wraps in a narrow window (:func:`symattn.teach.wrap.equation`; the sides'
    readable names shared)."""
    return equation(lhs, rhs)


def theorem_html(th) -> str:
    """A theorem before it is proved: its statement, what is expected, and each claim as MathML."""
    out = [f"<section class='theorem' id='{escape(th.name)}'>",
           f"<h3><code>{escape(th.name)}</code> <small>expected: {escape(th.expect)}</small></h3>",
           f"<p class='statement'>{escape(th.statement)}</p>"]
    if th.explanation:
        out.append(f"<p class='why'><b>Why:</b> {escape(th.explanation)}</p>")
    claims = _theorem_claims(th)
    if isinstance(claims, Exception):
        out.append(f"<p class='error'>its claims cannot be built: {escape(type(claims).__name__)}: "
                   f"{escape(str(claims))}</p>")
    else:
        out.append("<ol class='claims'>" + "".join(f"<li>{_equation(lhs, rhs)}</li>" for lhs, rhs in claims)
                   + "</ol>")
    return "".join(out) + "</section>"


def result_html(res, open_trace: bool = False) -> str:
    th = res.theorem
    out = [f"<section class='theorem' id='{escape(th.name)}'>",
           f"<h3><code>{escape(th.name)}</code> {badge(res.status, res.general)}</h3>",
           f"<p class='statement'>{escape(th.statement)}</p>",
           f"<table class='meta'><tr><th>verdict</th><td>{escape(res.status)}"
           f"{', general' if res.general else ''}</td></tr>"
           f"<tr><th>scope</th><td>{escape(res.scope)}</td></tr>"
           f"<tr><th>method</th><td>{escape(res.method)}</td></tr>"
           f"<tr><th>seconds</th><td>{res.seconds:.2f}</td></tr></table>"]
    if th.explanation:
        out.append(f"<p class='why'><b>Why:</b> {escape(th.explanation)}</p>")
    if res.error:
        out.append(f"<p class='error'>error: {escape(res.error)}</p>")
    for k, v in enumerate(res.verdicts, 1):
        is_open = " open" if open_trace or v.status == "refuted" else ""
        out.append(f"<details{is_open}><summary>claim {k}: {escape(_verdict_words(v))} ({escape(v.scope)})"
                   f"</summary>{verdict_html(v)}</details>")
    return "".join(out) + "</section>"


def report_html(report, anchor: str = "") -> str:
    """A derivation report: its steps as MathML, the verdict of each, the first failure in detail.
    ``anchor`` is the section's id (for a table of contents)."""
    from ..derivation.report import detail

    ident = f" id='{escape(anchor)}'" if anchor else ""
    out = [f"<section class='derivation'{ident}><h3>Derivation <code>{escape(report.source)}</code></h3>"]
    out += [f"<p class='note'>{escape(n)}</p>" for n in report.notes]
    out.append("<ol class='steps'>")
    for s in report.steps:  # each step a block: its verdict line, then the claim, which wraps (never scrolls)
        if s.lhs_expr is not None and s.rhs_expr is not None and not isinstance(s.lhs_expr, Exception) \
                and not isinstance(s.rhs_expr, Exception):
            claim = _equation(s.lhs_expr, s.rhs_expr)
        else:
            claim = f"<div class='equation'><code>{escape(s.lhs)} {escape(s.relation)} {escape(s.rhs)}</code></div>"
        out.append(f"<li class='step' value='{s.number}'><div class='stephead'>step ({s.number}) "
                   f"{badge(s.status, s.general)} <span class='scope'>{escape(s.scope or '-')}</span>"
                   f" <span class='method'>by {escape(s.method or '-')}</span></div>{claim}</li>")
    out.append("</ol>")
    first = report.first_failure
    if first is not None:
        out.append(f"<pre class='detail'>{escape(detail(first))}</pre>")
        cex = first.verdict.counterexample if first.verdict is not None else None
        if cex is not None:
            out.append(counterexample_html(cex, first.lhs_expr, first.rhs_expr))
    else:
        out.append(f"<p>Every step is proved ({len(report.steps)} steps, {report.seconds:.1f} s).</p>")
    return "".join(out) + "</section>"


def report_markdown(report) -> str:
    from ..derivation.report import to_markdown

    return to_markdown(report)


def report_text(report) -> str:
    from ..derivation.report import table

    return table(report)


def result_text(res) -> str:
    lines = [f"{res.theorem.name}: {res.status}{', general' if res.general else ''} ({res.scope}) by {res.method}",
             f"  {res.theorem.statement}"]
    for v in res.verdicts:
        lines.append("  " + v.explain().replace("\n", "\n  "))
    return "\n".join(lines)


register(counterexample_html=counterexample_html, counterexample_markdown=counterexample_markdown,
         report_html=report_html, result_html=result_html, result_markdown=result_markdown, result_text=result_text,
         theorem_html=theorem_html, theorem_markdown=theorem_markdown, theorem_text=theorem_text, trace_html=trace_html,
         verdict_html=verdict_html, verdict_markdown=verdict_markdown)

__all__ = ["counterexample_html", "counterexample_markdown", "report_html", "report_markdown", "result_html",
           "result_markdown", "theorem_html", "theorem_markdown", "theorem_text", "verdict_html", "verdict_markdown",
           "text"]
