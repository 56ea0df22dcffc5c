"""Runtime helpers every target's kernels share: binding and checking sizes, slices, the order of a
matrix chain. Plain Python on shapes and numbers, no array library, so that ``torch.compile`` and
``jax.jit`` trace them (loops rather than builtins with keywords, no int() of an array).

The kernels of every target (:mod:`.numpy`, :mod:`.array_api`, :mod:`.torch`, :mod:`.jax`) call these;
``symattn codegen`` copies the ones a module uses into it (:mod:`.standalone`), so this module must
not import sympy or anything else from symattn except, optionally, the error classes.
"""

import math

from ...errors import ShapeError  # codegen replaces this line by local classes


def bind(bound, symbol, size, array_name, axis_name):
    """Bind a dimension symbol to a size on first sight; afterwards check that sizes agree."""
    if symbol not in bound:
        bound[symbol] = (size, array_name, axis_name)
        return size
    first, where, first_axis = bound[symbol]
    if first != size:
        raise ShapeError(
            f"dimension {symbol}: {where} has {first} {first_axis} but {array_name} has {size} "
            f"{axis_name}; both are {symbol} in the expression")
    return size


def check_size(expected, size, array_name, axis_name, text):
    """A ShapeError naming the array and its axis when an axis does not have the expected size."""
    if expected != size:
        number = text if text == str(expected) else f"{text} = {expected}"
        raise ShapeError(f"{array_name}: its {axis_name} should number {number}, got {size}")


def layer_count(depth):
    """The number of layers of a stack (a size read from an axis or given by keyword): a positive
    whole number, else a ShapeError."""
    whole = not isinstance(depth, bool) and isinstance(depth, (int, float)) and float(depth).is_integer()
    if not whole or int(depth) < 1:
        raise ShapeError(f"the number of layers L of a stack must be a positive whole number, got {depth!r}")
    return int(depth)


def solve_size(value, symbol, text):
    """A dimension solved from array sizes (``text`` says how): it must be a positive integer."""
    if value != int(value) or int(value) < 1:
        raise ShapeError(f"dimension {symbol} = {text} is {value}, not a positive integer")
    return int(value)


def slice_bounds(start, stop, size, length, matrix, axis, text, values, valid=""):
    """The slice ``start:stop`` of the ``axis`` ("rows" or "columns", ``size`` of them) of ``matrix``,
    checked: 0 <= start <= stop <= size and ``length`` elements, as the expression's shape says (a
    ShapeError names the matrix, the bounds as written in ``text``, the ``values`` they use and the
    ``valid`` range of the position, as in '1 <= i <= N')."""
    start, stop = int(start), int(stop)
    if 0 <= start <= stop <= size and stop - start == length:
        return slice(start, stop)
    given = ", ".join(f"{k} = {v}" for k, v in values.items())
    if not 0 <= start <= stop <= size:
        why = f"the bounds must satisfy 0 <= start <= stop <= {size} (the {axis} of {matrix})"
        why += f", so {valid}" if valid else ""
    else:
        why = f"the slice should hold {length} {axis}, it holds {stop - start}"
    raise ShapeError(f"slice {text} of the {axis} of {matrix} at {given}: it runs {start}:{stop}; {why}")


def broadcast_batches(*batches):
    """The broadcast of batch shapes (NumPy's rule), or a ShapeError naming them."""
    out, longest = [], 0
    for b in batches:  # plain loops, no builtins with keywords: torch.compile(fullgraph=True) traces them
        longest = len(b) if len(b) > longest else longest
    for axis in range(longest):
        sizes = {b[len(b) - 1 - axis] for b in batches if axis < len(b)} - {1}
        if len(sizes) > 1:
            raise ShapeError(f"batch axes do not broadcast: {', '.join(str(tuple(b)) for b in batches)}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(reversed(out))


def chain_order(shapes, memo=None):
    """The cheapest parenthesization of a matrix chain (dynamic program over the shapes).

    ``shapes`` are the array shapes (batch axes first); the cost of a product counts the broadcast
    batch. Returns a nested tuple of operand indices; ``memo``: a dict of earlier answers by shapes
    (the NumPy runtime keeps one; traced kernels pass none).

    >>> chain_order([(10, 100), (100, 5), (5, 50)])
    ((0, 1), 2)
    >>> chain_order([(50, 5), (5, 100), (100, 1)])
    (0, (1, 2))
    """
    key = tuple(tuple(s) for s in shapes)
    if memo is not None and key in memo:
        return memo[key]
    k = len(key)
    dims = [key[0][-2]] + [s[-1] for s in key]
    cost, split = {(i, i): 0 for i in range(k)}, {}
    for length in range(2, k + 1):
        for i in range(k - length + 1):
            j = i + length - 1
            batch = math.prod(broadcast_batches(*[key[t][:-2] for t in range(i, j + 1)]))
            best = None
            for s in range(i, j):  # a loop, not min() of a generator: torch.compile traces it
                c = cost[i, s] + cost[s + 1, j] + batch * dims[i] * dims[s + 1] * dims[j + 1]
                if best is None or c < best[0]:
                    best = (c, s)
            cost[i, j], split[i, j] = best
    order = _order_tree(split, 0, k - 1)
    if memo is not None:
        memo[key] = order
    return order


def _order_tree(split, i, j):
    """The parenthesization of operands i..j from the dynamic program's best splits."""
    return i if i == j else (_order_tree(split, i, split[i, j]), _order_tree(split, split[i, j] + 1, j))


def traced(x) -> bool:
    """True when ``x`` is being traced (``torch.compile``, ``jax.jit``): its entries are not known."""
    kind = type(x).__module__
    if kind.startswith("torch"):
        import torch

        return torch.compiler.is_compiling()
    if kind.startswith("jax"):
        import jax

        return isinstance(x, jax.core.Tracer)
    return False
