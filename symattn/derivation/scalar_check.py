r"""Checking a scalar or vector derivation (read by :mod:`.scalars`) step by step.

The values (:class:`Elaborator`):

- a declared real x_k of a sequence x_1, ..., x_V is the entry x[k] of an IndexedBase;
- a declared vector v in R^B is one block (B, v[i]); ``[u v]`` joins the blocks, so
  x = [x^{(1)} x^{(2)}] has two blocks of length B; a function of a vector (f(x), m(x), l(x))
  is evaluated block by block, for every length;
- ``\max_i x_i`` is :class:`~symattn.proof.maxcases.VecMax` of the blocks, ``\max(a, b)``
  SymPy's Max, ``\sum_i`` one finite sum per block, ``\sum_{k=1}^{j}`` a SymPy Sum;
- a running sequence m_j (``\leftarrow``) is an undefined real function m(j) whose recurrence
  is unfolded when a step needs it; ``m_0 = -\infty`` and ``d_0 = 0`` are its initial values.

What "proved" means (:func:`check_scalar_document`): a step between scalars is proved by
:func:`~symattn.proof.maxcases.prove_scalar` (exact rewriting, maxima as opaque reals, then a
case split on the largest entry), for every length B and every real entry. A step between
vectors is proved block by block, at a symbolic index. A chain about a running sequence (its
first side d_j, d defined by ``\leftarrow``) is read as the paper's proof by induction on j, for
every j in 1..V:

- j = 1, ..., c (c the largest offset in m_{j-c}, so that every running value left is finite):
  the recurrences are unfolded down to the initial values, which are used exactly
  (e^{-\infty} = 0, \max(-\infty, a) = a); the running maxima m_t with t >= 1 stay opaque
  reals (they are finite: m_1 = \max(-\infty, x_1) = x_1);
- every larger j, symbolically: the step is proved as it stands, or after unfolding the
  recurrence of a value at the top index (d_j), or using the induction hypothesis
  d_{j-1} = e(j-1), where e is an expression of the chain after which every step is proved:
  the steps up to e prove d_j = e(j) at j = 1 directly and at every j >= 2 from the claim at
  j - 1, which is the induction. The scope of a step says which of these it used.

A step that is not proved is refuted only by a certified counterexample: small lengths and
integer entries (the running values computed exactly by their recurrences), both sides
evaluated exactly, the difference shown nonzero by :func:`~symattn.proof.certify.certify_nonzero`.
Then the usual slips of these papers are tried (:func:`diagnose`): a rescaling factor
e^{m(u) - m(v)} dropped, and an off-by-one in a running index or a sum's bound.
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..errors import BudgetExceeded, DerivationError, SoundnessError, UnknownSymbolError
from ..proof.certify import certify_nonzero
from ..proof.maxcases import INDEX, VecMax, instantiate, prove_all, prove_scalar, write_out_maxima, write_out_short_sums
from ..proof.verdict import Counterexample, Verdict, refuted, unknown
from . import scalars as S
from .diagnose import Diagnosis
from .model import Report, Step

VALUES = (0, 1, -1, 2, -2, 3)
MAX_INSTANCES = 400
MAX_CANDIDATES = 40
MAX_UNFOLD = 6
MAX_LENGTH = 64  # a concrete length written in a declaration


@dataclass(frozen=True)
class Vec:
    """A vector as blocks ((length, entry at INDEX), ...), entries numbered from 1 in each block."""

    blocks: tuple

    @property
    def length(self):
        return sp.Add(*(b[0] for b in self.blocks))


def _err(message, node, expected="", cls=DerivationError):
    line, col = node.pos if hasattr(node, "pos") else (0, 0)
    return cls(message, line, col, expected)


class Elaborator:
    """The declarations, definitions and recurrences of a document, and the values of its expressions."""

    def __init__(self, stmts):
        self.dims: dict = {}
        self.vectors: dict = {}  # name -> (IndexedBase, length)
        self.reals: dict = {}  # sequence name -> (IndexedBase, length)
        self.functions: dict = {}  # name -> Define
        self.values: dict = {}  # name -> value
        self.recurrences: dict = {}  # name -> (index letter, body node)
        self.initial: dict = {}  # name -> value at 0
        self.seqfuns: dict = {}  # name -> sympy Function
        self.notes: list = []
        self.definitions: list = []
        self.chains: list = []
        for st in stmts:
            if isinstance(st, S.Declare):
                self.declare(st)
        for st in stmts:
            if isinstance(st, S.Recur):
                base, index = st.target.parts
                if index.parts[1] or len(index.parts[0]) != 1:
                    raise _err(f"{S.latex(st.target)}: the running index must be a letter", st)
                self.recurrences[base.parts[0]] = (index.parts[0], st.body)
                self.seqfuns[base.parts[0]] = sp.Function(base.parts[0], real=True)
                self.definitions.append(f"{S.latex(st.target)} \\leftarrow {S.latex(st.body)}")
        for st in stmts:
            if isinstance(st, S.Define):
                self.define(st)
            elif isinstance(st, S.Chain):
                if self.is_initial(st):
                    name = st.first.parts[0].parts[0]
                    self.initial[name] = self.value(st.links[0][1], {})
                    self.definitions.append(f"{S.latex(st.first)} = {S.latex(st.links[0][1])} (initial value)")
                elif self.is_new_name(st.first):  # y = e = e': y defined by e, then the chain from y
                    self.define(S.Define(st.first, (), st.links[0][1], None, st.pos))
                    self.definitions[-1] += " (written with '=')"
                    if len(st.links) > 1:
                        self.chains.append(S.Chain(st.first, st.links[1:], st.pos))
                else:
                    self.chains.append(st)
        for name in self.recurrences:
            if name not in self.initial:
                raise DerivationError(f"the running value {name} has no initial value {name}_0", 0, 0,
                                      f"{name}_0 = ... next to the declarations")
        if self.recurrences:
            letters = {i for i, _ in self.recurrences.values()}
            lengths = {str(n) for _, n in self.reals.values()}
            self.notes.append(f"running values {', '.join(self.recurrences)} for {', '.join(sorted(letters))} = 1, "
                              f"..., {', '.join(sorted(lengths)) or 'V'} (the loop of the algorithm), from their "
                              "initial values")

    # declarations ---------------------------------------------------------------------------
    def dim(self, node):
        if node.kind == "num" and 0 < node.parts[0] <= MAX_LENGTH:
            return sp.Integer(node.parts[0])
        if node.kind == "name" and not node.parts[1]:
            name = node.parts[0]
            return self.dims.setdefault(name, sp.Symbol(name, integer=True, positive=True))
        if node.kind == "mul" and len(node.parts) == 2:
            return self.dim(node.parts[0]) * self.dim(node.parts[1])
        raise _err(f"{S.latex(node)} is not a length", node, f"a name such as B, or an integer 1..{MAX_LENGTH}")

    def declare(self, st):
        names = list(st.names)
        if st.power is None:  # x_1, \ldots, x_V \in R
            if len(names) == 3 and names[1].kind == "dots" and all(n.kind == "sub" for n in (names[0], names[2])):
                first, last = names[0], names[2]
                base = first.parts[0]
                if first.parts[1] != S.N("num", (1,)) or last.parts[0] != base:
                    raise _err("a sequence is declared from its first entry x_1 to its last x_V", first,
                               "x_1, \\ldots, x_V \\in \\mathbb{R}")
                length = self.dim(last.parts[1])
                self.reals[base.parts[0]] = (sp.IndexedBase(base.parts[0], real=True), length)
                self.notes.append(f"{S.latex(base)}_1, ..., {S.latex(base)}_{length}: real numbers")
                return
            for n in names:
                if n.kind != "name":
                    raise _err(f"cannot declare {S.latex(n)}", n, "names, or x_1, \\ldots, x_V")
                self.values[S.name_text(n)] = sp.Symbol(S.name_text(n), real=True)
            return
        length = self.dim(st.power)
        for n in names:
            if n.kind != "name":
                raise _err(f"cannot declare {S.latex(n)} as a vector", n, "a name such as x^{(1)}")
            key = S.name_text(n)
            if key in self.vectors:
                raise _err(f"{key} is declared twice", n)
            self.vectors[key] = (sp.IndexedBase(key, real=True), length)
        self.notes.append(f"{', '.join(S.latex(n) for n in names)}: vectors of length {length} (real entries, "
                          "numbered from 1)")

    def define(self, st):
        key = S.name_text(st.target)
        if st.params:
            self.functions[key] = st
            self.definitions.append(f"{S.latex(st.target)}({', '.join(S.latex(p) for p in st.params)}) := "
                                    f"{S.latex(st.body)}")
            if st.body.kind == "vec" and any(c.kind == "dots" for c in st.body.parts):
                self.notes.append(f"{S.latex(st.target)}(x) := [...]: the entries from the first to the last written, "
                                  "for x of any length")
            return
        value = self.value(st.body, {})
        if st.power is not None:
            want = self.dim(st.power)
            got = value.length if isinstance(value, Vec) else None
            if got is None or sp.simplify(got - want) != 0:
                raise _err(f"{key} is declared in R^{{{want}}} but its value has length {got}", st.target)
        self.values[key] = value
        self.definitions.append(f"{S.latex(st.target)} = {S.latex(st.body)}")

    def is_new_name(self, n) -> bool:
        """A plain name that nothing declares or defines yet (nor a running index)."""
        if n.kind != "name":
            return False
        key = S.name_text(n)
        letters = {i for i, _ in self.recurrences.values()}
        return not (key in self.values or key in self.vectors or key in self.reals or key in self.functions
                    or key in self.dims or key in self.recurrences or key in letters)

    def is_initial(self, st) -> bool:
        f = st.first
        return (len(st.links) == 1 and f.kind == "sub" and f.parts[0].kind == "name"
                and f.parts[0].parts[0] in self.recurrences and f.parts[1] == S.N("num", (0,)))

    # values ---------------------------------------------------------------------------------
    def index(self, node, env):
        v = self.value(node, env)
        if isinstance(v, Vec) or not (v.is_integer or v.is_Integer):
            raise _err(f"the index {S.latex(node)} is not an integer", node, "an index such as j - 1")
        return v

    def value(self, node, env):
        k, p = node.kind, node.parts
        if k == "num":
            return sp.Integer(p[0])
        if k == "inf":
            return sp.oo
        if k == "name":
            key = S.name_text(node)
            if key in env:
                got = env[key]
                if isinstance(got, tuple):  # an index running over the blocks of a vector
                    raise _err(f"the index {key} is used outside a subscript", node)
                return got
            if key in self.values:
                return self.values[key]
            if key in self.vectors:
                base, length = self.vectors[key]
                return Vec((sp.Tuple(length, base[INDEX]),))
            if key in self.dims:
                return self.dims[key]
            if len(key) == 1 and key in {i for i, _ in self.recurrences.values()}:
                return sp.Symbol(key, integer=True, positive=True)
            raise _err(f"{S.latex(node)} is not declared", node, "a declaration such as x \\in \\mathbb{R}^{B}",
                       UnknownSymbolError)
        if k == "sub":
            return self.entry(node, env)
        if k == "call":
            return self.call(node, env)
        if k == "exp":
            return sp.exp(self.scalar(p[0], env))
        if k == "neg":
            return self.scale(-1, self.value(p[0], env))
        if k == "add":
            vals = [self.value(t, env) for t in p]
            if any(isinstance(v, Vec) for v in vals):
                return self.add_vectors(vals, node)
            return sp.Add(*vals)
        if k == "mul":
            out = sp.Integer(1)
            for f in p:
                v = self.value(f, env)
                if isinstance(v, Vec) and isinstance(out, Vec):
                    raise _err("a product of two vectors is not read", f, "a number times a vector")
                out = self.scale(out, v) if isinstance(v, Vec) or isinstance(out, Vec) else out * v
            return out
        if k == "div":
            a, b = self.value(p[0], env), self.scalar(p[1], env)
            return self.scale(1 / b, a) if isinstance(a, Vec) else a / b
        if k == "max":
            return sp.Max(*(self.scalar(a, env) for a in p))
        if k == "maxover":
            return self.over("max", node, env)
        if k == "sum":
            return self.over("sum", node, env)
        if k == "vec":
            return self.vector(node, env)
        raise _err(f"{S.latex(node)} is not read", node)

    def scalar(self, node, env):
        v = self.value(node, env)
        if isinstance(v, Vec):
            raise _err(f"{S.latex(node)} is a vector where a number is needed", node, "a number")
        return v

    def scale(self, c, v):
        if isinstance(c, Vec):
            c, v = v, c
        if isinstance(v, Vec):
            return Vec(tuple(sp.Tuple(b[0], c * b[1]) for b in v.blocks))
        return c * v

    def add_vectors(self, vals, node):
        if not all(isinstance(v, Vec) for v in vals):
            raise _err("a number added to a vector", node, "vectors of the same length")
        shape = [b[0] for b in vals[0].blocks]
        for v in vals[1:]:
            if [b[0] for b in v.blocks] != shape:
                raise _err("vectors of different block lengths added", node, "vectors of the same length")
        return Vec(tuple(sp.Tuple(shape[t], sp.Add(*(v.blocks[t][1] for v in vals))) for t in range(len(shape))))

    def entry(self, node, env):
        base, index = node.parts
        if base.kind == "name" and base.parts[0] in self.recurrences and not base.parts[1]:
            return self.seqfuns[base.parts[0]](self.index(index, env))
        if base.kind == "name" and S.name_text(base) in self.reals:
            return self.reals[S.name_text(base)][0][self.index(index, env)]
        vec = self.value(base, env)
        if not isinstance(vec, Vec):
            raise _err(f"{S.latex(base)} is a number: it has no entries", node, "an entry of a vector")
        if index.kind == "name" and isinstance(env.get(S.name_text(index)), tuple):
            t, shape = env[S.name_text(index)]
            if [b[0] for b in vec.blocks] != shape:
                raise _err(f"{S.latex(base)} does not have the blocks of the vector the index "
                           f"{S.latex(index)} runs over", node)
            return vec.blocks[t][1]
        raise _err(f"the entry {S.latex(node)} of a vector at a fixed index is not read", node,
                   "\\max_i x_i, \\sum_i x_i, or a bmatrix from x_1 to x_B")

    def call(self, node, env):
        name, args = node.parts
        key = S.name_text(name)
        if key not in self.functions:
            raise _err(f"{S.latex(name)} is not a defined function", node, f"{S.latex(name)}(x) := ...",
                       UnknownSymbolError)
        d = self.functions[key]
        if len(args) != len(d.params):
            raise _err(f"{S.latex(name)} takes {len(d.params)} argument(s), given {len(args)}", node)
        inner = {S.name_text(q): self.value(a, env) for q, a in zip(d.params, args)}
        return self.value(d.body, inner)

    def _indexed(self, body, index):
        """The vector that ``index`` runs over in ``body`` (the base of the first v_index)."""
        for n in _walk(body):
            if n.kind == "sub" and n.parts[1] == S.N("name", (index, "")):
                return n.parts[0]
        return None

    def over(self, what, node, env):
        index, lo, hi, body = node.parts
        if lo is None:
            base = self._indexed(body, index)
            if base is None:
                raise _err(f"the index {index} of {S.latex(node)} subscripts no vector", node,
                           "\\max_i x_i or \\sum_{k=1}^{n} ...")
            vec = self.value(base, env)
            if not isinstance(vec, Vec):
                raise _err(f"{S.latex(base)} is not a vector", node)
            shape = [b[0] for b in vec.blocks]
            entries = [self.value(body, {**env, index: (t, shape)}) for t in range(len(shape))]
            if what == "max":
                return VecMax(*(sp.Tuple(shape[t], e) for t, e in enumerate(entries)))
            out = []
            for t, e in enumerate(entries):
                k = sp.Dummy(index, integer=True)
                out.append(sp.Sum(instantiate(e, k), (k, 1, shape[t])))
            return sp.Add(*out)
        k = sp.Dummy(index, integer=True)
        a, b = self.index(lo, env), self.index(hi, env)
        if (b - a).is_Integer and abs(b - a) > MAX_LENGTH:
            raise _err(f"{S.latex(node)} runs over {b - a + 1} values", node,
                       f"a range of a symbolic length, or of at most {MAX_LENGTH} values")
        e = self.scalar(body, {**env, index: k})
        if what == "sum":
            return sp.Sum(e, (k, a, b))
        if (b - a).is_Integer and 0 <= b - a < 64:
            return sp.Max(*(e.xreplace({k: a + t}) for t in range(int(b - a) + 1)))
        raise _err(f"{S.latex(node)}: a maximum over a range of symbolic length is read only over a vector", node,
                   "\\max_i x_i of a declared vector")

    def vector(self, node, env):
        cells = node.parts
        if any(c.kind == "dots" for c in cells):
            if len(cells) != 3 or cells[1].kind != "dots":
                raise _err("a bmatrix with \\ldots must be [first & \\ldots & last]", node,
                           "[e^{x_1} & \\ldots & e^{x_B}]")
            first, last = cells[0], cells[2]
            spots = _index_spots(first, last)
            if spots is None:
                raise _err(f"{S.latex(first)} and {S.latex(last)} differ elsewhere than in the index", node,
                           "cells that differ only in the index, from 1 to the last")
            letter = "\\iota"
            body = _with_index(first, spots, S.N("name", (letter, "")))
            base = spots[0]
            vec = self.value(base, env)
            if not isinstance(vec, Vec):
                raise _err(f"{S.latex(base)} is not a vector", node)
            shape = [b[0] for b in vec.blocks]
            n_last = _last_index(last, spots)
            if base.kind == "name" and S.name_text(base) not in env:  # a declared vector: its length is written
                want = self.index(n_last, env)
                if sp.simplify(want - vec.length) != 0:
                    raise _err(f"{S.latex(node)} ends at {want}, but {S.latex(base)} has length {vec.length}", node)
            return Vec(tuple(sp.Tuple(shape[t], self.scalar(body, {**env, letter: (t, shape)}))
                             for t in range(len(shape))))
        blocks = []
        for c in cells:
            v = self.value(c, env)
            blocks.extend(v.blocks if isinstance(v, Vec) else [sp.Tuple(sp.Integer(1), v)])
        return Vec(tuple(blocks))


def _walk(n):
    stack = [n]
    while stack:
        x = stack.pop()
        if isinstance(x, S.N):
            yield x
            stack.extend(x.parts)
        elif isinstance(x, tuple):
            stack.extend(x)


def _index_spots(first, last):
    """The bases v of the subscripts v_1 in ``first`` where ``last`` has v_n (same n), if the two
    cells differ nowhere else: [base, ...]."""
    spots = []

    def same(a, b):
        if isinstance(a, S.N) and isinstance(b, S.N):
            if a.kind == "sub" and b.kind == "sub" and a.parts[0] == b.parts[0] and a.parts[1] == S.N("num", (1,)) \
                    and b.parts[1] != a.parts[1]:
                spots.append((a.parts[0], b.parts[1]))
                return True
            return a.kind == b.kind and len(a.parts) == len(b.parts) and all(
                same(x, y) for x, y in zip(a.parts, b.parts))
        if isinstance(a, tuple) and isinstance(b, tuple):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        return a == b

    if not same(first, last) or not spots or len({s[1] for s in spots}) != 1 or len({s[0] for s in spots}) != 1:
        return None
    return [spots[0][0], spots[0][1]]


def _last_index(last, spots):
    return spots[1]


def _with_index(node, spots, letter):
    base = spots[0]
    if isinstance(node, S.N):
        if node.kind == "sub" and node.parts[0] == base and node.parts[1] == S.N("num", (1,)):
            return S.N("sub", (base, letter), node.pos)
        return S.N(node.kind, tuple(_with_index(x, spots, letter) for x in node.parts), node.pos, node.ops)
    if isinstance(node, tuple):
        return tuple(_with_index(x, spots, letter) for x in node)
    return node


# --- proving ------------------------------------------------------------------------------------


def _offsets(e, funs, j) -> int:
    """The largest c with some running value s(j - c) in ``e``."""
    out = 0
    for f in sp.sympify(e).atoms(sp.core.function.AppliedUndef):
        if f.func in funs:
            c = j - f.args[0]
            if c.is_Integer:
                out = max(out, int(c))
    return out


class Prover:
    """Proves the steps of a document, for every length and (for running values) every j."""

    def __init__(self, el: Elaborator, budget: float):
        self.el, self.budget = el, budget
        self.funs = {f: name for name, f in el.seqfuns.items()}
        letters = {i for i, _ in el.recurrences.values()}
        if len(letters) > 1:
            raise DerivationError(f"running values with different indices {sorted(letters)}", 0, 0,
                                  "one running index (j) for every \\leftarrow")
        self.j = sp.Symbol(next(iter(letters)), integer=True, positive=True) if letters else None
        self.finite = self.finite_from_one() if self.j is not None else ""
        if self.finite and self.j is not None:
            el.notes.append(self.finite)

    def unfold_top(self, e, maxima: bool = False):
        """Each running value at the index j itself (d_j) replaced by its recurrence (valid for
        j >= 1); a running maximum only when ``maxima``."""
        e = sp.sympify(e)
        rep = {f: self.recurrence_at(f) for f in e.atoms(sp.core.function.AppliedUndef)
               if f.func in self.funs and f.args[0] == self.j and (maxima or not self._is_max(f.func))}
        return e.xreplace(rep)

    def recurrence_at(self, f):
        name = self.funs[f.func]
        letter, body = self.el.recurrences[name]
        return self.el.scalar(body, {letter: f.args[0]})

    def at_index(self, e, c: int, maxima: bool = False):
        """``e`` at j = c: sums written out, running values unfolded down to their initial values
        (used exactly: e^{-oo} = 0, max(-oo, a) = a), except running maxima m_t (t >= 1) unless
        ``maxima``: they stay opaque reals (finite, see :meth:`finite_from_one`)."""
        e = write_out_short_sums(sp.sympify(e).xreplace({self.j: sp.Integer(c)}))
        for _ in range(MAX_UNFOLD):
            rep = {}
            for f in e.atoms(sp.core.function.AppliedUndef):
                if f.func in self.funs and f.args[0].is_Integer:
                    if f.args[0] == 0:
                        rep[f] = self.el.initial[self.funs[f.func]]
                    elif maxima or not self._is_max(f.func):
                        rep[f] = self.recurrence_at(f)
            if not rep:
                break
            e = e.xreplace(rep)
        return e

    def _is_max(self, func) -> bool:
        return self.el.recurrences[self.funs[func]][1].kind == "max"

    def finite_from_one(self) -> str:
        """Why every running value is a finite real at every index t >= 1 ("" when it is not shown):
        at t = 1..c (c the largest offset in a recurrence) each is evaluated from the initial values
        and must be finite; beyond, each recurrence is built by +, x, exp and max from entries and
        running values at indices t - c >= 1 (finite by induction)."""
        if self.j is None:
            return "no running values"
        t = self.j
        bodies = {f: self.recurrence_at(f(t)) for f in self.funs}
        c_max = max([1] + [_offsets(b, self.funs, t) for b in bodies.values()])
        for f in self.funs:
            for c in range(1, c_max + 1):
                v = self.at_index(f(t), c, maxima=True)
                if v.has(sp.oo, -sp.oo, sp.zoo, sp.nan) or any(
                        isinstance(g, sp.core.function.AppliedUndef) for g in v.atoms(sp.core.function.AppliedUndef)):
                    return ""

        same = {f: {g.func for g in b.atoms(sp.core.function.AppliedUndef) if g.func in self.funs and g.args[0] == t}
                for f, b in bodies.items()}
        if any(f in same[f] for f in same):
            return ""  # a running value defined by itself at the same index
        try:
            order = sp.utilities.iterables.topological_sort((list(self.funs), [(g, f) for f in same for g in same[f]]))
        except ValueError:  # a cycle of running values at the same index
            return ""
        first = f"{t} = 1" if c_max == 1 else f"{t} = 1..{c_max}"

        def tame(x) -> bool:
            if x.is_Number:
                return x.is_finite
            if isinstance(x, (sp.Indexed, sp.Symbol)):
                return True
            if isinstance(x, sp.core.function.AppliedUndef):  # an earlier index, or another value at t
                return x.func in self.funs and (t - x.args[0]).is_Integer and (t - x.args[0]) >= 0
            if isinstance(x, sp.Pow):
                return x.exp.is_Integer and x.exp >= 0 and tame(x.base)
            if isinstance(x, (sp.Add, sp.Mul, sp.exp, sp.Max)):
                return all(tame(a) for a in x.args)
            return False

        if all(tame(b) for b in bodies.values()):
            return (f"every running value is finite at {t} >= 1: at {first} from the initial values, "
                    f"beyond by +, x, exp and max of finite values (in the order {', '.join(map(str, order))})")
        return ""

    def written_out(self, *exprs) -> int:
        r"""The last j checked at its value (at least 1): beyond it every running value m_{j-c} has an
        index >= 1 (finite) and every sum's range \sum_{k=lo}^{j+e} is a range (hi >= lo - 1)."""
        c0 = max([1] + [_offsets(e, self.funs, self.j) for e in exprs])
        for e in exprs:
            for s in sp.sympify(e).atoms(sp.Sum):
                for _, lo, hi in s.limits:
                    e_off = hi - self.j
                    if hi.has(self.j) and e_off.is_Integer and lo.is_Integer:
                        c0 = max(c0, int(lo - 1 - e_off) - 1)
        return c0

    def scalar_step(self, L, R, hyp=None) -> tuple[Verdict, str]:
        """(verdict, how) for the scalar claim L = R; ``hyp`` = (value, replacement) is the
        induction hypothesis, used for every j beyond the cases written out."""
        if self.j is None or not (sp.sympify(L).has(self.j) or sp.sympify(R).has(self.j)):
            v = prove_scalar(L, R, budget=self.budget)
            if v.proved or self.j is None or not self.finite:
                return v, ""
            # running values at fixed indices (m_1, d_2): unfolded down to the initial values
            a, b = self.at_index(L, 1, maxima=True), self.at_index(R, 1, maxima=True)
            if any(x.has(sp.nan, sp.zoo, sp.oo, -sp.oo) for x in (a, b)):
                return v, ""
            w = prove_scalar(a, b, budget=self.budget)
            return (w, "the running values unfolded to their initial values") if w.proved else (v, "")
        if not self.finite:
            return prove_all([unknown(["the running values are not shown finite for j >= 1, so they cannot be "
                                       "treated as real numbers"])]), ""
        tries = [(L, R, ""), (self.unfold_top(L), self.unfold_top(R), "the recurrence unfolded"),
                 (self.unfold_top(L, True), self.unfold_top(R, True), "the recurrences unfolded")]
        if hyp is not None:
            tries.append((L.xreplace({hyp[0]: hyp[1]}), R.xreplace({hyp[0]: hyp[1]}), "hyp"))
            tries.append((self.unfold_top(L).xreplace({hyp[0]: hyp[1]}), self.unfold_top(R).xreplace({hyp[0]: hyp[1]}),
                          "hyp"))
        generic, used, c0 = None, "", 1
        for a, b, label in tries:
            if label and a == tries[0][0] and b == tries[0][1]:
                continue
            c = self.written_out(a, b)
            J = sp.Dummy(str(self.j), integer=True, positive=True)  # j = J + c >= c + 1
            v = prove_scalar(a.xreplace({self.j: J + c}), b.xreplace({self.j: J + c}), budget=self.budget)
            if v.proved:
                generic, used, c0 = v, label, c
                break
        if generic is None:
            return prove_all([v]), ""
        parts = []
        for c in range(1, c0 + 1):
            for maxima in (False, True):
                a, b = self.at_index(L, c, maxima), self.at_index(R, c, maxima)
                if any(x.has(sp.nan, sp.zoo, sp.oo, -sp.oo) for x in (a, b)):
                    v = unknown([f"at {self.j} = {c} a side is not a finite number: {a} = {b}"])
                    continue
                v = prove_scalar(a, b, budget=self.budget)
                if v.proved:
                    break
            parts.append(v)
        firsts = ", ".join(f"{self.j} = {c}" for c in range(1, c0 + 1))
        initial = ", ".join(f"{name}_0 = {sp.latex(v)}" for name, v in self.el.initial.items())
        how = f"{firsts} with the initial values {initial} used exactly; every {self.j} >= {c0 + 1} symbolically"
        if used:
            how += ", " + ("from the induction hypothesis" if used == "hyp" else f"with {used}")
        return prove_all(parts + [generic], L, R), how

    def step(self, L, R, hyp=None) -> tuple[Verdict, str]:
        if isinstance(L, Vec) != isinstance(R, Vec):
            raise DerivationError("one side is a vector and the other a number", 0, 0, "two numbers or two vectors")
        if not isinstance(L, Vec):
            return self.scalar_step(L, R, hyp)
        la, lb = [b[0] for b in L.blocks], [b[0] for b in R.blocks]
        if len(la) != len(lb) or any(sp.simplify(a - b) != 0 for a, b in zip(la, lb)):
            if sp.simplify(L.length - R.length) != 0:
                raise DerivationError(f"the sides are vectors of lengths {L.length} and {R.length}", 0, 0,
                                      "vectors of the same length")
            return prove_all([unknown([f"the blocks {la} and {lb} do not line up"])]), ""
        parts, how = [], ""
        for a, b in zip(L.blocks, R.blocks):
            p = sp.Dummy("p", integer=True, positive=True)
            v, how = self.scalar_step(instantiate(a[1], p), instantiate(b[1], p), hyp)
            parts.append(v)
        return prove_all(parts, L, R), "block by block, at a symbolic index" + (f"; {how}" if how else "")


