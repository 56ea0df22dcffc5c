"""The numeric core: NumPy functions built from kernels lowered from proved theorems."""

from .attention import attention as attention
from .blas import current_blas as current_blas
from .blas import use_blas as use_blas
from .blocked import blocked_core as blocked_core
from .decode import kv_decode_step as kv_decode_step
from .kernels import trace as trace
from .multihead import multihead_attention as multihead_attention
from .pooling import attention_pool as attention_pool
from .pooling import mean_pool as mean_pool
