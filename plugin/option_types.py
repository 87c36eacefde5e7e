"""Integer option values, parsed by `type=` functions that name the flag (STYLE.md 9).

Kept apart from plugin/options.py so the option modules it imports (data, distributed, cost)
can use them too."""

from __future__ import annotations

import argparse
from typing import Callable

__all__ = ["int_at_least", "positive_int", "nonneg_int"]


def int_at_least(flag: str, low: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} expects an integer, got {value!r}") from None
        if n < low:
            raise argparse.ArgumentTypeError(f"{flag} must be >= {low}, got {n}")
        return n

    parse.__name__ = flag
    return parse


positive_int = lambda flag: int_at_least(flag, 1)  # noqa: E731
nonneg_int = lambda flag: int_at_least(flag, 0)  # noqa: E731
