"""Pictures as hand-written SVG (no dependency): the shapes of both conventions, and heatmaps.

:func:`shape_diagram` draws the matrices of attention in the column and the row convention to
scale at concrete sizes, with their dimension labels, and an arrow along the axis that softmax
normalizes (down each column of KᵀQ, along each row of QKᵀ). :func:`heatmap` draws the two
sides of a counterexample as heatmaps: the attention weights (the first Softmax of each side,
evaluated exactly at the counterexample's inputs) when both sides have one, else the two sides'
values; the entry that was certified different is outlined.

Both return an ``<svg>`` element as a string, ready for HTML or a notebook.
"""

from __future__ import annotations

from html import escape

import numpy as np
import sympy as sp

from ..printing import dim, text

CELL = 16
FONT = "font-family='DejaVu Sans, Arial, sans-serif'"


def _rect(x, y, w, h, fill, stroke="#333", width=1) -> str:
    return (f"<rect x='{x:.1f}' y='{y:.1f}' width='{w:.1f}' height='{h:.1f}' fill='{fill}' "
            f"stroke='{stroke}' stroke-width='{width}'/>")


def _text(x, y, s, size=12, anchor="middle", weight="normal", fill="#111") -> str:
    return (f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}' font-weight='{weight}' "
            f"fill='{fill}' {FONT}>{escape(s)}</text>")


def _arrow(x1, y1, x2, y2, color="#c0392b") -> str:
    return (f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' stroke='{color}' stroke-width='2.5' "
            f"marker-end='url(#arrowhead)'/>")


_DEFS = ("<defs><marker id='arrowhead' markerWidth='8' markerHeight='8' refX='6' refY='4' orient='auto'>"
         "<path d='M0,0 L8,4 L0,8 z' fill='#c0392b'/></marker></defs>")


def _panel(items, x0, y0, softmax_axis):
    """Draw (label, shape text, rows, cols, kind) items left to right; return (svg parts, width, height)."""
    parts, x = [], x0
    tallest = max(r for _, _, r, _, _ in items) * CELL
    for label, dims, rows, cols, kind in items:
        w, h = cols * CELL, rows * CELL
        y = y0 + 18 + (tallest - h) / 2
        fill = {"input": "#dbe9f6", "score": "#fdebd0", "output": "#d5f5e3"}[kind]
        parts.append(_rect(x, y, w, h, fill))
        for k in range(1, cols):  # faint grid: one cell per entry
            parts.append(f"<line x1='{x + k * CELL}' y1='{y}' x2='{x + k * CELL}' y2='{y + h}' stroke='#aaa' "
                         "stroke-width='0.4'/>")
        for k in range(1, rows):
            parts.append(f"<line x1='{x}' y1='{y + k * CELL}' x2='{x + w}' y2='{y + k * CELL}' stroke='#aaa' "
                         "stroke-width='0.4'/>")
        parts.append(_text(x + w / 2, y0 + 12, label, 13, weight="bold"))
        parts.append(_text(x + w / 2, y + h + 15, dims, 11))
        if kind == "score" and softmax_axis is not None:
            if softmax_axis == 0:  # down every column
                parts.append(_arrow(x + CELL / 2, y + 3, x + CELL / 2, y + h - 4))
                parts.append(_text(x + w / 2, y + h + 29, "softmax ↓ each column", 11, fill="#c0392b"))
            else:
                parts.append(_arrow(x + 3, y + CELL / 2, x + w - 4, y + CELL / 2))
                parts.append(_text(x + w / 2, y + h + 29, "softmax → each row", 11, fill="#c0392b"))
        x += max(w, 8 * len(label), 7 * len(dims), 9 * 16 if kind == "score" else 0) + 30
    return parts, x - x0, tallest + 52


DEFAULT_SIZES = {"n": 4, "m": 6, "d_k": 3, "d_v": 2, "d_model": 5, "H": 2, "N": 5, "d": 4, "t": 4, "p": 2,
                 "G": 1, "r": 2}


def _shape(o):
    from ..defs.heads import Family

    return (o.rows, o.cols) if isinstance(o, Family) else o.shape


def shape_diagram(e, sizes: dict | None = None) -> str:
    """The matrices of an explanation ``e`` (:func:`symattn.teach.conventions.explain_topic`) in
    both conventions, drawn to scale at ``sizes``: every operand, the score matrix the softmax normalizes (with an
    arrow along its axis) and the output.

    ``sizes`` maps dimension names to small integers (defaults: :data:`DEFAULT_SIZES`, n = 4, m = 6,
    d_k = 3, d_v = 2, ...). The shapes come from the library's definitions; a head's weights are
    drawn once, as W_h.
    """
    from ..defs import Softmax

    sizes = {**DEFAULT_SIZES, **(sizes or {})}
    topic = e.topic.name
    used = set()
    parts, width, y = [_DEFS], 0, 0
    for convention, expr in (("column", e.column), ("row", e.row)):
        operands = [(x, _shape(x) if convention == "column" else _shape(x)[::-1]) for x, _ in e.topic.operands]
        symbols = set().union(*(sp.sympify(d).free_symbols for _, shape in operands for d in shape),
                              *(sp.sympify(d).free_symbols for d in expr.shape))
        at = {x: sizes[str(x)] for x in symbols if str(x) in sizes}
        used |= {str(x) for x in at}

        def size(d, at=at):
            return int(sp.sympify(d).subs(at))

        items = [(o.name + ("_h" if not isinstance(o, sp.MatrixSymbol) else ""),
                  f"{dim(shape[0])} × {dim(shape[1])}", size(shape[0]), size(shape[1]), "input")
                 for o, shape in operands]
        soft = next((x for x in sp.preorder_traversal(expr) if isinstance(x, Softmax)), None)
        if soft is not None:
            r_, c_ = soft.arg.shape
            at.update({x: sizes[str(x)] for x in soft.arg.free_symbols if str(x) in sizes})
            items.append(("scores", f"{dim(r_)} × {dim(c_)}", size(r_), size(c_), "score"))
        items.append(("output", f"{dim(expr.shape[0])} × {dim(expr.shape[1])}", size(expr.shape[0]),
                      size(expr.shape[1]), "output"))
        title = ("column convention (seed 000): vectors are columns" if convention == "column"
                 else "row convention (Transformer, PyTorch): vectors are rows") + f";  output = {text(expr, 90)}"
        parts.append(_text(10, y + 16, title, 14, anchor="start", weight="bold"))
        panel, w, h = _panel(items, 10, y + 26, None if soft is None else soft.axis)
        parts += panel
        width, y = max(width, w + 20, 8 * len(title)), y + h + 40
    label = ", ".join(f"{k} = {v}" for k, v in sizes.items() if k in used)
    parts.append(_text(10, y, f"drawn to scale at {label}; one square per entry", 11, anchor="start", fill="#555"))
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width + 40:.0f}' height='{y + 12:.0f}' "
            f"viewBox='0 0 {width + 40:.0f} {y + 12:.0f}' role='img' aria-label='shapes of {escape(topic)} in both "
            f"conventions'>{''.join(parts)}</svg>")


