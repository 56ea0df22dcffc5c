r"""Markdown notes as derivation files: the formulas kept where they stand, everything else blanked.

:func:`markdown_to_latex` turns a Markdown text into the text of a LaTeX derivation file
(:mod:`.latex`): every formula stays at its line and column, every other character becomes a
space (newlines stay), so that an error points into the Markdown file itself.

Formulas: ``$...$`` and ``\(...\)`` (inline: a formula in a sentence may only mention a symbol,
as in a .tex file), ``$$...$$``, ``\[...\]``, a bare ``\begin{align*} ... \end{align*}`` (or
another display environment) and a fenced ```` ```math ```` block. Not formulas: code fences,
indented code blocks, inline ``code``, ``<code>``/``<pre>`` elements, HTML comments, an escaped
dollar ``\$``, and a ``$`` without a partner in its paragraph (``costs $5.``). A ``$`` pairs with
the next ``$`` of its paragraph, as MathJax pairs them in a notebook: ``$ x $`` is a formula, and
so is ``$5 and $`` in "between $5 and $10" (write ``\$`` for a dollar sign).

A directive is an HTML comment on a line of its own, ``<!-- symattn: convention: row -->``:
it becomes the ``%: convention: row`` line of the .tex format.

>>> tex = markdown_to_latex("Scores $S = K^T Q$ and `$HOME`.\n<!-- symattn: convention: row -->\n")
>>> tex.splitlines()
['       $S = K^T Q$', '           %: convention: row']
"""

from __future__ import annotations

import re

from ..errors import ParseError
from .latex_lexer import ENVS, MATRIX_ENVS
from .model import DEFAULT_BUDGET

DISPLAY_ENVS = tuple(e for e in ENVS if e not in MATRIX_ENVS)
FENCE = re.compile(r"(`{3,}|~{3,})[ \t]*([^\n]*)")
LIST_ITEM = re.compile(r"(?:[-+*]|\d{1,9}[.)])(?:[ \t]+|$)")
HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
LINK = re.compile(r"\]\([^()\s]*(?:\s+\"[^\"\n]*\")?\)")
AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>")
RAW_TAGS = ("code", "pre", "kbd", "samp", "script", "style")  # their content is shown as it is
DIRECTIVE = re.compile(r"<!--[ \t]*symattn[ \t]*:([^\n]*?)-->")
BEGIN = re.compile(r"\\begin\{([^{}\n]*)\}")
QUOTE = re.compile(r" {0,3}(?:>[ \t]?)+")
BLANK_LINE = re.compile(r"\n[ \t]*(?:\n|$)")
MAX_MARKDOWN = 1_000_000  # characters; the formulas then meet the limits of the LaTeX reader (tokens.py)
PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def markdown_to_latex(text: str) -> str:
    """The LaTeX derivation text of a Markdown text: the same lines, formulas at their columns."""
    if not isinstance(text, str):
        raise ParseError(f"the Markdown text must be text, got {type(text).__name__}")
    if len(text) > MAX_MARKDOWN:
        raise ParseError(f"the Markdown text is {len(text)} characters long; the limit is {MAX_MARKDOWN}", 1, 1,
                         "a shorter file (split it into several files)")
    return _Blanker(text).run()


def _indent(line: str) -> int:
    """The width of a line's leading blanks, a tab reaching the next multiple of 4."""
    width = 0
    for c in line:
        if c == " ":
            width += 1
        elif c == "\t":
            width += 4 - width % 4
        else:
            break
    return width


