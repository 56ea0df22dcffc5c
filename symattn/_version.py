"""The version of symattn, in a module of its own that imports nothing.

Modules inside the package that need the version (generated code's header, cache keys) import it
from here, never from ``symattn`` itself, whose ``__init__`` may still be running.
"""

__version__ = "0.1.0"
