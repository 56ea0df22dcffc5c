"""The proof engine: verify() and its verdicts. Only this package builds a proved Verdict."""

# the evaluation rules of defs/numeric_nodes register themselves in evaluate.RULES; registered
# here, where every import of symattn.proof.* passes first, so evaluate never imports its plug-ins
from . import evaluate_nodes as _evaluate_nodes  # noqa: F401
from . import print_precedence as _print_precedence
from .engine import verify as verify
from .layer_stack import LayerStack as LayerStack
from .layer_stack import layer_stack as layer_stack
from .verdict import Counterexample as Counterexample
from .verdict import Verdict as Verdict

# traces and audit seeds print large products: SymPy's printer, told their precedence without
# building each product's negation, prints the same text in a fraction of the time
_print_precedence.register()
