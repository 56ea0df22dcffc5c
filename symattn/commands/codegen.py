"""``symattn codegen THEOREM --out FILE.py [--claim K] [--side lhs|rhs]``."""

from __future__ import annotations

import sys


def cmd_codegen(args) -> int:
    from ..errors import SymattnError
    from ..lowering.codegen import generate
    from ..theorems import load_library

    library = load_library()
    if args.theorem not in library:
        print(f"symattn codegen: no theorem named {args.theorem}; known: {', '.join(sorted(library))}",
              file=sys.stderr)
        return 2
    n_claims = len(library[args.theorem].claims())
    if not 0 <= args.claim < n_claims:
        print(f"symattn codegen: {args.theorem} has claims 0..{n_claims - 1}, not {args.claim}",
              file=sys.stderr)
        return 2
    try:
        source = generate(args.theorem, args.claim, args.side)
    except SymattnError as exc:
        print(f"symattn codegen: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if args.out == "-":
        sys.stdout.write(source)
    else:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(source)
        print(f"wrote {args.out}: {args.theorem}, claim {args.claim}, {args.side} (run it to self-test)")
    return 0


def register(sub) -> None:
    p = sub.add_parser("codegen", help="write a standalone NumPy module for a side of a proved theorem")
    p.add_argument("theorem", help="the theorem's name (see symattn prove)")
    p.add_argument("--out", required=True, help="the file to write (- for standard output)")
    p.add_argument("--claim", type=int, default=0, help="which claim of the theorem (default 0)")
    p.add_argument("--side", choices=("lhs", "rhs"), default="rhs",
                   help="which side to compute (default rhs, the rewritten form)")
    p.set_defaults(run=cmd_codegen)
