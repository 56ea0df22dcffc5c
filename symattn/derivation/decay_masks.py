r"""A decay mask defined by cases: ``D_{nm} = \begin{cases} \gamma^{n-m}, & n \ge m \\ 0, & n < m \end{cases}``.

Retention (Sun et al. 2023) weights the scores entrywise, ``(QK^\top \odot D)V``, by a causal mask whose
visible entries decay with the distance between positions: ``\gamma^{n-m}`` where the query n sees the key m,
0 elsewhere. Unlike the additive mask of a softmax (entries 0 and ``-\infty``, ``positions.py``), its value
is a power of a scalar by an index expression (``index_powers.py``), and it multiplies.

The definition is read: each row of the cases is a value and a comparison of the two index letters of the
entry, and a value other than 0 or ``-\infty`` is read only when it is such a power (a plain number, as in
``1 & s \le t``, stays refused where it is written). Row n of the masked product compared with a sum over
m <= n, ``[(QK^\top \odot D)V]_{n,:} = \sum_{m=1}^{n} \gamma^{n-m} Q_n K_m^\top V_m``, is read by
``decay_products.py``; any other step that uses the mask is refused naming the mask and what to write instead,
never read as a softmax mask.

>>> from symattn.derivation.latex import parse_latex
>>> st = parse_latex(r"$$ D_{nm} = \begin{cases} \gamma^{n-m}, & n \ge m \\ 0, & n < m \end{cases} $$")[0]
>>> st.links[0][2].text()
'{gamma^{n - m} if n >= m; 0 if n < m}'
>>> is_decay(st.links[0][2])
True
"""

from __future__ import annotations

from . import ast
from .index_powers import IndexPower


def decay_value_ahead(parser) -> bool:
    """True when the next value of a cases row is a power by an index expression, ``\\gamma^{n-m}``."""
    saved = parser.i
    try:
        node = parser.expr()
    except Exception:  # not an expression here: the caller refuses the value as before
        return False
    finally:
        parser.i = saved
    return isinstance(node, IndexPower)


def read_decay_value(parser):
    """The value ``\\gamma^{n-m}`` of a row of a decay mask (its power node)."""
    return parser.expr()


def is_decay(cases) -> bool:
    """True for a mask defined by cases with a value other than 0 and ``-\\infty`` (a decay mask)."""
    return isinstance(cases, ast.Cases) and any(not isinstance(v, str) for v, _ in cases.rows)


def show_value(value, latex: bool = False) -> str:
    """A row's value as written: "0", "-inf" (``-\\infty``) or the decay's text."""
    if isinstance(value, str):
        return (r"-\infty" if value == "-inf" else "0") if latex else value
    return value.latex() if latex and hasattr(value, "latex") else value.text()


def refuse_use(scope, node, cases) -> None:
    """Refuse a step that uses the decay mask ``node`` (its product is not checked yet)."""
    value = next(v for v, _ in cases.rows if not isinstance(v, str))
    scope.fail(node, f"the decay mask {node.text()} (entries {value.text()} by cases, Sun et al. 2023) in a "
               "product is read only in a row of the masked product compared with the sum it stands for "
               "(decay_products)", "\\left[(QK^\\top \\odot D)V\\right]_{n,:} = "
               f"\\sum_{{m=1}}^{{n}} {show_value(value, True)} Q_n K_m^\\top V_m, or that sum")
