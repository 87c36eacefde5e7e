"""The `trainbench` command: works on result files and runs single jobs outside pytest.

Each subcommand lives in its own module exposing `add_parser(subparsers)`, which sets
`func(args) -> exit code`. Exit codes: 0 ok, 1 a check failed (regression, failed item),
2 usage or input error (the message names the flag or file and the fix).
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ..errors import TrainbenchError

__all__ = ["main", "build_parser"]


def _subcommands() -> list:
    from . import bench, compare, data, fleet, gate, history, noise, preflight, report, select, train

    return [bench, data, select, preflight, train, report, compare, gate, history, noise, fleet]


class _Parser(argparse.ArgumentParser):
    """Bad input is one line naming the command, the flag and the fix, exit 2 (no usage dump)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="trainbench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    for module in _subcommands():
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a bad flag (2, its one line already printed)
        return int(exc.code or 0)
    try:
        return int(args.func(args) or 0)
    except TrainbenchError as exc:
        print(f"trainbench {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130

