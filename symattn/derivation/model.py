"""Derivations: declared shapes and assumptions, a chain lhs = e1 = e2 = ..., a report per step.

Every step e_{k-1} = e_k goes through :func:`symattn.verify`; its verdict (proved in
general, proved at dimensions, refuted with a counterexample, unknown) is reported as
it is. A step whose sides cannot be built (unknown names, shapes that do not fit) is
"ill-formed"; a step next to an ill-formed expression is "skipped". For the first step
that is not proved, :mod:`.diagnose` looks for the usual slip.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from .. import defs as D
from ..displays import show
from ..errors import DerivationError, ShapeError
from ..printing import text as readable_text
from ..proof import Verdict
from ..proof.generalize import generalized
from . import ast, decay_induction, free_letters, named_cases, operators, powers
from .cost_formulas import declare_sizes
from .elaborate import Scope
from .gradients import decide_gradient, give_gradients, gradient_steps, split_gradient_claims
from .indexed_names import read_indexed_definitions
from .labels import rewrite_labels
from .matrix_exponential import inverted_names
from .matrix_exponential import read as exponentials
from .opaque_definitions import prove_for_every_value
from .point_values import read_point_values
from .position_sets import PositionSet, define_set
from .real_functions import MEANING, NAMED, REAL, refute_with_real_functions
from .relative_positions import define_table, is_table_definition
from .row_pairs import verify_rows
from .scalar_gradients import is_gradient_of
from .sequence_rows import note_row_sequences
from .sequences import generic_letters, is_initial_condition, note_index_letters
from .set_softmax import rewrite as written_out_softmax
from .subscript_parameters import rewrite_subscripted_functions
from .symbols import VOCABULARY_ARITY, family_key, is_matrix, key_of
from .unranged_sums import read_unranged_sums
from .vector_orientation import orient_bare_vectors
from .vectors import declare_feature_map, orient_vectors, rewrite_feature_calls
from .where_clauses import definitions_first

DEFAULT_BUDGET = 20.0
MAX_STEPS = 200
STEP_STATUSES = ("proved", "refuted", "unknown", "ill-formed", "skipped")


@dataclass
class Step:
    """One link e_{k-1} = e_k of a chain, checked."""

    number: int
    lhs: str
    rhs: str
    lhs_latex: str = ""
    rhs_latex: str = ""
    relation: str = "="
    pos: tuple = (0, 0)
    status: str = "skipped"
    general: bool = False
    scope: str = ""
    method: str = ""
    seconds: float = 0.0
    verdict: Verdict | None = None
    error: str = ""
    diagnosis: Any = None
    lhs_expr: Any = field(default=None, repr=False)
    rhs_expr: Any = field(default=None, repr=False)
    lhs_node: Any = field(default=None, repr=False)
    rhs_node: Any = field(default=None, repr=False)
    scope_obj: Any = field(default=None, repr=False)
    bound: dict = field(default_factory=dict, repr=False)  # parameters bound by a signature (F: ... -> ...)
    chain: int = 0  # steps of the same chain share this number
    assumptions: tuple = ()  # the assumptions substituted into this step's two sides
    orientation: str = ""  # "column = row, compared as vectors (n entries)": the sides differ in orientation
    given: tuple = ()  # the gradient steps (dP = dO V^T) put into this ordinary step's sides (gradients.py)
    alternatives: tuple = ()  # (choice, lhs, rhs): the step read under each choice of named alternatives

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    def as_dict(self) -> dict:
        out = {
            "step": self.number, "chain": self.chain, "line": self.pos[0], "column": self.pos[1],
            "relation": self.relation,
            "lhs": self.lhs, "rhs": self.rhs, "status": self.status, "general": self.general,
            "scope": self.scope, "method": self.method, "seconds": round(self.seconds, 3),
        }
        if self.assumptions:
            out["assumptions"] = list(self.assumptions)
        if self.orientation:
            out["orientation"] = self.orientation
        if self.error:
            out["error"] = self.error
        cex = self.verdict.counterexample if self.verdict is not None else None
        if cex is not None:
            out["counterexample"] = {
                "dims": cex.dims,
                "inputs": {k: v.tolist() for k, v in cex.values.items()},
                "lhs": cex.lhs.tolist(), "rhs": cex.rhs.tolist(),
                "entry": list(cex.entry), "difference": str(cex.difference),
                "certificate": cex.certificate, "functions": cex.functions,
            }
        if self.diagnosis is not None:
            out["diagnosis"] = self.diagnosis.as_dict()
        return out


@dataclass
class Report:
    """The outcome of checking a derivation: its steps, definitions and the assumptions used."""

    source: str
    steps: list
    definitions: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when there is at least one step and every step is proved."""
        return bool(self.steps) and all(s.proved for s in self.steps)

    @property
    def first_failure(self) -> Step | None:
        return next((s for s in self.steps if not s.proved), None)

    def __str__(self) -> str:
        from .report import table

        return table(self)

    def _repr_markdown_(self) -> str:
        from .report import to_markdown

        return to_markdown(self)

    def _repr_html_(self):
        return show("report_html", self)

    def as_dict(self) -> dict:
        return {"source": self.source, "ok": self.ok, "seconds": round(self.seconds, 3),
                "notes": self.notes, "definitions": self.definitions,
                "steps": [s.as_dict() for s in self.steps]}


