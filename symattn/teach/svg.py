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


def legend_bar(x, y, lo, hi, steps: int = 24, width: float = 240) -> tuple[str, float]:
    """A colour legend for :func:`_color` on [lo, hi]: a bar of ``steps`` swatches with the values at its ends
    (and 0 in the middle when the scale is signed). Returns (svg fragment, its width)."""
    parts = [_text(x, y + 10, "colour scale:", 11, anchor="start", fill="#333")]
    x0, w = x + 80, width / steps
    if lo >= 0:
        values = [lo + (hi - lo) * (k + 0.5) / steps for k in range(steps)]
        ticks = [(lo, x0), (hi, x0 + width)]
    else:
        big = max(abs(lo), abs(hi))
        values = [-big + 2 * big * (k + 0.5) / steps for k in range(steps)]
        ticks = [(-big, x0), (0.0, x0 + width / 2), (big, x0 + width)]
    for k, v in enumerate(values):
        parts.append(f"<rect x='{x0 + k * w:.1f}' y='{y:.1f}' width='{w + 0.4:.1f}' height='14' "
                     f"fill='{_color(v, lo, hi)}'/>")
    parts.append(_rect(x0, y, width, 14, "none", "#666"))
    for v, tx in ticks:
        parts.append(f"<line x1='{tx:.1f}' y1='{y + 14:.1f}' x2='{tx:.1f}' y2='{y + 19:.1f}' stroke='#333'/>")
        parts.append(_text(tx, y + 31, _label(v), 10))
    return "".join(parts), 80 + width + 20


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
    height = 50 + max(a.shape[0], b.shape[0]) * cell + 14
    legend, lw = legend_bar(10, height, lo, hi)
    parts.append(legend)
    height += 46
    dims = ", ".join(f"{k} = {v}" for k, v in cex.dims.items()) or "the stated sizes"
    caption = f"{title} at {dims}"
    parts.insert(0, _text(10, 18, caption, 13, anchor="start", weight="bold"))
    width = max(x, 20 + 8 * len(caption), lw + 20)
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
            f"viewBox='0 0 {width:.0f} {height:.0f}' role='img' aria-label='{escape(title)}'>{''.join(parts)}</svg>")


# The four pictures of a lesson ------------------------------------------------


def _svg(width, height, label, parts) -> str:
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
            f"viewBox='0 0 {width:.0f} {height:.0f}' role='img' aria-label='{escape(label)}'>{''.join(parts)}</svg>")


def causal_mask_picture(n: int = 6) -> str:
    """The causal mask at n positions, from :class:`symattn.defs.CausalMask`: in the row convention
    (query i in row i, key j in column j) entry (i, j) is 0 where key j ≤ i is visible and −∞ where it is
    masked; the column convention adds the transpose to KᵀQ/√d_k."""
    from ..defs import CausalMask

    column = np.array(CausalMask(n, n).as_explicit().tolist(), dtype=object)  # keys × queries
    row = column.T
    cell, x0, y0 = 34, 90, 58
    parts = [_text(10, 18, f"causal mask at n = {n} (row convention: added to QKᵀ/√d_k)", 13, anchor="start",
                   weight="bold"),
             _text(x0 + n * cell / 2, 44, "key j →", 11),
             _text(10, y0 + n * cell / 2 + 4, "query i ↓", 11, anchor="start")]
    for i in range(n):
        parts.append(_text(x0 - 10, y0 + i * cell + cell / 2 + 4, str(i), 10, anchor="end"))
        parts.append(_text(x0 + i * cell + cell / 2, y0 - 4, str(i), 10))
        for j in range(n):
            masked = row[i, j] == -sp.oo
            parts.append(_rect(x0 + j * cell, y0 + i * cell, cell, cell, "#5d6d7e" if masked else "#d5f5e3", "#444"))
            parts.append(_text(x0 + j * cell + cell / 2, y0 + i * cell + cell / 2 + 4, "−∞" if masked else "0", 11,
                               fill="white" if masked else "#145a32"))
    yb = y0 + n * cell + 22
    parts += [_rect(x0, yb - 11, 14, 14, "#d5f5e3"), _text(x0 + 20, yb, "0: key j ≤ i is seen", 11, anchor="start"),
              _rect(x0 + 170, yb - 11, 14, 14, "#5d6d7e"),
              _text(x0 + 190, yb, "−∞: a later key, weight exp(−∞) = 0", 11, anchor="start"),
              _text(10, yb + 22, "column convention (seed 000): the same pattern transposed, added to KᵀQ/√d_k", 11,
                    anchor="start", fill="#555")]
    return _svg(max(x0 + n * cell + 30, 480), yb + 34, "causal mask pattern", parts)


