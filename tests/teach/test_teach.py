"""Teaching output: readable printing, `symattn explain`, notebook display and pictures."""

import re
import xml.dom.minidom
from html import unescape

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from teach_helpers import INTERNAL, balanced

import symattn as sa
from symattn.cli import main
from symattn.printing import balanced_cut, dummy_names, latex, mathml, text
from symattn.teach.conventions import TOPICS, explain_topic, shape_diagram, to_markdown, to_text
from symattn.teach.svg import heatmap

n, m, d_k, d_v = sa.dims("n m d_k d_v")


def test_sum_over_a_dummy_prints_sigma_and_subscripts():
    X = sp.MatrixSymbol("X", m, n)
    k, j = sp.Dummy("k"), sp.Dummy("j")
    assert text(sp.Sum(sp.exp(X[k, j]), (k, 0, m - 1))) == "Σ_{k<m} exp(Xₖⱼ)"


def test_nested_dummies_with_one_name_get_distinct_names():
    X = sp.MatrixSymbol("X", m, n)
    k1, k2 = sp.Dummy("k"), sp.Dummy("k")
    e = sp.Sum(sp.exp(X[k1, 0]) * sp.Sum(X[k2, k1], (k2, 0, m - 1)), (k1, 0, m - 1))
    names = dummy_names(e)
    assert len(set(names.values())) == 2
    assert not INTERNAL.search(text(e)) and balanced(text(e))


def test_dummy_names_avoid_the_users_symbols():
    k = sp.Symbol("k", integer=True)
    K = sp.MatrixSymbol("K", m, n)
    d = sp.Dummy("k")
    e = sp.Sum(K[d, 0] * k, (d, 0, m - 1))
    assert dummy_names(e)[d] != "k"


def test_explicit_matrix_prints_on_one_line_and_transposes_as_superscript_t():
    A = sp.MatrixSymbol("A", n, n)
    s = text(A.T * sp.ImmutableMatrix([[1, 2], [3, 4]]))
    assert "\n" not in s and s == "Aᵀ·[[1, 2], [3, 4]]"


def test_row_softmax_and_scale_read_like_the_paper():
    Q, K, V = sp.MatrixSymbol("Q", n, d_k), sp.MatrixSymbol("K", m, d_k), sp.MatrixSymbol("V", m, d_v)
    assert text(sa.attention(Q, K, V, convention="row")) == "softmax_row(Q·Kᵀ/√d_k)·V"
    assert r"\operatorname{softmax}_{\mathrm{row}}" in latex(sa.attention(Q, K, V, convention="row"))


_balanced_text = st.recursive(
    st.text(alphabet="ab +", max_size=4),
    lambda inner: st.tuples(st.sampled_from(["()", "[]", "{}"]), inner, inner).map(
        lambda t: t[1] + t[0][0] + t[2] + t[0][1]),
    max_leaves=12)


@given(_balanced_text, st.integers(1, 40))
@settings(max_examples=200, deadline=None)
def test_balanced_cut_of_balanced_text_stays_balanced(s, limit):
    cut = balanced_cut(s, limit)
    assert balanced(cut)
    assert cut == s if len(s) <= limit else (cut.startswith(s[:limit].rstrip()) and "…" in cut)


def test_mathml_of_definitions_is_well_formed_xml():
    Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)
    for e in (sa.attention(Q, K, V), sa.causal_attention(Q, sp.MatrixSymbol("K", d_k, n),
                                                         sp.MatrixSymbol("V", d_v, n))):
        xml.dom.minidom.parseString(unescape(mathml(e)))  # raises on a parse error
        assert "merror" not in mathml(e)


@pytest.mark.parametrize("name", list(TOPICS))
def test_explain_shows_both_conventions_and_every_operand_shape(name):
    e = explain_topic(name, prove=False)
    out = to_text(e, 120)
    assert "COLUMN convention" in out and "ROW convention" in out
    for s in e.shapes:
        assert s.column in out and s.row in out
        # the row operand's shape is the column operand's shape reversed
        a, b = s.column.split(" × ")
        assert s.row == f"{b} × {a}"
    assert not INTERNAL.search(out)
    # side by side: each column, read down, closes every bracket it opens
    left = "\n".join(ln.split(" │ ")[0] for ln in out.splitlines())
    right = "\n".join(ln.split(" │ ")[1] for ln in out.splitlines() if " │ " in ln)
    assert balanced(left) and balanced(right)
    md = to_markdown(e)
    assert "$" in md and r"\times" in md


