"""The packaged CSV data files (catalog, driver and wheel tables): rows as dicts, `#` lines
being the sources and notes that travel with the data."""

from __future__ import annotations

import csv
from importlib import resources

__all__ = ["csv_rows"]


def csv_rows(package: str, filename: str) -> list[dict[str, str]]:
    text = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
