"""The exceptions symattn raises. One base class, a subclass per kind of mistake."""


class SymattnError(Exception):
    """Base class of every error symattn raises on purpose."""


class ShapeError(SymattnError, ValueError):
    """Operands whose dimensions are not provably compatible."""


class DimensionError(SymattnError, ValueError):
    """A dimension that is not a positive integer (zero, negative, or unconstrained)."""


class ConventionError(SymattnError, ValueError):
    """An unknown convention ("column" | "row") or softmax axis (0 | 1)."""


class NotAMatrixError(SymattnError, TypeError):
    """A non-matrix argument where a matrix expression was expected."""


class HeadError(SymattnError, ValueError):
    """Head lists or head families that do not fit together."""


class ClaimError(SymattnError, ValueError):
    """A malformed claim or request: floating-point numbers, two matrices with one name, a bad ``at``."""


class UnknownTheoremError(SymattnError, LookupError):
    """A theorem name that the library does not have (the message names the closest ones)."""


class SoundnessError(SymattnError, AssertionError):
    """A bug in symattn: a claim the prover called proved is false at an exact instance.

    Raised by the independent audit instead of returning the verdict; ``prover_trace`` is the
    verdict's trace, ``audit_trace`` the instance (symbol values, inputs, both values, the entry)
    and ``instance`` the same as data.
    """

    def __init__(self, message: str, prover_trace: tuple = (), audit_trace: tuple = (), instance=None):
        self.prover_trace, self.audit_trace, self.instance = prover_trace, audit_trace, instance or {}
        super().__init__(message)


class BudgetExceeded(SymattnError):
    """A proof attempt ran out of its time budget (the verdict becomes "unknown")."""


class DerivationError(SymattnError, ValueError):
    """A derivation file or chain that cannot be read: carries the line and column.

    ``line`` and ``column`` count from 1; ``expected`` says what would have fitted.
    """

    def __init__(self, message: str, line: int = 0, column: int = 0, expected: str = ""):
        self.line, self.column, self.expected, self.detail = line, column, expected, message
        where = f"line {line}, column {column}: " if line else ""
        tail = f"\n  expected {expected}" if expected else ""
        super().__init__(f"{where}{message}{tail}")


class ParseError(DerivationError):
    """Text that does not fit the grammar of the notation or of the LaTeX subset."""


class UnknownSymbolError(DerivationError):
    """A name that is neither declared nor part of the vocabulary."""


class NotationShapeError(DerivationError, ShapeError):
    """Shapes that do not fit, at a line and column of a derivation's text."""

class LoweringError(SymattnError, TypeError):
    """An expression that cannot be lowered to a NumPy kernel (a node without a printing rule)."""


class InputError(SymattnError, ValueError):
    """A numeric input that makes no sense: an integer or complex dtype, too few axes, a bad option."""


class GradientError(SymattnError, TypeError):
    """A gradient that symattn cannot form: a node :func:`symattn.vjp` has no rule for (the message
    names it and lists the covered nodes), a ``wrt`` that is not an input of the expression, or
    ``sympy.diff`` of a symattn node (which points to ``symattn.vjp``)."""
