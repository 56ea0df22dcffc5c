r"""Sequences over positions: members by index arithmetic, and recurrences unrolled at a given position.

Papers declare a sequence by its generic member, ``q_i \in \mathbb{R}^{d}`` or ``u_k \in \mathbb{R}``,
and then write other members by index arithmetic: ``q_{i-1}``, ``q_{i-s}`` inside a sum over s,
``u_0``, ``u_2``. Each member is a value of its own, of the declared shape: members whose indices
differ (``i - 1`` and ``i + 1``, or ``0`` and ``k``) are independent, so a step proved about them
holds for every value of the sequence, and a counterexample is one at a position where the indices
differ. A subscript that comes to a number names a declared name when there is one (``w_s`` at
``s = 0`` is the declared ``w_0``). A member at another free letter, ``x_j`` beside the declared ``x_i``
(Shaw et al. 2018), is the member at j, independent of x_i, where both letters are indices of the file
(``W_v`` beside ``W_q`` holds labels, and is read as written).

A recurrence defines a sequence from its previous member, ``x_k = \bar{A} x_{k-1} + \bar{B} u_k``,
with its initial condition stated (``x_{-1} = 0``); a definition at a position letter that uses such
a sequence (``y_k = \bar{C} x_k``) is a sequence too. Both are unrolled at a given position (``y_2``
down to ``x_{-1}``). At a symbolic position k a recurrence is not unrolled: a claim about every k
needs an induction, which is refused with a message rather than checked under another reading.

>>> letter("t") + 1
t + 1
"""

from __future__ import annotations

import sympy as sp

from ..errors import DerivationError
from . import ast, scalar_functions, sequence_rows
from .recurrence_step import one_step, previous_members
from .set_softmax import read_member_of
from .symbols import family_key, is_matrix, key_of
from .vectors import row_vector

MAX_UNROLL = 16  # positions a recurrence is unrolled through, down to its initial condition


def letter(name: str) -> sp.Symbol:
    """A free position letter (i, t, k): an integer, any value."""
    return sp.Symbol(name, integer=True)


def _template(node, sub):
    return ast.Name(node.pos, node.base, sub, node.sup, node.font)


def generic_letters(scope, node) -> dict:
    """The letters c of the declared generic members x_c of the sequence of ``node`` (q_i of q_{i-1}), each with
    the table that holds it."""
    out = {}
    for table in (scope.matrices, scope.scalars):
        for k in table:
            head, sep, rest = k.partition("_")
            sup = None
            if "^" in rest:
                rest, sup = rest.split("^", 1)
            if sep and head == node.base and sup == node.sup and len(rest) == 1 and rest.isalpha():
                out[rest] = table
    return out


def recurrences(scope) -> dict:
    """The recurrences of the document: family key -> (position letter, Definition)."""
    return scope.__dict__.setdefault("recurrences", {})


def recurrence_of(scope, node):
    return recurrences(scope).get(family_key(node)) if isinstance(node, ast.Name) else None


def is_member_name(scope, n) -> bool:
    """``x_2``, ``x_{k-1}`` of a recurrent sequence, ``v_{t-1}`` of a declared v_t: a member, which a step is about
    (never a new definition)."""
    if not (isinstance(n, ast.Name) and n.sub is not None):
        return False
    if recurrence_of(scope, n) is not None:
        return True
    if isinstance(n.sub, (ast.Index, ast.Arith, ast.Num)) and bool(generic_letters(scope, n)):
        return True
    return other_letter(scope, n)


def other_letter(scope, n) -> bool:
    """``x_j`` of a sequence declared by its generic member ``x_i``: the member at another free letter (a letter
    that is not a count, a dimension or a declared name), never a name of its own. ``x_j`` with ``x_j`` itself
    declared, or a letter of more than one character (``x_{ij}``), is read as written."""
    sub = n.sub
    if not (isinstance(n, ast.Name) and isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None
            and len(sub.base) == 1 and sub.base.isalpha() and sub.base.islower()):
        return False
    generic = generic_letters(scope, n)
    if not generic or sub.base in generic or sub.base in scope.counts or sub.base in scope.dims:
        return False
    letters = scope.__dict__.get("index_letters", set())
    lengths = scope.__dict__.get("sequence_lengths", set())
    if sub.base not in letters or not (any(c in letters for c in generic) or family_key(n) in lengths):
        return False  # W_v beside a declared W_q: labels, not positions
    if any(sub.base in table for table in (scope.matrices, scope.scalars, scope.defs)):
        return False
    k = key_of(n)
    return not (k in scope.matrices or k in scope.scalars or k in scope.defs)


