r"""A re-typesetter for the derivations of ``examples/papers``: the same formulas in other LaTeX styles.

A file is split into prose (comments, ``%:`` directives, text, kept verbatim) and formulas
(``$...$``, ``\(...\)``, ``$$...$$``, ``\[...\]``, ``\begin{align*}...``). A formula's body is a
list of LaTeX tokens (:class:`Tok`): a font or text command with its braced argument (``\mathbf{W}``,
``\text{where}``, ``\label{eq:x}``) is one opaque token, so that no style ever looks inside
``\mathbf{1}`` or ``\text{...}``. On these tokens :func:`items` finds the pieces of a formula that
a product is made of (a name with its scripts, a parenthesis, a fraction, a sum with its limits, an
operator), so that a style knows where a ``\cdot`` or a space may go and where it may not.

Each style is a function ``style(text, rng, ctx) -> text`` (its docstring says what it changes);
:func:`retypeset` applies a random subset of :data:`STYLES` in a fixed order, and :func:`variants`
makes distinct variants of a file from a seed. Every style writes what a paper could write for the
same formulas; :data:`WRONG` is a style that does not (it moves a transpose), for the test that the
property can fail.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

# --- tokens ------------------------------------------------------------------------------------

#: Commands whose braced argument is one opaque token: fonts, text, and what takes a label.
WORDS = ("mathbf", "boldsymbol", "bm", "mathit", "mathbfit", "operatorname", "mathrm", "text", "textrm",
         "mathsf", "mathbb", "mathcal", "textbf", "textit", "mbox", "textnormal",
         "tag", "label", "eqref", "ref", "begin", "end", "hspace", "vspace")
NAME_FONTS = ("mathbf", "boldsymbol", "bm")
TEXT_FONTS = ("text", "textrm", "mbox", "textnormal", "textit", "textbf")
JOIN_WORDS = ("where", "and", "with", "for", "for all", "s.t.", "i.e.", "here", "then", "so", "thus", "hence")
GREEK = set("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho "
            "sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi "
            "Omega ell".split())
SPACE_CMDS = ("quad", "qquad", "enspace", "thinspace", "medspace", "thickspace", "displaystyle", "textstyle")
SPACE_SYMS = ("\\,", "\\;", "\\:", "\\!", "\\ ")
LEFT = ("\\left", "\\bigl", "\\Bigl", "\\biggl", "\\Biggl", "\\big", "\\Big", "\\bigg", "\\Bigg")
RIGHT = ("\\right", "\\bigr", "\\Bigr", "\\biggr", "\\Biggr", "\\big", "\\Big", "\\bigg", "\\Bigg")
FRACS = ("\\frac", "\\tfrac", "\\dfrac")
MATRIX_ENVS = ("bmatrix", "pmatrix", "matrix")
DISPLAY_ENVS = ("align*", "align", "equation", "equation*", "gather*", "gather", "multline*")
INNER_ENVS = ("aligned", "split")
NUMBERED = ("align", "equation", "gather")
TRANSPOSE_FORMS = ("T", "{T}", "\\top", "{\\top}", "\\intercal", "{\\intercal}", "{\\mathsf{T}}", "\\mathsf{T}")


@dataclass
class Tok:
    """A LaTeX token: ``kind`` is letter, digit, char, space, cmd (``\\name``), sym (``\\,``, ``\\\\``),
    word (``\\cmd{arg}``, opaque), open/close (``{``/``}``) or comment."""

    kind: str
    text: str
    cmd: str = ""  # for a word: the command without its backslash
    arg: str = ""  # for a word: the text of its braced argument

    @staticmethod
    def word(cmd: str, arg: str) -> Tok:
        return Tok("word", f"\\{cmd}{{{arg}}}", cmd, arg)

    def is_(self, kind: str, text: str | None = None) -> bool:
        return self.kind == kind and (text is None or self.text == text)


def _braced(s: str, i: int) -> int:
    """The index after the ``}`` that closes the ``{`` at ``s[i]``."""
    depth = 0
    j = i
    while j < len(s):
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ValueError(f"unbalanced braces at {i}")


def tokenize(s: str) -> list[Tok]:
    """The tokens of a formula's body (no ``$`` inside)."""
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "%":
            j = s.find("\n", i)
            j = len(s) if j < 0 else j
            out.append(Tok("comment", s[i:j]))
            i = j
        elif c == "\\":
            j = i + 1
            while j < len(s) and s[j].isascii() and s[j].isalpha():
                j += 1
            if j == i + 1:  # \, \\ \{ ...
                out.append(Tok("sym", s[i:i + 2]))
                i += 2
                continue
            name = s[i + 1:j]
            k = j
            while k < len(s) and s[k] in " \t":
                k += 1
            if name in WORDS and k < len(s) and s[k] == "{":
                end = _braced(s, k)
                out.append(Tok("word", s[i:end], name, s[k + 1:end - 1]))
                i = end
            else:
                out.append(Tok("cmd", s[i:j]))
                i = j
        elif c in " \t\n~\r":
            j = i
            while j < len(s) and s[j] in " \t\n~\r":
                j += 1
            out.append(Tok("space", s[i:j]))
            i = j
        elif c == "d" and s[i + 1:i + 2].isascii() and s[i + 1:i + 2].isupper() and not s[i - 1:i].isalpha():
            out.append(Tok("letter", s[i:i + 2]))  # dV, the gradient of V (a backward pass): one name
            i += 2
        elif c.isascii() and c.isalpha():
            out.append(Tok("letter", c))
            i += 1
        elif c.isdigit():
            out.append(Tok("digit", c))
            i += 1
        elif c == "{":
            out.append(Tok("open", c))
            i += 1
        elif c == "}":
            out.append(Tok("close", c))
            i += 1
        else:
            out.append(Tok("char", c))
            i += 1
    return out


def untokenize(toks: list[Tok]) -> str:
    """The text of the tokens; a space after a control word that a letter follows (``\\top V``)."""
    out = []
    for k, t in enumerate(toks):
        out.append(t.text)
        if t.kind == "cmd" and k + 1 < len(toks) and toks[k + 1].text[:1].isalpha():
            out.append(" ")
    return "".join(out)


# --- the file: prose and formulas -----------------------------------------------------------------


@dataclass
class Formula:
    """A formula: its opening and closing delimiters and its body's tokens."""

    open: str
    body: list
    close: str

    @property
    def inline(self) -> bool:
        return self.open in ("$", "\\(")

    def text(self) -> str:
        return self.open + untokenize(self.body) + self.close


def split_file(text: str) -> list:
    """Prose (str) and :class:`Formula` parts, in order; joined back they give ``text``."""
    parts, prose, i = [], [], 0

    def flush():
        if prose:
            parts.append("".join(prose))
            prose.clear()

    while i < len(text):
        c = text[i]
        if c == "%":
            j = text.find("\n", i)
            j = len(text) if j < 0 else j
            prose.append(text[i:j])
            i = j
            continue
        opener = None
        if text.startswith("$$", i):
            opener, closer = "$$", "$$"
        elif c == "$":
            opener, closer = "$", "$"
        elif text.startswith("\\[", i):
            opener, closer = "\\[", "\\]"
        elif text.startswith("\\(", i):
            opener, closer = "\\(", "\\)"
        else:
            m = re.match(r"\\begin\{([a-z*]+)\}", text[i:])
            if m and m.group(1) in DISPLAY_ENVS:
                opener, closer = m.group(0), f"\\end{{{m.group(1)}}}"
        if opener is None:
            prose.append(c)
            i += 1
            continue
        start = i + len(opener)
        end = text.index(closer, start)
        flush()
        parts.append(Formula(opener, tokenize(text[start:end]), closer))
        i = end + len(closer)
    flush()
    return parts


def join_file(parts: list) -> str:
    return "".join(p if isinstance(p, str) else p.text() for p in parts)


def map_formulas(text: str, fn) -> str:
    """``text`` with ``fn(body, formula) -> body`` applied to every formula's body."""
    parts = split_file(text)
    for p in parts:
        if isinstance(p, Formula):
            p.body = fn(p.body, p)
    return join_file(parts)


# --- the pieces of a formula -------------------------------------------------------------------------


@dataclass
class Item:
    """Tokens ``[start, end)`` of a body: kind atom (a name, number, root, matrix, with its scripts),
    paren (a bracket pair with what follows it), frac, sum (with its limits), brace, space or op."""

    start: int
    end: int
    kind: str
    inner: list = field(default_factory=list)  # (start, end) ranges that hold a sub-formula


def _skip(b, k, hi):
    while k < hi and b[k].kind == "space":
        k += 1
    return k


def _group_end(b, k):
    """The index after the group that opens at ``b[k]`` (``{``...``}``)."""
    depth = 0
    for j in range(k, len(b)):
        if b[j].kind == "open":
            depth += 1
        elif b[j].kind == "close":
            depth -= 1
            if depth == 0:
                return j + 1
    raise ValueError("unbalanced group")


def _env_end(b, k):
    depth = 0
    for j in range(k, len(b)):
        if b[j].kind == "word" and b[j].cmd == "begin":
            depth += 1
        elif b[j].kind == "word" and b[j].cmd == "end":
            depth -= 1
            if depth == 0:
                return j + 1
    raise ValueError("unbalanced environment")


def _is_open(b, k):
    """``(`` or ``[`` at k, or a size command before one: the index of the bracket, else None."""
    t = b[k]
    if t.kind == "char" and t.text in "([":
        return k
    if t.kind == "cmd" and t.text in LEFT and k + 1 < len(b) and b[k + 1].kind == "char" and b[k + 1].text in "([":
        return k + 1
    return None


def _paren_end(b, k):
    """The index after the bracket (with its size command) that closes the one opened at ``b[k]``."""
    depth = 0
    j = k
    while j < len(b):
        t = b[j]
        if t.kind == "char" and t.text in "([":
            depth += 1
        elif t.kind == "char" and t.text in ")]":
            depth -= 1
            if depth == 0:
                return j + 1
        elif t.kind == "open":
            j = _group_end(b, j)
            continue
        j += 1
    raise ValueError("unbalanced brackets")


def script_arg_end(b, k):
    """The index after the argument of the ``^`` or ``_`` at ``b[k]``."""
    j = _skip(b, k + 1, len(b))
    if b[j].kind == "open":
        return _group_end(b, j)
    return j + 1


def _scripts(b, k, hi):
    while k < hi and (b[k].is_("char", "^") or b[k].is_("char", "_") or b[k].is_("char", "'")):
        k = k + 1 if b[k].text == "'" else script_arg_end(b, k)
    return k


def is_join_word(t: Tok) -> bool:
    return t.kind == "word" and t.cmd in TEXT_FONTS and (
        " ".join(t.arg.split()).lower().strip(",.;:") in JOIN_WORDS or t.arg.strip() in ("-", ""))


def items(b: list, lo: int = 0, hi: int | None = None) -> list:
    """The pieces of ``b[lo:hi]`` at its top level (see :class:`Item`)."""
    hi = len(b) if hi is None else hi
    out, k = [], lo
    while k < hi:
        t, start = b[k], k
        if t.kind == "space" or t.text in SPACE_SYMS or (t.kind == "cmd" and t.text[1:] in SPACE_CMDS) or \
                t.kind == "comment":
            out.append(Item(k, k + 1, "space"))
            k += 1
            continue
        inner = []
        if t.kind == "letter" or (t.kind == "cmd" and t.text[1:] in GREEK) or (
                t.kind == "word" and t.cmd not in ("tag", "label", "begin", "end", "eqref", "ref", "hspace", "vspace")
                and not is_join_word(t)):
            kind, k = "atom", k + 1
        elif t.kind == "digit":
            while k < hi and b[k].kind == "digit":
                k += 1
            kind = "atom"
        elif t.kind == "cmd" and t.text in FRACS:
            a = _skip(b, k + 1, hi)
            a_end = _group_end(b, a)
            d = _skip(b, a_end, hi)
            d_end = _group_end(b, d)
            kind, k, inner = "frac", d_end, [(a + 1, a_end - 1), (d + 1, d_end - 1)]
        elif t.kind == "cmd" and t.text == "\\sqrt":
            a = _skip(b, k + 1, hi)
            if b[a].kind == "open":
                kind, k, inner = "atom", _group_end(b, a), [(a + 1, _group_end(b, a) - 1)]
            else:
                kind, k = "atom", a + 1
        elif _is_open(b, k) is not None:
            o = _is_open(b, k)
            end = _paren_end(b, o)
            kind, k, inner = "paren", end, [(o + 1, end - 2 if b[end - 2].text in RIGHT else end - 1)]
        elif t.kind == "word" and t.cmd == "begin" and t.arg in MATRIX_ENVS:
            end = _env_end(b, k)
            kind, k, inner = "atom", end, [(k + 1, end - 1)]
        elif t.kind == "word" and t.cmd == "begin":
            kind, k = "op", _env_end(b, k)  # cases, aligned: opaque here
            out.append(Item(start, k, kind))
            continue
        elif t.kind == "cmd" and t.text == "\\sum":
            k += 1
            while k < hi and b[k].kind == "cmd" and b[k].text in ("\\limits", "\\nolimits"):
                k += 1
            k = _scripts(b, k, hi)
            out.append(Item(start, k, "sum"))
            continue
        elif t.kind == "open":
            end = _group_end(b, k)
            kind, k, inner = "brace", end, [(k + 1, end - 1)]
        elif t.is_("char", ":") and k + 1 < hi and b[k + 1].is_("char", "="):
            out.append(Item(k, k + 2, "op"))
            k += 2
            continue
        elif t.is_("char", ".") and k + 2 < hi and b[k + 1].is_("char", ".") and b[k + 2].is_("char", "."):
            out.append(Item(k, k + 3, "op"))
            k += 3
            continue
        else:
            out.append(Item(k, k + 1, "op"))
            k += 1
            continue
        k = _scripts(b, k, hi)
        out.append(Item(start, k, kind, inner))
    return out


def walk_items(b: list, lo: int = 0, hi: int | None = None):
    """Every level of ``b``: lists of items, the top level first, then those inside brackets,
    fractions, roots, matrices and braces (never inside scripts or opaque environments)."""
    stack = [(lo, len(b) if hi is None else hi)]
    while stack:
        a, z = stack.pop()
        level = items(b, a, z)
        yield level
        for it in level:
            stack.extend(it.inner)


def solid(level: list) -> list:
    """The items of a level that are not spaces."""
    return [it for it in level if it.kind != "space"]


def product_slot(a: Item, b: Item) -> bool:
    """Two neighbours that a ``\\cdot`` may join (and that juxtaposition joins): factor then factor,
    never a name then a bracket (that may be a function applied), never after a sum's limits."""
    if a.kind not in ("atom", "paren", "frac") or b.kind not in ("atom", "paren", "frac", "sum"):
        return False
    return not (b.kind == "paren" and a.kind not in ("paren", "frac"))


def script_mask(b: list) -> set:
    """Indices of the tokens inside a ``^``/``_`` argument."""
    out = set()
    k = 0
    while k < len(b):
        if b[k].is_("char", "^") or b[k].is_("char", "_"):
            end = script_arg_end(b, k)
            out.update(range(k + 1, end))
            k = end
            continue
        k += 1
    return out


# --- context --------------------------------------------------------------------------------------


@dataclass
class Context:
    """What the styles learn about a file: whether the scalar reader takes it, and the renaming made."""

    scalar: bool = False
    renaming: dict = field(default_factory=dict)  # old letter -> new letter
    applied: list = field(default_factory=list)


def _math_letters(text: str) -> set:
    letters = set()
    for p in split_file(text):
        if isinstance(p, Formula):
            for t in p.body:
                letters.update(ch for ch in (t.text if t.kind != "word" else t.arg) if ch.isascii() and ch.isalpha())
    return letters


# --- styles ---------------------------------------------------------------------------------------


def fonts(text: str, rng: random.Random, ctx: Context) -> str:
    r"""Matrix and vector names in another font, the same for every use of a letter in the file:
    plain ``W``, ``\mathbf{W}``, ``\boldsymbol{W}`` or ``\bm{W}``. Only letters that the file never
    writes inside a script (where an index or a dimension would be bold); ``\mathbf{1}`` (the vector
    of ones) stays in a bold font; the space ``M^{...}`` and the constant e stay as they are."""
    parts = split_file(text)
    in_script, bases = set(), set()
    for p in parts:
        if not isinstance(p, Formula):
            continue
        mask = script_mask(p.body)
        for k, t in enumerate(p.body):
            letter = t.text if t.kind == "letter" else t.arg.strip() if t.kind == "word" and t.cmd in NAME_FONTS \
                else None
            if letter is None or len(letter) != 1:
                continue
            (in_script if k in mask else bases).add(letter)
        for t in p.body:  # letters inside \mathrm{head_i} and the like count as script letters
            if t.kind == "word" and t.cmd not in NAME_FONTS:
                in_script.update(t.arg)
    choice = {}
    for letter in sorted(bases - in_script - {"e", "M", "R"}):
        fontset = NAME_FONTS if letter == "1" else ("",) + NAME_FONTS
        if ctx.scalar:  # the scalar reader refuses \bm: see KNOWN
            fontset = tuple(f for f in fontset if f != "bm")
        if rng.random() < 0.7:
            choice[letter] = rng.choice(fontset)

    def restyle(body, formula):
        mask = script_mask(body)
        out = []
        for k, t in enumerate(body):
            letter = t.text if t.kind == "letter" else t.arg.strip() if t.kind == "word" and t.cmd in NAME_FONTS \
                else None
            if letter in choice and k not in mask and not (letter == "1" and t.kind != "word"):
                font = choice[letter]
                t = Tok("letter", letter) if not font else Tok.word(font, letter)
            out.append(t)
        return out

    for p in parts:
        if isinstance(p, Formula):
            p.body = restyle(p.body, p)
    return join_file(parts)


def _is_mark(t: Tok) -> bool:
    """``T``, ``\\top``, ``\\intercal`` or ``\\mathsf{T}``."""
    return t.is_("letter", "T") or (t.kind == "cmd" and t.text in ("\\top", "\\intercal")) or (
        t.kind == "word" and t.cmd == "mathsf" and t.arg.strip() == "T")


def _transpose_at(b, k):
    """If ``b[k]`` is a ``^`` whose argument is a transpose mark: the index after the argument."""
    if not b[k].is_("char", "^"):
        return None
    j = _skip(b, k + 1, len(b))
    if j >= len(b):
        return None
    prev = b[k - 1] if k else None
    if prev is not None and (prev.is_("letter", "M") or (prev.kind == "word" and prev.cmd == "mathbb")):
        return None
    t = b[j]
    if _is_mark(t):
        return j + 1
    if t.kind == "open":
        end = _group_end(b, j)
        inside = [u for u in b[j + 1:end - 1] if u.kind != "space"]
        if len(inside) == 1 and _transpose_at([Tok("char", "^"), inside[0]], 0):
            return end
    return None


def transpose(text: str, rng: random.Random, ctx: Context) -> str:
    r"""Each transpose in one of ``^T``, ``^{T}``, ``^\top``, ``^{\top}``, ``^\intercal``,
    ``^{\intercal}``, ``^{\mathsf{T}}``, ``^\mathsf{T}`` (one form for the file, or mixed)."""
    fixed = rng.choice(TRANSPOSE_FORMS) if rng.random() < 0.5 else None

    def restyle(b, formula):
        out, k = [], 0
        while k < len(b):
            end = _transpose_at(b, k)
            if end is None:
                out.append(b[k])
                k += 1
                continue
            out.append(Tok("char", "^"))
            out.extend(tokenize(fixed or rng.choice(TRANSPOSE_FORMS)))
            k = end
        return out

    return map_formulas(text, restyle)


def brackets(text: str, rng: random.Random, ctx: Context) -> str:
    r"""Each pair of parentheses or square brackets plain, ``\left( \right)``, ``\bigl( \bigr)``,
    ``\Bigl( \Bigr)`` or ``\biggl( \biggr)``."""
    sizes = (("", ""), ("\\left", "\\right"), ("\\bigl", "\\bigr"), ("\\Bigl", "\\Bigr"), ("\\biggl", "\\biggr"))
    if ctx.scalar:  # the scalar reader refuses \biggl: see KNOWN
        sizes = sizes[:4]

    def restyle(b, formula):
        edits = {}  # index of an open or close bracket token -> size command
        drop = set()
        for level in walk_items(b):
            for it in level:
                if it.kind != "paren":
                    continue
                o = _is_open(b, it.start)
                c = _paren_end(b, o) - 1
                if o > it.start:
                    drop.add(it.start)
                if b[c - 1].kind == "cmd" and b[c - 1].text in RIGHT:
                    drop.add(c - 1)
                lo, hi = rng.choice(sizes)
                edits[o], edits[c] = lo, hi
        out = []
        for k, t in enumerate(b):
            if k in drop:
                continue
            if edits.get(k):
                out.append(Tok("cmd", edits[k]))
            out.append(t)
        return out

    return map_formulas(text, restyle)


def products(text: str, rng: random.Random, ctx: Context) -> str:
    r"""Products written with ``\cdot`` or by juxtaposition, each independently, wherever both read
    as a product: between two factors (names, brackets, fractions, a sum), never between a name and
    a bracket after it (a function applied) and never between a sum's limits and its body."""
    if ctx.scalar:
        return text

    def restyle(b, formula):
        insert, remove = set(), set()
        for level in walk_items(b):
            s = solid(level)
            for x, y in zip(s, s[1:]):
                if product_slot(x, y) and rng.random() < 0.4:
                    insert.add(y.start)
            for x, mid, y in zip(s, s[1:], s[2:]):
                if mid.kind == "op" and b[mid.start].is_("cmd", "\\cdot") and product_slot(x, y) and rng.random() < 0.6:
                    remove.add(mid.start)
        out = []
        for k, t in enumerate(b):
            if k in insert:
                out += [Tok("space", " "), Tok("cmd", "\\cdot"), Tok("space", " ")]
            out.append(Tok("space", " ") if k in remove else t)
        return out

    return map_formulas(text, restyle)


def _plain_ok(b, lo, hi, whole: bool) -> bool:
    return len(solid(items(b, lo, hi))) == 1 or (whole and all(
        it.kind in ("atom", "paren", "frac") for it in solid(items(b, lo, hi))))


def fractions(text: str, rng: random.Random, ctx: Context) -> str:
    r"""Each ``\frac{a}{b}`` as ``\tfrac``, ``\dfrac``, or ``a / b`` with the parentheses it needs: around
    a numerator or denominator of more than one factor, and around the quotient when another factor
    stands beside it (``(1/N) x_i``)."""
    if ctx.scalar:
        return text

    def restyle(b, formula):
        edits = {}  # start of a \frac -> (end, replacement tokens)
        for level in walk_items(b):
            s = solid(level)
            for n, it in enumerate(s):
                if it.kind != "frac" or it.end != it.inner[1][1] + 1:  # a \frac with scripts: leave it
                    continue
                r = rng.random()
                if r < 0.25:
                    edits[it.start] = (it.start + 1, [Tok("cmd", rng.choice(FRACS))])
                    continue
                if r < 0.5:
                    continue
                (a0, a1), (d0, d1) = it.inner
                beside = (n > 0 and product_slot(s[n - 1], it)) or (n + 1 < len(s) and product_slot(it, s[n + 1]))
                after_slash = n > 0 and b[s[n - 1].start].is_("char", "/")
                num, den = b[a0:a1], b[d0:d1]
                if not _plain_ok(b, a0, a1, whole=not beside and rng.random() < 0.5):
                    num = [Tok("char", "(")] + num + [Tok("char", ")")]
                if not _plain_ok(b, d0, d1, whole=False):
                    den = [Tok("char", "(")] + den + [Tok("char", ")")]
                new = num + [Tok("space", " "), Tok("char", "/"), Tok("space", " ")] + den
                if beside or after_slash:
                    new = [Tok("char", "(")] + new + [Tok("char", ")")]
                edits[it.start] = (it.end, new)
        out, k = [], 0
        while k < len(b):
            if k in edits:
                end, new = edits[k]
                out.extend(new)
                k = end
                continue
            out.append(b[k])
            k += 1
        return out

    return map_formulas(text, restyle)


def spacing(text: str, rng: random.Random, ctx: Context) -> str:
    r"""Spaces between the pieces of a formula: ``\,``, ``\;``, ``\:``, ``\quad``, ``~``, ``\ `` or a line
    break, never inside a script, a name or a command's arguments."""
    choices = ("\\,", "\\;", "\\:", "\\quad", "~", "\\ ", "\n    ", " ")

    def restyle(b, formula):
        at = set()
        for level in walk_items(b):
            s = solid(level)
            for x, it in zip(s, s[1:]):
                hyphen = any(b[y.start].kind == "word" and b[y.start].arg.strip() == "-" for y in (x, it))
                if not hyphen and rng.random() < 0.15:
                    at.add(it.start)
        out = []
        for k, t in enumerate(b):
            if k in at:
                sp = rng.choice(choices)
                if formula.inline and sp.startswith("\n"):
                    sp = " "
                out.extend(tokenize(sp) if sp.strip() else [Tok("space", sp)])
            out.append(t)
        return out

    return map_formulas(text, restyle)


def _index_letters(text: str) -> list:
    """Letters that a file uses as a summation index (``\\sum_{i=1}``, ``\\sum_i``, ``\\max_i``) or as a
    head index (``i = 1, \\dots, h``)."""
    found = []
    for p in split_file(text):
        if not isinstance(p, Formula):
            continue
        src = untokenize(p.body)
        for m in re.finditer(r"\\(?:sum|max)(?:\\limits)?_\{?\s*([A-Za-z])\b", src):
            found.append(m.group(1))
        for m in re.finditer(r"(?<![\\\w])([A-Za-z])\s*=\s*1\s*,\s*(?:\\[lc]?dots|\.\.\.)", src):
            found.append(m.group(1))
    return sorted(set(found))


#: Letters a renamed index may take, when the file does not use them.
FRESH = "abcjkpqruvwyzABCDEFHJLNPSUYZ"


def rename(text: str, rng: random.Random, ctx: Context) -> str:
    r"""One summation or head index (``i`` in ``\sum_{i=1}^{h}``, ``h`` in ``h = 1, \cdots, H``) renamed
    to a letter the file does not use, everywhere in its formulas: as a letter and in a name's
    subscript written inside a font (``\mathrm{head_i}``)."""
    letters = [x for x in _index_letters(text) if x not in ctx.renaming.values()]
    if not letters:
        return text
    old = rng.choice(letters)
    used = _math_letters(text) | set(ctx.renaming.values())
    fresh = [x for x in FRESH if x not in used]
    if not fresh:
        return text
    new = rng.choice(fresh)
    ctx.renaming[old] = new

    def restyle(b, formula):
        out = []
        for t in b:
            if t.is_("letter", old):
                t = Tok("letter", new)
            elif t.kind == "word" and t.cmd in ("mathrm", "operatorname", "mathbf", "boldsymbol", "bm") and (
                    t.arg.strip() == old or re.search(r"[_^]", t.arg)):
                if t.arg.strip() == old:
                    t = Tok.word(t.cmd, new)
                else:
                    head, sep, tail = re.split(r"([_^])", t.arg, maxsplit=1)
                    t = Tok.word(t.cmd, head + sep + re.sub(rf"(?<![A-Za-z\\]){old}(?![A-Za-z])", new, tail))
            out.append(t)
        return out

    return map_formulas(text, restyle)


def sums(text: str, rng: random.Random, ctx: Context) -> str:
    r"""The limits of a sum ``\sum_{i=1}^{n}`` written ``\sum_{i=1}^n`` (a one-token bound),
    ``\sum\limits_{i=1}^{n}``, ``\sum_{i = 1}^{n}``, ``\sum_{i \in [n]}``, or ``\sum_i`` where the file declares
    ``i = 1, \dots, n`` (``\sum^{n}_{i=1}``, the limits in the other order, is refused by both readers: see
    the known failures in the test)."""
    pat = re.compile(r"\\sum(?:\\limits)?\s*_\{\s*([A-Za-z])\s*=\s*1\s*\}\s*\^\s*(\{[^{}]*\}|[A-Za-z0-9])")
    ranges = {} if ctx.scalar else dict(re.findall(
        r"(?<![\\\w])([A-Za-z])\s*=\s*1\s*,\s*(?:\\[lc]?dots|\.\.\.)\s*,\s*([A-Za-z])(?![A-Za-z_])", text))

    def one(m):
        i, up = m.group(1), m.group(2)
        inner = up[1:-1].strip() if up.startswith("{") else up
        forms = [f"\\sum_{{{i}=1}}^{{{inner}}}", f"\\sum\\limits_{{{i}=1}}^{{{inner}}}",
                 f"\\sum_{{{i} = 1}}^{{{inner}}}"]
        if not ctx.scalar:  # the scalar reader refuses \sum_{k \in [j-1]}: see KNOWN
            forms.append(f"\\sum_{{{i} \\in [{inner}]}}")
        if len(tokenize(inner)) == 1:
            forms.append(f"\\sum_{{{i}=1}}^{inner}")
        if ranges.get(i) == inner:  # i = 1, ..., h declared: the bare \sum_i runs over it
            forms += [f"\\sum_{i}", f"\\sum_{{{i}}}"]
        return rng.choice(forms) + " "

    return map_formulas(text, lambda b, f: tokenize(pat.sub(one, untokenize(b))))


def scripts(text: str, rng: random.Random, ctx: Context) -> str:
    r"""A name's subscript and superscript in the other order (``W^Q_i`` and ``W_i^Q``), and a
    one-token script with or without braces (``W_{h}`` and ``W_h``); a transpose mark stays last."""

    def restyle(b, formula):
        out, k = [], 0
        while k < len(b):
            t = b[k]
            if t.kind == "letter" or (t.kind == "word" and t.cmd in NAME_FONTS + ("mathrm", "operatorname")) or (
                    t.kind == "cmd" and t.text[1:] in GREEK):
                j, scr = k + 1, []
                while j < len(b) and (b[j].is_("char", "^") or b[j].is_("char", "_")):
                    end = script_arg_end(b, j)
                    scr.append((b[j].text, b[j + 1:end]))
                    j = end
                if scr and all(_transpose_at(b, j0) is None for j0 in range(k + 1, j)) and \
                        not (j < len(b) and b[j].is_("char", "'")):
                    new = []
                    for mark, arg in scr:
                        solid_arg = [u for u in arg if u.kind != "space"]
                        if arg and arg[0].kind == "open" and _group_end(arg, 0) == len(arg):
                            body = arg[1:-1]
                            plain = [u for u in body if u.kind != "space"]
                            if len(plain) == 1 and plain[0].kind in ("letter", "digit", "word") and rng.random() < 0.5:
                                arg = plain
                        elif len(solid_arg) == 1 and rng.random() < 0.5:
                            arg = [Tok("open", "{")] + solid_arg + [Tok("close", "}")]
                        new.append((mark, arg))
                    marked = any(_is_mark(u) for _, arg in scr for u in arg)  # W_Q^{h\,T}: see KNOWN
                    if len(new) == 2 and {m for m, _ in new} == {"^", "_"} and not marked and rng.random() < 0.5:
                        new.reverse()
                    out.append(t)
                    for mark, arg in new:
                        out.append(Tok("char", mark))
                        out.extend(arg)
                    k = j
                    continue
            out.append(t)
            k += 1
        return out

    return map_formulas(text, restyle)


def operator_names(text: str, rng: random.Random, ctx: Context) -> str:
    r"""A word written in another upright font, the same for every use of it: ``\mathrm{softmax}``,
    ``\operatorname{softmax}``, ``\text{softmax}``, ``\textrm{softmax}``; a word with a subscript inside
    (``\mathrm{head_i}``) only in ``\mathrm`` or ``\operatorname``, a hyphenated one not in ``\mathrm``,
    and the words that join statements (``\text{where}``) in the text fonts only."""
    choice: dict = {}

    def pick(t: Tok) -> str:
        arg = t.arg
        if is_join_word(t):
            fontset = ("text", "textrm", "mbox") if arg.strip() != "-" else (t.cmd,)
        elif re.search(r"[_^\\]", arg):
            fontset = ("mathrm", "operatorname")
        elif "-" in arg:
            fontset = ("operatorname", "text", "textrm")
        else:
            fontset = ("mathrm", "operatorname", "text", "textrm")
        key = re.split(r"[_^]", arg)[0].strip()  # head_1 and head_h alike (mixed, they are misread: KNOWN)
        if key not in choice:
            choice[key] = rng.choice(fontset) if rng.random() < 0.7 else t.cmd
        return choice[key] if choice[key] in fontset else t.cmd

    def restyle(b, formula):
        out = []
        for t in b:
            if t.kind == "word" and t.cmd in ("mathrm", "operatorname", "text", "textrm", "mbox") and \
                    len(t.arg.strip()) > 1:
                t = Tok.word(pick(t), t.arg)
            out.append(t)
        return out

    return map_formulas(text, restyle)


def macros(text: str, rng: random.Random, ctx: Context) -> str:
    r"""Macros a paper's preamble defines: ``\newcommand{\R}{\mathbb{R}}`` used for ``\mathbb{R}``, and
    ``\DeclareMathOperator{\softmax}{softmax}`` used for the functions written ``\mathrm{softmax}``
    (and the like) before a bracket."""
    if ctx.scalar:
        return text
    parts = split_file(text)
    names = set()
    for p in parts:
        if isinstance(p, Formula):
            for k, t in enumerate(p.body):
                nxt = _skip(p.body, k + 1, len(p.body))
                if (t.kind == "word" and t.cmd in ("mathrm", "operatorname") and t.arg.isalpha() and t.arg.isascii()
                        and len(t.arg) > 2 and nxt < len(p.body) and _is_open(p.body, nxt) is not None):
                    names.add(t.arg)
    used = set(re.findall(r"\\([A-Za-z]+)", text))
    ops = sorted(n for n in names if n not in used and rng.random() < 0.6)
    bb = "\\R" if "\\mathbb{R}" in text and "R" not in used and rng.random() < 0.6 else None
    if not ops and not bb:
        return text
    defs = [f"\\DeclareMathOperator{{\\{n}}}{{{n}}}" for n in ops] + (["\\newcommand{\\R}{\\mathbb{R}}"] if bb else [])

    def restyle(b):
        out = []
        for t in b:
            if t.kind == "word" and t.cmd in ("mathrm", "operatorname") and t.arg in ops:
                t = Tok("cmd", f"\\{t.arg}")
            elif bb and t.kind == "word" and t.cmd == "mathbb" and t.arg.strip() == "R":
                t = Tok("cmd", "\\R")
            out.append(t)
        return out

    first = next(k for k, p in enumerate(parts) if isinstance(p, Formula))
    for p in parts:
        if isinstance(p, Formula):
            p.body = restyle(p.body)
    parts.insert(first, "\n".join(defs) + "\n")
    return join_file(parts)


# --- environments -------------------------------------------------------------------------------------


def _rows(b: list) -> list:
    """The rows of a body, split at ``\\\\`` outside braces and environments."""
    rows, cur, depth, env = [], [], 0, 0
    for t in b:
        if t.kind == "open":
            depth += 1
        elif t.kind == "close":
            depth -= 1
        elif t.kind == "word" and t.cmd == "begin":
            env += 1
        elif t.kind == "word" and t.cmd == "end":
            env -= 1
        if t.is_("sym", "\\\\") and depth == 0 and env == 0:
            rows.append(cur)
            cur = []
            continue
        cur.append(t)
    rows.append(cur)
    return rows


def _strip(row):
    a, z = 0, len(row)
    while a < z and row[a].kind == "space":
        a += 1
    while z > a and row[z - 1].kind == "space":
        z -= 1
    return row[a:z]


def _unwrap(b: list) -> list:
    """The body without an environment that holds all of it (``$$\\begin{aligned} ... \\end{aligned}$$``)."""
    s = _strip(b)
    if s and s[0].kind == "word" and s[0].cmd == "begin" and s[0].arg in INNER_ENVS + DISPLAY_ENVS and \
            _env_end(s, 0) == len(s):
        return s[1:-1]
    return b


def _undecorated(row):
    return [t for t in row if not (t.kind == "word" and t.cmd in ("tag", "label"))
            and not (t.kind == "cmd" and t.text in ("\\nonumber", "\\notag"))]


def _blank(t: Tok) -> bool:
    """A space, a spacing command (``\\,``, ``\\quad``) or a comment."""
    return t.kind in ("space", "comment") or t.text in SPACE_SYMS or (t.kind == "cmd" and t.text[1:] in SPACE_CMDS)


def _continues(row) -> bool:
    """A row that continues the statement above it (``&= ...``, ``&\\mapsto ...``)."""
    s = [t for t in row if not _blank(t) and not t.is_("char", "&")]
    if not s:
        return True
    return s[0].is_("char", "=") or s[0].is_("char", ":") or s[0].is_("char", ",") or \
        any(t.is_("cmd", "\\mapsto") for t in s)


def _without_amps(row):
    """The row without its alignment marks ``&`` (those of a matrix inside it stay)."""
    out, depth = [], 0
    for t in row:
        if t.kind == "word" and t.cmd in ("begin", "end"):
            depth += 1 if t.cmd == "begin" else -1
        if not (depth == 0 and t.is_("char", "&")):
            out.append(t)
    return out


def _ends_statement_punct(row):
    s = [t for t in _undecorated(row) if not _blank(t)]
    return bool(s) and s[-1].kind == "char" and s[-1].text in ",."


class _Counter:
    def __init__(self):
        self.n = 0

    def __call__(self):
        self.n += 1
        return self.n


def _decorate(row: list, rng, env: str, count) -> list:
    """A row with ``\\tag``, ``\\label`` or ``\\nonumber`` added where its environment allows."""
    row = list(row)
    if any(t.kind == "word" and t.cmd == "tag" for t in row):
        return row
    r = rng.random()
    numbered = env in NUMBERED
    if r < 0.15:
        row += [Tok("space", " "), Tok.word("tag", str(count()))]
    elif r < 0.3 and numbered:
        row += [Tok("space", " "), Tok.word("label", f"eq:{count()}")]
    elif r < 0.4 and numbered:
        row += [Tok("space", " "), Tok("cmd", rng.choice(("\\nonumber", "\\notag")))]
    return row


def _emit(rows: list, rng, count, punct: str, scalar: bool = False) -> Formula:
    """A display of ``rows`` in an environment drawn at random (one row without ``&``: any display)."""
    rows = [_strip(r) for r in rows]
    while len(rows) > 1 and not rows[-1]:
        rows.pop()
    if punct and rows and not _ends_statement_punct(rows[-1]):
        last = _undecorated(rows[-1])
        tail = [t for t in rows[-1] if t not in last]
        rows[-1] = last + [Tok("char", punct)] + tail
    single = len(rows) == 1 and not any(t.is_("char", "&") for t in rows[0])
    if single:
        env = rng.choice(("$$", "\\[", "equation", "equation*", "align*", "gather*"))
    else:
        env = rng.choice(("align*", "align", "equation+aligned", "$$aligned", "\\[aligned") if not scalar
                         else ("align*", "align"))  # the scalar reader refuses aligned: see KNOWN
    if env in ("$$", "\\["):
        body = _decorate(rows[0], rng, env, count)
        return Formula(env, [Tok("space", " ")] + body + [Tok("space", " ")], "$$" if env == "$$" else "\\]")
    if env in ("equation", "equation*", "align*", "align", "gather*"):
        sep = [Tok("space", " "), Tok("sym", "\\\\"), Tok("space", "\n    ")]
        body = [Tok("space", "\n    ")]
        for n, r in enumerate(rows):
            body += _decorate(r, rng, env.rstrip("*") if not env.endswith("*") else env, count)
            if n + 1 < len(rows):
                body += sep
        return Formula(f"\\begin{{{env}}}", body + [Tok("space", "\n")], f"\\end{{{env}}}")
    outer, inner = {"equation+aligned": ("equation", "aligned"), "$$aligned": ("$$", "aligned"),
                    "\\[aligned": ("\\[", "aligned")}[env]
    inner_env = rng.choice((inner, "split")) if outer == "equation" and all(_continues(r) for r in rows[1:]) else inner
    body = [Tok.word("begin", inner_env), Tok("space", "\n    ")]
    for n, r in enumerate(rows):
        body += _undecorated(r)
        if n + 1 < len(rows):
            body += [Tok("space", " "), Tok("sym", "\\\\"), Tok("space", "\n    ")]
    body += [Tok("space", "\n"), Tok.word("end", inner_env)]
    if outer == "equation":
        if rng.random() < 0.5:
            body = [Tok.word("label", f"eq:{count()}"), Tok("space", " ")] + body
        return Formula("\\begin{equation}", [Tok("space", "\n")] + body + [Tok("space", "\n")], "\\end{equation}")
    return Formula(outer, [Tok("space", " ")] + body + [Tok("space", " ")], "$$" if outer == "$$" else "\\]")


def environments(text: str, rng: random.Random, ctx: Context) -> str:
    r"""Displays re-typeset: each display in another environment (``$$``, ``\[ \]``, ``equation``,
    ``align*``, ``equation`` with ``aligned`` or ``split``, ...); a display of several statements split into
    one display per statement, or neighbouring displays joined into one ``align*``; rows numbered,
    tagged (``\tag{1}``), labelled (``\label{eq:1}``) or ``\nonumber``-ed; a display or a row that ends a
    statement ending with ``,`` or ``.``. Inline formulas are left alone."""
    parts = split_file(text)
    count = _Counter()
    out: list = []
    k = 0
    while k < len(parts):
        p = parts[k]
        if not isinstance(p, Formula) or p.inline:
            out.append(p)
            k += 1
            continue
        rows = _rows(_unwrap(p.body))
        # join with the next displays when only spaces stand between them
        while rng.random() < 0.3 and k + 2 < len(parts) and isinstance(parts[k + 1], str) and \
                not parts[k + 1].strip() and isinstance(parts[k + 2], Formula) and not parts[k + 2].inline:
            more = _rows(_unwrap(parts[k + 2].body))
            if _continues(more[0]) or any(t.is_("cmd", "\\mapsto") for r in rows + more for t in r):
                break
            rows = [r for r in rows if _strip(r)] + more
            k += 2
        punct = rng.choice(("", "", ",", "."))
        if ctx.scalar and len(rows) > 1 and _continues(rows[-1]):
            punct = ""  # the scalar reader refuses a period after a row that continues a chain: see KNOWN
        # add a comma to rows that end a statement before a row that starts one
        for n in range(len(rows) - 1):
            if _strip(rows[n]) and not _continues(rows[n + 1]) and not _ends_statement_punct(rows[n]) and \
                    rng.random() < 0.3:
                base = _undecorated(rows[n])
                rows[n] = _strip(base) + [Tok("char", ",")] + [t for t in rows[n] if t not in base]
        if len(rows) > 1 and rng.random() < 0.4 and not any(t.is_("cmd", "\\mapsto") for r in rows for t in r):
            groups, cur = [], []
            for r in rows:
                if cur and not _continues(r):
                    groups.append(cur)
                    cur = []
                if _strip(r) or cur:
                    cur.append(r)
            groups.append(cur)
            for n, g in enumerate(g for g in groups if g):
                if n:
                    out.append("\n")
                if len(g) == 1:
                    g = [_without_amps(g[0])]
                out.append(_emit(g, rng, count, punct, ctx.scalar))
        else:
            out.append(_emit(rows, rng, count, punct, ctx.scalar))
        k += 1
    return join_file(out)


def inline(text: str, rng: random.Random, ctx: Context) -> str:
    r"""Inline formulas written ``$...$`` or ``\(...\)``."""
    parts = split_file(text)
    for p in parts:
        if isinstance(p, Formula) and p.inline and rng.random() < 0.5:
            p.open, p.close = ("\\(", "\\)") if p.open == "$" else ("$", "$")
    return join_file(parts)


#: The styles, in the order :func:`retypeset` applies them.
STYLES = {
    "rename": rename,
    "sums": sums,
    "scripts": scripts,
    "transpose": transpose,
    "fractions": fractions,
    "products": products,
    "fonts": fonts,
    "operator_names": operator_names,
    "brackets": brackets,
    "spacing": spacing,
    "macros": macros,
    "inline": inline,
    "environments": environments,
}


def retypeset(text: str, rng: random.Random, styles=None, scalar: bool = False) -> tuple[str, Context]:
    """``text`` in a random subset of ``styles`` (default: all of :data:`STYLES`, each with
    probability 1/2, at least one); the context says which were applied and the renaming made."""
    ctx = Context(scalar=scalar)
    names = list(STYLES) if styles is None else list(styles)
    chosen = [n for n in names if rng.random() < 0.5] or [rng.choice(names)]
    for n in STYLES:
        if n in chosen:
            text = STYLES[n](text, rng, ctx)
            ctx.applied.append(n)
    return text, ctx


def variants(text: str, count: int, seed: int, scalar: bool = False, styles=None) -> list:
    """``count`` distinct variants of ``text`` (never ``text`` itself), as (variant, context) pairs."""
    rng = random.Random(seed)
    seen, out = {text}, []
    for _ in range(count * 20):
        if len(out) == count:
            break
        v, ctx = retypeset(text, rng, styles, scalar)
        if v not in seen:
            seen.add(v)
            out.append((v, ctx))
    return out


# --- a wrong style --------------------------------------------------------------------------------------


def wrong_transpose(text: str) -> str:
    r"""Not a style: the transpose moved from the second factor to the first of the first product
    ``A B^T`` (``Q K^\top`` becomes ``Q^\top K``), which changes the formula."""
    m = re.search(r"(?<![\\A-Za-z])([A-Z])(\s*)([A-Z])\^(\\top|T|\{\\top\}|\{T\}|\\intercal)", text)
    if not m:
        return text
    a, sp, b, mark = m.groups()
    return text[:m.start()] + f"{a}^{mark}{sp or ' '}{b}" + text[m.end():]


WRONG = wrong_transpose
