r"""Complex notation that the matrix reader refuses by name: the conjugate of an expression.

RoPE's complex form (Su et al. 2021, eqs. (11)-(13); Chen et al. 2023, position interpolation) writes
a query as a complex number, ``(W_q x_m) e^{i m\theta}``, and the score as
``\mathrm{Re}[f_q f_k^*]`` or ``\mathrm{Re}[f(q, m)\overline{f(k, n)}]``. Such a file (one that takes a
real or an imaginary part) is read by the complex reader (:mod:`.complex_reader`). In a matrix
derivation complex numbers are not read: a vector of \mathbb{R}^2 is not identified with a complex
number, ``i`` is not the imaginary unit. A conjugate of an expression, ``(W_k x_n)^*`` or
``\overline{f(k, n)}``, is refused here with a message naming it and the real form to write instead
(RoPE's rotation ``R^d_{\Theta,m}`` defined by its pmatrix, which is read).
On one name, ``v^*`` and ``\overline{x}`` stay labels of the name (another name).

>>> conjugate_refusal("(W_k x_n)^*")[0].startswith("the complex conjugate (W_k x_n)^*")
True
"""

from __future__ import annotations

REAL_FORM = ("the real form: RoPE's rotation R^d_{\\Theta,m} = \\begin{pmatrix} \\cos m\\theta & -\\sin m\\theta \\\\ "
             "\\sin m\\theta & \\cos m\\theta \\end{pmatrix}, applied to the vectors (W_q x_m)")


def conjugate_refusal(written: str) -> tuple[str, str]:
    """(message, what to write instead) for the conjugate ``written`` of an expression."""
    return (f"the complex conjugate {written} of an expression is not read: complex numbers (e^{{i m\\theta}}, "
            "\\mathrm{Re}, conjugates) are not read in a matrix derivation (a star or a bar over one name is a "
            "label of that name); a file that takes a real or an imaginary part, \\mathrm{Re}[...] or "
            "\\mathrm{Im}[...], is read by the complex reader", REAL_FORM)
