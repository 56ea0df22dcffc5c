"""Definitions of the seeds as SymPy matrix expressions (no numpy here)."""

from .attention import attention as attention
from .attention import scores as scores
from .dims import check_dimension as check_dimension
from .dims import dims as dims
from .dims import h as h
from .feature_map import FeatureMap as FeatureMap
from .feature_map import feature_map as feature_map
from .heads import Family as Family
from .heads import FamilyMember as FamilyMember
from .heads import HeadConcat as HeadConcat
from .heads import HeadStack as HeadStack
from .heads import HeadSum as HeadSum
from .heads import head_concat as head_concat
from .heads import head_stack as head_stack
from .heads import head_sum as head_sum
from .multihead import head as head
from .multihead import multihead as multihead
from .multihead import paper_self_attention as paper_self_attention
from .numeric_nodes import Exp as Exp
from .numeric_nodes import Exp2 as Exp2
from .numeric_nodes import Log as Log
from .score import Apply as Apply
from .score import Score as Score
from .score import ScoreFunction as ScoreFunction
from .shapes import check_shapes as check_shapes
from .softmax import Softmax as Softmax
from .softmax import softmax as softmax
from .structured import Symmetric as Symmetric

# isort: split
# seed 002: pooling, self-/cross-attention, GQA/MQA, masks, KV cache, permutations, RoPE
from .cache import KVCache as KVCache
from .cross import cross_attention as cross_attention
from .cross import self_attention as self_attention
from .gqa import gqa as gqa
from .gqa import group_of as group_of
from .gqa import mqa as mqa
from .gqa import repeat_kv as repeat_kv
from .gqa import repeat_kv_heads as repeat_kv_heads
from .gqa import repeat_kv_matrix as repeat_kv_matrix
from .mask import CausalMask as CausalMask
from .mask import PaddingMask as PaddingMask
from .mask import Visible as Visible
from .mask import causal_attention as causal_attention
from .mask import masked_attention as masked_attention
from .permutation import PermIndex as PermIndex
from .permutation import Permutation as Permutation
from .pooling import attention_pool as attention_pool
from .pooling import mean_pool as mean_pool
from .pooling import multihead_pool as multihead_pool
from .pooling import multihead_pool_sum as multihead_pool_sum
from .pooling import query_attention_pool as query_attention_pool
from .rope import BlockDiag as BlockDiag
from .rope import apply_rope as apply_rope
from .rope import rope as rope
from .rope import rotation as rotation
