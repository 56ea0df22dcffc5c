"""The kernels of the numeric core, each lowered from a proved theorem of ``proofs/rewrites.py``.

The core refers to its kernels through the objects of this module (``SCORES``, ``NORMALIZE``, ...,
one :class:`NumericKernel` per name of :data:`NAMES`, all made when the module loads), never through
strings resolved per call: a misspelt kernel is an ImportError (or a KeyError naming the kernels, from
:func:`kernel`) when the module that uses it loads. A kernel is lowered on its first call (or by
:meth:`NumericKernel.prepare`) and cached; the claim it lowers is proved first, or its proved verdict is
read from the verdict cache (:mod:`symattn.proof.verdict_cache`: shipped with the package, or written
the first time the claim was proved), so a first call in a fresh process proves nothing; the kernel's
provenance then says "cached (key ...)". A call inside ``trace()`` is recorded, so tests can check
that a numeric function ran exactly the kernels that ``lower`` produces from its theorems.
"""

from __future__ import annotations

import contextlib

import sympy as sp

from ..lowering import lower_theorem

_KERNELS: dict = {}
_TRACE: list = []


def _specs():
    import symattn.proofs.rewrites as R

    Z = sp.MatrixSymbol("Z", R.n, R.H * R.d_v)
    W_O = sp.MatrixSymbol("W^O", R.H * R.d_v, R.d_model)
    P = sp.MatrixSymbol("P", 1, R.d_model)
    U1 = sp.MatrixSymbol("U_1", R.n, R.d_v)
    U, ell = sp.MatrixSymbol("U", R.n, R.d_v), sp.MatrixSymbol("l", R.n, 1)
    QKV = [R.Q, R.K, R.V]

    def core(claim):
        q, k, v = R.head_inputs(True)
        return ("scale_folds_into_query_projection", claim, "rhs", {"inputs": {q: R.Q, k: R.K, v: R.V}})

    def pool_rhs(bias):
        """softmax(F Xᵀ) X, the pooled input inside (softmax(F Xᵀ) X) W^V of the rhs."""
        return R.sa.softmax(R.pooling_fold(bias) * R.X.T, 1) * R.X

    q0, k0, _ = R.head_inputs(True)
    specs = {
        # projections: one GEMM for Q, K, V (self-attention), or each block alone
        "qkv_fused_bias": ("fused_qkv_projection", 0, "lhs", {}),
        "qkv_fused": ("fused_qkv_projection", 1, "lhs", {}),
        "core": core(0),
        "core_masked": core(1),
        "core_causal": core(2),
        "scores": ("scale_folds_into_query_projection", 0, "rhs",
                   {"part": q0 * k0.T, "inputs": {q0: R.Q, k0: R.K}, "args": [R.Q, R.K]}),
        "output_bias": ("heads_concatenate_before_output_projection", 0, "lhs",
                        {"inputs": {R.CONCAT: Z, R.STACK_O: W_O}}),
        "output": ("heads_concatenate_before_output_projection", 1, "lhs",
                   {"inputs": {R.CONCAT: Z, R.STACK_O: W_O}}),
        "pool_fold_bias": ("attention_pooling_folds_projections", 0, "rhs", {"part": R.pooling_fold(True)}),
        "pool_fold": ("attention_pooling_folds_projections", 1, "rhs", {"part": R.pooling_fold(False)}),
        "pool_rows": ("attention_pooling_folds_projections", 2, "lhs",
                      {"part": R.sa.softmax(R.U * R.X.T, 1) * R.X}),
        "mean_pool": ("mean_pool_is_uniform_attention", 0, "rhs", {}),
        "decode": ("kv_cache_step_needs_no_mask", 0, "rhs", {"args": [R.q_new, R.K, R.V]}),
        "merge_step": ("blockwise_logsumexp_merge", 2, "rhs",
                       {"inputs": {R.Exp(R.ShiftRows(R.S_1, R.c_1)) * R.V_1: U1}, "donate": (R.S_2,)}),
        "accumulate": ("blockwise_logsumexp_merge", 7, "rhs",
                       {"inputs": {R.Exp(R.S_1) * R.V_1: U1}, "donate": (R.S_2,)}),
        "deferred": ("blockwise_logsumexp_merge", 0, "rhs", {"donate": (R.S,), "args": [R.S, R.c, R.V]}),
        # the first key block with the shift c = 0: exp(S) V, nothing to add yet
        "exp_product": ("blockwise_logsumexp_merge", 6, "rhs",
                        {"part": R.Exp(R.S) * R.V, "donate": (R.S,), "args": [R.S, R.V]}),
        "normalize": ("blockwise_logsumexp_merge", 0, "rhs",
                      {"inputs": {R.Exp(R.ShiftRows(R.S, R.c)) * R.V: U,
                                  R.Exp(R.ShiftRows(R.S, R.c)) * R.ones(R.m): ell}}),
    }
    # the fused projection in two steps, for work items that each project a slice of the rows:
    # the scaled blocks side by side once per call, then X W_cat (+ 1 b_cat) per item
    W, b = R.FUSED_W, R.FUSED_B
    w_block = sp.BlockMatrix([[W["Q"] / R.ROOT, W["K"], W["V"]]])
    b_block = sp.BlockMatrix([[b["Q"] / R.ROOT, b["K"], b["V"]]])
    w_cat = sp.MatrixSymbol("W_cat", R.d_model, w_block.shape[1])
    b_cat = sp.MatrixSymbol("b_cat", 1, w_block.shape[1])
    specs["qkv_weights"] = ("fused_qkv_projection", 1, "lhs", {"part": w_block})
    specs["qkv_bias_row"] = ("fused_qkv_projection", 0, "lhs", {"part": b_block})
    specs["qkv_apply_bias"] = ("fused_qkv_projection", 0, "lhs", {"inputs": {w_block: w_cat, b_block: b_cat}})
    specs["qkv_apply"] = ("fused_qkv_projection", 1, "lhs", {"inputs": {w_block: w_cat}})
    for bias in (True, False):
        suffix = "_bias" if bias else ""
        _, rhs = R.fused_sides(bias)
        for j, part in enumerate(("q", "k", "v")):
            specs[f"proj_{part}{suffix}"] = ("fused_qkv_projection", 0 if bias else 1, "rhs",
                                             {"part": rhs.blocks[0, j]})
        specs[f"pool_value{suffix}"] = ("attention_pooling_folds_projections", 0 if bias else 1, "rhs",
                                        {"inputs": {pool_rhs(bias): P}})
    for name in ("core", "core_masked", "core_causal"):
        extra = [R.M] if name == "core_masked" else []
        specs[name][3]["args"] = QKV + extra
    specs.update(_base2_specs(R))
    return specs


