"""``symattn codegen THEOREM --out FILE.py [--claim K] [--side lhs|rhs]`` and
``symattn codegen --all --out DIR [--self-test]``."""

from __future__ import annotations

import os
import sys


def _fail(message: str, code: int) -> int:
    print(f"symattn codegen: {message}", file=sys.stderr)
    return code


def cmd_codegen(args) -> int:
    from ..errors import SymattnError
    from ..theorems import load_library

    if args.all:
        if args.theorem:
            return _fail("give a theorem or --all, not both", 2)
        return _generate_all(args)
    if not args.theorem:
        return _fail("name a theorem (see symattn prove), or give --all", 2)
    library = load_library()
    if args.theorem not in library:
        return _fail(f"no theorem named {args.theorem}; known: {', '.join(sorted(library))}", 2)
    n_claims = len(library[args.theorem].claims())
    if not 0 <= args.claim < n_claims:
        return _fail(f"{args.theorem} has claims 0..{n_claims - 1}, not {args.claim}", 2)
    if not args.out.strip():
        return _fail("--out needs a file name (or - for standard output), got an empty one", 2)
    if args.out != "-":
        folder = os.path.dirname(os.path.abspath(args.out))
        if os.path.isdir(args.out):
            return _fail(f"cannot write {args.out}: it is a directory; give a file name (--all writes a directory)", 2)
        if os.path.exists(folder) and not os.path.isdir(folder):
            return _fail(f"cannot write {args.out}: {folder} is a file, not a directory", 2)
        if not os.path.isdir(folder):  # an error, not a new folder: a mistyped path stays visible
            return _fail(f"cannot write {args.out}: the directory {folder} does not exist (create it first)", 2)
    at = parse_at(args.at)
    if isinstance(at, str):
        return _fail(at, 2)
    from ..lowering.codegen import matrix_sides

    if library[args.theorem].expect == "proved" and (args.theorem, args.claim, args.side) not in matrix_sides(
            {args.theorem: library[args.theorem]}):
        return _fail(f"the {args.side} of claim {args.claim} of {args.theorem} is not a matrix; codegen writes "
                     "kernels for matrix sides (--all writes every one)", 2)
    try:
        source = _generator(args)(args.theorem, args.claim, args.side, at=at or None)
    except SymattnError as exc:
        return _fail(f"{type(exc).__name__}: {exc}", 1)
    if args.out == "-":
        sys.stdout.write(source)
    else:
        try:
            with open(args.out, "w", encoding="utf-8") as fh:
                fh.write(source)
        except OSError as exc:
            return _fail(f"cannot write {args.out}: {exc.strerror or exc}", 2)
        print(f"wrote {args.out}: {args.theorem}, claim {args.claim}, {args.side} (run it to self-test)")
    if args.self_test:
        return _self_test(source, args.theorem, args.claim, args.side)
    return 0


def parse_at(items) -> dict | str:
    """{name: size} from the ``--at NAME=SIZE`` options, or the message that refuses them: a size is a
    positive whole number in ASCII digits, a name is given once."""
    at: dict = {}
    for item in items or ():
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key or not (value.isascii() and value.isdigit()):
            return f"--at takes NAME=SIZE (for example --at H=4), got {item!r}"
        if key in at:
            return f"--at {key} is given twice ({key}={at[key]} and {key}={int(value)}); give it once"
        at[key] = int(value)
    return at


def _generator(args):
    """generate(theorem, claim, side, at=None) for the array library of ``--target`` (NumPy by default)."""
    target = getattr(args, "target", "numpy")
    if target == "numpy":
        from ..lowering.codegen import generate

        return generate
    from ..lowering.targets.codegen import generate_target

    return lambda name, claim, side, at=None: generate_target(name, claim, side, target, at=at)


def _self_test(source: str, name: str, claim: int, side: str) -> int:
    from ..lowering.codegen import run_self_test

    try:
        run_self_test(source)
    except AssertionError as exc:
        return _fail(f"self-test failed: {name}, claim {claim}, {side}: {exc}", 1)
    return 0


