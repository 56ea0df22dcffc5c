r"""The values of a scalar or vector derivation read by :mod:`.scalars` (:class:`Elaborator`).

- a declared real x_k of a sequence x_1, ..., x_V is the entry x[k] of an IndexedBase;
- a declared vector v in R^B is one block (B, v[i]); ``[u v]`` joins the blocks, so
  x = [x^{(1)} x^{(2)}] has two blocks of length B; a function of a vector (f(x), m(x), l(x))
  is evaluated block by block, for every length;
- ``\max_i x_i`` is :class:`~symattn.proof.maxcases.VecMax` of the blocks, ``\max(a, b)``
  SymPy's Max, ``\sum_i`` one finite sum per block, ``\sum_{k=1}^{j}`` a SymPy Sum;
- a running sequence m_j (``\leftarrow``) is an undefined real function m(j) (unfolded by
  :mod:`.scalar_prove` when a step needs it); ``m_0 = -\infty`` and ``d_0 = 0`` are its initial values.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..errors import DerivationError, UnknownSymbolError
from ..proof.maxcases import INDEX, VecMax, instantiate
from . import scalar_bounds as B
from . import scalars as S

MAX_LENGTH = 64  # a concrete length written in a declaration
#: A key of an evaluation environment: running values at index 0 are their initial values.
INITIAL = "\\initial"


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
        self.named: dict = {}  # name -> (what it is, where): every name is declared or defined once
        self.calling: list = []  # the functions being evaluated (a definition by itself is refused)
        self.bounds = [st for st in stmts if isinstance(st, B.Bound)]
        if self.bounds:
            self.bound_lengths(stmts)
        for st in stmts:
            if isinstance(st, S.Declare):
                self.declare(st)
        for st in stmts:
            if isinstance(st, S.Recur):
                base, index = st.target.parts
                if index.parts[1] or len(index.parts[0]) != 1:
                    raise _err(f"{S.latex(st.target)}: the running index must be a letter", st)
                self.claim_name(base.parts[0], "a running value", st)
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
    def bound_lengths(self, stmts):
        """The letters of ``1 \\le c < n`` as lengths (:mod:`.scalar_bounds`), each used as a length or a
        sum's bound somewhere in the file."""
        used = B.used_as_lengths(stmts, S)
        declared = {n.parts[0] for st in stmts if isinstance(st, S.Declare) for n in st.names if n.kind == "name"}
        for b in self.bounds:
            for x, v in B.lengths(b).items():
                if x not in used:
                    raise DerivationError(f"{x} in {B.text(b)} is neither a length nor the bound of a sum: the "
                                          "chain is read only as bounds on lengths", b.pos[0], b.pos[1],
                                          "bounds between lengths, as in 1 \\le c < n with c and n bounds of sums")
                if x in declared:
                    raise DerivationError(f"{x} in {B.text(b)} is declared as a number too", b.pos[0], b.pos[1],
                                          "a length bounded without its declaration as a real")
                if x in self.dims:
                    raise DerivationError(f"{x} is bounded twice", b.pos[0], b.pos[1], "one chain for each letter")
                self.dims[x] = v
            self.notes.append(f"assumed {B.text(b)} (whole numbers)")

    def claim_name(self, key: str, what: str, node):
        """Record that ``key`` is declared or defined as ``what`` at ``node``; a name declared or
        defined a second time (a function defined twice, a sequence x_1..x_V and a vector x, a
        real y and a vector y) is refused naming both places, never silently overwritten."""
        where = getattr(node, "pos", (0, 0))
        if key in self.named:
            first, at = self.named[key]
            base, _, sup = key.partition("^{")
            shown = S.latex(S.N("name", (base, sup[:-1])))
            raise _err(f"{shown} is declared twice: as {first} at line {at[0]}, column {at[1]}, and as {what} at "
                       f"line {where[0]}, column {where[1]}", node, "one declaration or definition for each name")
        self.named[key] = (what, where)

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
                self.claim_name(base.parts[0], f"a sequence of reals {S.latex(base)}_1, ..., {S.latex(base)}_{length}",
                                first)
                self.reals[base.parts[0]] = (sp.IndexedBase(base.parts[0], real=True), length)
                self.notes.append(f"{S.latex(base)}_1, ..., {S.latex(base)}_{length}: real numbers")
                return
            for n in names:
                if n.kind != "name":
                    raise _err(f"cannot declare {S.latex(n)}", n, "names, or x_1, \\ldots, x_V")
                self.claim_name(S.name_text(n), "a real number", n)
                self.values[S.name_text(n)] = sp.Symbol(S.name_text(n), real=True)
            return
        length = self.dim(st.power)
        for n in names:
            if n.kind == "sub":  # k_i \in R^d: one vector for each i (Rabe & Staats' keys k_i)
                raise _err(f"{S.latex(n)} \\in \\mathbb{{R}}^{{{S.latex(st.power)}}} declares a family of vectors, one "
                           "for each index, which the scalar reader does not read (its vectors are single names, its "
                           "sequences x_1, ..., x_V are of numbers)", n,
                           "single vectors x^{(1)}, x^{(2)} \\in \\mathbb{R}^{B}, or the vectors as the rows of a "
                           "declared matrix in a file of matrices")
            if n.kind != "name":
                raise _err(f"cannot declare {S.latex(n)} as a vector", n, "a name such as x^{(1)}")
            key = S.name_text(n)
            self.claim_name(key, f"a vector in R^{{{length}}}", n)
            self.vectors[key] = (sp.IndexedBase(key, real=True), length)
        self.notes.append(f"{', '.join(S.latex(n) for n in names)}: vectors of length {length} (real entries, "
                          "numbered from 1)")

    def define(self, st):
        key = S.name_text(st.target)
        self.claim_name(key, "a function" if st.params else "a value", st.target)
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
            at = self.index(index, env)
            if at == 0 and env.get(INITIAL):  # the initial value itself, before SymPy combines anything
                return self.initial[base.parts[0]]
            return self.seqfuns[base.parts[0]](at)
        if base.kind == "name" and S.name_text(base) in self.reals:
            at = self.index(index, env)
            self.check_in_sequence(S.name_text(base), at, node, below=True, above=True)
            return self.reals[S.name_text(base)][0][at]
        vec = self.value(base, env)
        if not isinstance(vec, Vec):
            raise _err(f"{S.latex(base)} is a number: it has no entries", node, "an entry of a vector")
        if index.kind == "name" and isinstance(env.get(S.name_text(index)), tuple):
            t, shape = env[S.name_text(index)]
            if [b[0] for b in vec.blocks] != shape:
                raise _err(f"{S.latex(base)} does not have the blocks of the vector the index "
                           f"{S.latex(index)} runs over", node)
            return vec.blocks[t][1]
        if index.kind == "name" and isinstance(env.get(S.name_text(index)), sp.Dummy):
            i = S.name_text(index)
            raise _err(f"{S.latex(node)}: {i} is the index of a sum or maximum with limits ({i} = ... to ...), which "
                       f"runs over numbers; the entries of the vector {S.latex(base)} are read over the vector itself",
                       node, f"\\sum_{i} {S.latex(base)}_{i} or \\max_{i} {S.latex(base)}_{i}")
        raise _err(f"the entry {S.latex(node)} of a vector at a fixed index is not read", node,
                   "\\max_i x_i, \\sum_i x_i, or a bmatrix from x_1 to x_B")

    def check_in_sequence(self, key, at, node, below: bool, above: bool):
        """Refuse an entry x_t of a declared sequence x_1, ..., x_V outside 1..V: a constant t < 1
        or t > V (x_0), or t = j + c with j a running index (which runs over 1..V) and c < 0 (x_{j-1}
        at j = 1) or c > 0 (at j = V). ``below``/``above``: which end to check."""
        length = self.reals[key][1]
        letters = {sp.Symbol(i, integer=True, positive=True) for i, _ in self.recurrences.values()}
        shown = f"{S.latex(S.N('name', (key, '')))}_1, ..., {S.latex(S.N('name', (key, '')))}_{length}"
        why = ""
        if at.is_Integer:
            if below and at < 1:
                why = f"{at} < 1"
            elif above and (at - length).is_positive:
                why = f"{at} > {length}"
        else:
            for J in at.free_symbols & letters:
                c = at - J
                if c.is_Integer and below and c < 0:
                    why = f"at {J} = 1 it is entry {1 + c}"
                elif c.is_Integer and above and c > 0:
                    why = f"at {J} = {length} it is entry {length} + {c}"
        if why:
            entry = S.latex(node) if node.kind == "sub" else f"{S.latex(node)} reads {key}_{{{sp.sstr(at)}}}, which"
            raise _err(f"{entry} is outside the declared {shown} ({why})", node,
                       f"entries {S.latex(S.N('name', (key, '')))}_1 to {S.latex(S.N('name', (key, '')))}_{length}")

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
        if key in self.calling:  # f(x) := \max(f(x), 0), or f through g back to f: no value
            path = " -> ".join(S.latex(S.N("name", (k.partition("^{")[0], k.partition("^{")[2][:-1])))
                               for k in [*self.calling, key])
            raise _err(f"{S.latex(name)} is defined in terms of itself ({path})", d.target,
                       "a definition from names defined before it (m_j \\leftarrow ... for a recurrence)")
        self.calling.append(key)
        try:
            return self.value(d.body, inner)
        finally:
            self.calling.pop()

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
        if what == "sum" and (b - a + 1).is_Integer and b - a + 1 <= 0:
            return sp.Integer(0)  # an empty range: the body is never evaluated (it may be undefined there)
        e = self.scalar(body, {**env, index: k})
        for x in sp.sympify(e).atoms(sp.Indexed):  # the entries at the ends of the range are declared
            key = str(x.base.label)
            if key in self.reals and x.base == self.reals[key][0] and x.indices[0].has(k):
                self.check_in_sequence(key, x.indices[0].xreplace({k: a}), node, below=True, above=False)
                self.check_in_sequence(key, x.indices[0].xreplace({k: b}), node, below=False, above=True)
        if what == "sum":
            return sp.Sum(e, (k, a, b))
        if (b - a).is_Integer and 0 <= b - a < 64:
            return sp.Max(*(e.xreplace({k: a + t}) for t in range(int(b - a) + 1)))
        raise _err(f"{S.latex(node)}: a maximum over a range of symbolic length is read only over a vector", node,
                   "\\max_i x_i of a declared vector")

    def check_last_index(self, node, base, n_last):
        """A bmatrix over a function's parameter v (any length) must end at v_n with n a length:
        a declared dimension (B), or the declared length of the vector named v. Anything else
        (v_{B-1}, v_{2B}) would drop or invent entries: refused, naming it."""
        if n_last.kind == "name" and not n_last.parts[1] and n_last.parts[0] in self.dims:
            return
        name = S.name_text(base) if base.kind == "name" else None
        declared = self.vectors.get(name) if name else None
        if declared is not None:
            want = self.value(n_last, {}) if n_last.kind in ("num", "name", "mul", "add", "neg") else None
            if want is not None and not isinstance(want, Vec) and sp.simplify(want - declared[1]) == 0:
                return
        lengths = ", ".join(sorted(self.dims)) or "B"
        raise _err(f"{S.latex(node)} ends at {S.latex(base)}_{{{S.latex(n_last)}}}: the last entry of a vector of "
                   f"any length is written at its length ({lengths}), so that every entry is read", node,
                   f"[... & \\ldots & ...{S.latex(base)}_{{{lengths.split(', ')[0]}}}...]")

    def vector(self, node, env):
        cells = node.parts
        if any(c.kind == "dots" for c in cells):
            if len(cells) != 3 or cells[1].kind != "dots":
                raise _err("a bmatrix with \\ldots must be [first & \\ldots & last]", node,
                           "[e^{x_1} & \\ldots & e^{x_B}]")
            first, last = cells[0], cells[2]
            letter = "\\iota"
            found = _running_body(first, last, S.N("name", (letter, "")))
            if found is None:
                raise _err(f"{S.latex(first)} and {S.latex(last)} differ elsewhere than in the index", node,
                           "cells that differ only in the index, from 1 to the last")
            body, base, n_last = found
            vec = self.value(base, env)
            if not isinstance(vec, Vec):
                raise _err(f"{S.latex(base)} is not a vector", node)
            shape = [b[0] for b in vec.blocks]
            if base.kind == "name" and S.name_text(base) not in env:  # a declared vector: its length is written
                want = self.index(n_last, env)
                if sp.simplify(want - vec.length) != 0:
                    raise _err(f"{S.latex(node)} ends at {want}, but {S.latex(base)} has length {vec.length}", node)
            else:  # a function's parameter, of any length: the last index must name a length
                self.check_last_index(node, base, n_last)
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