def test_explain_softmax_axis_is_read_off_the_definitions():
    e = explain_topic("attention", prove=False)
    assert e.softmax["column"].startswith("Softmax normalizes each column of the m × n")
    assert e.softmax["row"].startswith("softmax_row normalizes each row of the n × m")


@pytest.mark.parametrize("name", ["attention", "multihead"])
def test_explain_proves_the_correspondence_live(name, capsys):
    assert main(["explain", name]) == 0
    out = capsys.readouterr().out
    assert "column_row_transpose: proved, general" in out
    assert "= (column form)ᵀ: proved, general" in out


def test_explain_markdown_format(capsys):
    assert main(["explain", "attention", "--format", "md", "--no-prove"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## Scaled dot-product attention")
    assert r"\operatorname{Softmax}" in out


def test_explain_rejects_an_unknown_topic(capsys):
    with pytest.raises(SystemExit):
        main(["explain", "transformers"])
    assert "invalid choice" in capsys.readouterr().err


def test_verdict_displays_in_a_notebook_and_a_repl():
    X = sp.MatrixSymbol("X", m, n)
    v = sa.verify(sa.softmax(X).T, sa.softmax(X.T))
    assert repr(v).startswith("<Verdict refuted: counterexample at")
    assert str(v) == v.explain()
    md = v._repr_markdown_()
    assert "**refuted**" in md and "$$" in md and "Counterexample" in md
    html = v._repr_html_()
    assert "<math" in html and "<svg" in html and "merror" not in html
    assert repr(v.counterexample).startswith("<Counterexample at")
    assert "<svg" in v.counterexample._repr_html_()


def test_theorem_and_result_display():
    from symattn.theorems import load_library, prove

    th = load_library()["column_row_transpose"]
    assert "column_row_transpose" in th._repr_markdown_()
    res = prove(th)
    assert "**proved, general**" in res._repr_markdown_()
    assert "<section class='theorem' id='column_row_transpose'>" in res._repr_html_()
    assert str(res).startswith("column_row_transpose: proved, general")


def test_a_claim_is_shown_as_written_and_its_canonical_form_in_the_trace_labelled_so():
    """verify(softmax(X).T, softmax(X.T)) was shown as softmax_row(Xᵀ) = Softmax(Xᵀ): SymPy rewrote the
    transpose the student wrote before symattn saw it."""
    X = sp.MatrixSymbol("X", m, n)
    written = sa.softmax(X).T
    assert written.doit() == sa.Softmax(X.T, 1) and sa.verify(written, written.doit()).proved
    v = sa.verify(written, sa.softmax(X.T))
    assert v.status == "refuted" and v.lhs == written
    html = v._repr_html_()
    assert "<mi>Softmax</mi><mrow><mo>(</mo><mi>X</mi><mo>)</mo></mrow></mrow><mo>)</mo></mrow><mo>&#8868;</mo>" in html
    assert r"\operatorname{Softmax}\left(X\right)\right)^{\top}" in v._repr_markdown_()
    trace = v.explain()
    assert "canonical lhs: softmax_row(Xᵀ)" in trace and "canonical rhs: Softmax(Xᵀ)" in trace
    from symattn.printing import text

    assert text(v.lhs) == "Softmax(X)ᵀ" and text(sa.softmax(X, 1).T) == "softmax_row(X)ᵀ"


def test_derivation_report_displays_in_a_notebook():
    X = sp.MatrixSymbol("X", m, n)
    r = sa.check_steps([sa.softmax(X).T, sa.softmax(X.T, 1)])
    assert r.steps[0].lhs == "Softmax(X)ᵀ"  # readable default texts, as the claim was written
    assert "$$" in r._repr_markdown_()
    assert "<math" in r._repr_html_()
    assert str(r).startswith("<python>")


def test_shape_diagram_is_svg_drawn_to_scale():
    svg = shape_diagram({"n": 4, "m": 6, "d_k": 3, "d_v": 2})
    xml.dom.minidom.parseString(svg)
    doc = xml.dom.minidom.parseString(svg)
    rects = doc.getElementsByTagName("rect")
    # column convention: Q (d_k × n = 3 × 4) is 4 cells wide and 3 tall; the row Q (4 × 3) the reverse
    sizes = [(float(r.getAttribute("width")), float(r.getAttribute("height"))) for r in rects]
    assert (64.0, 48.0) in sizes and (48.0, 64.0) in sizes
    assert "softmax ↓ each column" in svg and "softmax → each row" in svg


def test_heatmap_of_a_counterexample_shows_the_attention_weights():
    Q, K, V = sp.MatrixSymbol("Q", n, d_k), sp.MatrixSymbol("K", m, d_k), sp.MatrixSymbol("V", m, d_v)
    v = sa.verify(sa.attention(Q, K, V, convention="row"), sa.softmax(Q * K.T / sp.sqrt(d_k), axis=0) * V)
    assert v.status == "refuted"
    svg = heatmap(v.counterexample, v.lhs, v.rhs)
    xml.dom.minidom.parseString(svg)
    # the two sides' values, with the certified entry outlined: still well-formed
    xml.dom.minidom.parseString(heatmap(v.counterexample))
    assert "attention weights" in svg
    values = [float(t.firstChild.data) for t in xml.dom.minidom.parseString(svg).getElementsByTagName("text")
              if re.fullmatch(r"-?\d+\.\d\d", t.firstChild.data)]
    assert values and all(0.0 <= x <= 1.0 for x in values)  # softmax weights


def test_trace_lines_keep_the_engines_text_and_survive_pickling():
    import pickle

    from symattn.proof.verdict import TraceLine

    X = sp.MatrixSymbol("X", m, n)
    line = TraceLine("canonical lhs: {}", sa.softmax(X).T.doit())
    assert line == "canonical lhs: Softmax(X.T, 1)"  # the engine's form, as JSON and tests see it
    assert line.readable() == "canonical lhs: softmax_row(Xᵀ)"
    assert ("A: " + line).readable() == "A: canonical lhs: softmax_row(Xᵀ)"
    v = sa.verify(sa.softmax(X).T, sa.softmax(X.T))
    w = pickle.loads(pickle.dumps(v))
    assert w.explain() == v.explain() and list(w.trace) == list(v.trace)


def test_a_trace_line_prints_two_different_bound_indices_differently_in_its_engine_form():
    """JSON and the verdict cache keep a trace line's engine form: there, ``K[_k, _k]`` for an entry
    indexed by two different bound indices would read as a diagonal entry."""
    from symattn.proof.verdict import TraceLine

    K = sp.MatrixSymbol("K", m, n)
    i, j = sp.Dummy("k", integer=True), sp.Dummy("k", integer=True)
    total = sp.Sum(sp.Sum(K[i, j], (i, 0, m - 1)), (j, 0, n - 1))
    line = TraceLine("sum: {} and {}", total, K[j, i])
    assert line == "sum: Sum(K[_k, _k'], (_k, 0, m - 1), (_k', 0, n - 1)) and K[_k', _k]"
    same = sp.Dummy("k")
    assert TraceLine("{} = {}", same, same) == "_k = _k"  # one index keeps one name across the line
    v = sa.verify(sa.softmax(K), sa.softmax(K + sp.OneMatrix(m, 1) * sp.MatrixSymbol("c", 1, n)))
    entries = [t for t in v.as_dict()["trace"] if "B: entry" in t]
    assert v.proved and entries and not [t for t in entries if re.search(r"\[(_\w+), \1\]", t)]


def test_report_command_writes_a_page_for_the_named_theorems(tmp_path, capsys):
    out = tmp_path / "new" / "dir"
    names = ["column_row_transpose", "mistake_transpose_keeps_order"]
    assert main(["report", *names, "--html", str(out), "--jobs", "1"]) == 0
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "id='column_row_transpose'" in html and "id='mistake_transpose_keeps_order'" in html
    assert "1 of 1 theorems proved; 1 of 1 mistakes refuted" in html
    assert "wrote" in capsys.readouterr().out


def test_report_command_refuses_a_missing_derivation_file(tmp_path, capsys):
    assert main(["report", "column_row_transpose", "--html", str(tmp_path), "--check", str(tmp_path / "nope.tex")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("name", list(TOPICS))
def test_every_topic_has_a_well_formed_diagram_and_html(name):
    e = explain_topic(name, prove=False)
    svg = shape_diagram(topic=name)
    doc = xml.dom.minidom.parseString(svg)
    has_softmax = "no softmax" not in e.softmax["column"]
    assert (len(doc.getElementsByTagName("line")) > 0) and (("softmax ↓ each column" in svg) == has_softmax)
    html = e._repr_html_()
    for frag in re.findall(r"<math.*?</math>", html, flags=re.S):
        xml.dom.minidom.parseString(unescape(frag))
    assert str(e) == to_text(e) and e._repr_markdown_() == to_markdown(e)


@pytest.mark.parametrize("where", ["", "  ", "a_file", "a_file/sub"])
def test_report_command_refuses_a_directory_it_cannot_use_before_proving(tmp_path, capsys, monkeypatch, where):
    import symattn.theorems

    (tmp_path / "a_file").write_text("not a directory")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(symattn.theorems, "prove", lambda th: pytest.fail("proved before checking --html"))
    assert main(["report", "column_row_transpose", "--html", where]) == 2
    err = capsys.readouterr().err
    assert ("empty" in err) if not where.strip() else ("a file, not a directory" in err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


@pytest.mark.parametrize("width", [1, 40, 63, 300])
@pytest.mark.parametrize("name", list(TOPICS))
def test_explain_text_fits_the_terminal_width(name, width):
    e = explain_topic(name, prove=True)
    out = to_text(e, width)
    width = max(width, 40)  # the narrowest text
    long = [ln for ln in out.splitlines() if len(ln) > width]
    assert not long, f"{len(long)} line(s) wider than {width}: {long[:3]}"
    assert "COLUMN convention" in out and "ROW convention" in out
    assert balanced(out) or width >= 63  # stacked when narrow: read down, every bracket closes
    for s in e.shapes:
        assert s.column in out and s.row in out


@pytest.mark.parametrize("name, other", [
    ("Xᵀ", lambda X: X.T), ("X⁻¹", lambda X: X.I), ("X·Y", lambda X: X * sp.MatrixSymbol("Y", *X.shape)),
    ("softmax_row(X)", lambda X: sa.softmax(X, axis=1)), ("Xₖ₀", lambda X: X[sp.Symbol("k"), 0]),
    ("Σ", lambda X: sp.MatrixSymbol("Σ", *X.shape)),
])
def test_a_name_holding_notation_never_prints_like_an_expression(name, other):
    n = sa.dims("n")
    n = n[0] if isinstance(n, (list, tuple)) else n
    X = sp.MatrixSymbol("X", n, n)
    user = sp.MatrixSymbol(name, n, n) if name != "Xₖ₀" else sp.Symbol(name)
    assert text(user) == f"«{name}»"
    if name != "Σ":
        assert text(user) != text(other(X))
        assert mathml(user) != mathml(other(X))
    both = sp.MatAdd(user, X.T) if name == "Xᵀ" else None
    if both is not None:
        assert text(both) in ("«Xᵀ» + Xᵀ", "Xᵀ + «Xᵀ»")
    assert text(sp.MatrixSymbol("W^{KX}", n, n)) == "W^{KX}" and text(sa.Family("W^Q", n, n)[sa.h]) == "W^Q_h"


def test_a_transpose_never_prints_like_a_matrix_named_with_a_superscript_t():
    n = sa.dims("n")
    n = n[0] if isinstance(n, (list, tuple)) else n
    X, named = sp.MatrixSymbol("X", n, n), sp.MatrixSymbol("X^T", n, n)
    assert latex(X.T) == r"X^{\top}" and latex(named) == "X^{T}"
    assert r"\left(W^{K}\right)^{\top}" == latex(sp.MatrixSymbol("W^K", n, n).T)
    assert mathml(X.T) != mathml(named) and "&#8868;" in mathml(X.T)
    xml.dom.minidom.parseString(unescape(mathml((X * named).T)))


@pytest.mark.parametrize("lhs, rhs, shown", [
    ([[float("nan"), 1.0]], [[0.0, 1.0]], ">nan<"),
    ([[float("inf"), float("-inf")]], [[0.0, 1.0]], ">-∞<"),
    (np.zeros((0, 2)), np.zeros((0, 2)), "lhs"),
])
def test_a_heatmap_of_values_that_are_not_finite_or_empty_is_drawn(lhs, rhs, shown):
    from types import SimpleNamespace

    cex = SimpleNamespace(lhs=np.array(lhs), rhs=np.array(rhs), entry=(0, 0), dims={"n": 2}, values={})
    svg = heatmap(cex)
    xml.dom.minidom.parseString(svg)
    assert shown in svg


def test_two_permutation_matrices_print_apart_in_every_notation():
    n = sa.dims("n")
    n = n[0] if isinstance(n, (list, tuple)) else n
    P, R = sa.Permutation("P", n), sa.Permutation("R", n)
    assert text(P) != text(R) and latex(P) != latex(R) and mathml(P) != mathml(R)
    assert "<mi>R</mi>" in mathml(R)


def test_a_slice_with_a_step_shows_its_step():
    X = sp.MatrixSymbol("X", 6, 6)
    assert text(X[0:4:2, :]) == "X[:4:2, :]" and text(X[0:4, :]) == "X[:4, :]"
    assert text(X[1:6:2, 0:6:3]) == "X[1:6:2, :6:3]"


def test_report_command_says_a_theorem_name_after_check_is_not_a_file(tmp_path, capsys):
    assert main(["report", "--html", str(tmp_path / "out"), "--check", "column_row_transpose"]) == 2
    err = capsys.readouterr().err
    assert "cannot read column_row_transpose" in err and "put theorem names before --check" in err


def test_a_shortened_line_closes_a_quoted_name():
    n = sa.dims("n")
    n = n[0] if isinstance(n, (list, tuple)) else n
    long = sp.MatrixSymbol("a name with spaces that goes on and on", n, n)
    out = text(long * sp.MatrixSymbol("X", n, n), limit=20)
    assert out.startswith("«a name") and out.endswith("…»") and balanced(out)


def test_a_tower_of_powers_shows_which_way_it_groups():
    y, b, c = sp.Symbol("y"), sp.Symbol("b", positive=True), sp.Symbol("c", positive=True)
    left = sp.Pow(sp.Pow(y, b, evaluate=False), c, evaluate=False)
    assert text(left) == "(y^b)^c" and text(y ** (b ** c)) == "y^(b^c)" and text(left) != text(y ** (b ** c))
    X = sp.MatrixSymbol("X", 3, 3)
    assert text(sp.MatPow(sp.MatPow(X, 2), 3)) == "(X^2)^3" and text(sp.MatPow(X, 6)) == "X^6"


def test_report_command_shows_a_theorem_named_twice_once(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["report", "column_row_transpose", "column_row_transpose", "--html", str(out)]) == 0
    html = (out / "index.html").read_text(encoding="utf-8")
    assert html.count("id='column_row_transpose'") == 1 and "wrote" in capsys.readouterr().out


def test_report_in_parallel_processes_shows_what_one_process_shows(tmp_path):
    """``--jobs 2`` proves in forked workers; the page must match ``--jobs 1`` (times and date aside),
    claims included: the worked example's floor(...) = 88 must not come back evaluated to 88 = 88."""
    import re
    import subprocess
    import sys

    names = ["worked_example_thinking_machines", "column_row_transpose", "mistake_transpose_keeps_order"]
    pages = []
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}"
        # a fresh process, as the command runs: forking this one, where JAX may have started threads, could hang
        run = subprocess.run([sys.executable, "-m", "symattn", "report", *names, "--html", str(out), "--jobs", jobs],
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-2000:]
        page = (out / "index.html").read_text(encoding="utf-8")
        pages.append(re.sub(r"Generated [^<]*", "", re.sub(r"\d+\.\d+", "", page)))
    assert pages[0] == pages[1]
    assert "&#8970;" in pages[1]  # the floor bracket of the worked example's claim is shown


# --- the report a class can read: wrapping formulas, contents, legends, pictures ---------


def _maths(html):
    return re.findall(r"<math.*?</math>", html, flags=re.S)


def test_a_long_formula_is_cut_into_math_pieces_a_line_can_break_between():
    from symattn.teach.wrap import PIECE, equation, wrapped

    Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)
    long = sa.attention(Q, K, V) + sa.attention(Q, K, V) * sa.softmax(K.T * K)
    html = wrapped(long)
    pieces = _maths(html)
    assert len(pieces) > 4 and html.count("<wbr/>") == len(pieces) - 1
    for p in pieces:
        doc = xml.dom.minidom.parseString(unescape(p))
        shown = "".join(t.data for t in _texts(doc))
        assert len(shown) <= 3 * PIECE, shown  # no piece as long as the whole
    assert len(_maths(wrapped(Q.T * K))) == 1  # a short formula stays one element, typeset as usual
    eq = equation(sa.softmax(Q).T, sa.softmax(Q.T, 1))
    assert "<mo form=\"infix\">=</mo>" in eq and "display=\"block\"" not in eq


def _texts(node):
    for c in node.childNodes:
        if c.nodeType == c.TEXT_NODE:
            yield c
        else:
            yield from _texts(c)


def test_a_trace_line_is_shown_as_words_and_mathml_not_as_engine_text():
    from symattn.proof.verdict import TraceLine
    from symattn.teach.wrap import trace_html

    i, k = sp.Dummy("i", integer=True), sp.Dummy("k", integer=True)
    X = sp.MatrixSymbol("X", n, n)
    line = TraceLine("B: entry of lhs: {}", sp.Sum(sp.exp(X[i, k]) * sp.KroneckerDelta(i, k), (k, 0, n - 1)))
    html = trace_html(line)
    assert html.startswith("B: entry of lhs: <span class='wrapmath'><math")
    assert "∑" in unescape(html) and "δ" in unescape(html)
    assert "Sum(" not in html and "kroneckerdelta" not in html and "_k" not in html
    assert trace_html("A: the canonical forms coincide") == "A: the canonical forms coincide"


def test_mathml_names_slices_products_and_deltas_as_notation_not_as_function_names():
    i, j = sp.symbols("i j", integer=True)
    V = sp.MatrixSymbol("V", n, m)
    for expr in (V[:, : m - 1], (V * V.T)[1:3, :], sp.Product(sp.exp(i), (i, 0, n - 1)), sp.KroneckerDelta(i, j)):
        out = mathml(expr)
        xml.dom.minidom.parseString(unescape(out))
        assert not re.search(r"<mi>(matrixslice|product|kroneckerdelta)</mi>", out), out


def test_a_matrix_has_brackets_that_stretch_to_its_height():
    out = mathml(sp.ImmutableMatrix([[2, 1], [0, -1]]))
    assert out.count('<mo fence="true" stretchy="true">') == 2 and "<mtable>" in out


def test_every_heatmap_has_a_colour_legend_with_its_range():
    Q, K, V = sp.MatrixSymbol("Q", n, d_k), sp.MatrixSymbol("K", m, d_k), sp.MatrixSymbol("V", m, d_v)
    v = sa.verify(sa.attention(Q, K, V, convention="row"), sa.softmax(Q * K.T / sp.sqrt(d_k), axis=0) * V)
    for svg in (heatmap(v.counterexample, v.lhs, v.rhs), heatmap(v.counterexample)):
        doc = xml.dom.minidom.parseString(svg)
        words = [t.firstChild.data for t in doc.getElementsByTagName("text")]
        assert "colour scale:" in words
        legend = words[words.index("colour scale:") + 1:]
        assert len(legend) >= 2 and all(re.fullmatch(r"-?\d+\.\d\d", w) for w in legend)
    signed = heatmap(v.counterexample)  # the sides' values: a signed scale shows 0 in the middle
    if float(np.min(v.counterexample.lhs)) < 0 or float(np.min(v.counterexample.rhs)) < 0:
        assert ">0.00<" in signed


def test_the_causal_mask_picture_is_the_librarys_mask():
    from symattn.teach.svg import causal_mask_picture

    for size in (3, 6):
        svg = causal_mask_picture(size)
        xml.dom.minidom.parseString(svg)
        rects = [r for r in xml.dom.minidom.parseString(svg).getElementsByTagName("rect")
                 if r.getAttribute("width") == r.getAttribute("height") != "14.0"]  # the cells, not the legend
        assert len(rects) == size * size
        x0, y0 = min(float(r.getAttribute("x")) for r in rects), min(float(r.getAttribute("y")) for r in rects)
        side = float(rects[0].getAttribute("width"))
        for r in rects:  # row convention: query i in row i, key j in column j; masked exactly where j > i
            i, j = round((float(r.getAttribute("y")) - y0) / side), round((float(r.getAttribute("x")) - x0) / side)
            assert (r.getAttribute("fill") == "#5d6d7e") == (j > i), (i, j)
        assert "key j ≤ i" in svg


def test_the_gqa_picture_joins_each_query_head_to_its_group():
    from symattn.defs.gqa import group_of
    from symattn.teach.svg import gqa_picture

    svg = gqa_picture(8, 2)
    doc = xml.dom.minidom.parseString(svg)
    lines = [(float(ln.getAttribute("x2")), ln.getAttribute("stroke")) for ln in doc.getElementsByTagName("line")]
    assert len(lines) == 8
    assert [x for x, _ in lines] == sorted(x for x, _ in lines)  # heads 1..4 go left, 5..8 right
    colours = [c for _, c in lines]
    assert [colours.index(c) for c in colours] == [0, 0, 0, 0, 4, 4, 4, 4]
    assert [int(group_of(h, 8, 2)) for h in range(1, 9)] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert "K1, V1" in svg and "K2, V2" in svg and "H = 8" in svg and "G = 2" in svg


def test_the_rope_picture_draws_the_rotated_image_at_the_angle_m_theta():
    from symattn.teach.svg import rope_picture

    svg = rope_picture(3, 0.5, (1.0, 0.35))
    doc = xml.dom.minidom.parseString(svg)
    arrows = [ln for ln in doc.getElementsByTagName("line") if ln.getAttribute("marker-end")]
    assert len(arrows) == 2
    (x, y) = [(float(a.getAttribute("x2")) - float(a.getAttribute("x1")),
               float(a.getAttribute("y1")) - float(a.getAttribute("y2"))) for a in arrows][:2]
    turned = np.arctan2(y[1], y[0]) - np.arctan2(x[1], x[0])
    assert abs(turned - 1.5) < 0.01 and abs(np.hypot(*x) - np.hypot(*y)) < 0.2  # by m·θ, length kept
    assert "m·θ = 3 · 0.5 = 1.5 rad" in svg


def test_the_score_variance_picture_is_a_labelled_sample_beside_the_exact_lines():
    from symattn.teach.svg import score_variance_picture, score_variances

    data = score_variances(samples=2000, seed=0)
    assert [d for d, _, _ in data] == [2 ** k for k in range(10)]
    for d, raw, scaled in data:  # a seeded sample: near d_k and 1, not equal (it is a sample)
        assert abs(raw / d - 1) < 0.15 and abs(scaled - 1) < 0.15 and raw != d
    assert score_variances(seed=0) == data and score_variances(seed=1) != data
    svg = score_variance_picture()
    xml.dom.minidom.parseString(svg)
    assert "sampled illustration, not a proof" in svg and "seed 0" in svg
    assert "Var(q·k) = d_k, exact" in svg and "Var(q·k/√d_k) = 1, exact" in svg
    assert svg.count("<circle") == 2 * len(data)


def test_the_report_has_contents_linking_every_section_and_pictures_by_their_topics():
    from symattn.teach.report import PICTURES, build_page
    from symattn.theorems import load_library, prove

    lib = load_library()
    res = [prove(lib["column_row_transpose"])]
    gal = [prove(lib["mistake_softmax_wrong_axis"])]
    X = sp.MatrixSymbol("X", m, n)
    rep = sa.check_steps([sa.softmax(X).T, sa.softmax(X.T, 1)])
    page = build_page(res, gal, [rep, rep])
    toc = page[page.index("<nav class='toc'"):page.index("</nav>")]
    ids = set(re.findall(r"id='([^']+)'", page))
    links = re.findall(r"href='#([^']+)'", toc)
    assert links and all(link in ids for link in links)
    for must in ("conventions", "library", "gallery", "derivations", "column_row_transpose",
                 "mistake_softmax_wrong_axis", *(f"explain-{t}" for t in TOPICS)):
        assert must in links, must
    derivations = re.findall(r"<section class='derivation' id='([^']+)'", page)
    assert len(derivations) == 2 and len(set(derivations)) == 2 and all(d in links for d in derivations)
    order = list(TOPICS)
    for topic in PICTURES:  # each picture after its topic's explanation, before the next topic's
        at = page.index(f"id='picture-{topic}'")
        assert page.index(f"id='explain-{topic}'") < at
        nxt = order.index(topic) + 1
        if nxt < len(order):
            assert at < page.index(f"id='explain-{order[nxt]}'")
    part = page[page.index("id='derivations-part'"):]
    assert "class='scroll'" not in part and "overflow-x" not in part and "<table class='steps'" not in part


# --- claims as written beyond Softmax (docs/as-written.md) ---------------------------


def _heads():
    H = sa.dims("H")
    W = sa.Family("W", n, n)
    return H, W, sp.MatrixSymbol("X", n, n)


@pytest.mark.parametrize("which", ["head_sum", "head_stack", "head_concat", "rope"])
def test_the_transpose_of_a_head_node_or_a_rotation_is_shown_as_written(which):
    """head_stack(...).T was built as head_concat of the transposes at once (and likewise head_sum,
    head_concat, rope's BlockDiag), so verify(stack.T, concat of transposes) read A = A."""
    H, W, X = _heads()
    p, a = sa.dims("p"), sp.Symbol("a", integer=True)
    node = {"head_sum": lambda: sa.head_sum(lambda h: W[h] * X, H),
            "head_stack": lambda: sa.head_stack(lambda h: W[h], H),
            "head_concat": lambda: sa.head_concat(lambda h: W[h], H),
            "rope": lambda: sa.rope(a, p)}[which]()
    written = node.T
    assert isinstance(written, sp.Transpose) and written.arg == node
    law = written.doit()
    assert not isinstance(law, sp.Transpose) and law == sp.transpose(node)  # rewriting still applies the law
    v = sa.verify(written, law)
    assert v.proved and v.lhs == written
    shown = text(v.lhs)
    assert shown.endswith("ᵀ") and shown != text(v.rhs), shown  # not the same expression on both sides
    assert "canonical lhs" in v.explain()
    assert "⊤" in unescape(v._repr_html_()) and r"^{\top}" in v._repr_markdown_()


def test_the_transposes_of_a_stack_and_a_rotation_read_as_written():
    H, W, _ = _heads()
    p, a = sa.dims("p"), sp.Symbol("a", integer=True)
    assert text(sa.head_stack(lambda h: W[h], H).T) == "[W_1; …; W_H]ᵀ"
    assert text(sa.rope(a, p).T).startswith("diag(ρ(") and text(sa.rope(a, p).T).endswith(", i=1..p)ᵀ")


def test_what_sympy_rewrites_before_symattn_sees_it_is_as_the_docs_say():
    """docs/as-written.md lists what SymPy rewrites while Python builds the claim; each line here."""
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    X = sp.MatrixSymbol("X", n, n)
    Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, n), sp.MatrixSymbol("V", d_v, n)
    p, a, b = sa.dims("p"), sp.Symbol("a", integer=True), sp.Symbol("b", integer=True)
    assert (A * B).T == B.T * A.T and (A + B).T == A.T + B.T
    att = sa.attention(Q, K, V).T
    assert not isinstance(att, sp.Transpose) and not any(isinstance(x, sp.Transpose) and isinstance(x.arg, sa.Softmax)
                                                         for x in sp.preorder_traversal(att))
    assert X.T.T == X and sa.softmax(X).T.T == sa.softmax(X)
    assert A * A == sp.MatPow(A, 2)
    assert text(sa.softmax(X).T * V.T) == "softmax_row(Xᵀ)·Vᵀ"
    assert not any(isinstance(x, sp.Transpose) for x in sp.preorder_traversal(sa.rope(a, p).T * sa.rope(b, p)))
    S = sa.Symmetric("S", n)
    assert S.T == S
    # the constructors keep what they are given, and the claim is proved all the same
    for lhs, rhs, shown in ((sp.Transpose(A * B), B.T * A.T, "(A·B)ᵀ"),
                            (sp.MatMul(sa.softmax(X).T, V.T), sa.softmax(X.T, 1) * V.T, "Softmax(X)ᵀ·Vᵀ"),
                            (sp.MatMul(A, A), A ** 2, "A·A")):
        v = sa.verify(lhs, rhs)
        assert v.proved and text(v.lhs) == shown, (text(v.lhs), v.status)
    v = sa.verify(sp.MatMul(sa.rope(a, p).T, sa.rope(b, p)), sa.rope(b - a, p))
    assert v.proved and text(v.lhs).startswith("diag(ρ(") and ")ᵀ·diag(ρ(" in text(v.lhs)