def _generate_all(args) -> int:
    """One module per matrix side of every proved library theorem, in the directory ``--out``
    (made when missing), named THEOREM__claimK_SIDE.py."""
    from ..errors import SymattnError
    from ..lowering.codegen import matrix_sides, run_self_test

    if args.out == "-" or not args.out.strip():
        return _fail("--all writes one file per side: give a directory as --out", 2)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        return _fail(f"--all needs a directory as --out; {args.out} is a file", 2)
    at = parse_at(getattr(args, "at", None))
    if isinstance(at, str):
        return _fail(at, 2)
    sides = matrix_sides()
    sizes = {key: _sizes_here(at, *key) for key in sides}
    unused = sorted(set(at) - {k for here in sizes.values() for k in here})
    if unused:
        return _fail(f"--at {', '.join(unused)}: no theorem side has such a dimension", 2)
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as exc:
        return _fail(f"cannot make the directory {args.out}: {exc.strerror or exc}", 2)
    failed = []
    for name, claim, side in sides:
        path = os.path.join(args.out, f"{name}__claim{claim}_{side}.py")
        try:
            source = _generator(args)(name, claim, side, at=sizes[name, claim, side] or None)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(source)
            if args.self_test:
                run_self_test(source)
        except (SymattnError, AssertionError, OSError) as exc:
            failed.append(f"{name}, claim {claim}, {side}: {type(exc).__name__}: {str(exc)[:200]}")
    done = len(sides) - len(failed)
    what = "self-tested and written" if args.self_test else "written"
    print(f"{done} of {len(sides)} theorem sides {what} to {args.out}")
    for line in failed:
        print(f"  failed: {line}", file=sys.stderr)
    return 1 if failed else 0


def _sizes_here(at: dict, name: str, claim: int, side: str) -> dict:
    """The sizes of ``at`` that are dimensions of this side of the claim (``--all --at H=4`` fixes H
    where there is one)."""
    from ..lowering.lower import theorem_side
    from ..proof.instances import dimension_symbols

    if not at:
        return {}
    names = {str(s) for s in dimension_symbols(theorem_side(name, claim, side))}
    return {k: v for k, v in at.items() if k in names}


def register(sub) -> None:
    p = sub.add_parser(
        "codegen", help="write standalone NumPy modules for the sides of proved theorems",
        description="Write a standalone module (no sympy needed to run it) that computes one side of a proved "
                    "theorem of the library; its header records the statement, the verdict, the symattn version "
                    "and the date, and running it (python FILE.py) tests it against the other side of the claim. "
                    "--all writes every side of every proved theorem into a directory.")
    p.add_argument("theorem", nargs="?", help="the theorem's name (see symattn prove)")
    p.add_argument("--out", required=True,
                   help="the file to write (- for standard output); with --all, a directory (made when missing)")
    p.add_argument("--claim", type=int, default=0, help="which claim of the theorem (default 0)")
    p.add_argument("--side", choices=("lhs", "rhs"), default="rhs",
                   help="which side to compute (default rhs, the rewritten form)")
    p.add_argument("--at", action="append", metavar="NAME=SIZE",
                   help="fix a size before lowering (--at H=4: one input per head); by default every size, "
                        "the head count H included, is read from the arrays; with --all, fixed on every side "
                        "that has it")
    p.add_argument("--all", action="store_true",
                   help="every side of every claim of every proved theorem whose sides are matrices")
    p.add_argument("--self-test", action="store_true", help="run each module's self-test after writing it")
    p.add_argument("--target", choices=("numpy", "array-api", "torch", "jax"), default="numpy",
                   help="the array library of the generated code (default numpy; array-api takes its namespace "
                        "from the inputs: NumPy, PyTorch, JAX, CuPy, Dask)")
    p.set_defaults(run=cmd_codegen)