def gqa_picture(H: int = 8, G: int = 2) -> str:
    """Grouped-query attention: each of H query heads reads key/value head g(h)
    (:func:`symattn.defs.gqa.group_of`), H/G query heads per key/value head."""
    from ..defs.gqa import group_of

    colors = ["#2874a6", "#b9770e", "#1e8449", "#884ea0", "#a93226", "#117a65"]
    box, gap, x0 = 40, 12, 20
    width = x0 * 2 + H * box + (H - 1) * gap
    parts = [_text(10, 18, f"GQA: H = {H} query heads share G = {G} key/value heads", 13, anchor="start",
                   weight="bold")]
    group_x = {g: x0 + (width - 2 * x0) * (g - 0.5) / G for g in range(1, G + 1)}
    for h in range(1, H + 1):
        g = int(group_of(h, H, G))
        cx = x0 + (h - 1) * (box + gap) + box / 2
        c = colors[(g - 1) % len(colors)]
        parts.append(f"<line x1='{cx:.1f}' y1='{72:.1f}' x2='{group_x[g]:.1f}' y2='{150:.1f}' stroke='{c}' "
                     "stroke-width='2'/>")
        parts.append(_rect(cx - box / 2, 40, box, 32, "#eaf2f8", c, 2))
        parts.append(_text(cx, 61, f"Q{h}", 12))
    for g, gx in group_x.items():
        c = colors[(g - 1) % len(colors)]
        parts.append(_rect(gx - 45, 150, 90, 34, "#fdf2e9", c, 2))
        parts.append(_text(gx, 172, f"K{g}, V{g}", 12, weight="bold"))
    parts.append(_text(10, 208, f"query head h reads key/value head g(h) = ⌊(h − 1)/(H/G)⌋ + 1, H/G = {H // G} "
                                "query heads per group", 11, anchor="start", fill="#555"))
    return _svg(max(width, 560), 220, "grouped-query attention: query heads onto key/value heads", parts)


def rope_picture(position: int = 3, theta: float = 0.5, pair=(1.0, 0.35)) -> str:
    """RoPE on one pair of coordinates: the vector x = (x₁, x₂) and its image ρ(m·θ) x at position m, the
    rotation :func:`symattn.defs.rope.rotation` by the angle m·θ (marked by an arc)."""
    from ..defs.rope import rotation

    angle = position * theta
    R = np.array(rotation(sp.Float(angle)).evalf().tolist(), dtype=float)
    x = np.asarray(pair, dtype=float)
    y = R @ x
    size, scale = 300, 120
    cx, cy = size / 2, size / 2 + 20

    def at(v):
        return cx + scale * v[0], cy - scale * v[1]  # SVG's y axis points down

    defs = ("<defs><marker id='ropehead' markerWidth='8' markerHeight='8' refX='6' refY='4' orient='auto'>"
            "<path d='M0,0 L8,4 L0,8 z' fill='#333'/></marker></defs>")
    parts = [defs, _text(10, 18, f"RoPE: a pair of coordinates at position m = {position}, rotated by m·θ", 13,
                         anchor="start", weight="bold"),
             f"<line x1='{cx - 140}' y1='{cy}' x2='{cx + 140}' y2='{cy}' stroke='#aaa'/>",
             f"<line x1='{cx}' y1='{cy - 140}' x2='{cx}' y2='{cy + 140}' stroke='#aaa'/>",
             _text(cx + 138, cy + 14, "x₁", 11), _text(cx + 10, cy - 128, "x₂", 11),
             f"<circle cx='{cx}' cy='{cy}' r='{scale * float(np.hypot(*x)):.1f}' fill='none' stroke='#ddd' "
             "stroke-dasharray='4 3'/>"]
    for v, color, label in ((x, "#2874a6", "x"), (y, "#c0392b", "ρ(m·θ) x")):
        px, py = at(v)
        parts.append(f"<line x1='{cx}' y1='{cy}' x2='{px:.1f}' y2='{py:.1f}' stroke='{color}' stroke-width='2.5' "
                     f"marker-end='url(#ropehead)'/>")
        parts.append(_text(px + (12 if v[0] >= 0 else -12), py - 6, label, 12, anchor="start" if v[0] >= 0 else "end",
                           fill=color, weight="bold"))
    r = 45
    a0, a1 = float(np.arctan2(x[1], x[0])), float(np.arctan2(y[1], y[0]))
    s0, s1 = at((r / scale * np.cos(a0), r / scale * np.sin(a0))), at((r / scale * np.cos(a1), r / scale * np.sin(a1)))
    large = 1 if (angle % (2 * np.pi)) > np.pi else 0
    parts.append(f"<path d='M{s0[0]:.1f},{s0[1]:.1f} A{r},{r} 0 {large} 0 {s1[0]:.1f},{s1[1]:.1f}' fill='none' "
                 "stroke='#333' stroke-width='1.5'/>")
    mid = (a0 + a1) / 2
    lx, ly = at(((r + 16) / scale * np.cos(mid), (r + 16) / scale * np.sin(mid)))
    parts.append(_text(lx, ly, "m·θ", 12, weight="bold"))
    parts.append(_text(10, cy + 160, f"m·θ = {position} · {theta:g} = {angle:g} rad; the length is kept, and q·k then "
                                     "depends", 11, anchor="start", fill="#555"))
    parts.append(_text(10, cy + 174, "on the positions m, n of q and k only through m − n", 11, anchor="start",
                       fill="#555"))
    return _svg(max(size, 560), cy + 186, "RoPE rotation of a pair of coordinates", parts)