def bound_in_run(scope, node, L):
    """Refuse ``a^V_{ij}``, a name the file declares as one value, inside a sum over j: the subscript ij holds
    the letter the sum binds, so the paper means one value for every j, and reading the one declared value
    at every term would be another claim."""
    sub = node.sub
    if not (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and len(sub.base) > 1
            and sub.base.isalpha() and sub.base.islower()):
        return
    k = key_of(node)
    if not (k in scope.matrices or k in scope.scalars):
        return
    for c in sub.base:
        v = L.get(c)
        if v is not None and not is_matrix(v) and isinstance(v, sp.Expr):
            scope.fail(node, f"{node.text()} is declared as one value, and here a sum binds the letter {c} of its "
                       f"subscript {sub.base}: a value for every {c} is not read from a declaration of one",
                       f"the terms of the sum written out, or the sum over a sequence declared by its generic "
                       f"member with the one index {c}")


def note_index_letters(scope, stmts):
    """Record the letters the file uses as indices: the index of a sum, a part of a subscript ``{i,j}``, a
    letter of a subscript ``ij`` of two letters. A member ``x_j`` beside a declared ``x_i`` is read as a
    member only when both letters are such indices, so that ``W_v`` beside ``W_q`` (labels) is not."""
    found = set()
    for st in stmts:
        for n in ast.nodes_of(st):
            if isinstance(n, ast.Sum) and len(n.index) == 1:
                found.add(n.index)
            elif isinstance(n, ast.Labels):
                found |= {p.base for p in n.parts if isinstance(p, ast.Name) and p.sub is None and p.sup is None
                          and len(p.base) == 1 and p.base.islower()}
            elif isinstance(n, ast.Name) and isinstance(n.sub, ast.Name) and n.sub.sub is None \
                    and n.sub.sup is None and len(n.sub.base) == 2 and n.sub.base.isalpha() \
                    and n.sub.base.islower():
                found |= set(n.sub.base)
    scope.index_letters = found


def member_of_set(parser, node):
    """``\\mathrm{softmax}_{x_j \\in X}`` (Kobayashi et al. 2020): the subscript ``x_j \\in X``, a range over the
    members of a set, read where it is used (:mod:`.set_softmax`); ``node`` itself otherwise."""
    if parser.dialect == "latex" and parser.at("cmd", "in"):
        return read_member_of(parser, node)
    return node


def sequence_length(parser, plain, first, last, p):
    """``x_1, \\ldots, x_n \\in S`` with a small last letter (Kobayashi et al. 2020): the sequence of n members of
    S, n its length (a dimension), read as the members x_i, x_j of a sequence declared by its generic member;
    None where the sequence is not so written (the parser's message applies)."""
    sub = last.sub if isinstance(last, ast.Name) else None
    if not (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and len(sub.base) == 1
            and sub.base.islower() and isinstance(first.sub, ast.Num) and first.sub.value == 1
            and (last.base, last.sup) == (first.base, first.sup) and all(n.sub is None for n in plain)
            and parser.at("cmd", "in")):
        return None
    parser.next()
    space = parser.space()
    return [ast.Declare(p, tuple(plain), space)] * bool(plain) + [ast.Declare(p, (last,), space, None, sub)]


def declare_length(scope, st):
    """The length n of ``x_1, \\ldots, x_n \\in S``: a dimension, and x a sequence whose members x_i, x_j are
    read at the file's index letters."""
    scope.dim(st.upper)
    for n in st.names:
        scope.__dict__.setdefault("sequence_lengths", set()).add(family_key(n))
    scope.notes.append(f"{st.names[0].text()}: the last of a sequence of {st.upper.text()} members, "
                       f"{st.upper.text()} its length (a dimension)")


