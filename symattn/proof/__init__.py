"""The proof engine: verify() and its verdicts. Only this package builds a proved Verdict."""

from .engine import verify as verify
from .verdict import Counterexample as Counterexample
from .verdict import Verdict as Verdict
