"""NVML telemetry against a fake NVML (the GPU path's CPU twin), and the process sampler."""

import sys
import time
import types

import pytest

from trainbench.telemetry import NvmlTelemetry, ProcessTelemetry


def _fake_nvml(energy_mj_per_call=1000, fail_init=False):
    calls = {"energy": 0}
    nvml = types.ModuleType("pynvml")

    def init():
        if fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    def energy(handle):
        calls["energy"] += 1
        return 5_000_000 + energy_mj_per_call * calls["energy"]

    nvml.nvmlInit = init
    nvml.nvmlShutdown = lambda: None
    nvml.nvmlDeviceGetHandleByIndex = lambda i: f"gpu{i}"
    nvml.nvmlDeviceGetHandleByUUID = lambda u: "gpu0"
    nvml.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=80, memory=40)
    nvml.nvmlDeviceGetPowerUsage = lambda h: 250_000  # mW
    nvml.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(used=3 * 2**30, total=16 * 2**30)
    nvml.nvmlDeviceGetTotalEnergyConsumption = energy
    return nvml


def test_nvml_sampler_reads_util_power_memory_and_energy(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml())
    t = NvmlTelemetry(0, hz=50, cuda_uuid="aaaa")
    assert t.active
    t.start()
    time.sleep(0.3)
    out = t.stop()
    assert out["gpu_util_mean"] == 80 and out["gpu_util_samples"] >= 5
    assert out["power_w_mean"] == pytest.approx(250.0)
    assert out["energy_j"] == pytest.approx(1.0)  # two counter reads 1000 mJ apart
    assert out["gpu_mem_used_peak_bytes"] == 3 * 2**30
    assert out["nvml_hz"] >= 10  # sampled at >= 10 Hz


def test_without_nvml_every_field_is_none_and_nothing_fails(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml(fail_init=True))
    t = NvmlTelemetry(0, cuda_uuid="aaaa")
    assert not t.active
    t.start()
    out = t.stop()
    assert out["gpu_util_mean"] is None and out["energy_j"] is None and out["power_w_mean"] is None


def _touch(mib):
    blob = bytearray(mib * 2**20)
    blob[::4096] = b"x" * len(blob[::4096])  # touch every page: resident, not just reserved
    return blob


@pytest.mark.parametrize("kernel_peak", [True, False], ids=["kernel-hwm", "sampled"])
def test_process_peak_covers_the_window_only(monkeypatch, kernel_peak):
    from trainbench.telemetry import process

    if not kernel_peak:
        monkeypatch.setattr(process, "_reset_hwm", lambda pid: False)  # as on a non-Linux system
    elif process._hwm_bytes(1) is None and process._hwm_bytes(__import__("os").getpid()) is None:
        pytest.skip("no /proc VmHWM here")
    big = _touch(256)
    del big  # a peak before the window must not count
    t = ProcessTelemetry(hz=50)
    t.start()
    blob = _touch(64)
    time.sleep(0.2)
    out = t.stop()
    del blob
    assert out["rss_peak_method"] == ("kernel VmHWM" if kernel_peak else "sampled")
    rss_now = __import__("psutil").Process().memory_info().rss
    assert rss_now + 32 * 2**20 <= out["rss_peak_bytes"] < rss_now + 200 * 2**20
    assert out["cpu_percent_mean"] is not None


def test_nvml_handle_is_found_by_the_cuda_uuid_not_the_index(monkeypatch):
    """NVML numbers GPUs by PCI bus and ignores CUDA_VISIBLE_DEVICES: cuda:0 may be NVML's 1."""
    from trainbench.telemetry.nvml import match_uuid, nvml_handle

    nvml = _fake_nvml()
    del nvml.nvmlDeviceGetHandleByUUID  # an older binding: enumerate and compare
    uuids = ["GPU-aaaa-0000", "GPU-bbbb-1111"]
    handles = ["nvml0", "nvml1"]
    nvml.nvmlDeviceGetCount = lambda: 2
    nvml.nvmlDeviceGetHandleByIndex = lambda i: handles[i]
    nvml.nvmlDeviceGetUUID = lambda h: uuids[handles.index(h)].encode()
    assert match_uuid("bbbb-1111", uuids) == 1 and match_uuid("cccc", uuids) is None
    # torch's cuda:0 is the board NVML lists second
    assert nvml_handle(nvml, 0, cuda_uuid="bbbb-1111") == "nvml1"
    nvml.nvmlDeviceGetHandleByUUID = lambda u: {"GPU-bbbb-1111": "by-uuid"}[u]
    assert nvml_handle(nvml, 0, cuda_uuid="bbbb-1111") == "by-uuid"


def test_clock_event_reasons_and_short_windows(monkeypatch):
    from trainbench.telemetry.nvml import NvmlTelemetry, reason_names

    nvml = _fake_nvml()
    nvml.nvmlDeviceGetHandleByUUID = lambda u: "gpu0"
    nvml.NVML_CLOCK_SM = 1
    nvml.nvmlDeviceGetClockInfo = lambda h, clock: 1980
    nvml.nvmlDeviceGetCurrentClocksEventReasons = lambda h: 0x4 | 0x40
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    t = NvmlTelemetry(0, hz=50, cuda_uuid="aaaa")
    t.start()
    out = t.stop()
    assert out["sm_clock_mhz_median"] == 1980 and out["clock_events_seen"] == ["SW_POWER_CAP", "HW_THERMAL_SLOWDOWN"]
    assert out["nvml_window_short"] is True  # a window shorter than NVML's ~1 s averaging says so
    assert reason_names(0x8) == ["HW_SLOWDOWN"]