def length_of(scope, node, L):
    """``\\sum_{j=1}^{n} ... x_j ...`` with n named nowhere else and x_i declared (Shaw et al. 2018): n is the
    length of the sequence x, a dimension; None where the sum is not so (the sum's own message applies)."""
    up = node.upper
    if not (node.lower is None and isinstance(up, ast.Name) and up.sub is None and up.sup is None
            and len(up.base) == 1 and up.base.islower() and up.base not in L and up.base not in scope.counts
            and up.base != node.index):
        return None
    if any(up.base in table for table in (scope.matrices, scope.scalars, scope.defs, scope.dims)):
        return None
    if any(c == up.base for c, _ in recurrences(scope).values()):
        return None  # the position letter of a recurrence: a position, never a length (position_induction)
    over = [n for n in ast.nodes_of(node.body) if isinstance(n, ast.Name) and isinstance(n.sub, ast.Name)
            and n.sub.base == node.index and n.sub.sub is None and generic_letters(scope, n)]
    if not over:
        return None
    from .symbols import dimension_symbol

    scope.dims[up.base] = dimension_symbol(up.base)
    scope.notes.append(f"{up.base}, the upper limit of a sum over the members {over[0].text()} of a declared "
                       f"sequence, is the length of the sequence: a dimension")
    return scope.dims[up.base]


def index_value(scope, sub, L, node, strict=True):
    """The value of a subscript as an integer expression of free position letters, or None when it is not
    index arithmetic. A letter bound by a sum or a recurrence takes its value; a letter bound to a sum's
    placeholder (a sum of symbolically many terms) is refused when ``strict``, else gives None."""
    if isinstance(sub, ast.Num):
        return sp.Integer(sub.value)
    if isinstance(sub, (ast.Arith, ast.Group)):
        return index_value(scope, sub.body, L, node, strict)
    if isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and len(sub.base) == 1 \
            and sub.base.isalpha():
        if sub.base in L:
            v = L[sub.base]
            if is_matrix(v):
                return None
            v = sp.sympify(scalar_functions.value_of(v))  # a_t(s) called at the sum's s (Luong et al.)
            if not all(s.is_Symbol and s == letter(s.name) for s in v.free_symbols):
                if not strict:
                    return None
                scope.fail(node, f"{node.text()}, a member of the sequence {node.base} declared by its generic member, "
                           f"inside a sum over {sub.base} whose number of terms is not a given number is not read",
                           "the sum with its number of terms a number (\\sum_{s=0}^{2}), or written out")
            return v
        if sub.base in scope.counts or sub.base in scope.dims:
            return None
        return letter(sub.base)
    if isinstance(sub, ast.Index):
        a, b = index_value(scope, sub.left, L, node, strict), index_value(scope, sub.right, L, node, strict)
        if a is None or b is None:
            return None
        return a + b if sub.op == "+" else a - b
    if isinstance(sub, ast.Add):
        out = sp.Integer(0)
        for sign, t in sub.terms:
            v = index_value(scope, t, L, node, strict)
            if v is None:
                return None
            out += sign * v
        return out
    return None


