"""The numeric core: NumPy functions built from kernels lowered from proved theorems.

The public functions come from :mod:`symattn.numeric.front`, which sends Dask arrays to
:mod:`symattn.numeric.dask_arrays` and everything else to the NumPy core."""

from .backward import Gradients as Gradients
from .blas import current_blas as current_blas
from .blas import use_blas as use_blas
from .front import attention as attention
from .front import attention_pool as attention_pool
from .front import blocked_core as blocked_core
from .front import kv_decode_step as kv_decode_step
from .front import mean_pool as mean_pool
from .front import multihead_attention as multihead_attention
from .front import multihead_attention_backward as multihead_attention_backward
from .kernels import trace as trace
from .saved import Saved as Saved