def check_steps(exprs, texts=None, *, budget: float = DEFAULT_BUDGET, diagnose: bool = True,
                source: str = "<python>", notes=None) -> Report:
    """Check the chain ``exprs[0] = exprs[1] = ...`` of SymPy matrix expressions.

    ``texts`` names the expressions in the report (default: their SymPy form).

    >>> import sympy as sp, symattn as sa
    >>> n, m = sa.dims("n m")
    >>> A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", m, n)
    >>> r = check_steps([(A * B).T, B.T * A.T, (B.T * A.T).T.T])
    >>> [s.status for s in r.steps], r.ok
    (['proved', 'proved'], True)
    """
    start = time.perf_counter()
    exprs = list(exprs)
    if len(exprs) < 2:
        raise DerivationError(f"check_steps needs a chain of at least two expressions, got {len(exprs)}: "
                              "with one there is no step to check", 0, 0, "[lhs, rhs, ...]")
    texts = list(texts) if texts is not None else [readable_text(e) for e in exprs]
    steps = []
    for k in range(1, len(exprs)):
        s = Step(k, texts[k - 1], texts[k], lhs_expr=exprs[k - 1], rhs_expr=exprs[k])
        if not isinstance(exprs[k - 1], Exception):
            s.lhs_latex = sp.latex(exprs[k - 1])
        if not isinstance(exprs[k], Exception):
            s.rhs_latex = sp.latex(exprs[k])
        steps.append(s)
    report = Report(source, steps, notes=list(notes or []))
    run_steps(report, budget, diagnose)
    report.seconds = time.perf_counter() - start
    return report


