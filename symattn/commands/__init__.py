"""Subcommands of the ``symattn`` command line; each module defines ``register(subparsers)``."""
