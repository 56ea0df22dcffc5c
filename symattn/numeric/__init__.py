"""The numeric core: NumPy functions built from kernels lowered from proved theorems."""

from .attention import attention as attention
from .blocked import blocked_core as blocked_core
from .multihead import multihead_attention as multihead_attention
