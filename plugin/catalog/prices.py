"""Instance prices: the packaged, dated `prices.csv` plus an optional user price file.

A user file (`--price-file PATH` or the environment variable `TRAINBENCH_PRICES`) has the same
columns. By default it is *merged over* the packaged catalog: a user row replaces the packaged
row with the same (cloud, region, instance_type) and any other row is added, so a user can fix
one price or add a negotiated rate without copying the whole catalog. `replace=True`
(`--price-mode replace`, `TRAINBENCH_PRICES_MODE=replace`) uses the user's rows only.

Every file is validated where it enters: a bad header, a price that is negative, zero or not a
number, or a GPU that is not a `gpus.csv` profile is refused with the file, row, line and
column named. Rows whose spot price is not below on-demand are flagged SUSPECT on load, so
reports show them rather than silently use them.
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Iterable, Mapping

from .gpus import gpu_names
from ..errors import InputError

__all__ = [
    "PriceRow",
    "PRICE_COLUMNS",
    "REQUIRED_PRICE_COLUMNS",
    "PRICES_ENV",
    "PRICES_MODE_ENV",
    "PRICE_MODES",
    "load_prices",
    "packaged_prices",
    "read_price_file",
    "cheapest_price",
]

PRICES_ENV = "TRAINBENCH_PRICES"  # path of a user price file
PRICES_MODE_ENV = "TRAINBENCH_PRICES_MODE"  # "merge" (default) or "replace"
PRICE_MODES = ("merge", "replace")

REQUIRED_PRICE_COLUMNS = (
    "cloud",
    "region",
    "instance_type",
    "gpu",  # a profile name from gpus.csv (t4, a100-80g, h100, ...)
    "gpu_count",  # GPUs in one instance
    "on_demand_usd_per_hour",  # per instance, not per GPU
    "spot_usd_per_hour",  # per instance; the cell may be empty (no spot offer)
    "source",  # where the figure comes from: every row needs one
)
OPTIONAL_PRICE_COLUMNS = ("flag", "catalog_date")
PRICE_COLUMNS = REQUIRED_PRICE_COLUMNS + OPTIONAL_PRICE_COLUMNS
FLAG_KINDS = ("SUSPECT", "UNVERIFIED")


@dataclass(frozen=True)
class PriceRow:
    cloud: str
    region: str
    instance_type: str
    gpu: str  # gpus.csv profile name
    gpu_count: int
    on_demand_usd_per_hour: float  # whole instance
    spot_usd_per_hour: float | None  # whole instance; None = no spot offer known
    source: str
    flag: str = ""  # "" or "SUSPECT: why" / "UNVERIFIED: why"
    catalog_date: str = ""
    origin: str = ""  # the file the row was read from, for messages and reports

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.cloud, self.region, self.instance_type)

    def price_per_gpu(self, spot: bool = False) -> float | None:
        """USD per GPU-hour: instance price / GPUs in the instance."""
        price = self.spot_usd_per_hour if spot else self.on_demand_usd_per_hour
        return None if price is None else price / self.gpu_count

    def describe(self, spot: bool = False) -> str:
        price = self.spot_usd_per_hour if spot else self.on_demand_usd_per_hour
        kind = "spot" if spot else "on-demand"
        text = f"{self.cloud} {self.region} {self.instance_type} ({self.gpu_count}x {self.gpu})"
        text += f" ${price:g}/h {kind}" if price is not None else f" no {kind} price"
        if self.catalog_date:
            text += f", catalog {self.catalog_date}"
        return text + (f" [{self.flag}]" if self.flag else "")


def _number(cell: str, where: str, column: str, allow_empty: bool) -> float | None:
    text = cell.strip()
    if not text:
        if allow_empty:
            return None
        raise InputError(f"{where}, column '{column}': empty; give USD per hour, e.g. 1.25")
    try:
        value = float(text)
    except ValueError:
        raise InputError(
            f"{where}, column '{column}': {text!r} is not a number; give USD per hour, e.g. 1.25"
        ) from None
    if not math.isfinite(value) or value <= 0:
        raise InputError(
            f"{where}, column '{column}': {text} is not a positive price; prices are USD per "
            f"instance-hour and must be > 0 (leave spot empty when there is no spot offer)"
        )
    return value


def _auto_flag(flag: str, on_demand: float, spot: float | None) -> str:
    if spot is None or spot < on_demand:
        return flag
    why = "spot price not below on-demand"
    return f"{flag}; SUSPECT: {why}" if flag else f"SUSPECT: {why}"


def _parse_row(row: Mapping[str, str], where: str, known_gpus: list[str], origin: str) -> PriceRow:
    for column in ("cloud", "region", "instance_type", "source"):
        if not (row.get(column) or "").strip():
            raise InputError(f"{where}, column '{column}': empty; every row needs a {column}")
    gpu = row["gpu"].strip().lower()
    if gpu not in known_gpus:
        raise InputError(
            f"{where}, column 'gpu': unknown GPU {row['gpu'].strip()!r}; use a profile name "
            f"from the GPU catalog: {', '.join(known_gpus)}"
        )
    count_text = row["gpu_count"].strip()
    try:
        count = int(count_text)
    except ValueError:
        count = 0
    if count < 1:
        raise InputError(
            f"{where}, column 'gpu_count': {count_text!r} is not a positive whole number of GPUs"
        )
    on_demand = _number(row["on_demand_usd_per_hour"], where, "on_demand_usd_per_hour", False)
    spot = _number(row["spot_usd_per_hour"], where, "spot_usd_per_hour", True)
    flag = (row.get("flag") or "").strip()
    if flag and not flag.upper().startswith(FLAG_KINDS):
        raise InputError(
            f"{where}, column 'flag': {flag!r}; leave it empty or start it with "
            f"{' or '.join(FLAG_KINDS)} followed by the reason"
        )
    return PriceRow(
        cloud=row["cloud"].strip().lower(),
        region=row["region"].strip(),
        instance_type=row["instance_type"].strip(),
        gpu=gpu,
        gpu_count=count,
        on_demand_usd_per_hour=on_demand,
        spot_usd_per_hour=spot,
        source=row["source"].strip(),
        flag=_auto_flag(flag, on_demand, spot),
        catalog_date=(row.get("catalog_date") or "").strip(),
        origin=origin,
    )


def _parse_text(text: str, origin: str) -> list[PriceRow]:
    # Keep original line numbers while skipping '#' comment lines and blank lines.
    numbered = [(i, line) for i, line in enumerate(text.splitlines(), start=1)
                if line.strip() and not line.lstrip().startswith("#")]
    if not numbered:
        raise InputError(f"price file {origin}: no header line; the first line must name the "
                         f"columns: {','.join(REQUIRED_PRICE_COLUMNS)}")
    reader = csv.DictReader(line for _, line in numbered)
    header = [h.strip() for h in (reader.fieldnames or [])]
    reader.fieldnames = header
    missing = [c for c in REQUIRED_PRICE_COLUMNS if c not in header]
    if missing:
        raise InputError(
            f"price file {origin}, line {numbered[0][0]} (header): missing column(s) "
            f"{', '.join(repr(c) for c in missing)}; required: {','.join(REQUIRED_PRICE_COLUMNS)}"
            f" (optional: {','.join(OPTIONAL_PRICE_COLUMNS)})"
        )
    known = gpu_names()
    rows: list[PriceRow] = []
    seen: dict[tuple, int] = {}
    for index, row in enumerate(reader, start=1):
        line = numbered[reader.line_num - 1][0]
        where = f"price file {origin}, row {index} (line {line})"
        if None in row or any(v is None for v in row.values()):
            raise InputError(f"{where}: {len(header)} columns expected by the header; "
                             f"check for a missing or extra comma")
        parsed = _parse_row(row, where, known, origin)
        if parsed.key in seen:
            raise InputError(
                f"{where}, column 'instance_type': {parsed.instance_type!r} in "
                f"{parsed.cloud}/{parsed.region} repeats row {seen[parsed.key]}; keep one row"
            )
        seen[parsed.key] = index
        rows.append(parsed)
    return rows


def read_price_file(path: str | os.PathLike) -> list[PriceRow]:
    """Read and validate one price file; InputError names the file, row and column."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"price file {path}: not found; check --price-file / {PRICES_ENV}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"price file {path}: cannot be read ({exc})") from None
    return _parse_text(text, str(path))


