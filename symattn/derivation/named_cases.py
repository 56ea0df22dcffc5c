r"""Definitions by named alternatives, as Luong et al. (2015) define their scores:

``\mathrm{score}(h_t, \bar{h}_s) = \begin{cases} h_t^\top \bar{h}_s & \text{dot} \\ h_t^\top W_a \bar{h}_s &
\text{general} \end{cases}``

names several definitions of one function, one per word, not a value by cases of a condition. The
definition is read (so that the steps that do not use the function are checked), and a step that uses the
function is refused by name, naming the alternatives: the step does not say which one it means, and a
step is never checked under an alternative the paper did not intend.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ast

TEXT_FONTS = ("text", "textrm", "mbox", "textnormal", "mathrm")


@dataclass(frozen=True)
class NamedCases(ast.Node):
    """Rows (word, value): ``value & \\text{word}``."""

    rows: tuple

    def labels(self):
        return ", ".join(f"\\text{{{w}}}" for w, _ in self.rows)

    def text(self):
        return "{" + "; ".join(f"{v.text()} ({w})" for w, v in self.rows) + "}"

    def latex(self):
        rows = [f"{v.latex()} & \\text{{{w}}}" for w, v in self.rows]
        return r"\begin{cases} " + r" \\ ".join(rows) + r" \end{cases}"


def labels_ahead(p) -> list[str]:
    """The words of the rows of the cases environment ahead (after ``\\begin{cases}``) when every row is
    ``value & \\text{word}``; [] otherwise (a mask by conditions)."""
    labels, depth, toks = [], 0, p.toks
    for k in range(p.i, len(toks) - 2):
        t = toks[k]
        if t.kind == "eof" or (t.kind == "end" and t.value == "cases" and depth == 0):
            break
        if t.kind == "begin":
            depth += 1
        elif t.kind == "end":
            depth -= 1
        elif depth == 0 and t.kind == "op" and t.value == "&":
            word, after = toks[k + 1], toks[k + 2]
            if not (word.kind == "ident" and word.font in TEXT_FONTS and word.value not in ("if", "otherwise")
                    and ((after.kind == "op" and after.value in ("\\\\", ",", ".")) or after.kind == "end")):
                return []
            labels.append(word.value)
    return labels


def read_named_cases(p, t):
    """The rows ``value & \\text{word}`` up to ``\\end{cases}`` (see :func:`labels_ahead`)."""
    rows = []
    while True:
        value = p.expr()
        p.expect_op("&", "'&' between the value and the name of its alternative")
        word = p.next()
        rows.append((word.value, value))
        if p.at_op(",", "."):
            p.next()
        if p.at_op("\\\\"):
            p.next()
        if p.at("end"):
            end = p.next()
            if end.value != "cases":
                p.fail(f"\\end{{{end.value}}} closes \\begin{{cases}}", "\\end{cases}", end)
            break
    if len({w for w, _ in rows}) != len(rows):
        p.fail("two alternatives of the cases environment have one name", "a name for each alternative", t)
    p.leave()
    return NamedCases((t.line, t.col), tuple(rows))


def refuse_use(scope, node, d):
    """Refuse the call ``node`` of the file's function ``d`` when ``d`` is defined by named alternatives."""
    if isinstance(d.body, NamedCases):
        f = d.target.text()
        scope.fail(node, f"{node.text()}: {f} is defined by named alternatives ({d.body.labels()}), and the step "
                   "does not say which one it uses; it is not checked under one the paper may not mean",
                   f"a name for each alternative, as in \\mathrm{{{f}}}_{{\\mathrm{{{d.body.rows[-1][0]}}}}}(h, s) = "
                   "..., and that name where it is used")