def run_steps(report: Report, budget: float, diagnose: bool) -> None:
    from .diagnose import diagnose_step

    chains = set()
    previous = None
    for s in report.steps:
        if getattr(s, "gradient", None) is not None:  # a backward step dX = F (gradients.py)
            decide_gradient(s, budget, diagnose)
            continue
        if getattr(s, "alternatives", ()):  # a function by named alternatives: each one (named_cases)
            chains.add(s.chain)
            previous = s
            named_cases.decide(s, lambda steps: run_steps(Report(report.source, steps), budget, False))
            continue
        L, R = s.lhs_expr, s.rhs_expr
        first_of_chain = s.chain not in chains
        chains.add(s.chain)
        if isinstance(L, Exception) and first_of_chain:  # the chain's first expression: say why
            s.status = "ill-formed"
            s.error = f"the left side {s.lhs} is ill-formed: {L}"
            if isinstance(R, Exception):
                s.error += f"\nthe right side is ill-formed too: {R}"
        elif isinstance(R, Exception):
            s.status, s.error = "ill-formed", str(R)
        elif isinstance(L, Exception):
            s.status = "skipped"
            s.error = f"the left side is ill-formed (see step {previous.number}, whose right side it is)"
        previous = s
        if isinstance(L, Exception) or isinstance(R, Exception):
            continue
        L, R = _as_one_by_one(L, R)
        s.lhs_expr, s.rhs_expr = L, R
        if not (is_matrix(L) and is_matrix(R)):
            s.status, s.error = "ill-formed", "both sides of a step must be matrices"
            continue
        try:
            v = _verify_positions(s, L, R, budget)
        except ShapeError as exc:
            s.status, s.error = "ill-formed", str(exc)
            continue
        except Exception as exc:  # an engine failure must not hide the other steps
            s.status, s.error = "unknown", f"the proof engine failed: {type(exc).__name__}: {exc}"
            continue
        # [softmax(QK^T)V]_n with Q := L W_Q: decided again with Q kept as a name (opaque_definitions)
        kept = prove_for_every_value(s, budget, _prove_only) if v.status == "unknown" else None
        v, kept_note = kept if kept is not None else (v, "")
        s.verdict, s.status, s.general = v, v.status, v.general
        s.scope, s.method, s.seconds = v.scope + kept_note, v.method, v.seconds
        if getattr(s, "induction", None) is not None:  # S_t = sum_{i=1}^{t} ... (position_induction.py)
            s.induction.conclude(s.scope_obj, s, lambda s, L, R: _verify_positions(s, L, R, budget))
            continue
        maps = _uninterpreted_maps(L, R)
        if v.status == "refuted" and not (free := free_letters.refutation_stands(
                s.scope_obj, L, R, lambda a, b, s=s: _verify_positions(s, a, b, budget)))[0]:
            free_letters.undecided(s, free[1])
            continue
        if v.status == "refuted" and maps and _independent_of_maps(s, L, R, budget):
            s.scope += (f"; for every {', '.join(maps)}: the difference of the sides does not depend on what "
                        f"{', '.join(maps)} does (proved)")
        elif v.status == "refuted" and maps and all(m in REAL or m in NAMED for m in maps) and (
                real := refute_with_real_functions(L, R, v.counterexample)) is not None:
            s.verdict = v = dataclasses.replace(v, counterexample=real)
            s.scope = v.scope + "; with " + ", ".join(f"{m} {MEANING[m]}" for m in maps) + ", entrywise"
        elif v.status == "refuted" and maps:  # refuted for one map, the paper means another: undecided
            s.status = "unknown"
            s.error = (f"the sides differ for some map {', '.join(maps)} (the counterexample below): the step depends "
                       f"on what {', '.join(maps)} does, which the file does not define, so it is neither proved nor "
                       "refuted")
        if s.assumptions and v.proved:
            s.scope += "; under " + ", ".join(s.assumptions)
        if s.given:
            s.scope += "; with " + ", ".join(s.given) + " as the file's steps give them"
        if s.orientation:
            s.scope += f"; orientation: {s.orientation}"
    if diagnose:
        # a slip is looked for in every step shown false or that cannot be built: an undecided
        # ("unknown") step may well be true
        for s in report.steps:
            if s.status in ("refuted", "ill-formed") and getattr(s, "gradient", None) is None:
                s.diagnosis = diagnose_step(s, budget=min(budget, 10.0))


def _independent_of_maps(s, L, R, budget) -> bool:
    """True when L - R is proved the same for two unrelated maps f and f' in place of each map the file does
    not define: then a counterexample found with one instance of the maps holds for the paper's maps too."""
    def other(e):
        return e.replace(lambda x: isinstance(x, D.Apply),
                         lambda x: D.Apply(f"{x.function}\u2032", x.argument, x.args[2]))
    lhs, rhs = L + other(R), R + other(L)
    if (general := generalized(lhs, rhs)) is not None and _proved_quietly(s, *general, budget):
        if getattr(s.scope_obj, "positions", None):  # as the claim's own check leaves them (_verify_positions)
            s.lhs_expr, s.rhs_expr = lhs.xreplace(s.scope_obj.subs), rhs.xreplace(s.scope_obj.subs)
        return True  # each softmax an arbitrary matrix: its proof holds for the softmax (quick where it holds)
    try:
        v = _verify_positions(s, lhs, rhs, budget)
    except Exception:  # an engine failure: the step stays undecided
        return False
    return v.status == "proved"


def _proved_quietly(s, L, R, budget) -> bool:
    """True when ``L = R`` is proved (no counterexample is looked for; the step's sides are left as they are)."""
    sides = (s.lhs_expr, s.rhs_expr)
    try:
        v = _prove_only(s, L, R, budget)
    except Exception:  # an engine failure proves nothing
        return False
    finally:
        s.lhs_expr, s.rhs_expr = sides
    return v.status == "proved"


def _uninterpreted_maps(*exprs) -> list[str]:
    """The names of the maps the file does not define (\\mathrm{LN}(X)) in the expressions."""
    return sorted({str(x.function) for e in exprs for x in sp.preorder_traversal(e) if isinstance(x, D.Apply)})


