"""The first-run trap on faked drivers: GPUs the driver sees but torch cannot use stop the run
with both CUDA versions and an install command for a build that exists."""

import pytest

from trainbench.catalog import profile
from trainbench.errors import DeviceMismatch
from trainbench.preflight import torch_wheels
from trainbench.preflight.gpu_trap import DriverView, proc_driver_version, unusable_gpu_message

OLD_DRIVER = DriverView(gpu_count=1, driver_version="570.86.15", driver_cuda=(12, 8))


def test_cuda13_torch_on_a_cuda12_driver_names_both_versions_and_the_cu126_command():
    msg = unusable_gpu_message("2.13.0+cu130", "13.0", False, OLD_DRIVER)
    assert "570.86.15 (CUDA 12.8)" in msg and "built for CUDA 13.0" in msg
    assert "pip install --force-reinstall torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126" in msg


def test_a_driver_below_every_published_build_is_told_which_driver_to_install():
    msg = unusable_gpu_message("2.13.0+cu130", "13.0", False, DriverView(2, "470.82.01", (11, 4)))
    assert ">= 560.28.03" in msg and "whl/cu126" in msg


def test_usable_gpu_no_driver_or_no_gpus_is_not_the_trap():
    assert unusable_gpu_message("2.13.0+cu130", "13.0", True, OLD_DRIVER) is None
    assert unusable_gpu_message("2.13.0+cpu", None, False, DriverView(None, None, None)) is None
    assert unusable_gpu_message("2.13.0", "13.0", False, DriverView(0, "580.65.06", (13, 0))) is None


def test_proc_driver_version_parses_the_kernel_module_line():
    text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Fri Jan 24 2025\nGCC version: gcc 12\n"
    assert proc_driver_version(text) == "570.86.15"
    assert proc_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release") == "580.65.06"
    assert proc_driver_version("garbage") is None


def test_wheel_table_has_no_cu128_for_torch_2_13_and_pypi_default_is_cu130():
    assert torch_wheels.is_published("2.13.0", "cu126") and torch_wheels.is_published("2.13.0", "cu130")
    assert not torch_wheels.is_published("2.13.0", "cu128")
    default = [w for w in torch_wheels.published_wheels() if w.pypi_default]
    assert [(w.torch, w.tag) for w in default] == [((2, 13), "cu130")]
    assert torch_wheels.wheel_for_driver((13, 0)).tag == "cu130"
    assert torch_wheels.wheel_for_driver((12, 2), driver_version="535.104.05").tag == "cu126"  # minor compat
    assert torch_wheels.wheel_for_driver((12, 2), driver_version="520.0") is None


def test_resolve_profile_stops_when_the_driver_sees_a_gpu_torch_cannot_use(monkeypatch):
    monkeypatch.setattr(profile, "_detected", lambda: (None, None))
    monkeypatch.setattr("trainbench.preflight.gpu_trap.driver_view", lambda: OLD_DRIVER)
    with pytest.raises(DeviceMismatch, match="whl/cu126"):
        profile.resolve_profile("auto")
    assert profile.resolve_profile("cpu")[0] == "cpu"  # a CPU run on purpose is still allowed
