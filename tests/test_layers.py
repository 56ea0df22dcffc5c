"""Layers that point one way, on the import graph of :mod:`test_package` with the imports inside
functions counted (``lazy=True``).

The proof engine never imports teach (its traces print through the ground-floor
:mod:`symattn.printing`; notebook displays are attached from teach through :mod:`symattn.displays`),
the shape checks never import the nodes they check, the NumPy core never imports its Dask wrapper
(:mod:`symattn.numeric.front` dispatches once), and ``proofs/`` imports the statements, not the
driver that loads it. With every import counted there is no circle at all.
"""

from test_package import ROOT, cycles, import_graph

GRAPH = import_graph(ROOT / "symattn", "symattn", lazy=True)


def imports_of(prefix: str, target: str) -> dict:
    """module -> the modules under ``target`` it imports, for the modules under ``prefix``."""
    return {m: sorted(t for t in ts if t.startswith(target)) for m, ts in GRAPH.items()
            if m.startswith(prefix) and any(t.startswith(target) for t in ts)}


def test_no_circle_counting_imports_inside_functions():
    found = cycles(GRAPH)
    assert not found, "\n".join(" -> ".join(c) for c in found)


def test_the_proof_engine_never_imports_teach():
    assert imports_of("symattn.proof", "symattn.teach") == {}
    assert imports_of("symattn.derivation", "symattn.teach") == {}
    assert imports_of("symattn.theorems", "symattn.teach") == {}


def test_the_shape_checks_do_not_import_the_nodes():
    assert "symattn.defs.softmax" not in GRAPH["symattn.defs.shapes"]


def test_the_numeric_core_never_imports_its_dask_wrapper():
    core = {m: ts for m, ts in imports_of("symattn.numeric.", "symattn.numeric.dask_arrays").items()
            if m not in ("symattn.numeric.front", "symattn.numeric")}
    assert core == {}


def test_the_theorem_library_imports_the_statements_not_the_driver():
    assert imports_of("symattn.proofs", "symattn.theorems") == {}
    assert "symattn.statements" in GRAPH["symattn.proofs.core"]


def test_no_module_is_longer_than_800_lines():
    """Small modules with one job: a module past 800 lines is split before it grows further."""
    long = {str(p.relative_to(ROOT)): n for p in sorted((ROOT / "symattn").rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 800}
    long.update({str(p.relative_to(ROOT)): n for p in sorted((ROOT / "proofs").glob("*.py"))
                 if (n := len(p.read_text(encoding="utf-8").splitlines())) > 800})
    assert not long, f"modules over 800 lines: {long}"


def test_test_files_have_distinct_names():
    """pytest imports test modules by their file name (rootdir-relative import mode): two files of one
    name in different folders stop the collection."""
    tests = ROOT / "tests"
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