def _base2_specs(R):
    """The kernels of the unshifted tile in base 2 (claims 8-12 of ``blockwise_logsumexp_merge``):
    exp(S) = 2^T entrywise with T = S / ln 2 = (Q / ln 2) Kᵀ, and NumPy's exp2 is cheaper than its exp.

    - ``query_base2(Q)``: Q / ln 2 (the query tile once per work item; then T = ``scores``(Q / ln 2, K));
    - ``scores_base2(Q, K)``: T = (Q / ln 2) Kᵀ (the factor applied to the smaller operand);
    - ``mask_base2(M)``: M / ln 2 (an additive mask once per call; then T + M / ln 2 by claim 12);
    - ``scores_base2_masked(Q, K, M)``: T + M / ln 2 (the mask as given, -inf entries stay -inf);
    - ``exp2_product(T, V)``: 2^T V = exp(Q Kᵀ) V, T overwritten (the first key block; V may be [V 1]);
    - ``exp2_rowsum(T)``: 2^T 1 = exp(Q Kᵀ) 1, T overwritten (the denominator alone);
    - ``accumulate_base2(T_2, U_1, V_2)``: U_1 + 2^(T_2) V_2 with U_1 = 2^(T_1) V_1 and T_2 = S_2 / ln 2
      (a later key block; T_2 overwritten).
    """
    T = (R.Q / R.LN2) * R.K.T  # the MatMul (1/ln 2) Q Kᵀ of claims 8-10
    T_in = sp.MatrixSymbol("T", R.n, R.m)
    T_2 = sp.MatrixSymbol("T_2", R.n, R.m_2)
    U_1 = sp.MatrixSymbol("U_1", R.n, R.d_v)
    th = "blockwise_logsumexp_merge"
    return {
        "query_base2": (th, 9, "rhs", {"part": R.Q / R.LN2, "args": [R.Q]}),
        "scores_base2": (th, 9, "rhs", {"part": T, "args": [R.Q, R.K]}),
        "mask_base2": (th, 12, "rhs", {"part": R.M / R.LN2, "args": [R.M]}),
        "scores_base2_masked": (th, 12, "rhs", {"part": T + R.M / R.LN2, "args": [R.Q, R.K, R.M]}),
        "exp2_product": (th, 9, "rhs", {"inputs": {T: T_in}, "donate": (T_in,), "args": [T_in, R.V]}),
        "exp2_rowsum": (th, 10, "rhs", {"inputs": {T: T_in}, "donate": (T_in,), "args": [T_in]}),
        "accumulate_base2": (th, 11, "rhs", {"inputs": {R.Exp2(R.S_1 / R.LN2) * R.V_1: U_1, R.S_2 / R.LN2: T_2},
                                             "donate": (T_2,), "args": [T_2, U_1, R.V_2]}),
    }


