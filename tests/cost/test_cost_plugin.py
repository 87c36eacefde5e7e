"""The pytest plugin fills cost_per_epoch_usd from the price catalog, and refuses a bad price
file (--price-file or $TRAINBENCH_PRICES) before any benchmark runs."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from trainbench.catalog.prices import REQUIRED_PRICE_COLUMNS
from trainbench.records.results import load_results

BENCH = """
def test_cost(trainbench):
    # a record as a T4 run would leave it (no training here: only the cost arithmetic is tested)
    trainbench.record(kind="training", workload="resnet50", size="full", gpu="t4",
                      metrics={"samples_per_s": 1000.0})
    trainbench.record(kind="training", workload="resnet50", size="tiny", gpu="cpu",
                      metrics={"samples_per_s": 10.0})
"""
# installed (CI): the entry point loads the plugin; a bare checkout loads it by module name
_INSTALLED = any(e.name == "trainbench" for e in entry_points(group="pytest11"))
ARGS = ["-p", "no:cacheprovider", "--gpu=cpu"] + ([] if _INSTALLED else ["-p", "trainbench.pytest_plugin.hooks"])


def _records(pytester):
    (path,) = (pytester.path / "reports" / "results").glob("*.json")
    return load_results(path).records


def test_cost_per_epoch_is_filled_from_the_packaged_catalog(pytester):
    pytester.makepyfile(test_bench=BENCH)
    pytester.runpytest(*ARGS).assert_outcomes(passed=1)
    t4, cpu = _records(pytester)
    # 1,281,167 images at 1,000/s on one T4 at the cheapest unflagged 0.526 USD/h
    assert t4.metrics["cost_per_epoch_usd"] == pytest.approx(1_281_167 / 1000 / 3600 * 0.526)
    assert "g4dn.xlarge" in t4.config["cost_basis"] or "NC4as_T4_v3" in t4.config["cost_basis"]
    assert cpu.metrics["cost_per_epoch_usd"] is None and "CPU" in cpu.config["cost_basis"]


def test_a_user_price_file_is_merged_over_the_catalog(pytester):
    pytester.makepyfile(test_bench=BENCH)
    prices = pytester.path / "mine.csv"
    prices.write_text(",".join(REQUIRED_PRICE_COLUMNS) + "\nacme,eu-1,t4.small,t4,1,0.10,,our contract\n")
    pytester.runpytest(*ARGS, f"--price-file={prices}").assert_outcomes(passed=1)
    t4, _ = _records(pytester)
    assert t4.metrics["cost_per_epoch_usd"] == pytest.approx(1_281_167 / 1000 / 3600 * 0.10)
    assert "acme eu-1 t4.small" in t4.config["cost_basis"]


def test_bad_price_files_are_usage_errors_naming_file_row_and_column(pytester, monkeypatch):
    pytester.makepyfile(test_bench=BENCH)
    bad = pytester.path / "bad.csv"
    bad.write_text(",".join(REQUIRED_PRICE_COLUMNS) + "\nacme,eu-1,x,t4,1,-2,,quote\n")
    result = pytester.runpytest(*ARGS, f"--price-file={bad}")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--price-file: price file*bad.csv, row 1 (line 2), column 'on_demand_usd_per_hour'*"])
    monkeypatch.setenv("TRAINBENCH_PRICES", str(bad))
    result = pytester.runpytest(*ARGS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bad.csv, row 1 (line 2), column 'on_demand_usd_per_hour'*"])