def _verify_positions(s, L, R, budget, search=True):
    """verify(L, R), at every length of a sequence that a position t runs in (see verify_positions); no
    counterexample is looked for unless ``search``."""
    from .diagnose import verify_positions

    scope = s.scope_obj
    if getattr(scope, "positions", None):
        s.lhs_expr, s.rhs_expr = L.xreplace(scope.subs), R.xreplace(scope.subs)
    return verify_rows(scope, L, R, lambda a, b: verify_positions(scope, a, b, budget=budget,  # H_j beside H_i
                                                                  search_counterexample=search))


def _prove_only(s, L, R, budget):
    """_verify_positions without a counterexample search: for a check whose only outcome taken is a proof."""
    return _verify_positions(s, L, R, budget, search=False)


# documents (statements from a front end) ------------------------------------


def _setting(scope: Scope, st):
    if isinstance(st, ast.Setting):
        if st.key == "convention":
            scope.convention = st.value
            scope.convention_set = True  # written by the file (softmax_axis reads it)
        elif st.key == "score":
            scope.score = None if st.value == "scaled_dot" else "dot"
    elif isinstance(st, ast.ScoreDecl):
        f = D.ScoreFunction(st.name)
        scope.functions[st.name] = f
        scope.score = f
        if st.codomain is not None:
            scope.signatures[st.name] = st


def _is_letter(n) -> bool:
    return isinstance(n, ast.Name) and n.sub is None and n.sup is None


def _assume(scope: Scope, st: ast.Assume):
    """Model an assumption: it is substituted into every expression it reaches (and named in the
    scope of those steps), or refused here with what can be assumed instead."""
    a, b = st.lhs, st.rhs
    text = f"{a.text()} = {b.text()}"
    scope.assumption_nodes[text] = st
    if isinstance(a, ast.Name) and isinstance(b, ast.Num) and a.sup is None and (a.sub is None or _is_letter(a.sub)):
        scope.dims[key_of(a)] = sp.Integer(b.value)
        scope.assumptions[text] = True  # the dimension is that number everywhere in the document
        scope.notes.append(f"assumption: {text}")
    elif isinstance(a, ast.Name) and isinstance(b, ast.Name) and a.sub is not None and (
            _is_letter(a.sub) or isinstance(a.sub, ast.Num)) and a.sup is not None:
        # W_i^K = W_1^K, W_i^K = W_i^Q, W_2^K = W_1^K: members of the family W^K read as the right side
        scope.member_aliases.setdefault(family_key(a), []).append((a.sub, b, text))
        scope.assumptions[text] = False
        every = "every " if _is_letter(a.sub) else ""
        scope.notes.append(f"assumption: {text} ({every}{a.text()} reads as {b.text()})")
    elif isinstance(a, ast.Name) and isinstance(b, ast.Name):
        scope.aliases[key_of(a)] = key_of(b)
        scope.assumed_by[key_of(a)] = text
        scope.assumptions[text] = False
        scope.notes.append(f"assumption: {text} (every {a.text()} reads as {b.text()})")
    else:
        raise DerivationError(f"cannot assume {text}", st.pos[0], st.pos[1],
                              "two names (d_k = d_v, W^K = W^Q, W_i^K = W_1^K) or a name and a number (H = 1)")


def _check_assumptions_reach(scope: Scope):
    """An assumption whose left side names nothing declared would be shown and ignored: refuse it."""
    for text, used in scope.assumptions.items():
        if used:
            continue
        st = scope.assumption_nodes[text]
        a = st.lhs
        declared = (key_of(a) in scope.dims or key_of(a) in scope.matrices or family_key(a) in scope.families
                    or key_of(a) in scope.functions)
        if not declared:
            raise DerivationError(
                f"the assumption {text} names {a.text()}, which is not declared, so it could not be used",
                st.pos[0], st.pos[1], "an assumption about a declared dimension, matrix or head family")
        scope.notes.append(f"assumption {text} is not used by any step")


