r"""A name of several letters that a file defines, written without a font: RWKV's ``wkv_t = \frac{...}{...}``.

In math mode TeX sets ``wkv_t`` as three letters, and the reader splits a run of letters into a product
(``QK^\top`` is Q times K^T). Peng et al. (2023) define the operator ``wkv_t`` so: a display that opens
with a run of three or more lower-case letters, the last with a subscript, followed by ``=``, defines
that run as one name. The run is then one name wherever the file writes it with its letters adjacent
(``wkv_t`` on a later line), and a product of those letters is written with spaces (``w k v_t``). A run
of two letters (``xW_q``), a capital letter, a run with a font, or a run not opening a display is left
as it was: a product.
"""

from __future__ import annotations

from .tokens import Token

MIN_LETTERS = 3


def _run(toks, k):
    """The letters of the run of adjacent single lower-case letters starting at token k, and its end."""
    letters, j = [], k
    while (j < len(toks) and toks[j].kind == "ident" and len(toks[j].value) == 1 and toks[j].value.islower()
           and not toks[j].font and (j == k or (toks[j].line == toks[j - 1].line
                                                 and toks[j].col == toks[j - 1].col + 1))):
        letters.append(toks[j].value)
        j += 1
    return "".join(letters), j


def _after_subscript(toks, j):
    """The index of the token after the subscript at token j (``_t`` or ``_{...}``), or None."""
    if not (j < len(toks) and toks[j].kind == "op" and toks[j].value == "_"):
        return None
    j += 1
    if j < len(toks) and toks[j].kind == "op" and toks[j].value == "{":
        depth = 0
        while j < len(toks):
            if toks[j].kind == "op" and toks[j].value in "{}":
                depth += 1 if toks[j].value == "{" else -1
                if depth == 0:
                    return j + 1
            j += 1
        return None
    return j + 1


def _defined_runs(toks):
    runs = set()
    for k in range(1, len(toks)):
        if toks[k - 1].kind != "math":
            continue
        run, j = _run(toks, k)
        after = _after_subscript(toks, j) if len(run) >= MIN_LETTERS else None
        if after is not None and after < len(toks) and toks[after].kind == "op" and toks[after].value == "=":
            runs.add(run)
    return runs


def merge(toks: list[Token]) -> list[Token]:
    """The tokens with every adjacent occurrence of a run the file defines merged into one name."""
    runs = _defined_runs(toks)
    if not runs:
        return toks
    out, k = [], 0
    while k < len(toks):
        run, j = _run(toks, k)
        if run in runs and _after_subscript(toks, j) is not None:
            out.append(Token("ident", run, toks[k].line, toks[k].col))
            k = j
            continue
        j = max(j, k + 1)  # a run not defined stays its letters, none of them merged
        out.extend(toks[k:j])
        k = j
    return out
