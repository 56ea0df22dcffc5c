"""Check derivations the way papers write them: a chain of steps, each verified.

Front ends: the plain notation (:mod:`.notation`) and a LaTeX subset (:mod:`.latex`),
both hand-written recursive-descent parsers that never execute the text.
"""

from .api import Derivation as Derivation
from .diagnose import Diagnosis as Diagnosis
from .documents import check_file as check_file
from .model import Report as Report
from .model import Step as Step
from .model import check_statements as check_statements
from .model import check_steps as check_steps
from .notation import parse_notation as parse_notation
