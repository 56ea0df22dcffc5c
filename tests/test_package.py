"""The package lives well beside others.

- The wheel installs one top-level package, ``symattn``: the theorem library ships as
  ``symattn.proofs`` and the example derivations as ``symattn/examples``; nothing imports a
  top-level ``proofs``.
- ``symattn.lower`` is the function; the package that implements it is ``symattn.lowering``, and
  no attribute of ``symattn`` hides a subpackage or module of the same name.
- The house has no import circle (see :func:`import_graph` for what counts as an edge), and the
  modules that start a circle most easily import fine as the first import of a fresh process.
- ``symattn check --list-examples`` and ``--example NAME`` list and check the bundled examples,
  also from a wheel installed in a fresh virtual environment, away from the repository.

The wheel is built offline with hatchling's own build hooks (no build isolation); the tests that need
it skip when hatchling is not installed (``pip install hatchling``). Building and installing the
wheel takes a few seconds; the venv test about 10 s more.
"""

from __future__ import annotations

import ast
import importlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tokenize
import venv
import zipfile
from collections import deque
from pathlib import Path

import pytest

import symattn
from symattn import bundled
from symattn.cli import main
from symattn.theorems import load_library

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {"__pycache__", "mutants", "build", "dist", "node_modules"}


# --- the import graph -----------------------------------------------------------------------------


