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


class BudgetExceeded(SymattnError):
    """A proof attempt ran out of its time budget (the verdict becomes "unknown")."""


class LoweringError(SymattnError, TypeError):
    """An expression that cannot be lowered to a NumPy kernel (a node without a printing rule)."""


class InputError(SymattnError, ValueError):
    """A numeric input that makes no sense: an integer or complex dtype, too few axes, a bad option."""
