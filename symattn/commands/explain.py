"""``symattn explain TOPIC [--format text|md] [--no-prove]``: one definition in both conventions, side by side."""

from __future__ import annotations

import shutil

TOPIC_NAMES = ("attention", "multihead", "pooling", "gqa", "mask", "kv-cache", "rope")


def cmd_explain(args) -> int:
    from ..teach.conventions import explain_topic, to_markdown, to_text

    e = explain_topic(args.topic, prove=not args.no_prove)
    if args.format == "md":
        print(to_markdown(e), end="")
    else:
        print(to_text(e, width=shutil.get_terminal_size((100, 24)).columns))
    if e.claim_verdict is None:
        return 0
    return 0 if e.claim_verdict.proved and all(r.status == "proved" for r in e.theorems) else 1


def register(sub) -> None:
    p = sub.add_parser(
        "explain", help="show a definition in the column and the row convention side by side, and prove they agree",
        description="Show TOPIC in seed 000's column convention (Q is d_k × n, Softmax over each column, "
                    "V·Softmax(KᵀQ)) and in the row convention of the Transformer paper and PyTorch (Q is "
                    "n × d_k, softmax over each row, softmax(QKᵀ)V): every operand's shape in each, the axis "
                    "the softmax normalizes, how one form turns into the other, and the theorems that prove "
                    "the correspondence, proved live. Exits 1 if a proof does not go through.")
    p.add_argument("topic", choices=TOPIC_NAMES, help="what to explain")
    p.add_argument("--format", choices=("text", "md"), default="text",
                   help="plain text for a terminal (default) or Markdown with LaTeX")
    p.add_argument("--no-prove", action="store_true", help="show both forms without proving anything")
    p.set_defaults(run=cmd_explain)
