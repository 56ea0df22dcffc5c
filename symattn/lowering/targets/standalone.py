"""The helpers a generated module carries: exactly the runtime definitions its code uses.

A standalone module (``symattn codegen``) must run without symattn, so it carries the runtime helpers
its kernel calls. They are copied from the one source of the runtimes (:mod:`.common` and the
target's runtime), never written twice: :func:`helpers` reads the runtime modules' sources, takes the
top-level definitions that the module's code names, then those that these name, and so on, and
writes them with the imports they need, each name defined once. A name the target's runtime defines
hides the same name of a more general runtime (torch's ``softmax`` hides the array-API one), and
the error classes imported from symattn become local classes.
"""

from __future__ import annotations

import ast
import inspect

from ...errors import LoweringError

#: the local error classes a module defines in place of symattn's
_ERRORS = {
    "ShapeError": '''class ShapeError(ValueError):
    """Arrays whose shapes do not fit the expression."""''',
    "InputError": '''class InputError(ValueError):
    """An input that makes no sense (integer or complex dtype, too few axes)."""''',
}


def _loaded_names(node) -> set:
    """The names a definition reads from its module's globals: the names it loads, less a function's
    own parameters and the names it assigns (its locals)."""
    loaded = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = node.args
        params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
        params |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
        stored = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for n in ast.walk(node):
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                stored |= {(al.asname or al.name).split(".")[0] for al in n.names}
        loaded -= params | stored
    return loaded


class _Module:
    """The top-level statements of one runtime module: definitions by name, imports by the name they
    bind (relative imports, which name other runtimes, left out), each with its source."""

    def __init__(self, module):
        self.name = module.__name__
        source = inspect.getsource(module)
        lines = source.splitlines()
        tree = ast.parse(source)
        self.defs: dict = {}     # name -> (position, source, node)
        self.imports: dict = {}  # name -> the import line
        self.errors: set = set()
        for k, stmt in enumerate(tree.body):
            if isinstance(stmt, ast.Import):
                for al in stmt.names:
                    self.imports[al.asname or al.name.split(".")[0]] = (None, al.name, al.asname)
            elif isinstance(stmt, ast.ImportFrom):
                if stmt.module == "errors" and stmt.level > 0:
                    self.errors |= {al.name for al in stmt.names}
                elif stmt.level == 0:
                    for al in stmt.names:
                        self.imports[al.asname or al.name] = (stmt.module, al.name, al.asname)
            elif isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)):
                start = stmt.lineno - 1 - len(getattr(stmt, "decorator_list", ()))
                while start > 0 and lines[start - 1].startswith("#"):  # the comment that documents it
                    start -= 1
                text = "\n".join(lines[start:stmt.end_lineno])
                for name in self._bound(stmt):
                    self.defs[name] = (k, text, stmt)

    @staticmethod
    def _bound(stmt) -> list:
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            return [stmt.name]
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


_PARSED: dict = {}


def _parsed(module) -> _Module:
    if module.__name__ not in _PARSED:
        _PARSED[module.__name__] = _Module(module)
    return _PARSED[module.__name__]


def helpers(code: str, modules, imports: dict | None = None) -> str:
    """The source of the helpers that ``code`` (a module's own code: its kernel and self-test) uses,
    from the runtime ``modules``, the most specific first: the top-level definitions it names, and
    those that they name, in the order of the modules' sources (the general runtime first), after
    the imports and the local error classes they need. ``imports``: more names ``code`` may read
    and the import of each as (module or None, name, alias or None): ``{"np": (None, "numpy", "np")}``."""
    parsed = [_parsed(m) for m in modules]
    owner: dict = {}
    for k, mod in enumerate(parsed):
        for name in mod.defs:
            owner.setdefault(name, k)
    provided = dict(imports or {})
    for mod in reversed(parsed):
        provided.update(mod.imports)
    errors = set().union(*(m.errors for m in parsed))
    own = ast.parse(code).body
    defined = {name for stmt in own if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign))
               for name in _Module._bound(stmt)}
    wanted = sorted(set().union(*(_loaded_names(stmt) for stmt in own)) - defined)
    chosen, used_imports, used_errors = set(), set(), set()
    while wanted:
        name = wanted.pop()
        if name in owner:
            key = (owner[name], parsed[owner[name]].defs[name][0])
            if key not in chosen:
                chosen.add(key)
                wanted.extend(_loaded_names(parsed[key[0]].defs[name][2]))
        elif name in errors:
            used_errors.add(name)
        elif name in provided:
            used_imports.add(provided[name])
    texts = {}
    for k, mod in enumerate(parsed):
        for _, (position, text, _) in mod.defs.items():
            if (k, position) in chosen:
                texts[(-k, position)] = text
    body = [texts[key] for key in sorted(texts)]
    sections = [_import_lines([i for i in used_imports if (i[0] or i[1]).split(".")[0] in _STDLIB]),
                _import_lines([i for i in used_imports if (i[0] or i[1]).split(".")[0] not in _STDLIB])]
    head = "\n\n".join(x for x in sections if x)
    parts = ([head] if head else []) + [_ERRORS[e] for e in sorted(used_errors)] + body
    out = "\n\n\n".join(p for p in parts if p)
    if "from .." in out:
        raise LoweringError("codegen: a runtime helper imports from symattn; a standalone module cannot")
    return out


def _import_lines(imports) -> str:
    """Import statements in the order isort gives them: ``import x`` first, then ``from x import a, b``
    (one line per module), each group sorted."""
    plain = sorted(f"import {name}" + (f" as {alias}" if alias else "") for module, name, alias in imports
                   if module is None)
    by_module: dict = {}
    for module, name, alias in imports:
        if module is not None:
            by_module.setdefault(module, []).append(name + (f" as {alias}" if alias else ""))
    froms = [f"from {m} import {', '.join(sorted(names))}" for m, names in sorted(by_module.items())]
    return "\n".join(plain + froms)


_STDLIB = {"math", "os", "threading", "concurrent", "itertools", "functools", "operator"}