def _infer_head_ranges(scope: Scope, stmts) -> None:
    """A sum over heads \\sum_{i=1}^{h} in a document that declares no range for i: i runs over 1..h
    (the Transformer paper never writes i = 1, ..., h). Only for an index that subscripts a
    declaration (W^Q_i), so a sum over positions is not taken for heads."""
    declared = set()
    for st in stmts:
        if isinstance(st, ast.HeadRange) or (isinstance(st, ast.Declare) and st.index is not None):
            declared.add(st.index)  # h = 1, ..., H; Q_1, ..., Q_H \in S (a range of its own)
    subscripts = {n.sub.base for st in stmts if isinstance(st, ast.Declare) for n in st.names
                  if isinstance(n.sub, ast.Name) and n.sub.sub is None}
    subscripts |= {n.sup for st in stmts if isinstance(st, ast.Declare) for n in st.names  # W_{OV}^h: on top
                   if n.sup is not None and len(n.sup) == 1 and n.sup.islower()}
    for st in stmts:
        if not isinstance(st, (ast.Chain, ast.Define)):
            continue
        for n in ast.nodes_of(st):
            if (isinstance(n, ast.Sum) and n.upper is not None and n.lower is None and n.index not in declared
                    and n.index in subscripts):
                declared.add(n.index)
                scope.head_range(n.index, n.upper, n)
                scope.notes.append(f"{n.index} = 1, ..., {n.upper.text()} read from the sum over {n.index}")


def _is_definition(scope: Scope, st) -> bool:
    """``x = e`` (or ``F(Q, K, V) = e = e' ...``) with x a name nothing declares yet defines x."""
    return isinstance(st, ast.Chain) and st.links[0][0] == "=" and not is_gradient_of(st.first) and (
        scope.is_undefined_name(st.first) or is_initial_condition(scope, st))  # S_0 = 0 after the recurrence


def _as_one_by_one(L, R):
    """A scalar side (\\|q\\| \\|k\\|) beside a 1 × 1 matrix (q^T k) or another scalar is compared as the
    1 × 1 matrix of its value; anything else is left as it is."""
    def lift(x):
        return sp.ImmutableMatrix([[x]]) if isinstance(x, sp.Expr) and not is_matrix(x) else x

    def small(x):
        return not is_matrix(x) or (x.rows == 1 and x.cols == 1)

    if isinstance(L, Exception) or isinstance(R, Exception) or not (small(L) and small(R)):
        return L, R
    if is_matrix(L) and is_matrix(R):
        return L, R
    return lift(L), lift(R)


def _declared_then_defined(stmts) -> dict:
    """``c \\in \\mathbb{R}^{d_c}`` and then ``c = W h``: the paper gives c its shape, then defines it. A claim
    that a declared, otherwise free matrix equals an expression without it could only be refuted; such a
    chain is read as the definition (its shape checked against the declaration), or, where the
    definition cannot be read, as a step as before. Returns id(chain) -> the declared shape."""
    declared = {}
    for st in stmts:
        if isinstance(st, ast.Declare) and st.index is None:
            for n in st.names:
                declared.setdefault(key_of(n), []).append(st.shape)
    out, seen = {}, set()
    for st in stmts:
        if not (isinstance(st, ast.Chain) and st.links and st.links[0][0] == "=" and not st.bind
                and st.shape is None and isinstance(st.first, ast.Name)):
            continue
        k, first = key_of(st.first), st.first
        if len(declared.get(k, ())) != 1 or k in seen:
            continue
        nodes = [n for _, _, e in st.links for n in ast.nodes_of(e)]
        subs = {id(n.sub) for n in nodes if isinstance(n, ast.Name)}  # the z of d_z is no member of z_i
        if any(isinstance(n, ast.Name) and id(n) not in subs
               and (key_of(n) == k or (n.base == first.base and n.sup == first.sup)) for n in nodes):
            continue  # the name, or a block or member of it (W^O and W^O_i), on both sides: a claim about it
        if isinstance(st.links[0][2], (ast.Block, ast.Cases)):
            continue  # X = [x_1, ..., x_n] names the columns of X; a block or a mask is read as before
        seen.add(k)
        out[id(st)] = declared[k][0]
    return out


def _define_declared(scope: Scope, st, shape) -> bool:
    """Define the declared matrix ``st.first`` by the chain's first right side, of the declared shape;
    False (and the declaration kept) where the definition cannot be read."""
    k = key_of(st.first)
    saved = scope.matrices.pop(k, None)
    if saved is None:
        return False
    try:
        scope.define(ast.Define(st.pos, st.first, (), st.links[0][2], shape))
    except DerivationError:
        scope.matrices[k] = saved
        return False
    return True