def _evaluate(expr, cex):
    """``expr`` at the counterexample's dimensions and inputs, as a float array (None if it cannot be)."""
    try:
        values = {}
        for s in expr.atoms(sp.MatrixSymbol):
            if s.name not in cex.values:
                return None
            values[s] = sp.ImmutableMatrix(np.atleast_2d(np.asarray(cex.values[s.name], dtype=object)).tolist())
        e = expr.xreplace(values)
        dims = {s: cex.dims[k] for k in cex.dims for s in e.free_symbols if str(s) == str(k)}
        e = (e.subs(dims) if dims else e).doit()
        arr = np.array(sp.Matrix(e).evalf(15).tolist(), dtype=float)
        return arr if np.all(np.isfinite(arr)) else None
    except Exception:  # anything the exact evaluation cannot do: the caller falls back to the sides' values
        return None


def attention_weights(lhs, rhs, cex):
    """(title, lhs array, rhs array): the first Softmax of each side at the counterexample, when both
    have one and evaluate; else the two sides' values."""
    from ..defs import Softmax

    soft = [next((x for x in sp.preorder_traversal(e) if isinstance(x, Softmax)), None) if e is not None else None
            for e in (lhs, rhs)]
    if all(s is not None for s in soft):
        a, b = _evaluate(soft[0], cex), _evaluate(soft[1], cex)
        if a is not None and b is not None:
            return "attention weights (the softmax of each side)", a, b
    return "the two sides' values", np.asarray(cex.lhs, dtype=float), np.asarray(cex.rhs, dtype=float)


def _color(v, lo, hi) -> str:
    if not np.isfinite(v):  # nan or ±inf: grey, and the cell's label says which
        return "#bbbbbb"
    if hi <= lo:
        return "#f0f0f0"
    if lo >= 0:  # weights: white to blue
        t = (v - lo) / (hi - lo)
        return f"rgb({int(255 - 200 * t)},{int(255 - 150 * t)},255)"
    big = max(abs(lo), abs(hi))
    t = v / big
    if t >= 0:
        return f"rgb(255,{int(255 - 170 * t)},{int(255 - 170 * t)})"
    return f"rgb({int(255 + 170 * t)},{int(255 + 170 * t)},255)"


def _label(v) -> str:
    """A cell's value with two decimals; nan, ∞ and -∞ by name."""
    if np.isnan(v):
        return "nan"
    return f"{v:.2f}" if np.isfinite(v) else ("∞" if v > 0 else "-∞")


def heatmap(cex, lhs=None, rhs=None) -> str:
    """Heatmaps of a counterexample's two sides (attention weights where both sides have a softmax)."""
    title, a, b = attention_weights(lhs, rhs, cex)
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    finite = np.concatenate([a[np.isfinite(a)], b[np.isfinite(b)], [0.0]])
    lo, hi = float(finite.min()), float(finite.max())
    cell = 38
    parts, x = [], 10
    entry = tuple(cex.entry) if title.startswith("the two sides") else None
    for label, arr in (("lhs", a), ("rhs", b)):
        parts.append(_text(x + arr.shape[1] * cell / 2, 40, label, 13, weight="bold"))
        for i in range(arr.shape[0]):
            for j in range(arr.shape[1]):
                cx, cy = x + j * cell, 50 + i * cell
                hit = entry == (i, j)
                parts.append(_rect(cx, cy, cell, cell, _color(arr[i, j], lo, hi), "#c0392b" if hit else "#666",
                                   3 if hit else 1))
                parts.append(_text(cx + cell / 2, cy + cell / 2 + 4, _label(arr[i, j]), 10))
        x += arr.shape[1] * cell + 40
    height = 50 + max(a.shape[0], b.shape[0]) * cell + 20
    dims = ", ".join(f"{k} = {v}" for k, v in cex.dims.items()) or "the stated sizes"
    caption = f"{title} at {dims}"
    parts.insert(0, _text(10, 18, caption, 13, anchor="start", weight="bold"))
    width = max(x, 20 + 8 * len(caption))
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
            f"viewBox='0 0 {width:.0f} {height:.0f}' role='img' aria-label='{escape(title)}'>{''.join(parts)}</svg>")
