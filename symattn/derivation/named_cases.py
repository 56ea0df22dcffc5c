r"""Definitions by named alternatives, as Luong et al. (2015) define their scores:

``\mathrm{score}(h_t, \bar{h}_s) = \begin{cases} h_t^\top \bar{h}_s & \text{dot} \\ h_t^\top W_a \bar{h}_s &
\text{general} \end{cases}``

names several definitions of one function, one per word, not a value by cases of a condition. The
definition is read, and a step that uses the function is read once under each alternative
(:func:`per_alternative`) and decided under each (:func:`decide`): the step does not say which one it
means, so its verdict names the alternative it holds under. It is proved (scope: "with score read as its
alternative general (under dot: refuted)") when it holds under one of them, refuted when it is refuted
under every one, and unknown otherwise; a step that uses two such functions is read under every pair of
their alternatives, and so on, up to :data:`MAX_READINGS` readings. Only the steps whose sides use such a
function are so read, and none is proved or refuted without the alternatives named.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace

from ..errors import DerivationError
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


class AlternativeNeeded(DerivationError):
    """A step uses a function defined by named alternatives, and no alternative is chosen (yet)."""


def chosen(scope, node, d):
    """The definition ``d`` of the call ``node``, its body the alternative chosen for this reading of the
    step (:func:`per_alternative`); a body by named alternatives with none chosen is refused by name."""
    if not isinstance(d.body, NamedCases):
        return d
    f = d.target.text()
    word = getattr(scope, "alternatives", {}).get(f)
    if word is not None:  # one definition per alternative, so that a body that calls itself is still refused
        made = scope.__dict__.setdefault("_alternative_definitions", {})
        return made.setdefault((id(d), word), replace(d, body=dict(d.body.rows)[word]))
    scope.alternative_needed = getattr(scope, "alternative_needed", None) or (f, tuple(w for w, _ in d.body.rows))
    scope.fail(node, f"{node.text()}: {f} is defined by named alternatives ({d.body.labels()}), and the step "
               "does not say which one it uses; it is not checked under one the paper may not mean",
               f"a name for each alternative, as in \\mathrm{{{f}}}_{{\\mathrm{{{d.body.rows[-1][0]}}}}}(h, s) = "
               "..., and that name where it is used", AlternativeNeeded)


#: the most readings of one chain, over the alternatives of every function it needs (their product)
MAX_READINGS = 16


def per_alternative(scope, read):
    """``[(choice, result of read())]`` for each choice of an alternative of every function defined by named
    alternatives that the reading of the chain needs (``choice``: ((function, word), ...); ``read`` reads the
    chain again); [] when it needed none. A function first needed under a choice widens that choice to each
    of its alternatives; past :data:`MAX_READINGS` readings a choice is left as it is (its step stays
    ill-formed, naming the function)."""
    need, scope.alternative_needed = getattr(scope, "alternative_needed", None), None
    if need is None:
        return []
    words_of = {need[0]: need[1]}
    pending, out = [((need[0], w),) for w in need[1]], []
    try:
        while pending:
            choice = pending.pop(0)
            scope.alternatives, scope.alternative_needed = dict(choice), None
            result = read()
            more = scope.alternative_needed
            if more is not None and more[0] not in dict(choice) \
                    and len(out) + len(pending) + len(more[1]) <= MAX_READINGS:
                words_of[more[0]] = more[1]
                pending[:0] = [choice + ((more[0], w),) for w in more[1]]
                continue
            out.append((choice, result))
    finally:
        scope.alternatives, scope.alternative_needed = {}, None
    for f, words in words_of.items():
        note = (f"{f} is defined by named alternatives ({', '.join(words)}): a step that uses it is checked under "
                "each, and its verdict names the alternative it holds under")
        if note not in scope.notes:
            scope.notes.append(note)
    return out


def decide(s, run) -> None:
    """Decide the step ``s`` under each of its readings (``s.alternatives``: (choice, lhs, rhs), a choice as
    :func:`per_alternative` gives it); ``run(steps)`` decides a list of steps. Proved when every reading proves
    it (saying so), or when one does, naming its alternatives and what the others gave; refuted when every
    one refutes it; unknown otherwise."""
    tries = []
    for choice, L, R in s.alternatives:
        c = copy.copy(s)
        c.alternatives, c.lhs_expr, c.rhs_expr = (), L, R
        run([c])
        tries.append((choice, c))
    functions = list(dict.fromkeys(f for choice, _ in tries for f, _ in choice))
    names = " and ".join(functions)
    said = "; ".join(f"under {_words(ch)}: {c.status}" for ch, c in tries)
    proved = [(ch, c) for ch, c in tries if c.status == "proved"]
    refuted = [(ch, c) for ch, c in tries if c.status == "refuted"]
    seconds = sum(c.seconds for _, c in tries)
    if len(proved) == len(tries):
        _take(s, proved[0][1])
        every = " and ".join(f"{f} ({', '.join(dict.fromkeys(w for ch, _ in tries for g, w in ch if g == f))})"
                             for f in functions)
        s.scope = f"{s.scope}; under every alternative of {every}"
    elif proved:
        choice, c = proved[0]
        others = "; ".join(f"under {_words(ch)}: {d.status}" for ch, d in tries if d is not c)
        _take(s, c)
        read_as = ", ".join(f"{f} read as its alternative {w}" for f, w in choice)
        s.scope = f"{c.scope}; with {read_as}" + (f" ({others})" if others else "")
    elif len(refuted) == len(tries):
        _take(s, refuted[0][1])
        s.scope = f"{s.scope}; refuted under every alternative of {names} ({said})"
    else:
        _take(s, next((c for _, c in tries if c.status == "unknown"), tries[0][1]))
        s.status = "unknown" if s.status != "ill-formed" or any(c.status != "ill-formed" for _, c in tries) \
            else "ill-formed"
        s.error = (f"{names} {'is' if len(functions) == 1 else 'are'} defined by named alternatives, and the step "
                   f"is neither proved under one nor refuted under every one ({said})"
                   + (f"\n{s.error}" if s.error else ""))
    s.seconds = seconds  # every reading's time


def _words(choice) -> str:
    return " and ".join(w for _, w in choice)


def _take(s, c) -> None:
    for name in ("status", "general", "scope", "method", "verdict", "error", "lhs_expr", "rhs_expr", "orientation"):
        setattr(s, name, getattr(c, name))