# --- counterexamples ------------------------------------------------------------------------------


def _exactly_equal(a, b) -> bool:
    """a = b for exact numbers, shown by rewriting (powers of e combined, expanded, then simplify)."""
    if a == b:
        return True
    d = sp.expand(sp.powsimp(a - b, combine="exp"))
    return d == 0 or sp.simplify(d) == 0


class Refuter:
    """Small exact instances where the two sides of a step differ, certified."""

    def __init__(self, el: Elaborator, prover: Prover):
        self.el, self.pr = el, prover

    def instances(self):
        dims = sorted(self.el.dims.values(), key=str)
        j = self.pr.j
        sizes = [1, 2, 3]
        for size in sizes:
            at = {d: sp.Integer(size) for d in dims}
            if j is not None:
                at[j] = sp.Integer(size if size > 1 else 1)
                for d in dims:
                    at[d] = at[j]
            entries = []
            for name, (base, length) in {**self.el.vectors, **self.el.reals}.items():
                n = int(length.xreplace(at))
                entries += [(name, base, t) for t in range(1, n + 1)]
            entries += [(name, v, None) for name, v in self.el.values.items() if isinstance(v, sp.Symbol)]
            count = 0
            for combo in itertools.product(VALUES, repeat=len(entries)):
                count += 1
                if count > MAX_INSTANCES // len(sizes):
                    break
                yield at, entries, combo

    def evaluate(self, e, at, vals):
        e = write_out_maxima(write_out_short_sums(sp.sympify(e).xreplace(at)), vals)
        e = self.pr.at_index(e, int(at[self.pr.j])) if self.pr.j is not None else e
        e = write_out_maxima(write_out_short_sums(e), vals)
        if self.pr.j is not None:  # the running maxima too, now that the entries are numbers
            for _ in range(MAX_UNFOLD):
                rep = {f: self.pr.recurrence_at(f) for f in e.atoms(sp.core.function.AppliedUndef)
                       if f.func in self.pr.funs and f.args[0].is_Integer and f.args[0] > 0}
                rep.update({f: self.el.initial[self.pr.funs[f.func]] for f in e.atoms(sp.core.function.AppliedUndef)
                            if f.func in self.pr.funs and f.args[0] == 0})
                if not rep:
                    break
                e = e.xreplace(rep)
        return e.xreplace(vals)

    def sides_at(self, L, R, at, entries, combo):
        """Both sides at one instance, entry by entry, exact; None when they cannot be evaluated."""
        vals = {(base if t is None else base[t]): sp.Integer(v) for (_, base, t), v in zip(entries, combo)}
        ls, rs = [L], [R]
        if isinstance(L, Vec):
            ls = [instantiate(b[1], sp.Integer(t)) for b in L.blocks for t in range(1, int(b[0].xreplace(at)) + 1)]
            rs = [instantiate(b[1], sp.Integer(t)) for b in R.blocks for t in range(1, int(b[0].xreplace(at)) + 1)]
        try:
            lv = [self.evaluate(x, at, vals) for x in ls]
            rv = [self.evaluate(x, at, vals) for x in rs]
        except (TypeError, ValueError, DerivationError):
            return None
        return (lv, rv) if len(lv) == len(rv) else None

    def differ(self, a, b):
        """The certificate that a - b is not 0 (exact numbers), or None."""
        if a.free_symbols or b.free_symbols or any(x.has(sp.oo, -sp.oo, sp.zoo, sp.nan) for x in (a, b)):
            return None
        return certify_nonzero(a - b)

    def agree(self, L, R, count: int = 4) -> int:
        """A proved step evaluated exactly at ``count`` instances drawn at random (seeded by the
        claim), by the refuter's own evaluation (the recurrences run, the maxima written out);
        the number of instances where every entry is shown equal exactly. Two sides certified
        different mean a bug in the prover: SoundnessError."""
        rng = random.Random(sp.srepr(L)[:2000] if not isinstance(L, Vec) else repr(L.blocks)[:2000])
        pool = list(itertools.islice(self.instances(), MAX_INSTANCES))
        agreed = 0
        for at, entries, combo in rng.sample(pool, min(count, len(pool))):
            combo = tuple(rng.choice(VALUES) for _ in combo)
            got = self.sides_at(L, R, at, entries, combo)
            if got is None:
                continue
            ok = True
            for a, b in zip(*got):
                cert = self.differ(a, b)
                if cert is not None:
                    raise SoundnessError(f"a proved step differs at {at}, entries {combo}: {a} != {b} ({cert})")
                ok = ok and _exactly_equal(a, b)
            agreed += ok
        return agreed

    def search(self, L, R, deadline):
        for at, entries, combo in self.instances():
            if time.perf_counter() > deadline:
                return None
            got = self.sides_at(L, R, at, entries, combo)
            if got is None:
                continue
            lv, rv = got
            for k, (a, b) in enumerate(zip(lv, rv)):
                cert = self.differ(a, b)
                if cert is None:
                    continue
                d = a - b
                used = set().union(*(sp.sympify(x).free_symbols for x in (L, R) if not isinstance(x, Vec)))
                dims = {str(s): int(v) for s, v in at.items() if s in used or s in self.el.dims.values()}
                values = {}
                for (name, _, _), v in zip(entries, combo):
                    values.setdefault(name, []).append(v)
                return Counterexample(
                    dims=dims, values={n: np.array(v) for n, v in values.items()},
                    lhs=np.array([float(x) for x in lv]), rhs=np.array([float(x) for x in rv]),
                    lhs_exact=sp.ImmutableMatrix([lv]), rhs_exact=sp.ImmutableMatrix([rv]), entry=(0, k),
                    difference=d, certificate=cert)
        return None


