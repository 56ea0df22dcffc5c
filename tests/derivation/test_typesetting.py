r"""Typesetting invariance: a derivation re-typeset in another style gets the same verdict at every step.

Every file of ``examples/papers`` (originals and ``_corrupted`` copies) is re-typeset
:data:`PER_FILE` times by :mod:`typesetting` (styles combined at random from a seed per file:
fonts, transposes, brackets, environments and numbering, ``\cdot``, fractions, spacing, a renamed
index, sums, scripts, operator fonts, macros, inline delimiters), more than 1,000 variants in all.

What is compared, and why it implies equal verdicts:

- **Every variant, fast** (:func:`claims`). A file of the matrix reader is parsed
  (``parse_latex``) and elaborated by ``check_statements`` with ``run_steps`` (the proof engine)
  replaced by nothing: the report's steps then hold, per step, its chain, its relation, and its two
  sides as SymPy matrix expressions (or the error that made a side ill-formed), with the scope's
  positions and substitutions (``verify_positions`` reads those). ``run_steps`` sets every status
  from exactly these: "ill-formed"/"skipped" from which sides are errors and the chain, otherwise
  the verdict of ``verify_positions(scope, lhs, rhs, budget)``, a deterministic function of the two
  expressions (the budget is the same, far above what these steps take). So equal step tuples
  (``srepr`` of the expressions, Dummies numbered by first appearance since each elaboration makes
  fresh ones) give equal statuses for every step, with the same number of steps; a renamed head or
  summation index is elaborated to the same internal index (``HeadIndex``), so the claims are
  compared as they are. A file of the scalar reader (``\max``, ``\leftarrow``) is checked from its
  statements alone (``check_scalar_document`` reads nothing else of the text), so its statements
  are compared, without their source positions and with the renamed index mapped back (the new
  letter occurs nowhere in the original). A variant that the reader refuses fails the test.
- **A seeded sample, for real** (:data:`SAMPLE`): the variant is checked as ``symattn check`` does
  (``check_statements``/``check_scalar_document``, the diagnosis of slips left out: it runs after the
  statuses are set and changes none) and the list of step statuses must equal the original's. For a
  corrupted copy this is the same failing step, by step index (line numbers shift with the style).
- **The property can fail**: :func:`typesetting.wrong_transpose` (``Q K^\top`` to ``Q^\top K``) must
  change both the claims and the real statuses of every original file it applies to.

Variants that a paper could write and that a reader misreads or refuses are not in the mix: each is
in :data:`KNOWN`, checked by an ``xfail(strict=True)`` test that turns into a failure when the reader
reads it (then the style that avoids it should be widened).
"""

from __future__ import annotations

import dataclasses
import functools
import random
import re
import zlib
from pathlib import Path
from unittest import mock

import pytest
import sympy as sp
import typesetting as ts

from symattn.derivation import model
from symattn.derivation import scalars as S
from symattn.derivation.latex import parse_latex
from symattn.derivation.scalar_check import check_scalar_document
from symattn.errors import SymattnError

PAPERS = Path(__file__).resolve().parents[2] / "examples" / "papers"
NAMES = sorted(p.stem for p in PAPERS.glob("*.tex"))
PER_FILE = 28  # 38 files: 1,064 variants
SEED = 2024


def text_of(name: str) -> str:
    return (PAPERS / f"{name}.tex").read_text(encoding="utf-8")


def is_scalar(text: str) -> bool:
    return S.is_scalar_document(text)


# --- what determines the verdicts -------------------------------------------------------------------


def _side(e):
    return ("ill-formed",) if isinstance(e, Exception) else sp.srepr(e)


def _plain(x):
    """A scalar reader's statement as nested tuples, without source positions."""
    if isinstance(x, S.N):
        return (x.kind, _plain(x.parts))
    if isinstance(x, S.Chain):
        return ("Chain", _plain(x.first), tuple(_plain(n) for _, n in x.links))
    if dataclasses.is_dataclass(x):
        return (type(x).__name__,) + tuple(_plain(getattr(x, f.name)) for f in dataclasses.fields(x)
                                           if f.name != "pos")
    if isinstance(x, tuple):
        return tuple(_plain(y) for y in x)
    return x


def _unrename(x, back: dict):
    if isinstance(x, tuple):
        return tuple(_unrename(y, back) for y in x)
    return back.get(x, x) if isinstance(x, str) else x