def member(scope, node, L):
    """The value of ``node`` as a member of a sequence (declared by its generic member, or a recurrence), or
    None when it is not one (the ordinary reading of the name applies)."""
    if (row := sequence_rows.member_row(scope, node, L, row_vector)) is not None:
        return row  # x_j of a sequence summed over symbolically many members (sequence_rows)
    sub = node.sub
    if sub is None or not isinstance(sub, (ast.Name, ast.Num, ast.Index, ast.Arith)):
        return None
    fk = family_key(node)
    if fk in scope.families or fk in scope.indexed or fk in scope.member_aliases:
        return None
    rec = recurrence_of(scope, node)
    generic = generic_letters(scope, node)
    bound = any(isinstance(n, ast.Name) and n.base in L for n in ast.nodes_of(sub))
    bound_in_run(scope, node, L)
    if rec is None and not generic and not bound:
        return None
    if rec is None and not bound and isinstance(sub, ast.Name) and not other_letter(scope, node):
        return None  # q_i itself, or a name of its own: the ordinary reading
    k = key_of(node)
    if not bound and (k in scope.matrices or k in scope.scalars or k in scope.defs):
        return None  # a name the file declares or defines as written (w_0, x_{-1} = 0)
    v = index_value(scope, sub, L, node, strict=bool(rec or generic))
    if v is None:
        return None
    v = sp.expand(v)
    if v.is_Integer:
        named = scope_value(scope, _template(node, ast.Num(node.pos, int(v))), rec)
        if named is not None:
            return named
    for c, table in generic.items():
        if v == letter(c):
            return table[key_of(_template(node, ast.Name(node.pos, c)))] if table is scope.matrices \
                else scope.scalar(key_of(_template(node, ast.Name(node.pos, c))))
    if rec is not None:
        return unroll(scope, node, rec, v)
    if not generic:
        return None  # w_s at s = 0 with no w_0: the ordinary reading says what is unknown
    c, table = next(iter(generic.items()))
    generic_value = table[key_of(_template(node, ast.Name(node.pos, c)))]
    if not bound and isinstance(sub, ast.Name) and family_key(node) in scope.__dict__.get("sequence_lengths", ()):
        note = (f"{node.text()} is the member at {sub.base} of the sequence {node.base}_1, ..., "
                f"{_template(node, ast.Name(node.pos, c)).text()}: members at different letters are independent "
                "values, so a counterexample is one at different positions")
    elif not bound and isinstance(sub, ast.Name):
        note = (f"{node.text()} is the member at {sub.base} of the sequence declared by "
                f"{_template(node, ast.Name(node.pos, c)).text()}: members at different letters are independent "
                f"values, so a counterexample is one at positions {c} \u2260 {sub.base}")
    if not bound and isinstance(sub, ast.Name):
        if note not in scope.notes:
            scope.notes.append(note)
    idx = sp.sstr(v).replace(" ", "")
    name = f"{node.base}_{idx if v.is_Atom else '{' + idx + '}'}" + (f"^{node.sup}" if node.sup else "")
    if table is scope.matrices:
        return sp.MatrixSymbol(name, *generic_value.shape)
    return sp.Symbol(name, **({"positive": True} if generic_value.is_positive else {"real": True}))


def scope_value(scope, named, rec):
    """``w_0`` (the subscript came to a number): the declared or defined name, or None."""
    k = key_of(named)
    if k in scope.matrices:
        return scope.matrices[k]
    if k in scope.scalars:
        return scope.scalar(k)
    if k in scope.defs and not scope.defs[k].params:
        value = scope.expand(named, scope.defs[k], {})
        if rec is not None and not is_matrix(value):
            if value != 0:
                scope.fail(named, f"the initial condition {named.text()} = {sp.sstr(value)} is a scalar, and the "
                           "sequence is of matrices", f"{named.text()} = 0, or a matrix")
            return sp.ZeroMatrix(*sequence_shape(scope, named, rec))
        return value
    return None


def initial_index(scope, node):
    """The smallest position with an initial condition (x_{-1} = 0), or None."""
    found = [int(k.rsplit("_", 1)[1]) for k in scope.defs
             if k.rsplit("_", 1)[0] == node.base and k.rsplit("_", 1)[1].lstrip("-").isdigit()]
    return min(found) if found else None


def unroll(scope, node, rec, v):
    """The recurrent member ``node`` at position ``v``: its definition at v, down to the initial condition."""
    c, d = rec
    what = f"{d.target.text()} = {d.body.text()}"
    if not v.is_Integer and (step := one_step(scope, node, rec, v, letter(c))) is not None:
        return step
    if not v.is_Integer:
        scope.fail(node, f"{node.text()} is at the symbolic position {sp.sstr(v)} of the recurrence {what}: a "
                   "recurrence is unrolled only at a given position (such as 2); a step about every position "
                   "needs an induction on it, which is not read",
                   "the step at a given position, or the sequence declared with its shape and the recurrence "
                   "as a step")
    first = initial_index(scope, node)
    if first is None and _mentions_previous(d, c):
        scope.fail(node, f"the recurrence {what} has no initial condition",
                   f"the first value stated, as in {node.base}_0 = 0")
    if first is not None and (v < first or v - first > MAX_UNROLL):
        scope.fail(node, f"{node.text()} is at position {v}, {'before' if v < first else 'too far past'} the "
                   f"initial condition of {node.base} (at {first}; at most {MAX_UNROLL} positions are unrolled)",
                   "a position from the initial condition on")
    unrolling = scope.__dict__.setdefault("unrolling", set())
    if (d.target.base, v) in unrolling:
        scope.fail(node, f"the recurrence {what} refers to {node.text()} at the position it defines",
                   "the member at an earlier position, as in x_{k-1}")
    unrolling.add((d.target.base, v))
    try:
        return scope.expr(d.body, {c: v})  # each position once: the recursion ends at the initial condition
    finally:
        unrolling.discard((d.target.base, v))


