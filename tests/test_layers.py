"""The package's import graph, built from its source (imports inside functions included).

Layers point one way: the proof engine never imports teach (its traces print through the
ground-floor :mod:`symattn.printing`; notebook displays are attached from teach through
:mod:`symattn.displays`), the shape checks never import the nodes they check, and the NumPy core
never imports its Dask wrapper (:mod:`symattn.numeric.front` dispatches once). No circle is left
among the package's imports; the theorem library's ``importlib`` of ``proofs/`` is not an import
this graph sees.
"""

import ast
import pathlib

import symattn

PACKAGE = pathlib.Path(symattn.__file__).resolve().parent
#: circles allowed to remain, each the set of modules of one strongly connected component (none)
KNOWN_CIRCLES: list[set] = []


def _module(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def import_graph() -> dict:
    """module -> the package modules it imports anywhere in its source."""
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        out = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name and not name.startswith(t + "."):  # a package's own __init__ is not an edge
                    out.add(t)
        graph[name] = out
    return graph


def circles(graph) -> list[set]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_proof_engine_never_imports_teach():
    graph = import_graph()
    offenders = {m: sorted(t for t in ts if t.startswith("symattn.teach")) for m, ts in graph.items()
                 if m.startswith("symattn.proof") and any(t.startswith("symattn.teach") for t in ts)}
    assert offenders == {}


def test_the_numeric_core_never_imports_its_dask_wrapper():
    graph = import_graph()
    core = [m for m in graph if m.startswith("symattn.numeric.") and m not in ("symattn.numeric.front",
                                                                           "symattn.numeric.dask_arrays")]
    assert [m for m in core if "symattn.numeric.dask_arrays" in graph[m]] == []


def test_the_shape_checks_do_not_import_the_nodes():
    assert "symattn.defs.softmax" not in import_graph()["symattn.defs.shapes"]


def test_no_circle_beyond_the_known_ones():
    found = circles(import_graph())
    unknown = [sorted(c) for c in found if not any(c <= k for k in KNOWN_CIRCLES)]
    assert unknown == [], unknown


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
