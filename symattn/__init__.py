"""symattn: prove attention formulas, refute wrong ones, and run the proved ones fast."""

from ._version import __version__ as __version__
from .defs import Exp as Exp
from .defs import Exp2 as Exp2
from .defs import Family as Family
from .defs import FamilyMember as FamilyMember
from .defs import FeatureMap as FeatureMap
from .defs import HeadConcat as HeadConcat
from .defs import HeadStack as HeadStack
from .defs import HeadSum as HeadSum
from .defs import Log as Log
from .defs import Score as Score
from .defs import ScoreFunction as ScoreFunction
from .defs import Softmax as Softmax
from .defs import Symmetric as Symmetric
from .defs import attention as attention
from .defs import check_shapes as check_shapes
from .defs import dims as dims
from .defs import feature_map as feature_map
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
from .errors import ClaimError as ClaimError
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
# claims about a stack of L layers, for every L (proved by induction on L)
from .proof import LayerStack as LayerStack
from .proof import layer_stack as layer_stack

# isort: split
# gradients: the VJP rules and verify_gradient
from .errors import GradientError as GradientError
from .grad import verify_gradient as verify_gradient
from .grad import vjp as vjp

# isort: split
# seed 002: pooling, self-/cross-attention, GQA/MQA, masks, KV cache, permutations, RoPE
# lowering to NumPy and the numeric core: ``symattn.lower(expr)`` is the function, and the
# package that implements it is ``symattn.lowering``
from . import numeric as numeric
from .defs import BlockDiag as BlockDiag
from .defs import CausalMask as CausalMask
from .defs import KVCache as KVCache
from .defs import PaddingMask as PaddingMask
from .defs import Permutation as Permutation
from .defs import apply_rope as apply_rope
from .defs import attention_pool as attention_pool
from .defs import causal_attention as causal_attention
from .defs import cross_attention as cross_attention
from .defs import gqa as gqa
from .defs import group_of as group_of
from .defs import masked_attention as masked_attention
from .defs import mean_pool as mean_pool
from .defs import mqa as mqa
from .defs import multihead_pool as multihead_pool
from .defs import multihead_pool_sum as multihead_pool_sum
from .defs import query_attention_pool as query_attention_pool
from .defs import repeat_kv as repeat_kv
from .defs import repeat_kv_heads as repeat_kv_heads
from .defs import repeat_kv_matrix as repeat_kv_matrix
from .defs import rope as rope
from .defs import rotation as rotation
from .defs import self_attention as self_attention

# derivations: check a chain of steps, from Python, the plain notation or LaTeX
from .derivation import Derivation as Derivation
from .derivation import check_statements as check_statements
from .derivation import check_steps as check_steps
from .derivation import parse_notation as parse_notation
from .derivation.latex import parse_latex as parse_latex
from .errors import DerivationError as DerivationError
from .errors import InputError as InputError
from .errors import LoweringError as LoweringError
from .errors import ParseError as ParseError
from .errors import UnknownSymbolError as UnknownSymbolError
from .errors import UnknownTheoremError as UnknownTheoremError
from .lowering import Kernel as Kernel
from .lowering import lower_theorem as lower_theorem
from .lowering.lower import lower as lower

# isort: split
# the theorem library: symattn.library() (every theorem by name), symattn.theorem(NAME) (one);
# symattn.theorems.prove(theorem) proves one now (symattn.theorems.theorem is the decorator that registers one)
from .theorems import Theorem as Theorem
from .theorems import library as library
from .theorems import named as theorem  # noqa: F401 (symattn.theorem(NAME): the lookup, not the decorator)

# isort: split
# the notebook displays and readable text of the objects above, attached from the top floor
from .teach import display as _display  # noqa: E402, F401