# --- the document -------------------------------------------------------------------------------


def check_scalar_document(text: str, *, source: str = "<text>", budget: float = 20.0,
                          diagnose_steps: bool = True) -> Report:
    """Read (:mod:`.scalars`) and check a scalar or vector derivation; the report has one entry per step."""
    start = time.perf_counter()
    stmts = S.parse_scalar_document(text)
    el = Elaborator(stmts)
    pr = Prover(el, budget=min(budget, 10.0))
    notes = ["scalar reader: real numbers, vectors of any length and running values (\\max, \\leftarrow)"]
    notes += el.notes
    steps: list = []
    for chain_no, st in enumerate(el.chains):
        steps.extend(_check_chain(el, pr, st, len(steps), chain_no))
    proved = [s for s in steps if s.status == "proved"]
    if proved:
        refuter = Refuter(el, pr)
        agreed = [refuter.agree(s.lhs_expr, s.rhs_expr) for s in proved]
        notes.append(f"exact instances: the {len(proved)} proved steps agree at {sum(agreed)} random exact instances "
                     "(evaluated apart from the proofs: lengths 1..3, integer entries, the recurrences run)")
    report = Report(source, steps, el.definitions, notes)
    if diagnose_steps:
        for s in steps:
            if s.status == "refuted":
                s.diagnosis = diagnose(el, pr, s)
    report.seconds = time.perf_counter() - start
    return report


