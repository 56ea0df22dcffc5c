r"""The meaning of a complex-number derivation (read by :mod:`.complex_reader`): exact real parts.

Every declared letter is real (SymPy ``real=True``): a real number, a vector of :math:`\mathbb{R}^2`
(its two real components), a 2 × 2 real matrix (its four entries), or a complex number of
``\mathbb{C}`` (its real and imaginary parts). A value is one of

- ``real``: a real SymPy expression;
- ``cx``: a complex number, the pair (real part, imaginary part) of real expressions;
- ``vec``: a vector of R^2, the pair of its components; ``mat``: a 2 × 2 real matrix.

``i`` is the imaginary unit, unless the file uses i as an index (a subscript ``x_i``), declares it
or names a parameter i: then the file is refused where i is written as a factor (``\mathrm{i}`` is
always the unit). ``e^{z}`` and ``\exp(z)`` are the exponential, ``e^{a + ib} = e^a (\cos b + i \sin
b)``; ``\overline{z}``, ``\bar{z}``, ``z^{*}`` the conjugate; ``\mathrm{Re}``, ``\mathrm{Im}``,
``|z|``, ``\langle u, v \rangle`` = u_1 v_1 + u_2 v_2 (the inner product of R^2).

A vector of R^2 used as a complex number (multiplied by a complex number, conjugated, added to one,
under Re or Im, compared with one) is read by RoPE's identification R^2 = C, (a, b) = a + ib; a
product of two vectors (neither complex) and a complex number multiplied by a matrix are refused.
The components of a vector: ``x_0, x_1`` (numbered from 0) or ``x_1, x_2`` (from 1), as the file
numbers them (a file that writes only x_1 is refused: which one is it?), and ``x_m^{(1)}``,
``x_m^{(2)}`` for the vector x_m; the entries of a matrix W: ``W^{(11)}`` ... ``W^{(22)}``.
Undeclared letters without subscript (the positions m, n) are read as real numbers, and the
scope of a proof names them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy as sp

from ..errors import DerivationError, ParseError
from .complex_reader import FAMILY, Chain, Declare, N, Name

MAX_CALLS = 200
WORDS = {"real": "a real number", "cx": "a complex number", "vec": "a vector of R^2", "mat": "a 2 × 2 matrix"}


@dataclass(frozen=True)
class Val:
    kind: str  # real, cx, vec, mat
    data: object

    def pair(self):
        """(real part, imaginary part): a real is a + 0i, a vector of R^2 is a + ib (R^2 = C)."""
        if self.kind == "real":
            return (self.data, sp.Integer(0))
        if self.kind in ("cx", "vec"):
            return self.data
        raise DerivationError("a 2 × 2 matrix is not a complex number", 0, 0)

    def parts(self) -> list:
        """The real numbers a claim about this value compares."""
        if self.kind == "real":
            return [self.data]
        if self.kind == "mat":
            return list(self.data)
        return list(self.data)


def cx(a, b) -> Val:
    return Val("cx", (sp.sympify(a), sp.sympify(b)))


def walk(node):
    """Every node under ``node`` (itself included)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(n)
        elif isinstance(n, N):
            yield n
            stack.extend(n.parts)


def names_in(node) -> list:
    return [n.parts[0] for n in walk(node) if n.kind == "name"]


def instantiate(node, member: str):
    """``node`` with each family subscript ``\\{q,k\\}`` replaced by ``member``."""
    if isinstance(node, tuple):
        return tuple(instantiate(x, member) for x in node)
    if not isinstance(node, N):
        return node
    if node.kind == "name":
        nm = node.parts[0]
        if FAMILY.fullmatch(nm.sub):
            nm = Name(nm.base, member, nm.sup, nm.primes, nm.bold)
        return N("name", (nm,), node.pos, node.span)
    return N(node.kind, instantiate(node.parts, member), node.pos, node.span)


def family_members(node) -> list:
    found = {re.sub(r"\s", "", nm.sub) for nm in names_in(node) if FAMILY.fullmatch(nm.sub)}
    if len(found) > 1:
        raise ParseError(f"two families in one statement ({', '.join(sorted(found))})", *node.pos,
                         "one family \\{q,k\\} per statement")
    if not found:
        return []
    return re.findall(r"[A-Za-z]", found.pop())