_SPECS: dict = {}


#: the kernels of the numeric core, by name: ``_specs`` builds exactly these (checked when it first runs)
NAMES = (
    "qkv_fused_bias", "qkv_fused", "qkv_weights", "qkv_bias_row", "qkv_apply_bias", "qkv_apply",
    "proj_q_bias", "proj_k_bias", "proj_v_bias", "proj_q", "proj_k", "proj_v",
    "core", "core_masked", "core_causal", "scores", "output_bias", "output",
    "pool_fold_bias", "pool_fold", "pool_rows", "pool_value_bias", "pool_value", "mean_pool", "decode",
    "merge_step", "accumulate", "deferred", "exp_product", "normalize",
    "query_base2", "scores_base2", "mask_base2", "scores_base2_masked", "exp2_product", "exp2_rowsum",
    "accumulate_base2",
)


def spec(name: str):
    """(theorem, claim, side, options) of a kernel of the numeric core."""
    if not _SPECS:
        built = _specs()
        if set(built) != set(NAMES):
            raise AssertionError(f"numeric kernels: NAMES and the specs differ: {sorted(set(built) ^ set(NAMES))}")
        _SPECS.update(built)
    return _SPECS[_known(name)]


def _known(name: str) -> str:
    if name not in NAMES:
        raise KeyError(f"no kernel {name!r} in the numeric core; the kernels are {', '.join(NAMES)}")
    return name


def names() -> list:
    return sorted(NAMES)


def get(name: str):
    """The kernel ``name``, lowered from its theorem on first use (its claim proved first, or its
    proved verdict read from the verdict cache)."""
    if name not in _KERNELS:
        th, claim, side, opts = spec(name)
        _KERNELS[name] = lower_theorem(th, claim, side, **opts)
    return _KERNELS[name]


def _direct(k, count: int, keys: tuple):
    """For a call of kernel ``k`` with ``count`` positional arrays and these keywords: the keywords
    that fill its remaining inputs in order, and (keyword, parameter) of the sizes it takes as
    keywords; None when the call needs ``Kernel.__call__`` (a keyword it does not know, an input
    missing or given twice: its messages say which) or when the compiled function's parameters
    are not the kernel's inputs in order followed by its sizes and ``out`` (by name)."""
    import inspect

    try:
        names, fn = list(k.arg_names), k.fn
        sizes = {str(d): k.dims[d] for d in k.extra_dims}
        params = inspect.signature(fn).parameters.values()
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    params = list(params)
    if len(set(names)) != len(names) or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    # the inputs by position, then the sizes and out by their names (keyword-only or not)
    if any(p.kind is not p.POSITIONAL_OR_KEYWORD for p in params[:len(names)]):
        return None
    if {p.name for p in params[len(names):]} != set(sizes.values()) | {"out"}:
        return None
    given = [key for key in keys if key != "out"]
    inputs = [key for key in given if key in names]
    sized = [(key, sizes[key]) for key in given if key in sizes and key not in names]
    if len(inputs) + len(sized) != len(given) or len(sized) != len(sizes):
        return None
    if sorted(names[count:]) != sorted(inputs):
        return None
    return [key for key in names[count:]], sized