def _stated_equalities(stmts):
    """``d_a = d_z`` between two dimensions of the declarations, stated in the text: an assumption (as
    ``assume d_a = d_z``), not a step of the derivation."""
    dims = {key_of(n) for st in stmts if isinstance(st, ast.Declare)
            for n in ast.nodes_of((st.shape.rows, st.shape.cols)) if isinstance(n, ast.Name)}
    declared = {key_of(n) for st in stmts if isinstance(st, ast.Declare) for n in st.names}

    def dimension(n):
        return isinstance(n, ast.Name) and n.sup is None and key_of(n) in dims and key_of(n) not in declared

    out = []
    for st in stmts:
        if (isinstance(st, ast.Chain) and st.shape is None and not st.bind and dimension(st.first)
                and all(rel == "=" and dimension(e) for rel, _, e in st.links)):
            nodes = [st.first] + [e for _, _, e in st.links]
            out.extend(ast.Assume(st.pos, a, b) for a, b in zip(nodes[1:], nodes[:-1]))
        else:
            out.append(st)
    return out


def check_statements(stmts, *, source: str = "<text>", budget: float = DEFAULT_BUDGET,
                     diagnose: bool = True, dialect: str = "notation") -> Report:
    """Check a parsed document.

    Declarations come first (settings, head ranges, shapes, in document order), then definitions
    (``:=``, or ``=`` with a new name on the left, in document order), then every chain: a paper
    may declare a name after its use in the same display, or define head_i after the line that
    uses it ("where head_i = ...").
    """
    start = time.perf_counter()
    scope = Scope()
    scope.dialect = dialect
    stmts, gradient_claims = split_gradient_claims(scope, stmts)  # dX = F: backward steps (gradients.py)
    # x = f(a) g, where f(a) = ... (where_clauses); phi(k) \in R^d: a value of its own (point_values)
    stmts = read_point_values(definitions_first(_stated_equalities(stmts)))
    redefined = _declared_then_defined(stmts)
    for st in stmts:
        if isinstance(st, ast.Assume):
            _assume(scope, st)
    definitions, steps, chains = [], [], []
    for st in stmts:
        if isinstance(st, (ast.Setting, ast.ScoreDecl)):
            _setting(scope, st)
    _infer_head_ranges(scope, stmts)
    orient_bare_vectors(scope, stmts)  # x^T y of x, y in R^d in a row-convention file (vector_orientation)
    scope.inverted = inverted_names(stmts)  # exp(Delta A) beside A^{-1}: the matrix exponential (matrix_exponential)
    for st in stmts:
        if isinstance(st, ast.HeadRange):
            scope.head_range(st.index, st.upper, st)
        elif isinstance(st, ast.Declare):
            scope.declare(st)
        elif isinstance(st, ast.FeatureDecl):
            declare_feature_map(scope, st)
    if scope.features:  # phi (x)^T, read by the parser as a product, is the call phi(x)^T
        stmts = [rewrite_feature_calls(st, scope.features) for st in stmts]
    stmts = written_out_softmax(scope, stmts)  # softmax_{x_j \in X}(s): over the members x_1..x_n (set_softmax)
    stmts = read_unranged_sums(scope, stmts)  # \sum_s over every member \bar{h}_s (unranged_sums)
    note_index_letters(scope, stmts)  # x_j beside a declared x_i: a member where i and j are indices (sequences)
    note_row_sequences(scope, stmts, generic_letters)  # sum_{j=1}^{n} f(x_j): x read as rows (sequence_rows)
    stmts = read_indexed_definitions(scope, stmts)  # a(s_{i-1}, h_j) = ...; e_{ik} from e_{ij} = ... (indexed_names)
    stmts = rewrite_subscripted_functions(scope, rewrite_labels(scope, stmts))  # A(l_1); Swish_beta(x)
    redefined.update(_declared_then_defined(stmts))  # the chains as rewritten (their ids are new)
    declare_sizes(scope, stmts)  # Omega(MSA) = 4hwC^2: the letters of a cost are sizes (cost_formulas.py)
    named = {id(st) for st in stmts if isinstance(st, ast.Chain) and len(st.links) == 1
             and st.links[0][0] == "=" and scope.name_vectors(st, st.links[0][2])}
    scope.partition_uses(n for st in stmts if isinstance(st, (ast.Chain, ast.Define)) for n in ast.nodes_of(st))
    for st in stmts:
        if (isinstance(st, ast.Chain) and len(st.links) == 1 and isinstance(st.links[0][2], ast.Block)
                and isinstance(st.first, ast.Name) and isinstance(st.first.sub, ast.ParamIndex)):
            scope.define_rotation(st)
            named.add(id(st))
            definitions.append(f"{st.first.text()} := {st.links[0][2].text()}")
        if isinstance(st, ast.Chain) and len(st.links) == 1 and isinstance(st.links[0][2], PositionSet):
            definitions.append(define_set(scope, st))  # P_i = \{j : i \geq j\} (position_sets)
            named.add(id(st))
        if isinstance(st, ast.Chain) and len(st.links) == 1 and isinstance(st.links[0][2], ast.Cases):
            scope.define_mask(st)
            named.add(id(st))
            definitions.append(f"{st.first.text()} := {st.links[0][2].text()}")
    free_letters.remember(scope, stmts + [c[2] for c in gradient_claims])  # M in \frac{1}{2} M^2 (free_letters)
    for st in stmts:
        if id(st) in named:
            continue
        if isinstance(st, ast.Define):
            scope.define(st)
            params = f"({', '.join(p.text() for p in st.params)})" if st.params else ""
            definitions.append(f"{st.target.text()}{params} := {st.body.text()}")
        elif id(st) in redefined and _define_declared(scope, st, redefined[id(st)]):
            definitions.append(f"{st.first.text()} := {st.links[0][2].text()}  (declared, then written with '=')")
            if len(st.links) > 1:
                chains.append(ast.Chain(st.links[1][1], st.first, st.links[1:], st.shape))
        elif is_table_definition(scope, st):  # a^K_{ij} = w^K_{clip(j-i,k)} (relative_positions)
            definitions.append(define_table(scope, st))
        elif _is_definition(scope, st):
            first = st.first
            target, params = (first.target, first.args) if isinstance(first, ast.Call) else (first, ())
            d = ast.Define(st.pos, target, params, st.links[0][2], st.shape if len(st.links) == 1 else None,
                           first.extra if isinstance(first, ast.Call) else ())
            try:
                scope.define(d)
            except DerivationError:
                if len(st.links) == 1 or params:
                    raise
                # o_t = e = e' with e ill-formed: the chain from e, whose first step shows why
                chains.append(ast.Chain(st.links[0][1], st.links[0][2], st.links[1:], st.shape))
                continue
            definitions.append(f"{first.text()} := {d.body.text()}  (written with '=')")
            if len(st.links) > 1:  # F(Q, K, V) = e = e': the rest is a chain from F(Q, K, V)
                chains.append(ast.Chain(st.links[1][1], first, st.links[1:], st.shape))
        elif isinstance(st, ast.MapDef):
            if st.name.base in VOCABULARY_ARITY and VOCABULARY_ARITY[st.name.base] == len(st.params):
                # the document's definition of a function of the vocabulary, for every argument of its signature
                call = ast.Call(st.pos, st.name, st.params)
                chains.append(ast.Chain(st.pos, call, (("=", st.body.pos, st.body),), st.codomain,
                                        tuple(zip(st.params, st.domain))))
            else:
                scope.define(ast.Define(st.pos, st.name, st.params, st.body))
                definitions.append(f"{st.name.text()}({', '.join(q.text() for q in st.params)}) := {st.body.text()}")
        elif isinstance(st, ast.Chain):
            chains.append(st)
    for st in chains:
        steps.extend(_chain_steps(scope, st, len(steps), 1 + (steps[-1].chain if steps else -1)))
        if len(steps) > MAX_STEPS:
            raise DerivationError(f"more than {MAX_STEPS} steps", st.pos[0], st.pos[1],
                                  "a shorter derivation (split it into several files)")
    _check_assumptions_reach(scope)
    notes = [_convention_note(scope)] + scope.notes
    backward = gradient_steps(scope, gradient_claims, Step, len(steps), 1 + (steps[-1].chain if steps else -1))
    give_gradients(steps, backward)  # dP in an ordinary step is the file's dP = dO V^T
    steps.extend(backward)
    report = Report(source, steps, definitions, notes)
    run_steps(report, budget, diagnose)
    report.seconds = time.perf_counter() - start
    return report