def _values(el, st):
    nodes = [st.first] + [n for _, n in st.links]
    vals = []
    for n in nodes:
        try:
            vals.append(el.value(n, {}))
        except DerivationError as exc:
            vals.append(exc)
    return nodes, vals


def _check_chain(el, pr, st, offset, chain_no) -> list:
    nodes, vals = _values(el, st)
    steps = []
    for k, (pos, node) in enumerate(st.links, start=1):
        s = Step(offset + k, S.latex(nodes[k - 1]), S.latex(node), S.latex(nodes[k - 1]), S.latex(node), "=", pos,
                 lhs_expr=vals[k - 1], rhs_expr=vals[k], lhs_node=nodes[k - 1], rhs_node=node)
        s.chain = chain_no
        steps.append(s)
    subject = vals[0]
    hyps = [None]
    if (pr.j is not None and isinstance(subject, sp.core.function.AppliedUndef) and subject.func in pr.funs
            and subject.args[0] == pr.j):
        prior = subject.func(pr.j - 1)
        hyps = [(prior, vals[h].xreplace({pr.j: pr.j - 1}), h) for h in range(len(vals) - 1, 0, -1)
                if not isinstance(vals[h], Exception) and not isinstance(vals[h], Vec)
                and not vals[h].has(subject.func)] + [None]
    results = None
    for hyp in hyps:
        attempt = [_run_step(pr, s, hyp) for s in steps]
        upto = hyp[2] if hyp is not None else 0
        if hyp is None or all(a[0] == "proved" for a in attempt[:upto]):
            results = (attempt, hyp)
            break
    attempt, hyp = results
    for s, (status, verdict, how, error) in zip(steps, attempt):
        s.status, s.verdict, s.error = status, verdict, error
        if verdict is not None:
            s.general, s.method, s.seconds = verdict.general, verdict.method, verdict.seconds
        s.scope = _scope(el, pr, nodes, how, hyp) if status == "proved" else (verdict.scope if verdict else "")
    for s in steps:
        if s.status not in ("proved", "ill-formed") and s.verdict is not None and s.verdict.status == "unknown":
            cex = Refuter(el, pr).search(s.lhs_expr, s.rhs_expr, time.perf_counter() + min(pr.budget, 10.0))
            if cex is not None:
                s.verdict = refuted(cex, list(s.verdict.trace))
                s.status, s.scope, s.method = "refuted", s.verdict.scope, s.verdict.method
    return steps