def _mentions_previous(d, c):
    return any(isinstance(n, ast.Name) and n.base == d.target.base and n.sup == d.target.sup
               and n.sub is not None and not (isinstance(n.sub, ast.Name) and n.sub.base == c)
               for n in ast.nodes_of(d.body))


def sequence_shape(scope, node, rec):
    """The shape of a recurrent sequence: that of a term of its definition free of the sequence itself
    (\\bar{B} u_k of x_k = \\bar{A} x_{k-1} + \\bar{B} u_k), at a symbolic position."""
    c, d = rec
    body = d.body.body if isinstance(d.body, ast.Group) else d.body
    terms = [t for _, t in body.terms] if isinstance(body, ast.Add) else [body]
    for t in terms:
        if any(isinstance(n, ast.Name) and n.base == d.target.base and n.sup == d.target.sup
               for n in ast.nodes_of(t)):
            continue
        try:
            value = scope.expr(t, {c: letter(c)})
        except DerivationError:
            continue
        if is_matrix(value):
            return value.shape
    scope.fail(node, f"the shape of the sequence {d.target.text()} is not given by a term of its recurrence "
               "free of it", f"{d.target.text()} declared with its shape")


def define(scope, st) -> bool:
    """Register ``x_k = e`` as a recurrence when e uses x at another position, or uses a recurrent sequence at
    the letter k (``y_k = \\bar{C} x_k``); True when it is one. Its body is read when it is unrolled."""
    t = st.target
    if st.params or not (isinstance(t, ast.Name) and isinstance(t.sub, ast.Name) and t.sub.sub is None
                         and len(t.sub.base) == 1 and t.sub.base.isalpha()):
        return False
    c = t.sub.base
    if c in scope.counts or c in scope.dims:
        return False
    names = [n for n in ast.nodes_of(st.body) if isinstance(n, ast.Name) and n.sub is not None]
    own = any(n.base == t.base and n.sup == t.sup and not (isinstance(n.sub, ast.Name) and n.sub.base == c)
              for n in names)
    uses = any(recurrence_of(scope, n) is not None for n in names)
    upto = any(isinstance(n, ast.Sum) and n.upper is not None and any(  # wkv_t = \sum_{i=1}^{t-1} ...: read at t
        isinstance(m, ast.Name) and m.base == c for m in ast.nodes_of(n.upper)) for n in ast.nodes_of(st.body))
    if not (own or uses or upto):
        return False
    from .symbols import Definition

    recurrences(scope)[family_key(t)] = (c, Definition(t, (), st.body, None))
    scope.notes.append(f"{t.text()} = {st.body.text()} is read as a sequence over the position {c}, unrolled at a "
                       "given position down to its initial condition")
    return True


def is_initial_condition(scope, st) -> bool:
    """``S_0 = 0`` written after the recurrence ``S_t = S_{t-1} + \\phi(k_t) \\otimes v_t`` (as RFA writes it):
    the zero value at a given position of a recurrence that has no initial condition yet is its initial
    condition, read as a definition (before the recurrence it is one already)."""
    if not (isinstance(st, ast.Chain) and len(st.links) == 1 and st.links[0][0] == "="):
        return False
    n, body = st.first, st.links[0][2]
    body = body.body if isinstance(body, ast.Group) else body
    if not (isinstance(n, ast.Name) and n.sub is not None and isinstance(body, ast.Num) and body.value == 0):
        return False
    rec = recurrence_of(scope, n)
    if rec is None or initial_index(scope, n) is not None or not previous_members(rec[1], rec[0]):
        return False
    v = index_value(scope, n.sub, {}, n, strict=False)
    return v is not None and v.is_Integer
