"""The proof kernel's boundary: a proved verdict is made in one place, only after the audit has
evaluated the claim; shapes and values that would let a false claim through are refused.

Each claim of the "what was seen" list of the soundness issue is here; each was "proved" before
the kernel existed (a strided slice, a column of -oo, a determinant the audit could not see).
"""

import ast
import pathlib

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy.matrices.expressions.matexpr import MatrixExpr

import symattn as sa
from symattn.defs.numeric_nodes import Exp, Log
from symattn.defs.shapes import check_slice, slice_length
from symattn.errors import ClaimError, ShapeError, SoundnessError
from symattn.proof import kernel, verdict_cache
from symattn.proof.audit import run_audit
from symattn.proof.verdict import AuditRecord, Candidate, Verdict

PACKAGE = pathlib.Path(sa.__file__).resolve().parent
n, m, d, k = sa.dims("n m d k")


# -- the seal -------------------------------------------------------------------------------------

def test_a_proved_verdict_cannot_be_made_outside_the_kernel():
    with pytest.raises(ValueError, match="only by symattn.proof.kernel"):
        Verdict("proved", True, "by hand", "all dimensions", ())
    record = AuditRecord(4, (), "audit: 4 random exact instances agree")
    with pytest.raises(ValueError, match="only by symattn.proof.kernel"):
        Verdict("proved", True, "by hand", "all dimensions", (), audit=record)
    # unknown and refuted verdicts need no seal
    assert Verdict("unknown", False, "none", "not established", ()).status == "unknown"


def test_the_kernel_seals_only_an_audit_that_evaluated_something():
    found = Candidate(True, "a strategy under test", "all dimensions", ("step",))
    with pytest.raises(ValueError, match="at least one evaluated instance"):
        kernel._sealed(found, AuditRecord(0, ("no instance",), "audit: skipped: no instance"))
    with pytest.raises(ValueError, match="at least one evaluated instance"):
        kernel._sealed(found, AuditRecord(3, (), "audit: ...", malformed=True))
    v = kernel._sealed(found, AuditRecord(2, (), "audit: 2 random exact instances agree"))
    assert v.proved and v.audit.agreed == 2


def test_only_the_kernel_and_the_verdict_name_the_seal():
    users = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.endswith("_seal"):
                users.append(path.relative_to(PACKAGE).as_posix())
    assert sorted(users) == ["proof/kernel.py", "proof/verdict.py"]


def test_only_the_kernel_calls_its_sealing_function():
    callers = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if name == "_sealed":
                callers.append(path.relative_to(PACKAGE).as_posix())
    assert set(callers) == {"proof/kernel.py"}


def test_the_audit_cannot_be_switched_off():
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", m, n)
    with pytest.raises(TypeError):
        sa.verify((A * B).T, B.T * A.T, audit=False)
    v = sa.verify((A * B).T, B.T * A.T)
    assert v.proved and v.audit.agreed >= 1 and v.audit.line in v.trace


def test_a_proof_the_audit_cannot_evaluate_is_unknown(monkeypatch):
    class Mystery(MatrixExpr):
        shape = (n, n)

    A = sp.MatrixSymbol("A", n, n)
    v = sa.verify(A + Mystery(), Mystery() + A)  # rewriting proves it; the audit knows no Mystery
    assert v.status == "unknown", v.explain()
    assert any("not reported as proved" in t for t in v.trace)


def test_a_cached_verdict_without_an_audit_record_is_not_read_back(monkeypatch, tmp_path):
    monkeypatch.setenv("SYMATTN_CACHE_DIR", str(tmp_path))
    fields = dict(general=True, method="m", scope="all dimensions", trace=("t",), over=((), (), ()))
    entry = {"status": "proved", "general": True, "method": "m", "scope": "all dimensions", "trace": []}
    assert kernel.from_cache(entry, verdict_cache.CachedVerdict, **fields) is None
    entry["audit"] = {"agreed": 0, "skipped": ["no instance"], "line": "audit: skipped: no instance"}
    assert kernel.from_cache(entry, verdict_cache.CachedVerdict, **fields) is None
    entry["audit"] = {"agreed": 4, "skipped": [], "line": "audit: 4 random exact instances agree"}
    v = kernel.from_cache(entry, verdict_cache.CachedVerdict, **fields)
    assert v.proved and v.audit.agreed == 4


# -- strided slices -------------------------------------------------------------------------------

