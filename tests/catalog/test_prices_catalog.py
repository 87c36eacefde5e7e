"""Must-show 4 and 5: price files are validated where they enter; catalog rows carry sources
and suspicious rows are flagged."""

from __future__ import annotations

import pytest

from trainbench.catalog import get_gpu, gpu_names
from trainbench.catalog.prices import (
    PRICES_ENV,
    PRICES_MODE_ENV,
    REQUIRED_PRICE_COLUMNS,
    cheapest_price,
    load_prices,
    packaged_prices,
    read_price_file,
)
from trainbench.errors import InputError

HEADER = ",".join(REQUIRED_PRICE_COLUMNS)
GOOD = "acme,eu-1,big.1,a100-80g,1,2.50,1.00,my contract 2026"


def write(tmp_path, *lines, name="prices.csv"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_packaged_rows_have_sources_dates_and_known_gpus():
    rows = packaged_prices()
    assert {r.cloud for r in rows} >= {"aws", "gcp", "azure"}
    for r in rows:
        assert r.source and r.catalog_date
        get_gpu(r.gpu)  # every row maps onto a GPU profile
        assert r.on_demand_usd_per_hour > 0


def test_suspect_rows_in_the_packaged_catalog_are_flagged():
    by_type = {r.instance_type: r for r in packaged_prices()}
    assert by_type["a2-ultragpu-1g"].flag.startswith("SUSPECT")
    assert by_type["p4d.24xlarge"].flag.startswith("SUSPECT")
    assert by_type["g4dn.xlarge"].flag == ""
    for r in packaged_prices():
        if r.cloud == "alibaba":
            assert r.flag.startswith("UNVERIFIED") and "CNY" in r.flag


def test_spot_not_below_on_demand_is_flagged_on_load(tmp_path):
    path = write(tmp_path, HEADER, "acme,eu-1,odd.1,t4,1,1.00,1.20,quote")
    (row,) = read_price_file(path)
    assert row.flag.startswith("SUSPECT") and "spot" in row.flag


def test_cheapest_price_prefers_unflagged_rows():
    rows = packaged_prices()
    # a100-80g: the GCP a2-ultragpu rows are cheapest per GPU but SUSPECT
    best = cheapest_price(rows, "a100-80g")
    assert best.flag == ""
    anyrow = cheapest_price(rows, "a100-80g", allow_flagged=True)
    assert anyrow.price_per_gpu() <= best.price_per_gpu()


@pytest.mark.parametrize(
    "lines, expect",
    [
        ([HEADER.replace(",spot_usd_per_hour", ""), "acme,eu-1,x,t4,1,1.0,quote"],
         ["line 1 (header)", "missing column(s) 'spot_usd_per_hour'"]),
        ([HEADER, GOOD, "acme,eu-1,y,t4,1,-1.5,,quote"],
         ["row 2 (line 3)", "column 'on_demand_usd_per_hour'", "-1.5", "> 0"]),
        ([HEADER, "acme,eu-1,y,t4,1,1.0,cheap,quote"],
         ["row 1 (line 2)", "column 'spot_usd_per_hour'", "'cheap' is not a number"]),
        ([HEADER, "acme,eu-1,y,A100-40GB,1,1.0,,quote"],
         ["row 1 (line 2)", "column 'gpu'", "unknown GPU 'A100-40GB'", "a100-40g", "h100", "t4"]),
        ([HEADER, "acme,eu-1,y,t4,0,1.0,,quote"], ["row 1 (line 2)", "column 'gpu_count'"]),
        ([HEADER, "acme,eu-1,y,t4,1,1.0,,"], ["row 1 (line 2)", "column 'source'"]),
        ([HEADER, "acme,eu-1,y,t4,1,1.0"], ["row 1 (line 2)", "columns expected"]),
        ([HEADER, GOOD, GOOD], ["row 2 (line 3)", "repeats row 1"]),
        (["# a comment", HEADER, "acme,eu-1,y,t4,1,nan,,quote"], ["row 1 (line 3)", "on_demand_usd_per_hour"]),
    ],
)
def test_bad_price_files_are_refused_with_file_row_and_column(tmp_path, lines, expect):
    path = write(tmp_path, *lines)
    with pytest.raises(InputError) as info:
        read_price_file(path)
    message = str(info.value)
    assert str(path) in message
    for part in expect:
        assert part in message


def test_unknown_gpu_error_lists_every_known_profile(tmp_path):
    path = write(tmp_path, HEADER, "acme,eu-1,y,b200,1,1.0,,quote")
    with pytest.raises(InputError) as info:
        read_price_file(path)
    assert all(name in str(info.value) for name in gpu_names())


def test_unknown_gpu_flag_lists_known_names():
    with pytest.raises(InputError) as info:
        get_gpu("b300")
    assert "--gpu=b300" in str(info.value) and "a100-80g" in str(info.value)


def test_missing_price_file_is_named(tmp_path):
    with pytest.raises(InputError, match="nope.csv: not found"):
        load_prices(tmp_path / "nope.csv")


def test_user_file_merges_over_packaged_by_default(tmp_path):
    path = write(tmp_path, HEADER, "aws,us-east-1,g4dn.xlarge,t4,1,0.30,0.10,negotiated", GOOD)
    rows = load_prices(path)
    assert len(rows) == len(packaged_prices()) + 1  # one replaced, one added
    g4dn = [r for r in rows if r.instance_type == "g4dn.xlarge"]
    assert len(g4dn) == 1 and g4dn[0].on_demand_usd_per_hour == 0.30 and g4dn[0].origin == str(path)


def test_replace_mode_and_environment_variables(tmp_path):
    path = write(tmp_path, HEADER, GOOD)
    assert [r.instance_type for r in load_prices(path, mode="replace")] == ["big.1"]
    env = {PRICES_ENV: str(path), PRICES_MODE_ENV: "replace"}
    assert [r.instance_type for r in load_prices(environ=env)] == ["big.1"]
    assert len(load_prices(environ={PRICES_ENV: str(path)})) == len(packaged_prices()) + 1
    with pytest.raises(InputError, match="known: merge, replace"):
        load_prices(path, mode="overwrite")
    with pytest.raises(InputError, match="needs a price file"):
        load_prices(mode="replace", environ={})
