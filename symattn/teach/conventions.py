"""The two conventions side by side, built from symattn's own definitions.

Seed 000 writes vectors as columns: Q is d_k × n, Softmax normalizes each column and
attention is V·Softmax(KᵀQ/√d_k). The Transformer paper and PyTorch write them as rows: Q is
n × d_k, softmax normalizes each row and attention is softmax(QKᵀ/√d_k)·V. For each topic
(:data:`TOPICS`) this module builds both forms with the library's definitions
(``convention="column"`` and ``convention="row"``), lists every operand's shape in each, says
which axis the softmax normalizes, derives one form from the other (the transpose pushed through
the column form) and proves the correspondence live: the claim row form (on the transposed
operands) = (column form)ᵀ with :func:`symattn.verify`, and the library theorems that state it.

>>> e = explain_topic("attention", prove=False)
>>> e.column_text, e.row_text
('V·Softmax(Kᵀ·Q/√d_k)', 'softmax_row(Q·Kᵀ/√d_k)·V')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import sympy as sp

from .. import defs as D
from ..defs.heads import Family
from ..printing import dim, latex, mathml, text
from . import svg

n, m, N, t, d, d_k, d_v, d_model, H, G, r, p = D.dims("n m N t d d_k d_v d_model H G r p")
CONVENTIONS = {
    "column": "column convention (seed 000, the math papers): vectors are columns",
    "row": "row convention (the Transformer paper, PyTorch): vectors are rows",
}


@dataclass(frozen=True)
class Topic:
    """A definition shown in both conventions: its operands in the column layout and a builder."""

    name: str
    title: str
    summary: str
    operands: tuple  # (MatrixSymbol or Family, what it is), in the column convention
    build: Callable  # build(operands: dict name -> operand, convention) -> matrix expression
    theorems: tuple  # library theorems that state the correspondence (or its row twin)
    weights: bool = False
    notes: tuple = ()
    scalar: bool = False  # the output is 1 × 1: the row form equals the column form itself (aᵀ = a)
    parts: Callable | None = None  # parts(operands, convention) -> [(name, expression)], shown under the definition


def _sym(name, rows, cols):
    return sp.MatrixSymbol(name, rows, cols)


def _attention(o, c):
    return D.attention(o["Q"], o["K"], o["V"], convention=c)


def _multihead(o, c):
    return D.multihead(o["Q"], o["K"], o["V"], o["W^Q"], o["W^K"], o["W^V"], o["W^O"], H=H, convention=c)


def _multihead_parts(o, c):
    """head_h, and MultiHead in terms of the heads: W^O [head_1; …; head_H] (column) or
    [head_1 … head_H] W^O (row)."""
    h = D.h
    head = D.head(o["Q"], o["K"], o["V"], o["W^Q"][h], o["W^K"][h], o["W^V"][h], convention=c)
    W_O = o["W^O"]
    if c == "column":
        heads = Family("head", d_v, n)
        combined = D.head_concat(lambda k: W_O[k], H) * D.head_stack(lambda k: heads[k], H)
    else:
        heads = Family("head", n, d_v)
        combined = D.head_concat(lambda k: heads[k], H) * D.head_stack(lambda k: W_O[k], H)
    return [("head_h", head), ("MultiHead", combined)]


def _pooling(o, c):
    return D.query_attention_pool(o["X"], o["q_pool"], o["W_p"], o["W^K"], o["W^V"], c)


def _gqa(o, c):
    return D.gqa(o["Q"], o["K"], o["V"], o["W^Q"], o["W^K"], o["W^V"], o["W^O"], H=G * r, G=G, convention=c)


def _mask(o, c):
    return D.causal_attention(o["Q"], o["K"], o["V"], convention=c)


def _kv_cache(o, c):
    return D.KVCache(o["K"], o["V"], convention=c).decode(o["q"], o["k"], o["v"])


_theta = sp.Function("theta")
_a, _b = sp.symbols("a b", integer=True)


def _rope(o, c):
    q, k = D.apply_rope(o["q"], _a, p, _theta, c), D.apply_rope(o["k"], _b, p, _theta, c)
    return q.T * k if c == "column" else q * k.T


TOPICS = {
    "attention": Topic(
        "attention", "Scaled dot-product attention",
        "n queries attend to m keys; each query's output is a weighted average of the m values.",
        ((_sym("Q", d_k, n), "queries"), (_sym("K", d_k, m), "keys"), (_sym("V", d_v, m), "values")),
        _attention, ("column_row_transpose",)),
    "multihead": Topic(
        "multihead", "Multi-head attention",
        "H heads, each attention on its own projections W_h^Q Q, W_h^K K, W_h^V V; the heads are stacked "
        "and mixed by W^O (the block form W^O [head_1; ...; head_H] = Σ_h W_h^O head_h).",
        ((_sym("Q", d_model, n), "queries"), (_sym("K", d_model, m), "keys"), (_sym("V", d_model, m), "values"),
         (Family("W^Q", d_k, d_model), "query projection of head h"),
         (Family("W^K", d_k, d_model), "key projection of head h"),
         (Family("W^V", d_v, d_model), "value projection of head h"),
         (Family("W^O", d_model, d_v), "output projection of head h (a block of W^O)")),
        _multihead, ("column_row_transpose", "multihead_block_equals_head_sum"), weights=True,
        parts=_multihead_parts),
    "pooling": Topic(
        "pooling", "Attention pooling with a learnable query",
        "One learnable query q_pool attends to the N features of X: the pooled vector is "
        "V Softmax(KᵀQ/√d_k) with Q = W_p q_pool, K = W^K X, V = W^V X.",
        ((_sym("X", d, N), "features x_1 ... x_N"), (_sym("q_pool", d, 1), "the learnable query"),
         (_sym("W_p", d_k, d), "query projection"), (_sym("W^K", d_k, d), "key projection"),
         (_sym("W^V", d_v, d), "value projection")),
        _pooling, ("query_pool_is_cross_attention_with_one_query", "multihead_pool_is_concat_of_head_pools"),
        weights=True),
    "gqa": Topic(
        "gqa", "Grouped-query attention (GQA)",
        "H = G·r query heads share G key/value groups; query head h reads group ⌊(h-1)/r⌋ + 1 "
        "(G = H is multi-head attention, G = 1 is multi-query attention).",
        ((_sym("Q", d_model, n), "queries"), (_sym("K", d_model, m), "keys"), (_sym("V", d_model, m), "values"),
         (Family("W^Q", d_k, d_model), "query projection of head h"),
         (Family("W^K", d_k, d_model), "key projection of group g"),
         (Family("W^V", d_v, d_model), "value projection of group g"),
         (Family("W^O", d_model, d_v), "output projection of head h")),
        _gqa, ("gqa_row_convention_is_the_transpose",), weights=True),
    "mask": Topic(
        "mask", "Causal mask",
        "Query t may attend only to keys 1..t: the scores of later keys are -∞ before the softmax, so "
        "their weights are 0.",
        ((_sym("Q", d_k, n), "queries"), (_sym("K", d_k, n), "keys"), (_sym("V", d_v, n), "values")),
        _mask, ("causal_mask_attends_to_prefix",),
        notes=("the mask is -∞ above the diagonal in the row layout (key j > query i) and below it in the "
               "column layout (key i > query j): the transposed mask",)),
    "kv-cache": Topic(
        "kv-cache", "Decoding with a KV cache",
        "The keys and values of positions 1..t are kept; step t+1 appends its key k and value v and "
        "attends with its query q alone.",
        ((_sym("K", d_k, t), "cached keys"), (_sym("V", d_v, t), "cached values"),
         (_sym("q", d_k, 1), "the new query"), (_sym("k", d_k, 1), "the new key"),
         (_sym("v", d_v, 1), "the new value")),
        _kv_cache, ("kv_cache_decoding_is_last_causal_column",),
        notes=("the cache grows by a column [K k] in the column layout and by a row [K; k] in the row layout",)),
    "rope": Topic(
        "rope", "Rotary position embedding (RoPE)",
        "The query at position a and the key at position b are rotated by R_a and R_b "
        "(R_t = diag(ρ(tθ_1), ..., ρ(tθ_p)), d = 2p) before their dot product, which then depends on b - a only.",
        ((_sym("q", 2 * p, 1), "a query at position a"), (_sym("k", 2 * p, 1), "a key at position b")),
        _rope, ("rope_scores_depend_on_relative_position",), scalar=True,
        notes=("a row vector is rotated from the right by R_tᵀ: (R_t q)ᵀ = qᵀ R_tᵀ",
               "the score is 1 × 1, so the row score equals the column score itself")),
}


def row_operand(x):
    """The operand a row-convention reader writes: the same name, the transposed shape."""
    if isinstance(x, Family):
        return Family(x.name, x.cols, x.rows)
    return sp.MatrixSymbol(x.name, x.shape[1], x.shape[0])


def shape_text(x, printer=dim, times: str = "×") -> str:
    rows, cols = (x.rows, x.cols) if isinstance(x, Family) else x.shape
    return f"{printer(rows)} {times} {printer(cols)}"


@dataclass
class ShapeRow:
    name: str
    what: str
    column: str
    row: str


@dataclass
class Explanation:
    """Everything ``symattn explain TOPIC`` shows; rendered by :func:`to_text` and :func:`to_markdown`."""

    topic: Topic
    column: object
    row: object
    row_on_transposes: object
    shapes: list
    softmax: dict  # convention -> sentence
    turn: list  # (label, expression or None, reason) steps from the column form to the row form
    parts: list = field(default_factory=list)  # (name, column expression, row expression)
    claim_verdict: object = None
    theorems: list = field(default_factory=list)  # theorems.Result

    @property
    def column_text(self) -> str:
        return text(self.column)

    def __str__(self) -> str:
        return to_text(self)

    def _repr_markdown_(self) -> str:
        return to_markdown(self)

    def _repr_html_(self) -> str:
        return to_html(self)

    @property
    def row_text(self) -> str:
        return text(self.row)


def _softmax_sentence(expr, convention) -> str:
    nodes = [x for x in sp.preorder_traversal(expr) if isinstance(x, D.Softmax)]
    if not nodes:
        return "no softmax in this form"
    s = nodes[0]
    rows, cols = s.arg.shape
    if s.axis == 0:
        return (f"Softmax normalizes each column of the {dim(rows)} × {dim(cols)} score matrix "
                f"{text(s.arg, 80)}: one column per query, whose {text(rows)} weights (one per key) sum to 1")
    return (f"softmax_row normalizes each row of the {dim(rows)} × {dim(cols)} score matrix "
            f"{text(s.arg, 80)}: one row per query, whose {text(cols)} weights (one per key) sum to 1")


def explain_topic(name: str, prove: bool = True, budget: float = 20.0) -> Explanation:
    """Build both forms of topic ``name``; with ``prove``, verify the correspondence and prove the
    library theorems that state it."""
    if name not in TOPICS:
        raise KeyError(f"no topic {name!r}; topics: {', '.join(TOPICS)}")
    topic = TOPICS[name]
    col_ops = {x.name: x for x, _ in topic.operands}
    row_ops = {x.name: row_operand(x) for x, _ in topic.operands}
    tr_ops = {x.name: x.T for x, _ in topic.operands}
    column = topic.build(col_ops, "column")
    row = topic.build(row_ops, "row")
    row_tr = topic.build(tr_ops, "row")
    shapes = [ShapeRow(x.name + ("_h" if isinstance(x, Family) else ""), what, shape_text(x),
                       shape_text(row_operand(x))) for x, what in topic.operands]
    softmax = {"column": _softmax_sentence(column, "column"), "row": _softmax_sentence(row, "row")}
    pushed = column.T
    renamed = ", ".join(f"{s.name}ᵀ ↦ {s.name}" for s in shapes)
    if topic.scalar:
        turn = [("the column form", column, "a 1 × 1 matrix is its own transpose")]
    else:
        turn = [("the column form, transposed", sp.Transpose(column),
                 "a row of the output is a column of the column form"),
                ("push the transpose inside", pushed,
                 "(AB)ᵀ = BᵀAᵀ reverses every product; Softmax(S)ᵀ = softmax_row(Sᵀ) switches the axis")]
    turn += [("the row definition on the transposed operands", row_tr, "built with convention=\"row\""),
             ("rename the row operands", row, f"write the row reader's operands: {renamed}")]
    merged = []
    for label, expr, why in turn:  # a step that changes nothing joins the one before
        if merged and text(merged[-1][1]) == text(expr):
            merged[-1] = (merged[-1][0] + "; " + label, expr, merged[-1][2] + "; " + why)
        else:
            merged.append((label, expr, why))
    parts = []
    if topic.parts is not None:
        parts = [(nm, a, b) for (nm, a), (_, b) in zip(topic.parts(col_ops, "column"), topic.parts(row_ops, "row"))]
    e = Explanation(topic, column, row, row_tr, shapes, softmax, merged, parts)
    if prove:
        from ..proof import verify
        from ..theorems import load_library
        from ..theorems import prove as prove_theorem

        e.claim_verdict = verify(row_tr, column if topic.scalar else column.T, budget=budget)
        library = load_library()
        e.theorems = [prove_theorem(library[nm]) for nm in topic.theorems if nm in library]
    return e


def _turn_notes(topic: Topic) -> list[str]:
    out = ["transpose every operand: an n × d matrix of row vectors is the transpose of a d × n matrix "
           "of column vectors"]
    if topic.weights:
        out.append("weights act from the other side: W X (column) becomes X Wᵀ (row), so each row weight "
                   "is the transpose of its column twin, and its shape is reversed")
    out.append("products reverse their order, (AB)ᵀ = BᵀAᵀ: V·Softmax(KᵀQ) becomes softmax(QKᵀ)·V")
    out.append("the softmax axis switches: Softmax over each column becomes softmax over each row")
    return out + list(topic.notes)


def _wrap(s: str, width: int) -> list[str]:
    import textwrap

    glued = s.replace(" × ", "\0×\0")  # a shape m × n stays on one line
    lines = textwrap.wrap(glued, width, break_long_words=True, break_on_hyphens=False) or [""]
    return [ln.replace("\0", " ") for ln in lines]


#: the narrowest text: a narrower terminal gets lines of this width
MIN_WIDTH = 40
#: the narrowest column for two forms side by side; a narrower terminal shows the row form under the column form
MIN_HALF = 30


def _indented(s: str, width: int, first: str, rest: str | None = None) -> list[str]:
    """``s`` wrapped to ``width`` columns, its first line after ``first``, the others after ``rest``
    (default: as many spaces)."""
    rest = " " * len(first) if rest is None else rest
    lines = _wrap(s, max(width - max(len(first), len(rest)), 12))
    return [(first if k == 0 else rest) + ln for k, ln in enumerate(lines)]


def _side_by_side(left: str, right: str, width: int) -> list[str]:
    """``left`` and ``right`` in two columns of ``width`` in all; on a terminal too narrow for two
    columns of :data:`MIN_HALF`, ``right`` follows ``left``, indented by two."""
    half = (width - 3) // 2
    if half < MIN_HALF:
        return _wrap(left, width) + ["  " + ln for ln in _wrap(right, max(width - 2, 1))]
    a, b = _wrap(left, half), _wrap(right, half)
    a += [""] * (len(b) - len(a))
    b += [""] * (len(a) - len(b))
    return [f"{x.ljust(half)} │ {y}".rstrip() for x, y in zip(a, b)]


def _claim_rhs(t: Topic) -> str:
    return "the column form (a 1 × 1 score)" if t.scalar else "(column form)ᵀ"


def _verdict_line(v) -> str:
    return f"{v.status}" + (", general" if v.general else "") + f" ({v.scope}) by {v.method}"


def to_text(e: Explanation, width: int = 100) -> str:
    """The explanation as plain text for a terminal of ``width`` columns (at least :data:`MIN_WIDTH`)."""
    width = max(int(width), MIN_WIDTH)
    t = e.topic
    rule = "─" * min(width, 100)
    out = [f"{t.title}", rule, *_wrap(t.summary, width), ""]
    out += _side_by_side("COLUMN convention (seed 000)", "ROW convention (Transformer, PyTorch)", width)
    out += _side_by_side("vectors are columns", "vectors are rows", width)
    out.append(rule)
    out += _side_by_side(e.column_text, e.row_text, width)
    for name, a, b in e.parts:
        out += _side_by_side(f"{name} = {text(a)}", f"{name} = {text(b)}", width)
    out.append("")
    out += _side_by_side(e.softmax["column"], e.softmax["row"], width)
    out += ["", "shapes:"]
    head = ("operand", "column", "row", "what it is")
    rows = [(s.name, s.column, s.row, s.what) for s in e.shapes]
    widths = [max(len(x[k]) for x in rows + [head]) for k in range(3)]
    if width - (sum(widths) + 8) >= 12:
        for r_ in [head, tuple("─" * w for w in widths) + ("─" * 10,)] + rows:
            lead = "  " + "  ".join(c.ljust(w) for c, w in zip(r_[:3], widths)) + "  "
            out += _indented(r_[3], width, lead)
    else:  # too narrow for the table: one operand a line
        for name, column, row, what in rows:
            out += _indented(f"{name}: {column} (column), {row} (row); {what}", width, "  ", "    ")
    out += ["", "from one to the other:"]
    for note in _turn_notes(t):
        out += [("  • " if k == 0 else "    ") + ln for k, ln in enumerate(_wrap(note, width - 4))]
    out.append("")
    for k, (label, expr, why) in enumerate(e.turn):
        lead = "  " if k == 0 else "  = "
        out += _indented(text(expr), width, lead, "    ")
        out += _indented(f"({label}: {why})", width, "      ")
    out += ["", "proved live:"]
    if e.claim_verdict is not None:
        v = e.claim_verdict
        out += _indented(f"row form on transposed operands = {_claim_rhs(t)}: {_verdict_line(v)}, {v.seconds:.2f} s",
                         width, "  ", "      ")
    for res in e.theorems:
        out += _indented(f"theorem {res.theorem.name}: {res.status}" + (", general" if res.general else "")
                         + f" ({res.scope}) by {res.method}, {res.seconds:.2f} s", width, "  ", "      ")
        out += _indented(res.theorem.statement, width, "      ")
    if e.claim_verdict is None and not e.theorems:
        out.append("  (not run: proving was turned off, --no-prove or prove=False)")
    return "\n".join(out)


TIMES = r"\times"


def to_markdown(e: Explanation) -> str:
    """The explanation as Markdown with LaTeX formulas."""
    t = e.topic
    out = [f"## {t.title}", "", t.summary, "",
           "| | column convention (seed 000) | row convention (Transformer, PyTorch) |", "|---|---|---|",
           "| vectors | columns | rows |",
           f"| definition | ${latex(e.column)}$ | ${latex(e.row)}$ |",
           *[f"| ${latex(sp.Symbol(nm))}$ | ${latex(a)}$ | ${latex(b)}$ |" for nm, a, b in e.parts],
           f"| softmax | {e.softmax['column']} | {e.softmax['row']} |", "",
           "| operand | column | row | what it is |", "|---|---|---|---|"]
    for s, (x, _) in zip(e.shapes, t.operands):
        col, row = shape_text(x, latex, TIMES), shape_text(row_operand(x), latex, TIMES)
        out.append(f"| ${latex(sp.Symbol(s.name))}$ | ${col}$ | ${row}$ | {s.what} |")
    out += ["", "**From one to the other:**", ""]
    out += [f"- {note}" for note in _turn_notes(t)]
    out += ["", "$$", r"\begin{aligned}"]
    for k, (label, expr, _why) in enumerate(e.turn):
        out.append(("&" if k == 0 else "&= ") + latex(expr) + rf" && \text{{{label}}} \\")
    out += [r"\end{aligned}", "$$", "", "**Proved live:**", ""]
    if e.claim_verdict is not None:
        out.append(f"- row form on transposed operands = {_claim_rhs(t)}: **{_verdict_line(e.claim_verdict)}**")
    for res in e.theorems:
        out.append(f"- `{res.theorem.name}`: **{res.status}{', general' if res.general else ''}** ({res.scope}) "
                   f"by {res.method}: {res.theorem.statement}")
    return "\n".join(out) + "\n"


def shape_diagram(sizes: dict | None = None, topic: str = "attention") -> str:
    """The SVG of :func:`symattn.teach.svg.shape_diagram` for the topic ``topic`` at ``sizes``."""
    return svg.shape_diagram(explain_topic(topic, prove=False), sizes)


def to_html(e: Explanation, diagram: bool = True) -> str:
    """The explanation as HTML: MathML formulas side by side, the shapes table, the shape diagram."""
    from html import escape

    t = e.topic
    cell = "<td style='padding:4px 10px;vertical-align:top'>"
    rows = ["<tr><th></th><th>column convention (seed 000)</th><th>row convention (Transformer, PyTorch)</th></tr>",
            f"<tr><th>definition</th>{cell}{mathml(e.column)}</td>{cell}{mathml(e.row)}</td></tr>"]
    rows += [f"<tr><th>{escape(nm)}</th>{cell}{mathml(a)}</td>{cell}{mathml(b)}</td></tr>" for nm, a, b in e.parts]
    rows.append(f"<tr><th>softmax</th>{cell}{escape(e.softmax['column'])}</td>{cell}{escape(e.softmax['row'])}</td></tr>")
    shapes = "".join(f"<tr><td><b>{escape(s.name)}</b></td><td>{escape(s.column)}</td><td>{escape(s.row)}</td>"
                     f"<td>{escape(s.what)}</td></tr>" for s in e.shapes)
    turn = "".join(f"<li>{escape(note)}</li>" for note in _turn_notes(t))
    proofs = ""
    if e.claim_verdict is not None:
        proofs += (f"<li>row form on transposed operands = {escape(_claim_rhs(t))}: "
                   f"{escape(_verdict_line(e.claim_verdict))}</li>")
    proofs += "".join(f"<li><code>{escape(r.theorem.name)}</code>: {escape(r.status)}"
                      f"{', general' if r.general else ''} ({escape(r.scope)})</li>" for r in e.theorems)
    theorems = ", ".join(f"<a href='#{escape(nm)}'><code>{escape(nm)}</code></a>" for nm in t.theorems)
    return (f"<div class='explain' id='explain-{escape(t.name)}'><h3>{escape(t.title)}</h3><p>{escape(t.summary)}</p>"
            f"<table class='sidebyside'>{''.join(rows)}</table>"
            f"<table class='summary'><tr><th>operand</th><th>column</th><th>row</th><th>what it is</th></tr>{shapes}"
            f"</table>{svg.shape_diagram(e) if diagram else ''}<p>From one to the other:</p><ul>{turn}</ul>"
            f"<p>The correspondence is proved by {theorems}.</p>{'<ul>' + proofs + '</ul>' if proofs else ''}</div>")
