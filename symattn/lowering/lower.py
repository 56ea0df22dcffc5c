"""``lower(expr)``: a matrix expression becomes a cached :class:`Kernel`.

``lower_theorem(name, claim, side)`` lowers one side of a claim of a theorem in the
library after the theorem is proved (it refuses unproved ones), and records the verdict
in the kernel's provenance.
"""

from __future__ import annotations

import numbers

import numpy as np
import sympy as sp

from ..defs.heads import FamilyMember
from ..defs.shapes import as_matrix
from ..errors import LoweringError
from .feature_maps import fix_feature_map_sizes, fold_feature_maps
from .kernel import Kernel, Provenance, input_leaves, is_array, kernel_printer, lambdify_kernel
from .kernel import namespace as kernel_namespace  # noqa: F401  (the modules= of lambdify_printer's users)

_CACHE: dict = {}
_PROVED: dict = {}


def lower(expr, *, args=None, inputs=None, donate=(), provenance: Provenance | None = None,
          target: str = "numpy", at=None, backward: bool = False) -> Kernel:
    """Lower a matrix expression to a batched NumPy kernel (cached: a second call is free).

    The NumPy kernel is stock ``sympy.lambdify`` with symattn's printer and CSE
    (:func:`~symattn.lowering.kernel.lambdify_kernel`)::

        printer, params = lambdify_printer(expr, args=args, donate=donate)
        fn = sympy.lambdify(params, expr, modules=[kernel_namespace()], printer=printer,
                            cse=printer.cse, dummify=False, docstring_limit=1000)

    ``printer.cse`` computes every subexpression once, in the order of evaluation, and plans where a
    step works in place (a temporary with one use, a donated input) and which step makes the result
    in ``out``; the printer prints each step batched (``@`` as one GEMM, the cheapest order of a
    matrix chain, softmax in place, masks as -inf), and its first lines convert the inputs and bind
    the sizes from their shapes. The :class:`Kernel` wraps ``fn`` (``kernel.fn``; ``kernel.source``
    is lambdify's source) with the inputs in the order of the statement, keywords, sizes no input
    shows as keywords, ``out=`` and the provenance.

    ``target``: "numpy" (default), or "array-api", "torch", "jax" for a kernel of another array
    library (``symattn.lowering.targets``: no in-place steps, no ``out=``, no ``donate``).

    ``args``: the inputs in the positional order (default: the order of a statement, Q, K, V, then
    the weights by head, see :func:`~symattn.lowering.kernel.statement_order`);
    ``inputs``: {subexpression: MatrixSymbol}, subexpressions that the caller computes and
    passes in (for example an accumulator of an online softmax);
    ``donate``: input matrices the kernel may overwrite in place (the caller's temporaries);
    ``at``: {dimension or its name: size}, sizes fixed before lowering (:func:`fix_sizes`). The rule is
    a kernel for every size, read from the arrays; fixing H is the fallback (one input per head).
    ``backward=True`` (targets "torch", "jax"): a kernel differentiable by the framework whose backward
    pass is the proved VJP of every input (``torch.autograd.Function`` / ``jax.custom_vjp``, see
    :mod:`symattn.lowering.backward_vjp`); a VJP that is not proved is refused, with the verdict.

    >>> import sympy as sp, numpy as np, symattn as sa
    >>> n, m, d_k, d_v = sa.dims("n m d_k d_v")
    >>> Q, K = sp.MatrixSymbol("Q", n, d_k), sp.MatrixSymbol("K", m, d_k)
    >>> V = sp.MatrixSymbol("V", m, d_v)
    >>> k = lower(sa.attention(Q, K, V, convention="row"), args=[Q, K, V])
    >>> k is lower(sa.attention(Q, K, V, convention="row"), args=[Q, K, V])
    True
    >>> rng = np.random.default_rng(0)
    >>> out = k(Q=rng.random((2, 3, 4), dtype=np.float32), K=rng.random((5, 4), dtype=np.float32),
    ...         V=rng.random((5, 6), dtype=np.float32))
    >>> out.shape, out.dtype
    ((2, 3, 6), dtype('float32'))

    A symbolic head count H is a head axis: each family is one array (..., H, rows, cols), and H is
    read from the arrays when the kernel runs.

    >>> d, H = sa.dims("d H")
    >>> X = sp.MatrixSymbol("X", d, n)
    >>> W_Q, W_K = sa.Family("W^Q", d_k, d), sa.Family("W^K", d_k, d)
    >>> W_V, W_O = sa.Family("W^V", d_v, d), sa.Family("W^O", d, d_v)
    >>> mh = lower(sa.multihead(X, X, X, W_Q, W_K, W_V, W_O, H=H, form="sum"))
    >>> mh.arg_names
    ('X', 'W^Q', 'W^K', 'W^V', 'W^O')
    >>> w = {"W^Q": np.ones((4, 2, 8)), "W^K": np.ones((4, 2, 8)), "W^V": np.ones((4, 3, 8)),
    ...      "W^O": np.ones((4, 8, 3))}                                       # H = 4 heads
    >>> mh(np.ones((16, 8, 5)), **w).shape                                   # a batch of 16
    (16, 8, 5)
    """
    expr = as_matrix(expr, "expr", "lower(expr)")
    if at:
        expr = fix_sizes(expr, at)
    expr = fold_feature_maps(expr)  # at concrete sizes phi(X) is its coordinate functions: one callable again
    subst = tuple(sorted(((e, s) for e, s in (inputs or {}).items()), key=lambda p: p[1].name))
    for e, sym in subst:
        if tuple(e.shape) != tuple(sym.shape):
            raise LoweringError(f"cannot stand {sym} ({sp.sstr(sym.shape)}) for {sp.sstr(e)[:60]} "
                                f"({sp.sstr(e.shape)}): the shapes differ")
    if subst:
        # a subexpression may also occur transposed (SymPy distributes ᵀ over sums), or as a run
        # of factors inside a longer (flattened) product
        expr = expr.xreplace(dict(subst)).xreplace({e.T: sym.T for e, sym in subst})
        for e, sym in subst:
            if isinstance(e, sp.MatMul):
                expr = replace_factor_run(expr, e, sym)
        for e, s in subst:
            if expr.has(e):
                raise LoweringError(f"could not substitute {s} for {e}")
    leaves = input_leaves(expr)
    check_input_names(leaves)
    if args is None:
        args = leaves
    else:
        args = match_args(args, leaves)
    if backward:
        from .backward_kernel import lower_backward

        return lower_backward(expr, tuple(args), target, provenance)
    if target != "numpy":
        from .targets.build import lower_for_target

        return lower_for_target(expr, tuple(args), target, provenance)
    donate = tuple(donate)
    key = (expr, tuple(args), donate, provenance)
    if key in _CACHE:
        return _CACHE[key]
    lam = lambdify_kernel(expr, args, donated=donate)
    k = Kernel(expr, tuple(args), lam.source, lam.fn, lam.names, provenance, lam.dims, lam.extra)
    _CACHE[key] = k
    return k