@lru_cache(maxsize=None)
def _packaged() -> tuple[PriceRow, ...]:
    text = resources.files(__package__).joinpath("prices.csv").read_text(encoding="utf-8")
    return tuple(_parse_text(text, "prices.csv (packaged)"))


def packaged_prices() -> list[PriceRow]:
    return list(_packaged())


def load_prices(
    price_file: str | os.PathLike | None = None,
    mode: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[PriceRow]:
    """The price rows to use: packaged, merged with or replaced by the user's file.

    `price_file` falls back to $TRAINBENCH_PRICES, `mode` to $TRAINBENCH_PRICES_MODE, then
    "merge". In merge mode a user row replaces the packaged row with the same
    (cloud, region, instance_type).
    """
    environ = os.environ if environ is None else environ
    price_file = price_file or environ.get(PRICES_ENV) or None
    mode = (mode or environ.get(PRICES_MODE_ENV) or "merge").strip().lower()
    if mode not in PRICE_MODES:
        raise InputError(f"unknown price mode {mode!r} (--price-mode / {PRICES_MODE_ENV}); "
                         f"known: {', '.join(PRICE_MODES)}")
    if price_file is None:
        if mode == "replace":
            raise InputError(f"--price-mode replace needs a price file (--price-file or {PRICES_ENV})")
        return packaged_prices()
    user = read_price_file(price_file)
    if mode == "replace":
        return user
    merged = {row.key: row for row in packaged_prices()}
    merged.update({row.key: row for row in user})
    return list(merged.values())


def cheapest_price(
    rows: Iterable[PriceRow], gpu: str, spot: bool = False, allow_flagged: bool = False
) -> PriceRow | None:
    """The row with the lowest per-GPU price for `gpu` (unflagged rows first unless allowed)."""
    def price(r: PriceRow) -> float | None:
        return r.price_per_gpu(spot)

    candidates = [r for r in rows if r.gpu == gpu and price(r) is not None]
    clean = [r for r in candidates if not r.flag]
    pool = candidates if allow_flagged or not clean else clean
    return min(pool, key=price, default=None)