def _run_step(pr, s, hyp):
    L, R = s.lhs_expr, s.rhs_expr
    if isinstance(L, Exception) or isinstance(R, Exception):
        bad = L if isinstance(L, Exception) else R
        return "ill-formed", None, "", str(bad)
    try:
        v, how = pr.step(L, R, None if hyp is None else hyp[:2])
    except DerivationError as exc:
        return "ill-formed", None, "", str(exc)
    except BudgetExceeded as exc:
        return "unknown", unknown([str(exc)]), "", ""
    return v.status, v, how, ""


def _scope(el, pr, nodes, how, hyp) -> str:
    """What a proved step holds for, in words: every length, every real entry, every j."""
    dims = sorted(str(d) for d in el.dims.values())
    if pr.j is not None and "symbolically" in how:
        lengths = ", ".join(dims) or "V"
        out = f"every {pr.j} in 1..{lengths} and all real entries: {how}"
    else:
        out = (f"every {', '.join(dims)} >= 1 and " if dims else "") + (
            "all real entries" if (el.vectors or el.reals) else "all values")
        if how:
            out += f"; {how}"
    if hyp is not None and "induction hypothesis" in how:
        out += (f" {S.latex(nodes[0])} = {S.latex(nodes[hyp[2]])} at {pr.j} - 1 (the claim of steps 1..{hyp[2]}, "
                f"which hold without it at the values of {pr.j} written out: an induction on {pr.j})")
    return out


