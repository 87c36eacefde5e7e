"""The memory fit uses the free memory measured on the machine (faked `DeviceMemory`), not only
the catalog's card size: a card half taken by another process no longer reads as empty."""

import pytest

from trainbench.catalog import get_gpu
from trainbench.cost.device_memory import DeviceMemory, measure_device_memory
from trainbench.cost.fit import HEADROOM, usable_bytes
from trainbench.preflight import FAIL, PASS, check_memory, estimate_fit
from trainbench.workloads import get_workload

GB = 10**9
H200 = get_gpu("h200")


def test_usable_is_the_smaller_of_catalog_and_measured_free():
    busy = DeviceMemory(free_bytes=20 * GB, total_bytes=141 * GB)
    assert usable_bytes(H200, busy) == pytest.approx(20 * GB * (1 - HEADROOM))
    idle = DeviceMemory(free_bytes=141 * GB, total_bytes=141 * GB)
    assert usable_bytes(H200, idle) == usable_bytes(H200)  # the catalog's headroom still applies


def test_a_fit_on_the_empty_card_fails_when_another_process_holds_the_memory():
    wl = get_workload("gpt-small")
    empty = estimate_fit(wl, "full", "bf16", 32, H200)
    assert check_memory(empty, "gpt-small", "bf16").status == PASS
    busy = estimate_fit(wl, "full", "bf16", 32, H200, DeviceMemory(free_bytes=16 * GB, total_bytes=141 * GB))
    check = check_memory(busy, "gpt-small", "bf16")
    assert check.status == FAIL and "mem_get_info" in check.reason


def test_a_mig_profile_without_catalog_memory_is_judged_on_the_measurement():
    from trainbench.catalog.mig import mig_spec
    slice_ = mig_spec(H200, "a MIG slice of h200 (x)")
    assert estimate_fit(get_workload("gpt-small"), "full", "bf16", 8, slice_) is None
    fit = estimate_fit(get_workload("gpt-small"), "full", "bf16", 8, slice_, DeviceMemory(17 * GB, 18 * GB))
    assert fit is not None and fit.usable_bytes < 17 * GB


def test_no_cuda_device_measures_nothing():
    assert measure_device_memory("cpu") is None