def lambdify_printer(expr, *, args=None, donate=()):
    """The printer that makes :func:`lower`'s NumPy kernel out of stock ``sympy.lambdify``, and the
    parameters to give lambdify: the inputs (``args``, by default in the order of the statement) as
    symbols named by their identifiers (``W^Q`` is ``W_Q``), the sizes no input shows, then ``out``.

    >>> import inspect, numpy as np, sympy as sp, symattn as sa
    >>> from symattn.lowering import kernel_namespace, lambdify_printer
    >>> n, m, d_k, d_v = sa.dims("n m d_k d_v")
    >>> Q, K = sp.MatrixSymbol("Q", n, d_k), sp.MatrixSymbol("K", m, d_k)
    >>> V = sp.MatrixSymbol("V", m, d_v)
    >>> row = sa.attention(Q, K, V, convention="row")
    >>> printer, params = lambdify_printer(row)
    >>> params
    [Q, K, V, out]
    >>> f = sp.lambdify(params, row, modules=[kernel_namespace()], printer=printer, cse=printer.cse)
    >>> inspect.getsource(f).split("\\n", 1)[1] == sa.lower(row).source.split("\\n", 1)[1]   # lower's body
    True
    >>> q, k, v = np.ones((2, 3, 4)), np.ones((5, 4)), np.ones((5, 6))
    >>> np.array_equal(f(q, k, v, None), sa.lower(row)(q, k, v))
    True
    >>> print("\\n".join(inspect.getsource(f).splitlines()[-5:]))
        t0 = numpy.swapaxes(K, -1, -2)  # (..., d_k, m)
        t1 = chain(float(1/math.sqrt(d_k)), Q, t0)  # (..., n, m)
        t1 = softmax_(t1, -1)  # (..., n, m)
        t2 = mm(t1, V, out=out)  # (..., n, d_v)
        return into(t2, out)
    """
    expr = fold_feature_maps(as_matrix(expr, "expr", "lambdify_printer(expr)"))
    leaves = input_leaves(expr)
    check_input_names(leaves)
    args = leaves if args is None else match_args(args, leaves)
    printer, params, *_ = kernel_printer(expr, args, tuple(donate))
    return printer, params