# --- slips -----------------------------------------------------------------------------------------


def _maxima(el, s) -> list:
    """The maxima a rescaling factor e^{a - b} may be built from: m(v) for the vectors v the step
    applies a function to, and the running maxima m_t written in it."""
    out = []
    max_fns = [k for k, d in el.functions.items() if d.body.kind == "maxover"]
    nodes = list(_walk(s.rhs_node)) + list(_walk(s.lhs_node))
    for n in nodes:  # the maxima written in the step first
        if n.kind == "call" and S.name_text(n.parts[0]) in max_fns and n not in out:
            out.append(S.N("call", n.parts))
    for n in nodes:
        if n.kind == "call" and max_fns:
            for a in n.parts[1]:
                c = S.N("call", (S.N("name", (max_fns[0], "")), (a,)))
                if c not in out:
                    out.append(c)
        if n.kind == "sub" and n.parts[0].kind == "name" and n.parts[0].parts[0] in el.recurrences \
                and el.recurrences[n.parts[0].parts[0]][1].kind == "max":
            for m in (n, *(S.N("sub", (n.parts[0], _simplified(_shift(n.parts[1], d)))) for d in (-1, 1))):
                if m not in out:  # a running maximum, and its neighbours m_{j-1}, m_{j+1}
                    out.append(m)
    return out


