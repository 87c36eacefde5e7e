"""The `trainbench` command: works on result files and runs single jobs outside pytest.

Each subcommand lives in its own module exposing `add_parser(subparsers)`, which sets
`func(args) -> exit code`. Exit codes: 0 ok, 1 a check failed (regression, failed item),
2 usage or input error (the message names the flag or file and the fix).
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from plugin.errors import TrainbenchError

__all__ = ["main", "build_parser"]


def _subcommands() -> list:
    from plugin import run_cli, train_cli
    from plugin.data import prepare_cli
    from plugin.gate import compare_command, gate_command
    from plugin.preflight import cli as preflight_cli
    from plugin.report import command as report_command
    from plugin.select import command as select_command

    return [run_cli, prepare_cli, select_command, preflight_cli, train_cli,
            report_command, compare_command, gate_command]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trainbench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in _subcommands():
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except TrainbenchError as exc:
        print(f"trainbench {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
