"""Letters a paper uses as numbers without declaring them in a display (it introduces them in prose).

Ramsauer et al. add ``\\frac{1}{2} M^2`` to their energy, M the largest norm of the patterns; Qin et al.
write ``\\cos(\\frac{\\pi i}{2M})`` for positions i, j that "run from 1 to M". Neither M is declared by
a formula. Such a letter is read as a free real number (a free nonzero one where it divides), only where
every use of it in the file is a number's:

- inside the argument of ``\\cos``, ``\\sin`` or ``\\tan`` (or of ``\\exp``, ``\\log`` in a denominator:
  ``\\exp(tA)`` may be a matrix exponential) whose argument is built from numbers alone (numbers, ``\\pi``,
  declared scalars, dimensions, positions, other such letters) and holds something besides the letter;
- or as a term built from numbers and the letter alone (``\\frac{1}{2} M^2``) of a sum whose other terms
  are numbers or 1 x 1 values (an energy ``-\\mathrm{lse}(\\beta, X^T \\xi) + \\frac{1}{2} \\xi^T \\xi``).

A use beside a matrix, under a transpose, as a function or anywhere else leaves the letter an unknown
symbol, as before. The reading is for proving: a step that holds for every value of the letter holds for
the paper's value. A refutation stands only where the difference of the sides does not depend on the
letter (:func:`refutation_stands`); otherwise the step is undecided and the report says to declare it.

A position used as a number (``\\pi i`` beside the row ``Q'_i``) is the position itself; a second
position (``K'_j``, a free row) used as a number is a free whole number j >= 1, independent of the row it
indexes (a proof holds for every j and every row), and counts as such a letter for refutations.
"""

from __future__ import annotations

from dataclasses import fields

import sympy as sp

from . import ast
from .symbols import is_matrix

NUMBER_FUNCTIONS = frozenset({"cos", "sin", "tan", "log", "ln", "exp"})
TRIG = frozenset({"cos", "sin", "tan"})  # of a number; exp(tA) and log(A) may be of a matrix A


def remember(scope, stmts) -> None:
    """Keep the statements, where the uses of an undeclared letter are looked up."""
    scope.__dict__["free_letter_statements"] = list(stmts)


def value(scope, node, k):
    """The value of the undeclared plain letter ``node`` read as a number, or None (an unknown symbol)."""
    if getattr(scope, "dialect", None) != "latex" or not _plain_letter(node):
        return None
    table = scope.__dict__.setdefault("free_letters", {})
    if k in table:
        return table[k]
    if node.base in getattr(scope, "positions", {}):  # \pi i beside Q'_i: the position i itself
        return scope.positions[node.base][0]
    if any(label == node.base for _, _, label in getattr(scope, "free_rows", {}).values()):
        table[k] = sp.Symbol(k, integer=True, positive=True)
        scope.notes.append(f"{k}, the second position, is used as a number: read as a free whole number "
                           f"{k} >= 1, independent of the row it indexes (a proof holds for every {k})")
        return table[k]
    checking = scope.__dict__.setdefault("free_letter_checks", set())
    if k in checking:
        return None
    checking.add(k)
    try:
        uses = [_number_use(scope, path) for path in _uses(scope, k)]
    finally:
        checking.discard(k)
    if not uses or any(u is None for u in uses):
        return None
    divides = any(uses)
    table[k] = sp.Symbol(k, real=True, nonzero=True) if divides else sp.Symbol(k, real=True)
    kind = "a free nonzero real number (the file divides by it)" if divides else "a free real number"
    scope.notes.append(f"{k} is not declared: read as {kind}; a step proved holds for every value of {k}, and a "
                       f"step refuted stands only where the difference of its sides does not depend on {k}")
    return table[k]


def symbols_of(scope, *exprs) -> list:
    """The letters read by :func:`value` as free numbers that the expressions hold."""
    table = getattr(scope, "free_letters", {})
    found = set().union(*(getattr(e, "free_symbols", set()) for e in exprs))
    return sorted((s for s in table.values() if s in found), key=str)


def refutation_stands(scope, L, R, verify) -> tuple[bool, list]:
    """(stands, letters): a refutation of L = R stands when L - R holds no free letter, or is proved the same
    with each letter replaced by an unrelated one (then the counterexample holds for the paper's value)."""
    letters = symbols_of(scope, L, R)
    if not letters:
        return True, []
    other = {s: sp.Dummy(f"{s.name}2", **s.assumptions0) for s in letters}
    try:
        v = verify(L + R.xreplace(other), R + L.xreplace(other))
    except Exception:  # an engine failure: the step stays undecided
        return False, letters
    return v.status == "proved", letters


def undecided(s, letters) -> None:
    """The step ``s``, refuted at one value of letters the file does not declare: neither proved nor refuted."""
    names = ", ".join(str(x) for x in letters)
    s.status = "unknown"
    s.error = (f"the sides differ at the values below, and the difference depends on {names}, which the file does "
               f"not declare (read as a free number): the step may hold for the paper's value of {names}, so it "
               f"is neither proved nor refuted; declare {names} (as in {letters[0]} \\in \\mathbb{{R}}, with "
               "its range or value) to decide it")