def package_modules(package_dir: Path, name: str) -> dict[str, tuple[Path, bool]]:
    """Every module of a package, links followed (``symattn/proofs`` is a link): dotted name -> (file, is a package)."""
    modules = {}
    for dirpath, dirnames, filenames in os.walk(package_dir, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for file in sorted(f for f in filenames if f.endswith(".py")):
            parts = [name, *(Path(dirpath) / file).relative_to(package_dir).with_suffix("").parts]
            is_package = parts[-1] == "__init__"
            modules[".".join(parts[:-1] if is_package else parts)] = (Path(dirpath) / file, is_package)
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_statements(tree: ast.Module, lazy: bool = False) -> list:
    """The import statements that run when the module is imported: at module level, in the blocks of
    ``if``/``try``/``with``/``for``/``while`` and in class bodies; not those under ``if TYPE_CHECKING:``,
    and not those in function bodies unless ``lazy`` (they run when the function is called)."""
    found = []

    def walk(nodes):
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if lazy:
                    walk(node.body)
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                walk(node.orelse)
            else:
                for child in ("body", "orelse", "finalbody", "handlers", "cases"):
                    block = getattr(node, child, None)
                    if isinstance(block, list):
                        walk(block)

    walk(tree.body)
    return found


def _targets(stmt, module: str, is_package: bool, modules) -> set[str]:
    """The modules whose bodies must have run for ``stmt`` (in ``module``) to succeed."""
    package = module if is_package else module.rpartition(".")[0]
    if isinstance(stmt, ast.Import):
        named = {alias.name for alias in stmt.names}
    else:
        source = stmt.module
        if stmt.level:
            base = package.split(".")[: len(package.split(".")) - stmt.level + 1]
            source = ".".join(base + ([stmt.module] if stmt.module else []))
        # a submodule is imported; any other name is read from the source module's namespace
        named = {f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in stmt.names}
    out = set()
    for target in named:
        parts = target.split(".")
        for k in range(1, len(parts) + 1):
            prefix = ".".join(parts[:k])
            # a package that contains ``module`` is already being imported when ``module`` runs: it is
            # an edge only when the statement names it itself (``import symattn`` inside symattn.*)
            encloses = module == prefix or module.startswith(prefix + ".")
            if prefix in modules and (prefix == target or not encloses):
                out.add(prefix)
    out.discard(module)
    return out


def import_graph(package_dir: Path, name: str, lazy: bool = False) -> dict[str, set[str]]:
    """The import graph of a package: an edge A -> B when importing A runs, or needs the finished, body of B.

    What counts, for an import statement of A that runs when A is imported (see :func:`import_statements`):
    - ``import B`` and ``import B as x``: an edge to B;
    - ``from B import name``: an edge to ``B.name`` when that is a module, else to B (the name is read
      from B's namespace: ``from .. import __version__`` inside ``symattn.*`` is an edge to symattn);
    - the packages on the way (``P`` for ``P.B``, and B for ``B.name``), whose ``__init__`` runs first,
      except the packages that contain A: they are already being imported when A runs, so
      ``from . import sibling`` is no edge to A's own package.
    Only modules of the package are nodes. Imports inside functions are edges only with ``lazy=True``.
    """
    modules = package_modules(package_dir, name)
    graph = {}
    for module, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges = set()
        for stmt in import_statements(tree, lazy):
            edges |= _targets(stmt, module, is_package, modules)
        graph[module] = edges
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def shortest_cycle(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """The shortest cycle from ``start`` back to itself, as a list of modules that begins and ends with it."""
    parent = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph.get(node, ())):
            if child == start:
                path = [node]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if child not in parent:
                parent[child] = node
                queue.append(child)
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One named cycle per strongly connected component of the graph."""
    return [shortest_cycle(graph, component[0]) for component in strongly_connected(graph)]


def _write_package(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_cycle_finder_names_a_module_level_circle_and_leaves_lazy_imports_out(tmp_path):
    pkg = _write_package(tmp_path, {
        "pkg/__init__.py": "from . import core\nfrom .core import run as run\n",
        "pkg/core.py": "from .lib import thing\n\ndef run():\n    from . import later\n",
        "pkg/lib/__init__.py": "",
        "pkg/lib/thing.py": "import pkg\n",
        "pkg/later.py": "from .core import run\n",
        "pkg/typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg\n",
    })
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.core"] == {"pkg.lib", "pkg.lib.thing"}   # lib/__init__ runs before lib.thing
    assert graph["pkg.typed"] == set()
    assert cycles(graph) == [["pkg", "pkg.core", "pkg.lib.thing", "pkg"]]
    assert cycles(import_graph(pkg, "pkg", lazy=True)) == [["pkg", "pkg.core", "pkg.lib.thing", "pkg"]]
    assert "pkg.later" in import_graph(pkg, "pkg", lazy=True)["pkg.core"]

    (pkg / "lib" / "thing.py").write_text("def f():\n    import pkg\n")
    assert cycles(import_graph(pkg, "pkg")) == []
    assert cycles(import_graph(pkg, "pkg", lazy=True)) == [["pkg", "pkg.core", "pkg.lib.thing", "pkg"]]


def test_sibling_import_from_the_enclosing_package_is_not_an_edge_to_it(tmp_path):
    pkg = _write_package(tmp_path, {
        "pkg/__init__.py": "from .a import f as f\n",
        "pkg/a.py": "from . import b\n\ndef f():\n    return b.x\n",
        "pkg/b.py": "x = 1\n",
    })
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.a"] == {"pkg.b"}
    assert cycles(graph) == []


def test_the_package_has_no_import_circle_at_module_level():
    graph = import_graph(ROOT / "symattn", "symattn")
    assert "symattn.proofs.rewrites" in graph and "symattn.numeric.kernels" in graph
    found = cycles(graph)
    assert not found, "import circles (module-level imports):\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_import_comes_back_to_symattn_init_even_inside_functions():
    """The circle symattn -> numeric -> (the theorems the numeric core lowers) -> symattn: counting
    the imports inside functions too, nothing that ``symattn/__init__`` imports leads back to it."""
    graph = import_graph(ROOT / "symattn", "symattn", lazy=True)
    assert "symattn.proofs.rewrites" in graph["symattn.numeric.kernels"]
    cycle = shortest_cycle(graph, "symattn")
    assert cycle is None, "an import circle through symattn/__init__: " + " -> ".join(cycle)


@pytest.mark.parametrize("module", [
    "symattn.numeric",
    "symattn.proofs.rewrites",
    "symattn.theorems",
    "symattn.proof.evaluate",
])
def test_module_imports_first_in_a_fresh_process(module):
    script = f"import {module}, sys; assert '{module}' in sys.modules"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode == 0, f"python -c 'import {module}' failed:\n{out.stderr}"


def _python_files():
    for folder in ("symattn", "proofs", "tests", "benchmarks", "docs", "examples"):
        for dirpath, dirnames, filenames in os.walk(ROOT / folder):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            yield from (Path(dirpath) / f for f in sorted(filenames) if f.endswith(".py"))


def _imports_of_top_level_proofs(tree: ast.Module) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__")):
            names = [node.args[0].value]
        else:
            continue
        if any(n == "proofs" or n.startswith("proofs.") for n in names):
            lines.append(node.lineno)
    return lines


def test_nothing_imports_a_top_level_proofs_package():
    """Anywhere in a module (at module level or inside a function), ``import proofs``, ``from proofs``
    and ``importlib.import_module("proofs...")`` would break in an installed wheel."""
    found = {}
    files = list(_python_files())
    assert ROOT / "proofs" / "rewrites.py" in files and ROOT / "tests" / "test_package.py" in files
    for path in files:
        text = path.read_text(encoding="utf-8")
        lines = _imports_of_top_level_proofs(ast.parse(text)) if "proofs" in text else []
        if lines:
            found[str(path.relative_to(ROOT))] = lines
    assert not found, f"imports of a top-level 'proofs' (file: lines): {found}"
    probe = ast.parse("import proofs.core\ndef f():\n    from proofs import x\nimportlib.import_module('proofs')\n")
    assert _imports_of_top_level_proofs(probe) == [1, 3, 4]


ISSUE_NUMBER = re.compile(r"\bissues?\s*(?:no\.?\s*)?#?\d+\b|(?<![\w&/])#\d+\b", re.I)


def issue_citations(source: str) -> list[int]:
    """Lines whose comment or docstring cites an issue by its number: the word issue, or a hash, then digits."""
    if not ISSUE_NUMBER.search(source):
        return []
    lines = [tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT and ISSUE_NUMBER.search(tok.string)]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc and ISSUE_NUMBER.search(doc):
                lines.append(node.body[0].lineno)
    return sorted(lines)


def test_no_comment_or_docstring_cites_an_issue_number():
    """Comments say what the code does; an issue number says nothing to a reader of the code."""
    probe = '"""Fixes issue 13."""\nx = 1  # see #4\ny = "#5 in a string is data"  # 3 heads, #heads\n'
    assert issue_citations(probe) == [1, 2]
    found = {}
    for path in _python_files():
        lines = issue_citations(path.read_text(encoding="utf-8"))
        if lines:
            found[str(path.relative_to(ROOT))] = lines
    assert not found, f"comments or docstrings citing an issue number (file: lines): {found}"


# --- names -----------------------------------------------------------------------------------------


def test_import_symattn_lower_never_gives_the_function():
    assert callable(symattn.lower) and symattn.lower.__module__ == "symattn.lowering.lower"
    with pytest.raises(ModuleNotFoundError, match="symattn.lower"):
        importlib.import_module("symattn.lower")
    import symattn.lowering as L

    assert hasattr(L, "__path__") and L.lower_theorem is symattn.lower_theorem


def test_no_attribute_of_symattn_hides_a_subpackage_or_module():
    modules = package_modules(ROOT / "symattn", "symattn")
    children = sorted(m for m in modules if m.count(".") == 1 and not m.endswith("__main__"))
    assert "symattn.lowering" in children and "symattn.proofs" in children
    hidden = []
    for child in children:
        sub = importlib.import_module(child)
        if getattr(symattn, child.rsplit(".", 1)[1]) is not sub:
            hidden.append(child)
    assert not hidden, f"attributes of symattn that hide the module of the same name: {hidden}"


# --- bundled examples and `symattn check` ------------------------------------------------------------


def _example_files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if p.is_file() and p.suffix in (".tex", ".latex", ".ltx", ".txt") and "__pycache__" not in p.parts}


def test_bundled_examples_are_the_repository_examples_folder():
    assert bundled.folder().resolve() == (ROOT / "examples").resolve()
    assert set(bundled.examples()) == _example_files(ROOT / "examples")
    assert "seed000_multihead.tex" in bundled.examples()


def test_list_examples_prints_every_example_with_its_first_comment(capsys):
    assert main(["check", "--list-examples"]) == 0
    out = capsys.readouterr().out
    rows = dict(line.split(None, 1) if " " in line else (line, "") for line in out.splitlines())
    assert set(rows) == _example_files(ROOT / "examples")
    first = (ROOT / "examples" / "seed000_multihead.txt").read_text(encoding="utf-8").splitlines()[0]
    assert rows["seed000_multihead.txt"].strip() == first.lstrip("#").strip()


def test_check_example_checks_the_bundled_file_like_the_file_itself(capsys):
    assert main(["check", "--example", "seed000_row_form.tex", "--json"]) == 0
    by_name = json.loads(capsys.readouterr().out)
    assert main(["check", str(ROOT / "examples" / "seed000_row_form.tex"), "--json"]) == 0
    by_path = json.loads(capsys.readouterr().out)
    assert Path(by_name["source"]).resolve() == (ROOT / "examples" / "seed000_row_form.tex").resolve()
    steps = [[(s["lhs"], s["rhs"], s["status"]) for s in r["steps"]] for r in (by_name, by_path)]
    assert steps[0] == steps[1] and steps[0]


def test_check_example_fails_like_the_file_on_a_corrupted_example(capsys):
    assert main(["check", "--example", "seed000_multihead_corrupted.tex"]) == 1
    assert "likely slip" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["vaswani2017", "vaswani2017.tex", "papers/vaswani2017",
                                  "papers/vaswani2017.tex", "examples/papers/vaswani2017.tex"])
def test_check_example_finds_a_file_in_a_subfolder_by_any_name_that_fits_it_alone(name):
    assert bundled.example(name) == bundled.examples()["papers/vaswani2017.tex"]


def test_every_example_name_resolves_to_its_file_or_is_refused_naming_every_file_it_fits():
    names = bundled.examples()
    for path in names:
        base = path.rsplit("/", 1)[-1]
        for key in {path, path.rsplit(".", 1)[0], base, base.rsplit(".", 1)[0]}:
            fits = sorted(n for n in names if key in (n, n.rsplit(".", 1)[0], n.rsplit("/", 1)[-1],
                                                      n.rsplit("/", 1)[-1].rsplit(".", 1)[0]))
            if key in names or len(fits) == 1:
                assert bundled.example(key) == names[key if key in names else fits[0]]
            else:
                with pytest.raises(bundled.InputError, match=f"fits {len(fits)} files: {', '.join(fits)}"):
                    bundled.example(key)


@pytest.mark.parametrize("argv, message", [
    (["check", "--example", "no_such_derivation"], "no bundled example is called 'no_such_derivation'"),
    (["check", "--example", "seed000_multihead"], "fits 2 files: seed000_multihead.tex, seed000_multihead.txt"),
    (["check", "--example", "seed000_row_form"], "fits 2 files: papers/seed000_row_form.tex, seed000_row_form.tex"),
    (["check", "--example", "row_form"], "no bundled example is called 'row_form'"),
    (["check"], "give a FILE, --example NAME or --list-examples"),
    (["check", "x.tex", "--example", "seed000_row_form.tex"], "give a FILE or --example NAME, not both"),
])
def test_check_refuses_a_missing_ambiguous_or_double_source(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


# --- the wheel -------------------------------------------------------------------------------------


def _build(hook: str, out: Path, source: Path = ROOT) -> Path:
    pytest.importorskip("hatchling.build", reason="building needs hatchling (pip install hatchling)")
    script = f"import sys\nfrom hatchling.build import {hook}\nprint({hook}(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", script, str(out)], cwd=source, capture_output=True, text=True)
    assert done.returncode == 0, f"{hook} failed in {source}:\n{done.stderr}"
    return out / done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return _build("build_wheel", tmp_path_factory.mktemp("wheel"))


def _repository_files(folder: str, suffixes) -> set[str]:
    return {p.relative_to(ROOT / folder).as_posix() for p in (ROOT / folder).rglob("*")
            if p.is_file() and p.suffix in suffixes and "__pycache__" not in p.parts}


def test_wheel_installs_only_symattn_at_the_top_level(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/", 1)[0] for n in names}
    assert top == {"symattn", f"symattn-{symattn.__version__}.dist-info"}
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    meta = zipfile.ZipFile(wheel).read(f"symattn-{symattn.__version__}.dist-info/entry_points.txt").decode()
    assert "symattn = symattn.cli:main" in meta


def test_wheel_ships_the_theorem_library_and_the_examples(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    proofs = _repository_files("proofs", (".py",))
    examples = _repository_files("examples", (".tex", ".latex", ".ltx", ".txt"))
    assert "rewrites.py" in proofs and "seed000_multihead.tex" in examples
    assert {f"symattn/proofs/{p}" for p in proofs} <= names
    assert {f"symattn/examples/{e}" for e in examples} <= names


def test_wheel_built_from_the_sdist_has_the_same_files(wheel, tmp_path):
    (tmp_path / "sdist").mkdir()
    sdist = _build("build_sdist", tmp_path / "sdist")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "unpacked", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    (source,) = (tmp_path / "unpacked").iterdir()
    (tmp_path / "again").mkdir()
    again = _build("build_wheel", tmp_path / "again", source)
    assert set(zipfile.ZipFile(again).namelist()) == set(zipfile.ZipFile(wheel).namelist())


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """A fresh venv with the wheel installed (no dependencies). The dependencies come from this
    interpreter's folders, listed in a .pth file: those folders are on the path, but their own .pth
    files (an editable install of symattn) are never read, so only the wheel's symattn can be found."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=False, symlinks=True)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = Path(subprocess.run([str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    before = set(os.listdir(purelib))
    import mpmath
    import numpy
    import sympy
    import threadpoolctl

    folders = dict.fromkeys(str(Path(m.__file__).resolve().parents[0 if m is threadpoolctl else 1])
                            for m in (sympy, mpmath, numpy, threadpoolctl))
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                          "--disable-pip-version-check", "-q", str(wheel)], capture_output=True, text=True)
    if pip.returncode != 0 and "no such option: --python" in pip.stderr:
        pytest.skip("this pip cannot install into another environment (pip >= 22.3 can)")
    assert pip.returncode == 0, pip.stderr
    added = set(os.listdir(purelib)) - before
    (purelib / "_symattn_test_dependencies.pth").write_text("\n".join(folders) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["SYMATTN_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))  # a verdict cache of its own, not the user's
    return {"python": python, "bin": python.parent, "purelib": purelib, "added": added, "env": env,
            "cwd": tmp_path_factory.mktemp("elsewhere")}


def _run_installed(installed, *argv):
    return subprocess.run([str(a) for a in argv], cwd=installed["cwd"], env=installed["env"],
                          capture_output=True, text=True, timeout=300)


def test_installed_wheel_puts_only_symattn_in_site_packages(installed):
    assert installed["added"] == {"symattn", f"symattn-{symattn.__version__}.dist-info"}


def test_installed_wheel_loads_the_whole_theorem_library(installed):
    script = (
        "import json, symattn, symattn.theorems\n"
        "reg = symattn.theorems.load_library()\n"
        "print(json.dumps({'file': symattn.__file__, 'proofs': symattn.proofs.__file__, 'theorems': sorted(reg)}))\n"
    )
    done = _run_installed(installed, installed["python"], "-I", "-c", script)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    site = installed["purelib"].resolve()
    assert Path(got["file"]).resolve().is_relative_to(site) and Path(got["proofs"]).resolve().is_relative_to(site)
    assert got["theorems"] == sorted(load_library())


def test_installed_symattn_check_lists_and_runs_a_bundled_example(installed):
    script = installed["bin"] / ("symattn.exe" if os.name == "nt" else "symattn")
    listed = _run_installed(installed, script, "check", "--list-examples")
    assert listed.returncode == 0, listed.stderr
    assert {line.split()[0] for line in listed.stdout.splitlines()} == _example_files(ROOT / "examples")
    done = _run_installed(installed, script, "check", "--example", "seed000_row_form.tex")
    assert done.returncode == 0, done.stdout + done.stderr
    source = Path(done.stdout.splitlines()[0].strip()).resolve()
    assert source.is_relative_to(installed["purelib"].resolve()) and source.name == "seed000_row_form.tex"
    assert "proved" in done.stdout


def test_the_slow_list_names_tests_of_files_that_exist():
    root = Path(__file__).resolve().parent.parent
    lines = [x.strip() for x in (root / "tests" / "slow_tests.txt").read_text(encoding="utf-8").splitlines()]
    ids = [x for x in lines if x and not x.startswith("#")]
    assert len(ids) > 100
    missing = sorted({i.split("::")[0] for i in ids if not (root / i.split("::")[0]).is_file()})
    assert not missing, f"slow_tests.txt names tests of files that do not exist: {missing}"