def claims(text: str, renaming: dict | None = None) -> str:
    """What the verdicts of ``text`` are a function of (see the module's docstring); raises the
    reader's error for a file it refuses."""
    if is_scalar(text):
        back = {new: old for old, new in (renaming or {}).items()}
        return repr(_unrename(_plain(tuple(S.parse_scalar_document(text))), back))
    stmts = parse_latex(text)
    with mock.patch.object(model, "run_steps", lambda *a, **k: None):
        report = model.check_statements(stmts, dialect="latex", diagnose=False)
    steps = []
    for s in report.steps:
        scope = s.scope_obj
        steps.append((s.chain, s.relation, _side(s.lhs_expr), _side(s.rhs_expr),
                      sp.srepr(getattr(scope, "positions", None) or {}), sp.srepr(getattr(scope, "subs", None) or {})))
    order: dict = {}
    return re.sub(r"dummy_index=(\d+)", lambda m: f"#{order.setdefault(m.group(1), len(order))}", repr(steps))


def statuses(text: str) -> list:
    """The status of every step, checked as ``symattn check`` checks (without the diagnosis)."""
    if is_scalar(text):
        report = check_scalar_document(text, diagnose_steps=False)
    else:
        report = model.check_statements(parse_latex(text), dialect="latex", diagnose=False)
    return [s.status for s in report.steps]


def read(fn, text, *args):
    try:
        return fn(text, *args)
    except SymattnError as exc:
        return f"refused: {type(exc).__name__}: {exc}"


@functools.lru_cache(maxsize=None)
def original_claims(name: str) -> str:
    return claims(text_of(name))


@functools.lru_cache(maxsize=None)
def original_statuses(name: str) -> tuple:
    return tuple(statuses(text_of(name)))


@functools.lru_cache(maxsize=None)
def variants_of(name: str) -> tuple:
    text = text_of(name)
    return tuple(ts.variants(text, PER_FILE, seed=SEED + zlib.crc32(name.encode()), scalar=is_scalar(text)))


def _describe(name, variant, ctx, got) -> str:
    return f"{name} in styles {ctx.applied} (renaming {ctx.renaming}): {got[:300]}\n{variant}"


# --- the property ------------------------------------------------------------------------------------


def test_more_than_a_thousand_distinct_variants_in_every_style():
    total, used = 0, {}
    for name in NAMES:
        vs = variants_of(name)
        texts = {v for v, _ in vs}
        assert len(texts) == len(vs) == PER_FILE and text_of(name) not in texts, name
        total += len(vs)
        for _, ctx in vs:
            for style in ctx.applied:
                used[style] = used.get(style, 0) + 1
    assert total >= 1000
    assert set(used) == set(ts.STYLES) and min(used.values()) >= 100, used


@pytest.mark.parametrize("name", NAMES)
def test_every_variant_reads_as_the_original(name):
    base = original_claims(name)
    assert base != "[]", f"{name}: no step to compare"
    bad = []
    for variant, ctx in variants_of(name):
        got = read(claims, variant, ctx.renaming)
        if got != base:
            bad.append(_describe(name, variant, ctx, got if got.startswith("refused") else "other claims"))
    assert not bad, f"{len(bad)} variants read otherwise:\n\n" + "\n\n".join(bad[:3])


def _sample():
    rng = random.Random(SEED)
    extra = set(rng.sample(NAMES, 12))
    return [(name, k) for name in NAMES for k in rng.sample(range(PER_FILE), 2 if name in extra else 1)]


SAMPLE = _sample()


@pytest.mark.parametrize("name, k", SAMPLE, ids=[f"{n}-{k}" for n, k in SAMPLE])
def test_a_sampled_variant_gets_the_same_verdicts(name, k):
    variant, ctx = variants_of(name)[k]
    want = list(original_statuses(name))
    assert want, name
    got = read(statuses, variant)
    assert got == want, _describe(name, variant, ctx, str(got))


def test_a_wrong_style_changes_the_claims_and_the_verdicts():
    # on an original (every step proved) the moved transpose makes a step false or ill-formed; a
    # corrupted copy may be ill-formed already at that step, so that its verdicts rightly stay
    originals = [n for n in NAMES if not n.endswith("_corrupted") and ts.WRONG(text_of(n)) != text_of(n)]
    assert len(originals) >= 3, originals
    for name in originals:
        wrong = ts.WRONG(text_of(name))
        assert read(claims, wrong) != original_claims(name), name
        assert read(statuses, wrong) != list(original_statuses(name)), name


# --- what a paper could write that the readers do not read yet --------------------------------------------