def describe_input(x) -> str:
    """An input as a message names it: 'the matrix Y (n x d)', 'the feature map phi', 'the scalar i'."""
    from .kernel import FunctionInput, ScalarInput, StackedFamily

    if isinstance(x, ScalarInput):
        return f"the scalar {x.name}"
    if isinstance(x, FunctionInput):
        return f"the function {x.name}"
    what = "the family" if isinstance(x, StackedFamily) else "the matrix"
    return f"{what} {x.name} ({' x '.join(sp.sstr(d) for d in x.shape)})"


def check_input_names(leaves) -> None:
    """Refuse inputs that the kernel could not tell apart or take by keyword: two inputs of one name
    (two matrices Y of different shapes, a feature map phi and a matrix phi) are declared twice; an
    input named ``out`` collides with the kernel's ``out=`` keyword."""
    seen: dict = {}
    for x in leaves:
        if x.name in seen:
            raise LoweringError(f"lower(expr): {x.name} is declared twice: {describe_input(seen[x.name])} and "
                                f"{describe_input(x)}; give each input a name of its own")
        seen[x.name] = x
    if "out" in seen:
        raise LoweringError(f"lower(expr): {describe_input(seen['out'])} is named out, which is the kernel's "
                            "keyword for the array that receives the result (out=); rename the input")


def fix_sizes(expr, at: dict):
    """``expr`` with the dimension symbols of ``at`` ({symbol or name: positive integer}) fixed; sums,
    stacks and concatenations over a head count that becomes a number are written out, so each
    member W_1, ..., W_H is an input of its own.

    >>> import sympy as sp, symattn as sa
    >>> n, d, H = sa.dims("n d H")
    >>> W = sa.Family("W", d, d)
    >>> fix_sizes(sa.head_sum(W[sa.h] * sp.MatrixSymbol("X", d, n), H), {"H": 2})
    W_1*X + W_2*X
    """
    from ..defs.heads import _OverHeads
    from ..proof.instances import dimension_symbols

    syms = {str(s): s for s in dimension_symbols(expr)}
    mapping = {}
    for key, value in at.items():
        sym = syms.get(str(key))
        if sym is None:
            raise LoweringError(f"at: {key} is not a dimension of {sp.sstr(expr)[:60]}; its dimensions: "
                                f"{', '.join(sorted(syms)) or 'none'}")
        whole = isinstance(value, (numbers.Integral, sp.Integer)) and not isinstance(value, (bool, np.bool_))
        if not (whole and int(value) >= 1):  # NumPy's integers count; True is not a size
            raise LoweringError(f"at: {key} = {value!r} is not a positive integer")
        mapping[sym] = sp.Integer(int(value))
    fixed = fix_feature_map_sizes(expr, mapping)
    return fixed.replace(lambda e: isinstance(e, _OverHeads) and e.count.is_Integer, lambda e: e.expand_heads())


def match_args(args, leaves) -> list:
    """The inputs ``leaves`` in the order of ``args``: matrices, a Family (its stacked array), a
    family member W[h] (the same), scalar symbols or functions, or their names. Inputs that ``args``
    does not name are an error (matrices) or follow in the order of the statement (the others)."""
    from ..defs.heads import Family

    by_name = {x.name: x for x in leaves}
    out = []
    for a in args:
        if isinstance(a, Family):
            key = a.name
        elif isinstance(a, FamilyMember) and a.family_name in by_name and a.name not in by_name:
            key = a.family_name
        elif isinstance(a, str):
            key = a
        elif isinstance(a, type):
            key = a.__name__
        elif hasattr(a, "name"):
            key = a.name
        else:
            key = sp.sstr(as_matrix(a, "arg", "lower(expr)"))
        if key not in by_name:
            raise LoweringError(f"lower(expr): {key} in args is not an input of the expression; "
                                f"its inputs: {', '.join(by_name)}")
        if by_name[key] not in out:
            out.append(by_name[key])
    missing = [x.name for x in leaves if x not in out and is_array(x)]
    if missing:
        raise LoweringError(f"lower(expr): args lacks the input(s) {', '.join(missing)}")
    return out + [x for x in leaves if x not in out]