def _convention_note(scope: Scope) -> str:
    score = {None: "Kᵀ Q / sqrt(d_k)", "dot": "Kᵀ Q"}.get(scope.score, None) if not isinstance(
        scope.score, D.ScoreFunction) else f"{scope.score.name}(Q, K), uninterpreted"
    if scope.convention == "row":
        return (f"row convention (vectors are rows): Attention(Q, K, V) = softmax(f(Q, K)) V with each row "
                f"normalized, score {score.replace('Kᵀ Q', 'Q Kᵀ')}; Concat(e_1, ..., e_H) = [e_1 ... e_H] "
                "side by side")
    return (f"column convention (vectors are columns, seed 000): Attention(Q, K, V) = V Softmax(f(Q, K)) "
            f"with each column normalized, score {score}; Concat(e_1, ..., e_H) = [e_1; ...; e_H] stacked")


def _chain_steps(scope: Scope, st: ast.Chain, offset: int, chain: int) -> list:
    nodes = [st.first] + [e for _, _, e in st.links]
    vals, used = [], []
    fixed = {t for t, u in scope.assumptions.items() if u and t not in scope.hits}  # H = 1: everywhere
    try:
        bound = {q.base: sp.MatrixSymbol(key_of(q), scope.dim(shape.rows), scope.dim(shape.cols))
                 for q, shape in st.bind}
    except DerivationError as exc:
        bound = {}
        nodes, vals = nodes[:1], [exc]
    scope.alternative_needed = None  # (named_cases) asked for by this chain's reading only
    first = list(vals)
    vals, used, as_vectors = _read_chain(scope, st, nodes, bound, list(first))
    # score(h, s) = \begin{cases} ... & \text{dot} \\ ... & \text{general}: read under each (named_cases)
    per = named_cases.per_alternative(scope, lambda: _read_chain(scope, st, nodes, bound, list(first))[0])
    out = []
    for k, (rel, pos, node) in enumerate(st.links, start=1):
        s = Step(offset + k, nodes[k - 1].text(), node.text(), nodes[k - 1].latex(), node.latex(), rel, pos,
                 lhs_expr=vals[k - 1], rhs_expr=vals[k], lhs_node=nodes[k - 1], rhs_node=node)
        s.scope_obj, s.chain, s.bound = scope, chain, bound
        s.assumptions = tuple(t for t in scope.assumptions if t in fixed | used[k - 1] | used[k])
        s.orientation = as_vectors[k] or ""
        if any(isinstance(v, named_cases.AlternativeNeeded) for v in (vals[k - 1], vals[k])):
            s.alternatives = tuple((choice, v[k - 1], v[k]) for choice, v in per)
        out.append(s)
    decay_induction.attach(scope, st, out)  # position_induction.attach, then a decay (decay_induction)
    return out