def _terms(node):
    return list(node.parts) if node.kind == "add" else [node]


def _has_exp(node) -> bool:
    return node.kind == "exp" or (node.kind == "mul" and any(f.kind == "exp" for f in node.parts))


def candidates(el, s):
    """(slip, detail, corrected right side) for single changes of the step's right side."""
    R = s.rhs_node
    terms = _terms(R)
    maxima = _maxima(el, s)
    for t_no, t in enumerate(terms):
        if _has_exp(t) or t.kind == "neg":
            continue
        for a, b in itertools.permutations(maxima, 2):
            factor = S.N("exp", (S.N("add", (a, S.N("neg", (b,)))),))
            new = S.N("mul", (factor, t))
            fixed = S.N("add", tuple(new if k == t_no else x for k, x in enumerate(terms))) if len(terms) > 1 else new
            yield ("rescaling factor dropped", f"the term {S.latex(t)} lacks the factor {S.latex(factor)}", fixed)
    for spot, new_index in _index_shifts(R):
        yield ("off-by-one in a running index", f"{S.latex(spot)} should be {S.latex(new_index)}",
               _replace_node(R, spot, new_index))


def _shift(index, d):
    return S.N("add", (index, S.N("num", (d,)))) if d > 0 else S.N("add", (index, S.N("neg", (S.N("num", (-d,)),))))