def _plain_letter(n) -> bool:
    return (isinstance(n, ast.Name) and n.sub is None and n.sup is None
            and ((len(n.base) == 1 and n.base.isalpha()) or n.base in _GREEK))


_GREEK = frozenset("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta kappa lambda mu nu rho "
                   "sigma tau upsilon phi varphi chi psi omega".split())


def _children(n):
    for f in fields(n):
        if f.name == "pos":
            continue
        yield from _flatten(getattr(n, f.name))


def _flatten(x):
    if isinstance(x, ast.Node):
        yield x
    elif isinstance(x, (tuple, list)):
        for y in x:
            yield from _flatten(y)


def _uses(scope, k):
    """Each use of the letter k in the statements, as its path from the statement down to it."""
    out = []

    def walk(n, path):
        path = path + (n,)
        if isinstance(n, ast.Name):
            if n.base == k and n.sub is None and n.sup is None:
                out.append(path)
            return  # a subscript (W_M) is a label or an index, not a use as a number
        if isinstance(n, ast.Declare):
            return
        for c in _children(n):
            walk(c, path)

    for st in getattr(scope, "free_letter_statements", ()):
        walk(st, ())
    return out


def _number_use(scope, path):
    """None where this use is not a number's; else True where the letter divides, False where not."""
    name = path[-1]
    k = len(path) - 1
    while k > 0 and _numeric(scope, path[k - 1]):
        k -= 1
    if k == len(path) - 1 and k > 0 and isinstance(path[k - 1], ast.Call) and path[k - 1].target is name:
        return None  # M(x_q, S): a function
    top = path[k]
    divides = any(isinstance(a, ast.Div) and _within(a.den, name) for a in path[k:])
    for j in range(k, len(path) - 1):
        a = path[j]
        if (isinstance(a, ast.Call) and a.target.base in NUMBER_FUNCTIONS and a.target.sub is None
                and any(_within(x, name) for x in a.args)
                and any(_other_number(scope, x, name) for x in a.args)
                and (a.target.base in TRIG or any(isinstance(b, ast.Div) and _within(b.den, name)
                                                  for x in a.args for b in ast.nodes_of(x)))):
            return divides
    if k > 0 and isinstance(path[k - 1], ast.Add) and _letter_alone(top, name.base):
        siblings = [t for _, t in path[k - 1].terms if t is not top]
        if siblings and all(_one_by_one(scope, t) for t in siblings):
            return divides
    return None


def _within(tree, node) -> bool:
    return any(x is node for x in ast.nodes_of(tree))


def _numeric(scope, n) -> bool:
    """True when the subtree n is built from numbers only (no matrix, vector, transpose or map)."""
    for x in ast.nodes_of(n):
        if isinstance(x, (ast.Num, ast.Mul, ast.Div, ast.Power, ast.Group, ast.Add, ast.Sqrt, ast.Index,
                          ast.Arith, ast.Round)):
            continue
        if isinstance(x, ast.Call) and x.target.base in NUMBER_FUNCTIONS and x.target.sub is None:
            continue
        if isinstance(x, ast.Name) and _number_name(scope, x):
            continue
        if isinstance(x, ast.Name) and any(x is c.target for c in ast.nodes_of(n) if isinstance(c, ast.Call)):
            continue  # the cos of \cos(...)
        if isinstance(x, ast.Name) and any(x is s.sub for s in ast.nodes_of(n) if isinstance(s, ast.Name)):
            continue  # the k of d_k
        return False
    return True


def _number_name(scope, x) -> bool:
    from .symbols import key_of

    k = key_of(x)
    if x.base == "pi" or k in scope.scalars or k in scope.dims or k in scope.counts:
        return True
    if x.sub is None and x.sup is None and _plain_letter(x):
        return not any(k in t for t in (scope.matrices, scope.defs, scope.families, scope.partitions,
                                        scope.functions))
    return False


def _other_number(scope, arg, name) -> bool:
    """True when the argument holds a number or a name besides the letter (\\frac{\\pi i}{2M}, not M alone)."""
    return any(isinstance(x, ast.Num) or (isinstance(x, ast.Name) and x is not name and x.base != name.base)
               for x in ast.nodes_of(arg))


def _letter_alone(n, letter) -> bool:
    """A term built from numbers and the letter alone: \\frac{1}{2} M^2, 2M, M."""
    for x in ast.nodes_of(n):
        if isinstance(x, (ast.Num, ast.Mul, ast.Div, ast.Group)):
            continue
        if isinstance(x, ast.Power) and isinstance(x.base, ast.Name) and x.base.base == letter:
            continue
        if isinstance(x, ast.Name) and x.base == letter and x.sub is None and x.sup is None:
            continue
        return False
    return True


def _one_by_one(scope, term) -> bool:
    """True when the term elaborates to a number or a 1 x 1 value."""
    from ..errors import DerivationError

    try:
        v = scope.expr(term, {})
    except (DerivationError, TypeError, ValueError):
        return False
    return not is_matrix(v) or (v.rows == 1 and v.cols == 1)
