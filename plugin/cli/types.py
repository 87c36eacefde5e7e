"""Every option value of the command line and of the pytest plugin is parsed here, by `type=`
functions that say what is valid (pytest's options are argparse underneath, so one set serves
both). argparse itself names the flag: `argument --steps: must be >= 1, got 0`, exit 2. Domain
parsers raise InputError; `domain()` turns that into the ArgumentTypeError argparse prints."""

from __future__ import annotations

import argparse
import math
import signal
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import InputError

__all__ = [
    "bucket_url", "comma_list", "git_commit", "sky_name", "domain", "existing_path", "gpu", "int_at_least", "int_list", "nonneg_int",
    "number", "positive_int", "probability", "signal_name", "yes_no",
]


def _named(flag: str, parse: Callable[[str], Any]) -> Callable[[str], Any]:
    parse.__name__ = flag  # argparse names the type in its message
    return parse


def int_at_least(flag: str, low: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expects an integer, got {value!r}") from None
        if n < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {n}")
        return n

    return _named(flag, parse)


def positive_int(flag: str) -> Callable[[str], int]:
    return int_at_least(flag, 1)


def nonneg_int(flag: str) -> Callable[[str], int]:
    return int_at_least(flag, 0)


def number(flag: str, low: float = 0.0, high: float = math.inf, *, low_open: bool = True,
           high_open: bool = True) -> Callable[[str], float]:
    """A float in (low, high) by default; `low_open=False` admits `low` itself."""

    def parse(value: str) -> float:
        try:
            x = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expects a number, got {value!r}") from None
        above = x > low if low_open else x >= low
        below = x < high if high_open else x <= high
        if not (above and below and math.isfinite(x)):
            lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
            raise argparse.ArgumentTypeError(f"must be in {lo}{low:g}, {high:g}{hi}, got {value}")
        return x

    return _named(flag, parse)


def probability(flag: str) -> Callable[[str], float]:
    return number(flag, 0.0, 1.0)


def comma_list(flag: str, valid: Callable[[], Iterable[str]] | None = None) -> Callable[[str], list[str]]:
    """`a,b,c` -> de-duplicated list, order kept; with `valid`, lower-cased and checked."""

    def parse(value: str) -> list[str]:
        items = [v.strip() for v in value.split(",") if v.strip()]
        if not items:
            raise argparse.ArgumentTypeError("needs at least one value")
        if valid is not None:
            known = list(valid())
            bad = [v for v in items if v.lower() not in known]
            if bad:
                raise argparse.ArgumentTypeError(
                    f"unknown value(s) {', '.join(bad)}; supported: {', '.join(known)}")
            items = [v.lower() for v in items]
        return list(dict.fromkeys(items))

    return _named(flag, parse)


def int_list(flag: str, low: int) -> Callable[[str], list[int]]:
    def parse(value: str) -> list[int]:
        try:
            items = [int(v) for v in value.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expects integers, e.g. {flag}=0,2,4; got {value!r}") from None
        if not items or min(items) < low:
            raise argparse.ArgumentTypeError(f"values must be >= {low}, got {value!r}")
        return list(dict.fromkeys(items))

    return _named(flag, parse)


def yes_no(flag: str) -> Callable[[str], bool]:
    def parse(value: str) -> bool:
        v = value.strip().lower()
        if v in ("yes", "true", "1", "on"):
            return True
        if v in ("no", "false", "0", "off"):
            return False
        raise argparse.ArgumentTypeError(f"expects yes or no, got {value!r}")

    return _named(flag, parse)


def existing_path(flag: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if not Path(value).exists():
            raise argparse.ArgumentTypeError(f"{value}: no such file or directory")
        return value

    return _named(flag, parse)


def domain(flag: str, parse_fn: Callable[[str], Any]) -> Callable[[str], Any]:
    """Wrap a domain parser (raising InputError) as a `type=`; argparse adds the flag itself."""

    def parse(value: str) -> Any:
        try:
            return parse_fn(value)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{flag}: ")) from None

    return _named(flag, parse)


def gpu(flag: str = "--gpu") -> Callable[[str], str]:
    from ..catalog import gpu_names

    def parse(value: str) -> str:
        v = value.strip().lower()
        if v == "auto" or v in gpu_names():
            return v
        raise argparse.ArgumentTypeError(f"unknown GPU {value!r}; known: auto, {', '.join(gpu_names())}")

    return _named(flag, parse)


def signal_name(flag: str) -> Callable[[str], signal.Signals]:
    """SIGUSR1, USR1 or a number."""

    def parse(value: str) -> signal.Signals:
        v = value.strip().upper()
        try:
            return signal.Signals(int(v)) if v.isdigit() else signal.Signals[v if v.startswith("SIG") else "SIG" + v]
        except (KeyError, ValueError):
            known = ", ".join(s.name for s in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGINT, signal.SIGHUP))
            raise argparse.ArgumentTypeError(f"unknown signal {value!r}; e.g. {known}") from None

    return _named(flag, parse)


def bucket_url(flag: str, schemes: tuple[str, ...] = ("s3", "gs")) -> Callable[[str], str]:
    """`s3://NAME` or `gs://NAME`: a bucket by its store and name (no path inside it)."""

    def parse(value: str) -> str:
        scheme, sep, name = value.strip().partition("://")
        name = name.strip("/")
        if not sep or scheme not in schemes or not name or "/" in name:
            raise argparse.ArgumentTypeError(
                f"expects {' or '.join(s + '://NAME' for s in schemes)} (a bucket, no path), got {value!r}")
        return f"{scheme}://{name}"

    return _named(flag, parse)


def sky_name(flag: str) -> Callable[[str], str]:
    """A name SkyPilot accepts for clusters and jobs: lower-case letters, digits, '-' (<= 40)."""
    import re

    def parse(value: str) -> str:
        v = value.strip()
        if not re.fullmatch(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?", v):
            raise argparse.ArgumentTypeError(
                f"expects lower-case letters, digits and '-', starting with a letter (at most 40), got {value!r}")
        return v

    return _named(flag, parse)


def git_commit(flag: str) -> Callable[[str], str]:
    """A commit id, 7 to 40 hex digits: a pin, so no branch or tag names (they move)."""
    import re

    def parse(value: str) -> str:
        v = value.strip().lower()
        if not re.fullmatch(r"[0-9a-f]{7,40}", v):
            raise argparse.ArgumentTypeError(f"expects a commit id (7-40 hex digits, e.g. `git rev-parse HEAD`), "
                                             f"got {value!r}; branch and tag names move")
        return v

    return _named(flag, parse)