class NumericKernel:
    """A kernel of the numeric core, named when the module loads (an unknown name is a KeyError then)
    and lowered on first use. Calling it runs the kernel on these inputs (and sizes), into ``out`` when
    given: calls that name every input call the compiled function directly, keywords put in order once
    per call pattern (``Kernel.__call__`` works that out on every call)."""

    __slots__ = ("name", "_callers")

    def __init__(self, name: str):
        self.name = _known(name)
        self._callers: dict = {}

    @property
    def kernel(self):
        """The lowered :class:`~symattn.lowering.kernel.Kernel` (lowered and proved on first use)."""
        return get(self.name)

    def prepare(self) -> NumericKernel:
        """Lower (and prove) the kernel now, in the calling thread (before work items run it)."""
        get(self.name)
        return self

    def __call__(self, *args, out=None, **kwargs):
        k = get(self.name)
        if _TRACE:
            _TRACE[-1].append(k)
        key = (len(args), tuple(kwargs))
        plan = self._callers.get(key, False)
        if plan is False:
            plan = self._callers[key] = _direct(k, len(args), tuple(kwargs))
        if plan is None:
            return k(*args, out=out, **kwargs)
        inputs, sized = plan
        return k.fn(*args, *[kwargs[n] for n in inputs], out=out, **{p: kwargs[n] for n, p in sized})

    def __repr__(self):
        return f"NumericKernel({self.name!r})"


#: every kernel by name (for tables of tests and benchmarks)
KERNELS = {name: NumericKernel(name) for name in NAMES}


def kernel(name: str) -> NumericKernel:
    """The kernel object ``name`` (a KeyError naming the kernels when there is none)."""
    return KERNELS[_known(name)]


QKV_FUSED_BIAS, QKV_FUSED = KERNELS["qkv_fused_bias"], KERNELS["qkv_fused"]
QKV_WEIGHTS, QKV_BIAS_ROW = KERNELS["qkv_weights"], KERNELS["qkv_bias_row"]
QKV_APPLY_BIAS, QKV_APPLY = KERNELS["qkv_apply_bias"], KERNELS["qkv_apply"]
CORE, CORE_MASKED, CORE_CAUSAL = KERNELS["core"], KERNELS["core_masked"], KERNELS["core_causal"]
SCORES, OUTPUT_BIAS, OUTPUT = KERNELS["scores"], KERNELS["output_bias"], KERNELS["output"]
POOL_FOLD_BIAS, POOL_FOLD, POOL_ROWS = KERNELS["pool_fold_bias"], KERNELS["pool_fold"], KERNELS["pool_rows"]
POOL_VALUE_BIAS, POOL_VALUE = KERNELS["pool_value_bias"], KERNELS["pool_value"]
MEAN_POOL, DECODE = KERNELS["mean_pool"], KERNELS["decode"]
MERGE_STEP, ACCUMULATE, DEFERRED = KERNELS["merge_step"], KERNELS["accumulate"], KERNELS["deferred"]
EXP_PRODUCT, NORMALIZE = KERNELS["exp_product"], KERNELS["normalize"]
QUERY_BASE2, SCORES_BASE2, MASK_BASE2 = KERNELS["query_base2"], KERNELS["scores_base2"], KERNELS["mask_base2"]
SCORES_BASE2_MASKED, EXP2_PRODUCT = KERNELS["scores_base2_masked"], KERNELS["exp2_product"]
EXP2_ROWSUM, ACCUMULATE_BASE2 = KERNELS["exp2_rowsum"], KERNELS["accumulate_base2"]
#: the projection of one part (q, k or v) alone, with the bias (True) or without
PROJECTIONS = {("q", True): KERNELS["proj_q_bias"], ("k", True): KERNELS["proj_k_bias"],
               ("v", True): KERNELS["proj_v_bias"], ("q", False): KERNELS["proj_q"],
               ("k", False): KERNELS["proj_k"], ("v", False): KERNELS["proj_v"]}


@contextlib.contextmanager
def trace():
    """Record the kernels run inside the block, one entry per call (work items on several
    threads each run the same kernels): ``with trace() as used: ...``. The record is shared
    by the whole process: trace one call at a time."""
    used: list = []
    _TRACE.append(used)
    try:
        yield used
    finally:
        _TRACE.pop()
