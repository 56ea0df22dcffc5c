"""The ``symattn`` command line; each subcommand is a module of ``symattn.commands``."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from . import __version__, commands

DESCRIPTION = (
    "Prove attention formulas, refute wrong ones with certified counterexamples, check derivations "
    "and write verified numeric code. Run 'symattn COMMAND --help' for the options of a command.")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="symattn", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"symattn {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"{commands.__name__}.{mod.name}").register(sub)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