def _simplified(index):
    """j - 1 + 1 written j: the shifted index as a paper would write it."""
    def val(n):
        if n.kind == "num":
            return 0, n.parts[0]
        if n.kind == "neg" and n.parts[0].kind == "num":
            return 0, -n.parts[0].parts[0]
        return n, 0

    parts = _terms(index) if index.kind == "add" else [index]
    flat = []
    for p in parts:
        flat.extend(_terms(p) if p.kind == "add" else [p])
    const = sum(val(p)[1] for p in flat)
    rest = [p for p in flat if val(p)[0] != 0]
    if not rest:
        return S.N("num", (const,))
    head = rest[0] if len(rest) == 1 else S.N("add", tuple(rest))
    if const == 0:
        return head
    return S.N("add", (*rest, S.N("num", (const,)) if const > 0 else S.N("neg", (S.N("num", (-const,)),))))


def _index_shifts(R):
    for n in _walk(R):
        if n.kind == "sub" and any(x.kind == "name" for x in _walk(n.parts[1])):
            for d in (1, -1):
                yield n, S.N("sub", (n.parts[0], _simplified(_shift(n.parts[1], d))), n.pos)
        if n.kind == "sum" and n.parts[2] is not None:
            index, lo, hi, body = n.parts
            for d in (1, -1):
                yield n, S.N("sum", (index, lo, _simplified(_shift(hi, d)), body), n.pos)


def _replace_node(node, old, new):
    if node is old:
        return new
    if isinstance(node, S.N):
        return S.N(node.kind, tuple(_replace_node(x, old, new) for x in node.parts), node.pos, node.ops)
    if isinstance(node, tuple):
        return tuple(_replace_node(x, old, new) for x in node)
    return node


def diagnose(el, pr, s):
    """The slip whose correction makes the step hold (proved), or None."""
    deadline = time.perf_counter() + 30.0
    for count, (slip, detail, fixed) in enumerate(candidates(el, s)):
        if count >= MAX_CANDIDATES or time.perf_counter() > deadline:
            break
        try:
            R = el.value(fixed, {})
            v, how = pr.step(s.lhs_expr, R, None)
        except (DerivationError, BudgetExceeded, TypeError, ValueError):
            continue
        if v.proved:
            return Diagnosis(slip, detail, S.latex(fixed), f"proved ({v.method})", True)
    return None
