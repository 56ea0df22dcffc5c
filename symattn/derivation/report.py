"""Renderings of a derivation report: a plain step table, JSON, and Markdown with LaTeX."""

from __future__ import annotations

import json

import numpy as np


def _verdict(s) -> str:
    if s.status == "proved":
        out = "proved, general" if s.general else "proved at dims"
        # a column equated with a row: said beside the verdict, where a dropped transpose would hide
        return out + (" (as vectors)" if getattr(s, "orientation", "") else "")
    return s.status


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def table(report, wide: bool = False) -> str:
    """The step table, then the first failing step in detail."""
    w = 10_000 if wide else 48
    head = ("step", "at", "claim", "verdict", "scope", "method", "s")
    rows = []
    for k, s in enumerate(report.steps):
        if k == 0 or s.chain != report.steps[k - 1].chain:  # a chain starts: show its left side
            rows.append(("", "", _short(s.lhs, w), "", "", "", ""))
        rows.append((str(s.number), f"{s.pos[0]}:{s.pos[1]}", _short(f"{s.relation} {s.rhs}", w), _verdict(s),
                     s.scope or "-", s.method or "-", f"{s.seconds:.2f}"))
    widths = [max(len(r[k]) for r in rows + [head]) for k in range(len(head))]

    def line(r):
        return "  ".join(c.ljust(wd) for c, wd in zip(r, widths)).rstrip()

    out = [f"{report.source}"]
    out += [f"  {n}" for n in report.notes]
    out += [f"  definition: {d}" for d in report.definitions]
    out += ["", line(head), line(["-" * wd for wd in widths])] + [line(r) for r in rows]
    if not report.steps:
        out.append("no steps: the file declares and defines, but claims nothing")
    proved = sum(s.proved for s in report.steps)
    out.append(f"\n{proved} of {len(report.steps)} steps proved in {report.seconds:.1f} s")
    for s in failing(report):
        out.append("")
        out.append(detail(s))
    return "\n".join(out)


def failing(report) -> list:
    """The steps to explain: every step not proved, except those skipped after an ill-formed one
    (the step before explains them)."""
    return [s for s in report.steps if not s.proved and s.status != "skipped"]


def _array(a) -> str:
    return np.array2string(np.asarray(a), separator=", ").replace("\n", " ")


def detail(s) -> str:
    """The failing step: both sides, the counterexample and the diagnosis."""
    out = [f"step {s.number} (line {s.pos[0]}, column {s.pos[1]}) is {s.status}:",
           f"  {s.lhs}", f"  {s.relation} {s.rhs}"]
    if s.error:
        out.append("  " + s.error.replace("\n", "\n  "))
    cex = s.verdict.counterexample if s.verdict is not None else None
    if cex is not None:
        out.append("  counterexample " + cex.describe().replace("\n", "\n  "))
        for name, v in cex.values.items():
            out.append(f"    {name} = {_array(v)}")
        with np.printoptions(precision=4, suppress=True):
            out.append(f"    lhs = {_array(cex.lhs)}")
            out.append(f"    rhs = {_array(cex.rhs)}")
    elif s.status == "unknown" and s.verdict is not None:
        out.append("  " + s.verdict.explain().replace("\n", "\n  "))
    if s.diagnosis is not None:
        out.append("  " + s.diagnosis.describe().replace("\n", "\n  "))
    elif s.status == "unknown":
        out.append("  neither proved nor refuted: the step may be true; no slip is suggested")
    elif s.status != "skipped":
        tried = getattr(s, "slips_tried", "") or "transpose, softmax axis, scale, head order"  # the reader's catalogue
        out.append(f"  no usual slip ({tried}) explains it")
    return "\n".join(out)


def to_json(report) -> str:
    return json.dumps(report.as_dict(), indent=2, ensure_ascii=False, default=str)


def to_markdown(report) -> str:
    """The report as Markdown with LaTeX formulas (for an appendix or a course page)."""
    icon = {"proved": "✓", "refuted": "✗", "unknown": "?", "ill-formed": "!", "skipped": "–"}
    out = [f"## Derivation check: `{report.source}`", ""]
    out += [f"- {n}" for n in report.notes]
    if report.definitions:
        out += [f"- definition: `{d}`" for d in report.definitions]
    out.append("")
    for k, s in enumerate(report.steps):
        if k == 0 or s.chain != report.steps[k - 1].chain:  # each chain in its own display
            if k:
                out += [r"\end{aligned}", "$$", ""]
            out += ["$$", r"\begin{aligned}", s.lhs_latex]
        rel = ":=" if s.relation == ":=" else "="
        out.append(rf"&{rel} {s.rhs_latex} && \text{{({s.number}) {icon[s.status]}}} \\")
    if report.steps:
        out += [r"\end{aligned}", "$$", ""]
    out += ["| step | verdict | scope | method |", "|---|---|---|---|"]
    for s in report.steps:
        out.append(f"| ({s.number}) | {icon[s.status]} {_verdict(s)} | {s.scope or '-'} "
                   f"| {s.method or '-'} |")
    bad = failing(report)
    if bad:
        for s in bad:
            out += ["", f"**Step ({s.number}) is {s.status}.**", "", "```", detail(s), "```"]
    else:
        out += ["", f"Every step is proved ({len(report.steps)} steps, {report.seconds:.1f} s)."]
    return "\n".join(out) + "\n"
