"""symattn: prove attention formulas, refute wrong ones, and run the proved ones fast."""

__version__ = "0.1.0"

from .defs import Family as Family
from .defs import FamilyMember as FamilyMember
from .defs import HeadConcat as HeadConcat
from .defs import HeadStack as HeadStack
from .defs import HeadSum as HeadSum
from .defs import Score as Score
from .defs import ScoreFunction as ScoreFunction
from .defs import Softmax as Softmax
from .defs import attention as attention
from .defs import check_shapes as check_shapes
from .defs import dims as dims
from .defs import h as h
from .defs import head as head
from .defs import head_concat as head_concat
from .defs import head_stack as head_stack
from .defs import head_sum as head_sum
from .defs import multihead as multihead
from .defs import paper_self_attention as paper_self_attention
from .defs import scores as scores
from .defs import softmax as softmax
from .errors import BudgetExceeded as BudgetExceeded
from .errors import ConventionError as ConventionError
from .errors import DimensionError as DimensionError
from .errors import HeadError as HeadError
from .errors import NotAMatrixError as NotAMatrixError
from .errors import ShapeError as ShapeError
from .errors import SymattnError as SymattnError
from .proof import Counterexample as Counterexample
from .proof import Verdict as Verdict
from .proof import verify as verify

# isort: split
# lowering to NumPy and the numeric core (``symattn.lower(expr)`` is the function; the
# package symattn/lower stays importable by path: ``from symattn.lower import Kernel``)
from . import numeric as numeric
from .errors import InputError as InputError
from .errors import LoweringError as LoweringError
from .lower import Kernel as Kernel
from .lower import lower_theorem as lower_theorem
from .lower.lower import lower as lower
