r"""Gradient notation as papers typeset it, read into one name per gradient before parsing.

With L the scalar loss, every spelling of "the gradient of L with respect to X" becomes the name
``dX`` (printed dX), the one the backward checker (:mod:`.gradients`) knows:

- ``\frac{\partial L}{\partial X}``, ``\partial L / \partial X``, ``\nabla_X L``, ``\nabla_{X} L``,
  ``\mathrm{d}X`` (any of ``\mathrm``/``\operatorname``/``\text``): rewritten in the text, each into
  ``\mathrm{dX}`` followed by the name's own subscript and superscript (``\partial L/\partial W_i^Q`` is
  ``\mathrm{dW}_i^Q``), padded with spaces so that the columns after it stay where the file has them;
- ``dX`` written without a space, X a capital letter (``dV = P^\top dO``): the two tokens become one
  name, only in a file where some display starts with such a ``dX =`` (a file of forward steps that
  writes ``d V`` for the dimension d times V reads as before);
- ``\delta X``, in a file that says ``\delta X = \frac{\partial L}{\partial X}`` for one X (the
  declaration of \delta as the gradient): every ``\delta Y`` is ``dY``; elsewhere ``\delta`` is a name.

The loss must be one letter (L, \mathcal{L} or \ell); a derivative of anything else (\partial O /
\partial S, a Jacobian) is left to the lexer, which refuses ``\partial`` with what to write instead.
"""

from __future__ import annotations

import re

from .tokens import Token

_FONT = r"\\(?:mathbf|boldsymbol|bm|mathrm|mathit)"
_LOSS = r"(?:L|\\mathcal\s*\{\s*L\s*\}|\\mathcal\s+L|\\ell|\\mathscr\s*\{\s*L\s*\}|\{\s*L\s*\})"
_SCRIPT = r"(?:[_^]\s*(?:\{[^{}]*\}|\\?[A-Za-z0-9]))"
# the variable: a letter, or a letter in a font, with its sub/superscripts
_VAR = rf"(?P<base>{_FONT}\s*\{{\s*[A-Za-z]+\s*\}}|[A-Za-z])(?P<scripts>(?:\s*{_SCRIPT}){{0,2}})"
_PARTIAL = re.compile(rf"\\[dt]?frac\s*\{{\s*\\partial\s*{_LOSS}\s*\}}\s*\{{\s*\\partial\s*{_VAR}\s*\}}")
_SLASH = re.compile(rf"\\partial\s*{_LOSS}\s*/\s*\\partial\s*{_VAR}")
_NABLA = re.compile(rf"\\nabla\s*_\s*(?:\{{\s*{_VAR}\s*\}}|{_VAR.replace('base', 'b2').replace('scripts', 's2')})"
                    rf"\s*{_LOSS}")
_UPRIGHT_D = re.compile(rf"\\(?:mathrm|operatorname|text)\s*\{{\s*d\s*\}}\s*{_VAR}")
_DELTA_DECL = re.compile(rf"\\delta\s*{_VAR}\s*(?::=|=)\s*\\mathrm\{{d")


def _name(base: str, scripts: str) -> str:
    letters = re.sub(rf"^{_FONT}\s*\{{\s*|\s*\}}$", "", base).strip()
    return "\\mathrm{d" + letters + "}" + re.sub(r"\s+", "", scripts or "")


def _replace(pattern: re.Pattern, text: str) -> str:
    def sub(m):
        base = m.group("base") or m.groupdict().get("b2")
        scripts = m.group("scripts") if m.group("base") else m.groupdict().get("s2")
        new = _name(base, scripts)
        span = m.group(0)
        if "\n" in span:  # keep the line count: the rest of the file keeps its line numbers
            new += "\n" * span.count("\n")
        return new + " " * max(0, len(span.replace("\n", "")) - len(new.replace("\n", "")))
    return pattern.sub(sub, text)


def rewrite_gradient_notation(text: str) -> str:
    """``text`` with every spelling of ∂L/∂X written ``\\mathrm{dX}`` (see the module's docstring)."""
    if "\\partial" not in text and "\\nabla" not in text and "{d}" not in text.replace(" ", "") \
            and "\\delta" not in text:
        return text
    for pattern in (_PARTIAL, _SLASH, _NABLA, _UPRIGHT_D):
        text = _replace(pattern, text)
    if _DELTA_DECL.search(text):  # \delta X = \frac{\partial L}{\partial X} (already rewritten): \delta is d
        text = re.sub(rf"\\delta\s*{_VAR}", lambda m: _name(m.group("base"), m.group("scripts")), text)
    return text


def _adjacent(a: Token, b: Token) -> bool:
    return (a.kind == "ident" and a.value == "d" and not a.font and b.kind == "ident" and b.line == a.line
            and b.col == a.col + 1 and len(b.value) == 1 and b.value.isupper())


STARTS = ("math", "begin")  # a display opens; also after , \\ & (the next statement or row)


def _starts_claim(tokens: list[Token], k: int) -> bool:
    before = tokens[k - 1] if k else None
    opens = before is None or before.kind in STARTS or (before.kind == "op" and before.value in (",", "\\\\", "&"))
    after = [t for t in tokens[k + 2:k + 4] if not (t.kind == "op" and t.value == "&")][:1]
    return opens and bool(after) and after[0].kind == "op" and after[0].value in ("=", ":=")


def merge_gradient_tokens(tokens: list[Token]) -> list[Token]:
    """``d`` ``V`` written together become the name ``dV``, in a file where a display starts ``dX =``."""
    pairs = [k for k in range(len(tokens) - 1) if _adjacent(tokens[k], tokens[k + 1])]
    if not any(_starts_claim(tokens, k) for k in pairs):
        return tokens
    out, skip = [], set()
    for k in pairs:
        skip.add(k + 1)
    for k, t in enumerate(tokens):
        if k in skip:
            continue
        if k + 1 in skip:
            t = Token("ident", "d" + tokens[k + 1].value, t.line, t.col, "mathrm")
        out.append(t)
    return out
