r"""Number powers as papers write them, read at ``^`` by the parser: ``x^2``, ``d^{-1/2}``,
``d_k^{-\frac{1}{2}}`` (a numerator and a denominator); ``W^{1,l}`` is a label, not a power."""

from __future__ import annotations


def power_ahead(p) -> bool:
    """At ``^``: a number follows (``^2``, ``^{-1/2}``, ``^{-\\frac{1}{2}}``), in LaTeX."""
    if p.dialect != "latex":
        return False
    k = 1
    if p.at("op", "{", k):
        k += 1
        if p.at("op", "-", k):
            k += 1
        if p.at("num", None, k) and p.at("op", ",", k + 1):  # W^{1,l}: a label, not a power
            return False
        return p.at("num", None, k) or p.at("cmd", "frac", k)
    return p.at("num", None, k)


def read_power(p):
    """``^2``, ``^{3}``, ``^{-1}``, ``^{-1/2}``, ``^{\\frac{1}{2}}``: (numerator, denominator)."""
    p.next()
    if not p.at_op("{"):
        return int(p.next().value), 1
    p.next()
    sign = -1 if p.at_op("-") and p.next() else 1
    if p.at("cmd", "frac"):
        p.next()
        parts = []
        for _ in range(2):
            p.expect_op("{", "'{' and a number")
            t = p.next()
            if t.kind != "num":
                p.fail(f"found {t.show()} in a power", "a number, as in ^{-\\frac{1}{2}}", t)
            parts.append(int(t.value))
            p.expect_op("}", "'}'")
        num, den = parts
    else:
        num, den = int(p.next().value), 1
        if p.at_op("/"):
            p.next()
            t = p.next()
            if t.kind != "num":
                p.fail(f"found {t.show()} in a power", "a number, as in ^{-1/2}", t)
            den = int(t.value)
    p.expect_op("}", "'}' closing the power")
    if den == 0:
        p.fail("a power with the denominator 0", "a power such as ^{-1/2}")
    return sign * num, den