def test_strided_slices_whose_shape_sympy_gets_wrong_are_refused():
    X = sp.MatrixSymbol("X", 1, 3)
    with pytest.raises(ShapeError, match=r"takes 2 columns, but SymPy gives it 1"):
        sa.verify(X[:, ::2], X[:, 0:1])
    Q, K, V = sp.MatrixSymbol("Q", d, 1), sp.MatrixSymbol("K", d, 2 * k + 1), sp.MatrixSymbol("V", d, 2 * k + 1)
    with pytest.raises(ShapeError, match=r"takes k \+ 1 columns"):
        sa.verify(sa.attention(Q, K[:, ::2], V[:, ::2]), sa.attention(Q, K[:, 0:2 * k:2], V[:, 0:2 * k:2]))
    Z = sp.MatrixSymbol("Z", 3, 1)
    with pytest.raises(ShapeError, match="takes 2 rows"):
        sa.verify(sa.softmax(Z[::2, :]), sp.Matrix([[1]]))


def test_a_strided_slice_whose_step_divides_its_length_is_checked():
    X = sp.MatrixSymbol("X", n, 2 * k)
    v = sa.verify(X[:, 0:2 * k:2].T, X.T[0:2 * k:2, :])
    assert v.proved and v.general


@settings(max_examples=150, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 6), data=st.data())
def test_every_slice_symattn_accepts_has_the_shape_of_its_explicit_matrix(rows, cols, data):
    X = sp.MatrixSymbol("X", rows, cols)

    def bounds(size):
        start = data.draw(st.integers(0, size - 1))
        stop = data.draw(st.integers(start + 1, size))
        return start, stop, data.draw(st.integers(1, 4))

    r, c = bounds(rows), bounds(cols)
    s = X[slice(*r), slice(*c)]
    if not isinstance(s, sp.MatrixSlice):
        return  # SymPy returned an entry or the whole matrix
    explicit = np.arange(rows * cols).reshape(rows, cols)[slice(*r), slice(*c)].shape
    assert (int(slice_length(*s.rowslice)), int(slice_length(*s.colslice))) == explicit
    try:
        check_slice(s)
    except ShapeError:
        assert tuple(s.shape) != explicit  # refused exactly where SymPy's shape is wrong
        return
    assert tuple(s.shape) == explicit


# -- undefined values, closed claims, nodes the evaluators did not know ------------------------------

def test_a_side_holding_nan_is_refused_and_nan_equals_nothing():
    M = sp.Matrix([[-sp.oo], [-sp.oo]])
    with pytest.raises(ClaimError, match="undefined value"):
        sa.verify(sa.softmax(M), 2 * sa.softmax(M))
    v = sa.verify(sa.softmax(M), sa.softmax(M))  # 0/0 in every entry: not even equal to itself
    assert v.status == "unknown"
    assert any("every entry masked" in t for t in v.trace) and any("not reported as proved" in t for t in v.trace)
    B = sp.MatrixSymbol("B", 2, 1)
    with pytest.raises(ClaimError, match="undefined value"):
        sa.verify(B * sp.nan, B)
    from symattn.proof.canon import same_by_rewriting

    ok, trace = same_by_rewriting(sa.softmax(M), sa.softmax(M))  # rewriting evaluates it to nan: no proof
    assert not ok and any("undefined value" in t for t in trace)


def test_a_claim_about_free_matrices_is_not_closed():
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    v = sa.verify(sp.det(A * B), sp.det(A) * sp.det(B))
    assert v.proved and v.scope == "all dimensions (n)" and v.audit.agreed >= 1, v.explain()
    C, D = sp.MatrixSymbol("C", 2, 3), sp.MatrixSymbol("D", 3, 2)
    v = sa.verify((C * D).T, D.T * C.T)
    assert v.proved and v.scope == "all values of C, D"
    v = sa.verify(sp.Matrix([[1, 2]]), sp.Matrix([[1, 2]]))
    assert v.proved and v.scope == "as stated (a closed claim)"


def test_the_audit_evaluates_determinants_and_catches_a_false_one():
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    assert run_audit(sp.det(A * B), sp.det(B) * sp.det(A), scalar=True).agreed == 4
    with pytest.raises(SoundnessError):
        run_audit(sp.det(A + B), sp.det(A) + sp.det(B), scalar=True)
    assert not sa.verify(sp.det(A + B), sp.det(A) + sp.det(B)).proved


def test_an_entrywise_power_is_evaluated_not_a_crash():
    X = sp.MatrixSymbol("X", n, n)
    v = sa.verify(Exp(Log(sp.hadamard_product(X, X)) / 2), X, at=[{n: 2}])
    assert v.status == "refuted"  # exp(log(x²)/2) = |x|
    assert sa.verify(sp.HadamardPower(X, 2), sp.hadamard_product(X, X)).proved


def test_a_product_sympy_folds_into_a_power_is_still_proved():
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    assert isinstance((A + B) * (A + B), sp.MatPow)
    assert sa.verify((A + B) * (A + B), A * A + A * B + B * A + B * B).proved
    assert sa.verify((A + B) * (A + B), A * A + 2 * A * B + B * B).status == "refuted"
