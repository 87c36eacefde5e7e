"""Pytest options for prices: `--price-file` and `--price-mode` (the lead calls
`add_options(group)` from plugin/options.py), and the price rows they select."""

from __future__ import annotations

import argparse

from plugin.catalog.prices import PRICE_MODES, PRICES_ENV, PRICES_MODE_ENV, PriceRow, load_prices, read_price_file
from plugin.errors import InputError

__all__ = ["add_options", "parse_price_file", "prices_for"]


def parse_price_file(value: str) -> str:
    """`type=` for --price-file: the file is validated here, where it enters."""
    try:
        read_price_file(value)
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"--price-file: {exc}") from None
    return value


def add_options(group) -> None:
    group.addoption("--price-file", type=parse_price_file, default=None, metavar="CSV",
                    help=f"instance prices (same columns as the packaged prices.csv) merged over the packaged "
                         f"catalog for cost per epoch; also ${PRICES_ENV}")
    group.addoption("--price-mode", choices=PRICE_MODES, default=None,
                    help="merge the price file over the packaged catalog (default) or replace it; "
                         f"also ${PRICES_MODE_ENV}")


def prices_for(config) -> list[PriceRow]:
    """The price rows a pytest session uses (InputError on a bad $TRAINBENCH_PRICES file)."""
    return load_prices(config.getoption("price_file", None), config.getoption("price_mode", None))