def replace_factor_run(expr, run, sym):
    """Replace the factors of the product ``run`` where they occur in a row inside a longer product
    (A B C with run B C becomes A sym): associativity, (A B) C = A (B C)."""
    c_run, factors = run.as_coeff_matrices()
    k = len(factors)

    def fix(e):
        if not isinstance(e, sp.MatMul):
            return None
        c, mats = e.as_coeff_matrices()
        for i in range(len(mats) - k + 1):
            if list(mats[i:i + k]) == list(factors) and (c / c_run).is_number:
                new = mats[:i] + [sym] + mats[i + k:]
                return sp.MatMul(c / c_run, *new).doit(deep=False) if c != c_run else (
                    sp.MatMul(*new).doit(deep=False) if len(new) > 1 else new[0])
        return None

    return expr.replace(lambda e: fix(e) is not None, fix)


def proved_result(name: str):
    """The result of proving the library theorem ``name`` (proved once per process)."""
    from ..theorems import load_library, prove

    if name not in _PROVED:
        library = load_library()
        if name not in library:
            raise LoweringError(f"no theorem named {name!r} in the library")
        _PROVED[name] = prove(library[name])
    return _PROVED[name]


_CLAIMS: dict = {}


def proved_claim(name: str, claim: int):
    """The verdict on one claim of a library theorem (once per process): read from the verdict
    cache when it was proved before under the same key, else verified now (and cached)."""
    from ..theorems import claim_verdict, load_library

    key = (name, claim)
    if key not in _CLAIMS:
        library = load_library()
        if name not in library:
            raise LoweringError(f"no theorem named {name!r} in the library")
        th = library[name]
        claims = th.claims()
        if not 0 <= claim < len(claims):
            raise LoweringError(f"theorem {name} has claims 0..{len(claims) - 1}, not {claim}")
        _CLAIMS[key] = claim_verdict(th, claim, claims)
    return _CLAIMS[key]


def theorem_side(name: str, claim: int = 0, side: str = "rhs"):
    """One side ("lhs" or "rhs") of one claim of a library theorem."""
    from ..statements import is_gradient_claim
    from ..theorems import load_library

    th = load_library()[name]
    claims = th.claims()
    if side not in ("lhs", "rhs"):
        raise LoweringError(f"side must be 'lhs' or 'rhs', got {side!r}")
    if side == "rhs" and is_gradient_claim(*claims[claim]):  # candidate = vjp(E, W, G): no formula on the right
        shown = sp.sstr(claims[claim][1])[:80]
        raise LoweringError(f"claim {claim} of theorem {name} is a gradient claim: its rhs {shown} "
                            "names the VJP the lhs is proved equal to; lower side='lhs', the proved formula")
    return claims[claim][0 if side == "lhs" else 1]


def lower_theorem(name: str, claim: int = 0, side: str = "rhs", *, args=None, inputs=None,
                  part=None, donate=(), target: str = "numpy", at=None) -> Kernel:
    """Prove the theorem, then lower one side of one of its claims, recording the verdict.

    ``inputs``: {subexpression: MatrixSymbol} computed by the caller and passed in;
    ``part``: a subexpression of that side to lower instead of the whole side (it must occur
    in the side); ``at``: sizes fixed first (the fallback, see :func:`fix_sizes`), recorded in the
    provenance.

    Only the claim that is lowered is verified here (``symattn prove`` proves the whole theorem).
    """
    from ..theorems import load_library

    v = proved_claim(name, claim)
    if v.status != "proved":
        raise LoweringError(f"claim {claim} of theorem {name} is {v.status}, not proved; "
                            "refusing to lower it")
    statement = load_library()[name].statement
    expr = theorem_side(name, claim, side)
    if part is not None:
        if not expr.has(part):
            raise LoweringError(f"{sp.sstr(part)[:60]} is not a subexpression of claim {claim} of {name}")
        side = f"{side}, the subexpression {sp.sstr(part)}"
        expr = part
    if at:
        expr = fix_sizes(expr, at)
        side = f"{side}, at {', '.join(f'{k}={val}' for k, val in at.items())}"
    subst = tuple((sp.sstr(e), s.name) for e, s in (inputs or {}).items())
    prov = Provenance(name, statement, claim, side, v.status, v.general, v.scope, v.method, subst)
    return lower(expr, args=args, inputs=inputs, donate=donate, provenance=prov, target=target)