class _Differ(Exception):
    """The first and last cells of a bmatrix differ elsewhere than in the running index."""


def _running_body(first, last, letter):
    """(body, base v, last index n) when ``first`` and ``last`` differ only where ``first`` has
    v_1 and ``last`` has v_n (one vector v, one n): the body is ``first`` with ``letter`` at
    exactly those places. A v_1 that ``last`` also has as v_1 is a constant entry and stays
    (then it is refused as an entry at a fixed index, never taken for the running one). None
    when the cells differ elsewhere."""
    spots = []

    def walk(a, b):
        if isinstance(a, S.N) and isinstance(b, S.N):
            if a.kind == "sub" and b.kind == "sub" and a.parts[0] == b.parts[0] and a.parts[1] == S.N("num", (1,)) \
                    and b.parts[1] != a.parts[1]:
                spots.append((a.parts[0], b.parts[1]))
                return S.N("sub", (a.parts[0], letter), a.pos)
            if a.kind != b.kind or len(a.parts) != len(b.parts):
                raise _Differ
            return S.N(a.kind, tuple(walk(x, y) for x, y in zip(a.parts, b.parts)), a.pos, a.ops)
        if isinstance(a, tuple) and isinstance(b, tuple):
            if len(a) != len(b):
                raise _Differ
            return tuple(walk(x, y) for x, y in zip(a, b))
        if a != b:
            raise _Differ
        return a

    try:
        body = walk(first, last)
    except _Differ:
        return None
    if not spots or len({s[1] for s in spots}) != 1 or len({s[0] for s in spots}) != 1:
        return None
    return body, spots[0][0], spots[0][1]

