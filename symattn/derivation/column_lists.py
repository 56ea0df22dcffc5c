r"""A matrix declared by its columns: ``X = (x_1, \ldots, x_N) \in \mathbb{R}^{d \times N}``.

Papers name the columns of a matrix of patterns while declaring it (Ramsauer et al. 2021 write
``\boldsymbol{X} = (\boldsymbol{x}_1, \ldots, \boldsymbol{x}_N) \in \mathbb{R}^{d \times N}``). The list is
the notation of the columns; the statement declares X. Before parsing, ``= (x_1, \ldots, x_N)`` is
blanked (the columns of the file keep their place) when the list runs from 1 to the declared number
of columns N, its first and last members share their letter, and the space follows it; any other
list is left to the parser, which refuses it. The names x_i are not declared by it: a step that uses
one is refused as an unknown name, never read under a guess.
"""

from __future__ import annotations

import re

_MEMBER = r"(?:\\(?:boldsymbol|mathbf|bm)\s*\{\s*[A-Za-z]\s*\}|[A-Za-z])"
_LIST = re.compile(
    rf"(?P<eq>=\s*\(\s*(?P<a>{_MEMBER})\s*_\s*\{{?\s*1\s*\}}?\s*,\s*\\[lc]?dots\s*,\s*(?P<b>{_MEMBER})\s*_\s*"
    rf"\{{?\s*(?P<n>[A-Za-z])\s*\}}?\s*\)\s*)(?=\\in\s*\\mathbb\s*\{{\s*R\s*\}}\s*\^\s*\{{[^{{}}]*\\times\s*(?P=n)\s*\}})")


def rewrite_column_lists(text: str) -> str:
    """``text`` with the list of columns of every such declaration blanked."""
    if "dots" not in text:
        return text

    def sub(m):
        if re.sub(r"\s", "", m.group("a")) != re.sub(r"\s", "", m.group("b")):
            return m.group(0)
        return " " * len(m.group("eq"))
    return _LIST.sub(sub, text)