#: (file, pattern, replacement, what the reader says): a variant a paper could write, made from the file
#: by ``re.sub(pattern, replacement, text)``, which the reader refuses or reads otherwise.
KNOWN = [
    ("milakov2018", r"\\sum_\{k=1\}\^\{j\}", r"\\sum^{j}_{k=1}",
     r"(scalar reader) \sum^{j}_{k=1}: 'ParseError: found '^', expected '_' and the index'"),
    ("shazeer2019", r"\\sum_\{i=1\}\^\{h\}", r"\\sum_i",
     r"a bare \sum_i over the heads where i = 1, ..., h is not declared (the bound is in Concat(head_1, "
     "\\dots, head_h)): step 1 ill-formed, 'unknown head index h'"),
    ("ainslie2023", r"\\sum_\{i=1\}\^\{h\}", r"\\sum_{1 \\le i \\le h}",
     r"\sum_{1 \le i \le h}: 'ParseError: unsupported LaTeX command \le: inequalities are not read'"),
    ("shazeer2019", r"QW\^Q_i", r"Q{W}^Q_i",
     r"a braced name {W}^Q_i: 'ParseError: found '_' in the arguments of Attention'"),
    ("vaswani2017", r"\\mathrm\{head_h\}", r"\\operatorname{head_h}",
     r"\mathrm{head_1}, ..., \operatorname{head_h} (the same glyphs): step 1 ill-formed, 'cannot read the "
     "pattern from head_1 to head_h'"),
    ("milakov2018", r"x_", r"\\bm{x}_",
     r"(scalar reader) \bm{x}: 'ParseError: \bm is not read by the scalar reader'"),
    ("milakov2018", r"\\left\(m_\{j-1\}, x_j\\right\)", r"\\biggl(m_{j-1}, x_j\\biggr)",
     r"(scalar reader) \biggl( \biggr): 'ParseError: \biggl is not read by the scalar reader'"),
    ("dao2022", r"\\begin\{align\*\}\n    m\(x\) &:=(.*?)\\end\{align\*\}",
     r"\\begin{equation}\\begin{aligned}\n    m(x) &:=\1\\end{aligned}\\end{equation}",
     r"(scalar reader) equation with aligned: 'ParseError: an expression that is not part of a statement'"),
    ("milakov2018", r"(&= \\sum_\{k=1\}\^\{j\} e\^\{x_k - m_j\})", r"\1.",
     r"(scalar reader) a period after the last row of a chain: 'ParseError: found '.', expected one expression "
     "in a row that continues a chain'"),
    ("milakov2018", r"\\sum_\{k=1\}\^\{j\}", r"\\sum_{k \\in [j]}",
     r"(scalar reader) \sum_{k \in [j]}: 'ParseError: \sum_{k \in ...}: a set of indices after \in is not read'"),
]

#: variants that were in KNOWN and that the reader reads now (each was a strict xfail before)
READ_NOW = [
    ("vaswani2017_attention", r"K\^T", r"K^{\\mathsf T}",
     r"\mathsf T without braces (valid LaTeX): 'ParseError: \mathsf without its argument'"),
    ("seed000_attention", r"\\mathbf\{([QKV])\}", r"\\mathbf \1",
     r"\mathbf Q without braces (valid LaTeX): 'ParseError: \mathbf without its argument'"),
    ("katharopoulos2020", r"\\phi", r"\\boldsymbol{\\phi}",
     r"a bold Greek letter \boldsymbol{\phi}: 'ParseError: \boldsymbol{\phi} is not a name'"),
    ("seed000_blocks", r"\\sum_\{h=1\}\^\{H\}", r"\\sum^{H}_{h=1}",
     r"the limits of a sum in the other order \sum^{H}_{h=1}: 'ParseError: found '^', expected _{h=1}^{H} "
     "after the sum'"),
    ("vaswani2017", r"\\text\{where\}~", r"\\intertext{where} ",
     r"\intertext{where} in align*: 'ParseError: unsupported LaTeX command \intertext'"),
    ("elhage2021", r"W_Q\^\{h\\,T\}", r"W^{h\\,T}_Q",
     r"the subscript after a superscript holding the transpose, W^{h\,T}_Q (typeset as W_Q^{h\,T}): "
     "'ParseError: a subscript after the transpose mark'"),
    ("seed002_kv_cache", r"K_\{1:t\}\^\\top", r"K^\\top_{1:t}",
     r"K^\top_{1:t} (typeset as K_{1:t}^\top): 'ParseError: a subscript after the transpose mark'"),
]


def known_variant(name, pattern, repl) -> str:
    text = text_of(name)
    variant = re.sub(pattern, repl, text, flags=re.S)
    assert variant != text, (name, pattern)
    return variant


@pytest.mark.parametrize("name, pattern, repl", [
    pytest.param(n, p, r, marks=pytest.mark.xfail(strict=True, reason=why), id=f"{n}:{why[:40]}")
    for n, p, r, why in KNOWN])
def test_a_known_variant_reads_as_the_original(name, pattern, repl):
    assert read(claims, known_variant(name, pattern, repl)) == original_claims(name)


@pytest.mark.parametrize("name, pattern, repl", [
    pytest.param(n, p, r, id=f"{n}:{why[:40]}") for n, p, r, why in READ_NOW])
def test_a_variant_read_now_reads_as_the_original(name, pattern, repl):
    assert read(claims, known_variant(name, pattern, repl)) == original_claims(name)
