"""Check a LaTeX derivation text: a file of matrices (:mod:`.latex`), or of numbers and vectors
(:mod:`.scalars`, chosen when its formulas use ``\\max``, ``\\leftarrow`` or ``\\gets`` and declare no
matrix: a file that declares a matrix is read as one of matrices, whose reader says what it does not
read, such as a ``\\max`` in a side definition), or of complex numbers (:mod:`.complex_reader`, chosen
when its formulas take a real or an imaginary part, ``\\mathrm{Re}``, ``\\mathrm{Im}``)."""

from __future__ import annotations

from .model import DEFAULT_BUDGET, Report


def check_latex(text: str, *, source: str = "<tex>", budget: float = DEFAULT_BUDGET,
                diagnose: bool = True) -> Report:
    """Parse and check a LaTeX derivation; the report has one entry per step."""
    from .complex_reader import is_complex_document
    from .latex import parse_latex
    from .model import check_statements
    from .scalars import declares_matrix, is_scalar_document

    if is_complex_document(text):
        from .complex_check import check_complex_document

        return check_complex_document(text, source=source, budget=budget, diagnose_steps=diagnose)
    if is_scalar_document(text) and not declares_matrix(text):
        from .scalar_check import check_scalar_document

        return check_scalar_document(text, source=source, budget=budget, diagnose_steps=diagnose)
    return check_statements(parse_latex(text), source=source, budget=budget, diagnose=diagnose, dialect="latex")
