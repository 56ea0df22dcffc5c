"""What the teaching tests look for in readable output: engine-internal names and unclosed brackets."""

import re

INTERNAL = re.compile(r"(?<![\w^])_\w")  # an engine-internal name such as _k, _b0, X[_j, _i]


def balanced(s: str) -> bool:
    """Every (, [, { and ⌊ in ``s`` is closed, in order."""
    pairs, stack = {")": "(", "]": "[", "}": "{", "⌋": "⌊"}, []
    for ch in s:
        if ch in "([{⌊":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack
