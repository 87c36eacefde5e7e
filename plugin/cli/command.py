"""One way to declare a subcommand: its module docstring is the --help description, shown as written."""

from __future__ import annotations

import argparse

__all__ = ["subcommand"]


def subcommand(subparsers, name: str, help: str, doc: str | None) -> argparse.ArgumentParser:
    return subparsers.add_parser(name, help=help, description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