class _Blanker:
    """One pass over the text: block structure at each line start, formulas and code inside lines."""

    def __init__(self, text: str):
        self.s = text
        self.out = [c if c == "\n" else " " for c in text]
        self.i = 0
        self.prev_blank = True  # an indented code block starts only after a blank line
        self.base = 0  # the content column of the list item the text is in (0: none)
        self.unclosed: dict = {}  # closer -> a limit before which a search for it already failed
        self.para = (0, -1)  # (from, end): the paragraph end found last, searched from ``from``

    def fail(self, message: str, expected: str, i: int):
        line = self.s.count("\n", 0, i) + 1
        raise ParseError(message, line, i - (self.s.rfind("\n", 0, i) + 1) + 1, expected)

    def run(self) -> str:
        s, n = self.s, len(self.s)
        while self.i < n:
            if self.i == 0 or s[self.i - 1] == "\n":
                if self.block(self.i):
                    continue
            self.inline(self.i)
        return "\n".join(line.rstrip(" ") for line in "".join(self.out).split("\n"))

    # block structure -------------------------------------------------------------------------

    def eol(self, i: int) -> int:
        j = self.s.find("\n", i)
        return len(self.s) if j < 0 else j

    def block(self, i: int) -> bool:
        """At a line start: skip a code block or a math fence and return True, else note the line."""
        line = self.s[i:self.eol(i)]
        ind = _indent(line)
        if not line.strip():
            self.prev_blank = True
            return False
        if self.base and self.prev_blank and ind < self.base:
            self.base = 0  # the list ended
        if self.prev_blank and ind >= self.base + 4:
            self.i = self.indented_code(i)
            return True
        quote = QUOTE.match(line)
        body = line[quote.end():] if quote else line
        body = body.lstrip(" \t")
        fence = FENCE.match(body) if ind < self.base + 4 else None
        if fence and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
            self.i = self.fenced(i + len(line) - len(body), fence, quoted=bool(quote))
            self.prev_blank = False
            return True
        item = LIST_ITEM.match(body)
        if item:  # the item's text starts after the marker and 1 to 4 spaces (5 or more: 1, then code)
            marker = len(item.group(0).rstrip())
            spaces = len(item.group(0)) - marker
            self.base = ind + marker + (spaces if 1 <= spaces <= 4 else 1)
        self.prev_blank = False
        return False

    def indented_code(self, i: int) -> int:
        """Skip the lines indented by 4 more than the text (or blank) from ``i``; return the next line."""
        s = self.s
        while i < len(s):
            line = s[i:self.eol(i)]
            if line.strip() and _indent(line) < self.base + 4:
                return i
            i = self.eol(i) + 1
        return len(s)

    def fenced(self, i: int, fence, *, quoted: bool) -> int:
        """Skip a fenced code block opened at ``i``; a ```math fence is kept as a $$ formula."""
        s, mark = self.s, fence.group(1)
        math = fence.group(2).split()[:1] == ["math"]
        j = self.eol(i) + 1
        close = re.compile(rf"(?:{QUOTE.pattern})?[ \t]*{re.escape(mark[0])}{{{len(mark)},}}[ \t]*$")
        while j <= len(s):
            end = self.eol(j)
            if close.match(s, j, end):
                if math:
                    self.out[i:i + 2] = "$$"
                    self.keep(self.eol(i) + 1, j, quoted=quoted)
                    k = s.index(mark[0], j)
                    self.out[k:k + 2] = "$$"
                return end
            j = end + 1
        self.fail(f"the code fence {mark} opened here is never closed (the rest of the file would be code)",
                  f"a line {mark} closing it", i)

    # inside a line ---------------------------------------------------------------------------

    def inline(self, i: int):
        """One step of the scan at ``i``: a formula, code, HTML or an escape is skipped whole."""
        s, c = self.s, self.s[i]
        if c == "\\":
            self.i = self.backslash(i)
        elif c == "$":
            self.i = self.dollar(i)
        elif c == "`":
            self.i = self.code_span(i)
        elif c == "<":
            self.i = self.html(i)
        elif c == "]" and LINK.match(s, i):
            self.i = LINK.match(s, i).end()  # [text](https://x.org/?q=$1): a link's address is not math
        else:
            self.i = i + 1

    def backslash(self, i: int) -> int:
        s = self.s
        if s.startswith(("\\[", "\\("), i):
            closer = "\\]" if s[i + 1] == "[" else "\\)"
            end = self.find(closer, i + 2, len(s))
            if end < 0:
                return i + 2  # an escaped bracket, as Markdown reads it
            return self.keep_formula(i, end + 2, 2)
        m = BEGIN.match(s, i)
        if m and m.group(1).strip() in DISPLAY_ENVS:
            env = m.group(1).strip()
            end = self.find(f"\\end{{{env}}}", m.end(), len(s))
            if end < 0:
                self.fail(f"\\begin{{{env}}} is never closed", f"\\end{{{env}}}", i)
            return self.keep_formula(i, end + len(env) + 6, len(env) + 6)
        if i + 1 < len(s) and s[i + 1] in PUNCTUATION:
            return i + 2  # \$, \\, \`: escaped, not math
        return i + 1

    def dollar(self, i: int) -> int:
        s = self.s
        if s.startswith("$$", i):
            end = self.find("$$", i + 2, len(s))
            if end < 0:
                self.fail("the formula opened by $$ is never closed", "$$ closing it", i)
            return self.keep_formula(i, end + 2, 2)
        limit = self.paragraph_end(i)
        end = self.find("$", i + 1, limit)
        if end < 0:
            return i + 1  # "costs $5": a dollar without a partner in its paragraph is a dollar
        return self.keep_formula(i, end + 1, 1)

    def code_span(self, i: int) -> int:
        """Skip `code` (any run of backticks, closed by a run as long, within the paragraph)."""
        s = self.s
        k = i
        while k < len(s) and s[k] == "`":
            k += 1
        run, limit = s[i:k], self.paragraph_end(i)
        if self.unclosed.get(run, -1) >= limit:
            return k  # no run as long closes one later in this paragraph either
        m = re.compile(rf"(?<!`){run}(?!`)").search(s, k, limit)
        if not m:
            self.unclosed[run] = limit
        return m.end() if m else k

    def html(self, i: int) -> int:
        s = self.s
        if s.startswith("<!--", i):
            end = s.find("-->", i + 4)
            if end < 0:
                self.fail("the HTML comment opened here is never closed (the rest of the file would be hidden)",
                          "--> closing it", i)
            if re.match(r"<!--[ \t]*symattn\b", s[i:end]):
                self.directive(i, end + 3)
            return end + 3
        m = AUTOLINK.match(s, i) or HTML_TAG.match(s, i)
        if not m:
            return i + 1
        name = re.match(r"<([A-Za-z0-9-]*)", m.group(0)).group(1).lower()
        key = f"</{name}>"
        if name in RAW_TAGS and not m.group(0).endswith("/>") and key not in self.unclosed:
            close = re.compile(rf"</{name}\s*>", re.I).search(s, m.end())
            if close:
                return close.end()
            self.unclosed[key] = len(s)
        return m.end()

    def directive(self, i: int, end: int):
        """``<!-- symattn: TEXT -->`` on a line of its own: ``%: TEXT`` at the same columns."""
        s = self.s
        m = DIRECTIVE.fullmatch(s, i, end)
        if not m:
            self.fail(f"a symattn comment that is not a directive: {s[i:end][:60]!r}",
                      "<!-- symattn: STATEMENT --> on one line, as in <!-- symattn: convention: row -->", i)
        if s[end:self.eol(end)].strip():
            self.fail("text after a symattn directive on its line",
                      "the directive on a line of its own (the formula on the next line)", end)
        colon = m.start(1) - 1
        self.out[colon - 1:colon + 1] = "%:"
        self.keep(m.start(1), m.end(1), quoted=False)

    # formulas ----------------------------------------------------------------------------------

    def find(self, closer: str, j: int, limit: int) -> int:
        """The index of ``closer`` from ``j`` before ``limit``, stepping over ``\\x`` pairs; -1 if none.

        A search that failed is remembered: a later one for the same closer before the same limit
        fails at once (a text of many unclosed openers is read in linear time)."""
        s = self.s
        if self.unclosed.get(closer, -1) >= limit:
            return -1
        while j < limit:
            if s.startswith(closer, j) and j + len(closer) <= limit:
                return j
            j += 2 if s[j] == "\\" else 1
        self.unclosed[closer] = limit
        return -1

    def paragraph_end(self, i: int) -> int:
        """The end of the paragraph at ``i``: the next blank line, or the end of the text."""
        start, end = self.para
        if not start <= i <= end:
            m = BLANK_LINE.search(self.s, i)
            self.para = (i, m.start() if m else len(self.s))
        return self.para[1]

    def keep_formula(self, i: int, end: int, closer: int) -> int:
        """Keep the formula ``s[i:end]``, whose last ``closer`` characters close it; return ``end``."""
        line_start = self.s.rfind("\n", 0, i) + 1
        quoted = bool(QUOTE.match(self.s, line_start)) and ">" in self.s[line_start:i]
        self.keep(i, end - closer, quoted=quoted)
        self.out[end - closer:end] = self.s[end - closer:end]
        return end

    def keep(self, i: int, end: int, *, quoted: bool):
        """Copy ``s[i:end]`` as it is, except ``%`` comments (to the line's end or ``end``) and,
        in a block quote, the ``>`` that start its lines."""
        s, k = self.s, i
        m = QUOTE.match(s, k) if quoted and (k == 0 or s[k - 1] == "\n") else None
        if m:
            k = m.end()
        while k < end:
            c = s[k]
            if c == "\n":
                k += 1
                m = QUOTE.match(s, k) if quoted else None
                if m:
                    k = m.end()
                continue
            if c == "%":
                k = min(self.eol(k), end)
                continue
            if c == "\\" and k + 1 < end:
                self.out[k:k + 2] = s[k:k + 2]
                k += 2
                continue
            self.out[k] = c
            k += 1


def check_markdown(text: str, *, source: str = "<markdown>", budget: float = DEFAULT_BUDGET, diagnose: bool = True):
    r"""Check the derivation in a Markdown text: its formulas, read as a .tex file reads them.

    >>> r = check_markdown("The scores, transposed:\n\n$$ \\mathbf{Q} \\in M^{d \\times n}, "
    ...                    "((\\mathbf{Q})^{\\top})^{\\top} = \\mathbf{Q} $$\n")
    >>> [s.status for s in r.steps], r.ok
    (['proved'], True)
    """
    from .latex_document import check_latex

    return check_latex(markdown_to_latex(text), source=source, budget=budget, diagnose=diagnose)