def score_variances(dks=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512), samples: int = 2000, seed: int = 0):
    """[(d_k, sample variance of q·k, sample variance of q·k/√d_k)] for ``samples`` pairs q, k with
    independent standard normal entries, drawn with NumPy's generator seeded by ``seed`` (a sampled
    illustration: the exact variances are d_k and 1)."""
    rng = np.random.default_rng(seed)
    out = []
    for d in dks:
        q, k = rng.standard_normal((samples, d)), rng.standard_normal((samples, d))
        dots = np.einsum("sd,sd->s", q, k)
        out.append((d, float(dots.var(ddof=1)), float((dots / np.sqrt(d)).var(ddof=1))))
    return out


def score_variance_picture(dks=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512), samples: int = 2000, seed: int = 0) -> str:
    """The variance of q·k grows like d_k, that of q·k/√d_k stays 1: sampled points (:func:`score_variances`,
    seeded) beside the exact lines Var = d_k and Var = 1, on log₂ axes."""
    data = score_variances(dks, samples, seed)
    x0, y0, w, h = 70, 40, 380, 240
    lo_x, hi_x = np.log2(min(dks)), np.log2(max(dks))
    lo_y, hi_y = -1.0, np.log2(max(dks)) + 1

    def at(d, v):
        return (x0 + w * (np.log2(d) - lo_x) / (hi_x - lo_x), y0 + h - h * (np.log2(v) - lo_y) / (hi_y - lo_y))

    parts = [_text(10, 18, "score variance against d_k (why attention divides by √d_k)", 13, anchor="start",
                   weight="bold"), _rect(x0, y0, w, h, "#fdfefe", "#999")]
    for d in dks:
        px, _ = at(d, 1)
        parts.append(_text(px, y0 + h + 14, str(d), 10))
    for e in range(int(lo_y), int(hi_y) + 1, 2):
        _, py = at(1, 2.0 ** e)
        parts.append(f"<line x1='{x0 - 4}' y1='{py:.1f}' x2='{x0}' y2='{py:.1f}' stroke='#333'/>")
        parts.append(_text(x0 - 6, py + 4, f"{2.0 ** e:g}", 10, anchor="end"))
    parts += [_text(x0 + w / 2, y0 + h + 30, "d_k (log scale)", 11),
              _text(x0 + 6, y0 + 14, "variance (log scale)", 11, anchor="start")]
    (ax, ay), (bx, by) = at(dks[0], dks[0]), at(dks[-1], dks[-1])
    parts.append(f"<line x1='{ax:.1f}' y1='{ay:.1f}' x2='{bx:.1f}' y2='{by:.1f}' stroke='#c0392b' stroke-width='1.5'/>")
    (ax, ay), (bx, by) = at(dks[0], 1), at(dks[-1], 1)
    parts.append(f"<line x1='{ax:.1f}' y1='{ay:.1f}' x2='{bx:.1f}' y2='{by:.1f}' stroke='#2874a6' stroke-width='1.5'/>")
    for d, raw, scaled in data:
        for v, c in ((raw, "#c0392b"), (scaled, "#2874a6")):
            px, py = at(d, v)
            parts.append(f"<circle cx='{px:.1f}' cy='{py:.1f}' r='3.5' fill='white' stroke='{c}' stroke-width='2'/>")
    ly = y0 + h + 50
    parts += [f"<line x1='10' y1='{ly - 4}' x2='30' y2='{ly - 4}' stroke='#c0392b' stroke-width='1.5'/>",
              _text(36, ly, "Var(q·k) = d_k, exact; ○ sampled", 11, anchor="start"),
              f"<line x1='260' y1='{ly - 4}' x2='280' y2='{ly - 4}' stroke='#2874a6' stroke-width='1.5'/>",
              _text(286, ly, "Var(q·k/√d_k) = 1, exact; ○ sampled", 11, anchor="start"),
              _text(10, ly + 18, f"sampled illustration, not a proof: {samples:,} pairs q, k per d_k with independent",
                    11, anchor="start", fill="#555"),
              _text(10, ly + 32, f"standard normal entries, NumPy seed {seed}; the lines are the exact variances", 11,
                    anchor="start", fill="#555")]
    return _svg(560, ly + 44, "score variance against d_k", parts)