def _read_chain(scope: Scope, st: ast.Chain, nodes, bound, vals):
    """The values of the chain's expressions (after ``vals``), the names each used, and the orientation of
    the steps whose sides are a column and a row."""
    used = []
    rows = []  # per expression: did it read a row Q_i of a declared matrix as a vector
    for n in nodes:
        start, read = len(scope.hits), scope.rows_read
        try:
            vals.append(powers.guard(scope, n, exponentials(scope, n, scope.expr(n, bound))))  # (powers.py)
        except DerivationError as exc:
            vals.append(exc)
        used.append(set(scope.hits[start:]))
        rows.append(scope.rows_read > read)
    if st.shape is not None and not isinstance(vals[-1], Exception):
        try:
            scope.check_shape(nodes[-1], vals[-1], st.shape)
        except DerivationError as exc:
            vals[-1] = exc
    ops = [operators.is_operator(scope, n) for n in nodes]
    for k in range(1, len(nodes)):  # T = A: an operator (applied to the generic ⟨X⟩) is never a matrix
        if ops[k] != ops[k - 1]:
            j = k if ops[k] else k - 1
            other = nodes[k - 1 if ops[k] else k]
            if not isinstance(vals[j], Exception):
                vals[j] = DerivationError(
                    f"{nodes[j].text()} is a Kronecker product that acts on nothing, compared with the matrix "
                    f"{other.text()}", nodes[j].pos[0], nodes[j].pos[1],
                    "(A \\otimes W) \\cdot x, with x the matrix it acts on, or a step between operators")
    vals, as_vectors = orient_vectors(scope, nodes, vals, rows)  # V'_i written as a column, then as a row
    return vals, used, as_vectors