class Meaning:
    """The declarations, definitions and claims of a complex-number derivation, and their values."""

    def __init__(self, stmts: list):
        self.reals, self.vectors, self.matrices, self.complexes = {}, {}, {}, {}
        self.functions: dict = {}  # key -> (params, body, pos)
        self.opaque: dict = {}  # key -> pos: defined with an argument that is no name
        self.values: dict = {}
        self.undeclared: dict = {}  # letter -> Symbol (positions m, n)
        self.claims: list = []  # Chain (the first link defines when the first side is new)
        self.notes: list = []
        self.definitions: list = []
        self.calls = 0
        self.identified: set = set()  # the readings by R^2 = C a step used (its scope names them)
        self._declare(s for s in stmts if isinstance(s, Declare))
        for key in [*self.reals, *self.complexes]:
            m = re.fullmatch(r"(.+?)_(\d)", key)
            if m and m.group(1) in self.vectors:
                raise ParseError(f"{key} is declared, and {m.group(1)} is a vector of R^2 whose components are written "
                                 f"{m.group(1)}_0, {m.group(1)}_1 (or from 1): which is {key}?", *stmts[0].pos,
                                 "another letter for the number")
        for s in stmts:
            if isinstance(s, Chain):
                self._statement(s)
        self.i_index = self._i_index(stmts)
        self.origin = self._component_origin(stmts)

    # --- declarations and definitions
    def _declare(self, decls):
        for d in decls:
            for nm in d.names:
                key = nm.key
                if key in self.all_names():
                    raise ParseError(f"{nm.text()} is declared twice", *d.pos, "one declaration")
                sym = sp.Symbol(key, real=True)
                if d.space == ("R",):
                    self.reals[key] = sym
                elif d.space == ("C",):
                    self.complexes[key] = (sp.Symbol(f"Re({key})", real=True), sp.Symbol(f"Im({key})", real=True))
                elif d.space == ("R", 2):
                    self.vectors[key] = None  # components named once the numbering is known
                elif d.space == ("R", 2, 2):
                    self.matrices[key] = sp.Matrix(2, 2, [sp.Symbol(f"{key}^{{({r}{c})}}", real=True)
                                                          for r in (1, 2) for c in (1, 2)])
                else:
                    size = " \\times ".join(str(x) for x in d.space[1:])
                    raise ParseError(f"{nm.text()} \\in \\mathbb{{R}}^{{{size}}}: the complex reader reads vectors of "
                                     "R^2 (the identification R^2 = C of RoPE's complex form, one pair of coordinates) "
                                     "and 2 × 2 matrices only", *d.pos, "\\mathbb{R}^{2}, one pair of coordinates")

    def all_names(self) -> set:
        return {*self.reals, *self.vectors, *self.matrices, *self.complexes, *self.functions, *self.values}

    def _statement(self, ch: Chain):
        first = ch.first
        if first.kind == "app" and first.parts[0].kind == "name":
            key = first.parts[0].parts[0].key
            fam = family_members(first.parts[0])
            known = [m for m in fam if instantiate(first.parts[0], m).parts[0].key in self.functions]
            if not fam and key not in self.all_names() and key not in self.opaque:
                args = first.parts[1]
                if all(a.kind == "name" for a in args):
                    self.functions[key] = (tuple(a.parts[0] for a in args), ch.links[0][1], ch.pos)
                    self.definitions.append(f"{first.parts[0].parts[0].text()} defined at line {ch.pos[0]}")
                else:
                    self.opaque[key] = ch.pos  # g(x_m, x_n, m - n) = ...: a name of the body, not a function
                    self.definitions.append(f"{first.parts[0].parts[0].text()} named at line {ch.pos[0]} (its "
                                            "arguments are not all names: its uses are refused)")
                if len(ch.links) > 1:
                    self.claims.append(Chain(ch.links[0][1], ch.links[1:], ch.links[0][0]))
                return
            if fam and not known and len(ch.links) == 1 and all(a.kind == "name" for a in first.parts[1]):
                for m in fam:  # f_{\{q,k\}}(x, m) = (W_{\{q,k\}} x) e^{im\theta}: f_q and f_k defined
                    head, args = instantiate(first.parts[0], m), instantiate(first.parts[1], m)
                    self.functions[head.parts[0].key] = (tuple(a.parts[0] for a in args),
                                                         instantiate(ch.links[0][1], m), ch.pos)
                    self.definitions.append(f"{head.parts[0].text()} defined at line {ch.pos[0]}")
                return
            if fam and len(known) != len(fam):
                raise ParseError(f"{first.parts[0].parts[0].text()} stands for {', '.join(fam)}, which are not all "
                                 "defined", *first.pos, "define each member first")
        elif first.kind == "name" and first.parts[0].key not in self.all_names() and not self._is_component(
                first.parts[0]):
            self.values[first.parts[0].key] = ch.links[0][1]
            self.definitions.append(f"{first.parts[0].text()} defined at line {ch.pos[0]}")
            if len(ch.links) > 1:
                self.claims.append(Chain(ch.links[0][1], ch.links[1:], ch.links[0][0]))
            return
        self.claims.append(ch)

    def _is_component(self, nm: Name) -> bool:
        return (nm.sup.startswith("(") and Name(nm.base, nm.sub, "", nm.primes).key in {**self.vectors,
                                                                                      **self.matrices}) or (
            nm.sub.isdigit() and Name(nm.base, "", "", nm.primes).key in self.vectors)

    def _every_node(self, stmts):
        for s in stmts:
            if isinstance(s, Chain):
                yield from walk(s.first)
                for _, n in s.links:
                    yield from walk(n)

    def _i_index(self, stmts):
        """Where the file uses i as an index or a name (a subscript x_i, a declaration, a parameter)."""
        if "i" in self.all_names():
            return "i is declared"
        for params, _, pos in self.functions.values():
            if any(p.key == "i" for p in params):
                return f"i is a parameter of a function defined at line {pos[0]}"
        for s in stmts:
            names = s.names if isinstance(s, Declare) else [n.parts[0] for n in self._every_node([s])
                                                           if n.kind == "name"]
            for nm in names:
                if "i" in re.sub(r"\\[A-Za-z]+", "", nm.sub + nm.sup):  # x_i, x_{ij}, x^{(i)}: letters of an index
                    return f"i is an index of this file ({nm.text()}, line {s.pos[0]})"
        return None

    def _component_origin(self, stmts) -> int:
        """0 or 1: how the file numbers the components x_0, x_1 (or x_1, x_2) of its vectors."""
        bold = {nm.key for n in self._every_node(stmts) if n.kind == "name" for nm in [n.parts[0]] if nm.bold}
        bases = set(self.vectors) | bold
        for params, _, _ in self.functions.values():
            bases |= {p.key for p in params}
        used = sorted({int(nm.sub) for n in self._every_node(stmts) if n.kind == "name" for nm in [n.parts[0]]
                       if nm.sub.isdigit() and not nm.sup and Name(nm.base, "", "", nm.primes).key in bases})
        for key in self.vectors:
            self.vectors[key] = self._components(key, 0 if 0 in used else 1)
        if not used or 0 in used and 2 not in used:
            return 0 if used else 1
        if 0 not in used and 1 in used and 2 in used:
            return 1
        if used == [1]:
            raise ParseError("the components of a vector of R^2 are written x_1 only: numbered from 0 (x_0, x_1) or "
                             "from 1 (x_1, x_2)? the file does not say", *stmts[0].pos, "both components, x_0 and x_1")
        raise ParseError(f"the components {', '.join(str(u) for u in used)} of a vector of R^2: two components, "
                         "numbered from 0 or from 1", *stmts[0].pos, "x_0, x_1 or x_1, x_2")

    def _components(self, key: str, origin: int):
        if "_" in key or "^" in key:
            return tuple(sp.Symbol(f"{key}^{{({t})}}", real=True) for t in (1, 2))
        return tuple(sp.Symbol(f"{key}_{origin + t}", real=True) for t in (0, 1))

    # --- values
    def fail(self, node: N, msg: str):
        raise DerivationError(msg, *node.pos)

    def name(self, node: N, env: dict) -> Val:
        nm = node.parts[0]
        key = nm.key
        if key in env:
            return env[key]
        if key in self.reals:
            return Val("real", self.reals[key])
        if key in self.vectors:
            return Val("vec", self.vectors[key])
        if key in self.matrices:
            return Val("mat", self.matrices[key])
        if key in self.complexes:
            return Val("cx", self.complexes[key])
        if key in self.values:
            self.calls += 1
            if self.calls > MAX_CALLS:
                self.fail(node, f"{nm.text()} is defined in terms of itself")
            return self.value(self.values[key], {})
        if key in self.functions or key in self.opaque:
            self.fail(node, f"the function {nm.text()} is written without its arguments")
        if key == "i":
            if self.i_index:
                raise ParseError(f"i written as a factor where {self.i_index}: is it the index or the imaginary "
                                 "unit? the reader does not guess", *node.pos,
                                 "\\mathrm{i} for the imaginary unit, or another letter for the index")
            return cx(0, 1)
        if key == "e":
            self.fail(node, "e without an exponent")
        # a component: x_0 of the vector x (declared or a parameter), x_m^{(1)} of x_m, W^{(12)} of W
        if nm.sup:
            m = re.fullmatch(r"\((\d)(\d)?\)", nm.sup)
            owner = Name(nm.base, nm.sub, "", nm.primes).key
            v = env.get(owner) or self._known(owner)
            if m and v is not None:
                if v.kind == "vec" and m.group(2) is None and m.group(1) in "12":
                    return Val("real", v.data[int(m.group(1)) - 1])
                if v.kind == "mat" and m.group(2) is not None and set(m.group(1, 2)) <= set("12"):
                    return Val("real", v.data[int(m.group(1)) - 1, int(m.group(2)) - 1])
                what = {"vec": "a vector of R^2", "mat": "a 2 × 2 matrix"}.get(v.kind, "a number")
                self.fail(node, f"{nm.text()} is no component of {owner} ({what})")
        if nm.sub.isdigit():
            owner = Name(nm.base, "", "", nm.primes).key
            v = env.get(owner) or self._known(owner)
            if v is not None:
                t = int(nm.sub) - self.origin
                if v.kind != "vec" or t not in (0, 1):
                    self.fail(node, f"{nm.text()} is no component of {owner} (components numbered from {self.origin})")
                return Val("real", v.data[t])
        if len(nm.base) == 1 and not (nm.sub or nm.sup or nm.primes):
            sym = self.undeclared.setdefault(key, sp.Symbol(key, real=True))
            return Val("real", sym)
        self.fail(node, f"{nm.text()} is not declared (declare it, e.g. {nm.text()} \\in \\mathbb{{R}})")

    def cx_of(self, v: Val):
        """(real part, imaginary part) of ``v``; a vector of R^2 read so is noted (R^2 = C)."""
        if v.kind == "vec":
            self.identified.add("a vector of R^2 read as a complex number (R^2 = C)")
        return v.pair()

    def _known(self, key):
        if key in self.vectors:
            return Val("vec", self.vectors[key])
        if key in self.matrices:
            return Val("mat", self.matrices[key])
        return None

    def value(self, node: N, env: dict) -> Val:
        k, p = node.kind, node.parts
        if k == "num":
            return Val("real", sp.Integer(p[0]))
        if k == "name":
            return self.name(node, env)
        if k == "unit":
            return cx(0, 1)
        if k == "pi":
            return Val("real", sp.pi)
        if k == "add":
            out = self.value(p[0], env)
            for t in p[1:]:
                out = self.add(out, self.value(t, env), t)
            return out
        if k == "neg":
            return self.scale(self.value(p[0], env), -1)
        if k == "mul":
            out = self.value(p[0], env)
            for f in p[1:]:
                out = self.mul(out, self.value(f, env), f)
            return out
        if k == "div":
            a, b = self.value(p[0], env), self.value(p[1], env)
            if b.kind == "real":
                if b.data == 0:
                    self.fail(node, "a division by 0")
                return self.scale(a, 1 / b.data)
            if b.kind in ("vec", "mat") or a.kind == "mat":
                self.fail(node, "a division by a vector or a matrix")
            c, d = self.cx_of(b)
            return self.mul(a, cx(c / (c ** 2 + d ** 2), -d / (c ** 2 + d ** 2)), node)
        if k == "pow":
            a, e = self.value(p[0], env), self.value(p[1], env)
            if e.kind != "real" or not e.data.is_Integer or (a.kind != "real" and e.data < 0):
                self.fail(node, "a power is read to a whole number (a complex number to one >= 0); e^{...} is the "
                          "exponential")
            if a.kind == "real":
                return Val("real", a.data ** e.data)
            out = Val("real", sp.Integer(1))
            for _ in range(int(e.data)):
                out = self.mul(out, a, node)
            return out
        if k == "exp":
            if "e" in self.all_names() or "e" in env:
                raise ParseError("e^{...} where the file names e (a declaration, a definition or a parameter): is it "
                                 "the exponential or a power of e? the reader does not guess", *node.pos,
                                 "\\exp(...) for the exponential, or another letter for the name")
            a = self.value(p[0], env)
            if a.kind == "real":
                return Val("real", sp.exp(a.data))
            if a.kind != "cx":
                self.fail(node, "the exponential of a vector or a matrix")
            re_, im_ = a.data
            return cx(sp.exp(re_) * sp.cos(im_), sp.exp(re_) * sp.sin(im_))
        if k in ("cos", "sin"):
            a = self.value(p[0], env)
            if a.kind != "real":
                self.fail(node, f"\\{k} of a complex number, a vector or a matrix is not read")
            return Val("real", (sp.cos if k == "cos" else sp.sin)(a.data))
        if k == "conj":
            a = self.value(p[0], env)
            if a.kind == "real":
                return a
            if a.kind == "mat":
                self.fail(node, "the conjugate of a matrix is not read")
            re_, im_ = self.cx_of(a)
            return cx(re_, -im_)
        if k in ("re", "im"):
            a = self.value(p[0], env)
            if a.kind == "mat":
                self.fail(node, f"\\mathrm{{{k.title()}}} of a matrix")
            return Val("real", self.cx_of(a)[0 if k == "re" else 1])
        if k == "abs":
            a = self.value(p[0], env)
            if a.kind == "real":
                return Val("real", sp.Abs(a.data))
            if a.kind == "mat":
                self.fail(node, "|W| of a matrix is not read")
            re_, im_ = self.cx_of(a)
            return Val("real", sp.sqrt(re_ ** 2 + im_ ** 2))
        if k == "inner":
            a, b = self.value(p[0], env), self.value(p[1], env)
            if a.kind in ("real", "mat") or b.kind in ("real", "mat"):
                self.fail(node, "\\langle u, v \\rangle is read for vectors of R^2 (or complex numbers, R^2 = C)")
            if "cx" in (a.kind, b.kind):
                self.identified.add("\\langle u, v \\rangle of complex numbers read as the inner product of R^2 "
                                    "(R^2 = C)")
            (a1, a2), (b1, b2) = a.pair(), b.pair()
            return Val("real", a1 * b1 + a2 * b2)
        if k == "mat":
            rows = [[self.value(c, env) for c in row] for row in p]
            if any(c.kind != "real" for row in rows for c in row):
                self.fail(node, "a matrix of numbers that are not real")
            shape = (len(rows), len(rows[0]))
            if any(len(r) != shape[1] for r in rows) or shape not in ((2, 2), (2, 1)):
                self.fail(node, f"a {shape[0]} × {shape[1]} matrix: the complex reader reads 2 × 2 matrices and "
                          "vectors of R^2 (2 × 1)")
            if shape == (2, 1):
                return Val("vec", (rows[0][0].data, rows[1][0].data))
            return Val("mat", sp.Matrix(2, 2, [c.data for row in rows for c in row]))
        if k == "app":
            return self.call(node, env)
        self.fail(node, f"a {k} is not read")

    def call(self, node: N, env: dict) -> Val:
        head, args = node.parts
        key = head.parts[0].key
        if key in self.opaque:
            self.fail(node, f"{head.parts[0].text()} is named at line {self.opaque[key][0]} with an argument that is "
                      "no name: its uses are not read (define it with names as arguments)")
        if key not in self.functions:
            if len(args) == 1:  # x(a + b): a product
                return self.mul(self.value(head, env), self.value(args[0], env), node)
            self.fail(node, f"{head.parts[0].text()} is not a function the file defines")
        params, body, _ = self.functions[key]
        if len(params) != len(args):
            self.fail(node, f"{head.parts[0].text()} takes {len(params)} arguments, got {len(args)}")
        self.calls += 1
        if self.calls > MAX_CALLS:
            self.fail(node, "too many function calls (a definition in terms of itself?)")
        inner = {p.key: self.value(a, env) for p, a in zip(params, args)}
        return self.value(body, inner)

    # --- arithmetic
    def scale(self, a: Val, c) -> Val:
        if a.kind == "real":
            return Val("real", a.data * c)
        if a.kind == "mat":
            return Val("mat", a.data * c)
        return Val(a.kind, (a.data[0] * c, a.data[1] * c))

    def add(self, a: Val, b: Val, node: N) -> Val:
        if a.kind == b.kind == "real":
            return Val("real", a.data + b.data)
        if a.kind == b.kind and a.kind in ("vec", "mat"):
            return Val(a.kind, a.data + b.data if a.kind == "mat" else (a.data[0] + b.data[0], a.data[1] + b.data[1]))
        if "mat" in (a.kind, b.kind) or {a.kind, b.kind} == {"real", "vec"}:
            self.fail(node, f"cannot add {WORDS[a.kind]} and {WORDS[b.kind]}")
        (a1, a2), (b1, b2) = self.cx_of(a), self.cx_of(b)
        return cx(a1 + b1, a2 + b2)

    def mul(self, a: Val, b: Val, node: N) -> Val:
        if a.kind == "real":
            return self.scale(b, a.data)
        if b.kind == "real":
            return self.scale(a, b.data)
        if a.kind == "mat" and b.kind in ("mat", "vec"):
            if b.kind == "mat":
                return Val("mat", a.data * b.data)
            v = a.data * sp.Matrix(b.data)
            return Val("vec", (v[0], v[1]))
        if "mat" in (a.kind, b.kind):
            self.fail(node, f"cannot multiply {WORDS[a.kind]} by {WORDS[b.kind]} (a 2 × 2 matrix acts on a vector "
                      "of R^2)")
        if a.kind == b.kind == "vec":
            self.fail(node, "a product of two vectors of R^2 is not read: \\langle u, v \\rangle for the inner "
                      "product, or a conjugate u v^{*} for complex numbers")
        (a1, a2), (b1, b2) = self.cx_of(a), self.cx_of(b)
        return cx(a1 * b1 - a2 * b2, a1 * b2 + a2 * b1)

    def claim_parts(self, node: N) -> list:
        """The instances of a statement about a family ``\\{q,k\\}`` (or the statement itself)."""
        return [(m, instantiate(node, m)) for m in family_members(node)] or [(None, node)]

    def compare(self, a: Val, b: Val, node: N) -> tuple[list, list, str]:
        """The real numbers the claim a = b compares, and how (R^2 = C when a vector meets a complex)."""
        if a.kind == b.kind:
            return a.parts(), b.parts(), ""
        if "mat" in (a.kind, b.kind) or {a.kind, b.kind} == {"real", "vec"}:
            self.fail(node, f"the sides are {WORDS[a.kind]} and {WORDS[b.kind]}")
        how = "a vector of R^2 read as a complex number (R^2 = C)" if "vec" in (a.kind, b.kind) else ""
        return list(a.pair()), list(b.pair()), how
