"""NVML telemetry: GPU utilization, memory, power, SM clock and clock-event (throttle) reasons
sampled at >= 10 Hz, energy from the board's total-energy counter (Volta and newer). Every field
is None when NVML or the GPU is absent, or when the board does not report it; nothing fails.

The handle is found by the CUDA device's UUID: NVML ignores CUDA_VISIBLE_DEVICES and numbers
GPUs by PCI bus, so NVML's index i is not torch's cuda:i. NVML's power reading is a ~1 s
average on recent boards: windows shorter than that are flagged, and mean power comes from the
energy counter (energy / wall time) where the board has one."""

from __future__ import annotations

from typing import Any

from .sampler import PeriodicSampler

__all__ = ["NvmlTelemetry", "nvml_available", "CLOCK_EVENT_BITS", "reason_names", "match_uuid", "nvml_handle",
           "SHORT_WINDOW_S"]

SHORT_WINDOW_S = 1.0  # NVML averages power over about a second: shorter windows say so

# nvmlClocksEventReason* bits (nvml.h, NVML API "NvmlClocksEventReasons"); names as nvidia-smi prints them
CLOCK_EVENT_BITS = {
    0x001: "GPU_IDLE",
    0x002: "APPLICATIONS_CLOCKS_SETTING",
    0x004: "SW_POWER_CAP",
    0x008: "HW_SLOWDOWN",
    0x010: "SYNC_BOOST",
    0x020: "SW_THERMAL_SLOWDOWN",
    0x040: "HW_THERMAL_SLOWDOWN",
    0x080: "HW_POWER_BRAKE_SLOWDOWN",
    0x100: "DISPLAY_CLOCK_SETTING",
}


def reason_names(mask: int | None) -> list[str]:
    return [name for bit, name in CLOCK_EVENT_BITS.items() if mask and mask & bit]


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def match_uuid(cuda_uuid: str, nvml_uuids: list[str]) -> int | None:
    """Index in NVML's order of the device whose UUID is `cuda_uuid` (torch prints it without
    NVML's `GPU-` / `MIG-` prefix); None when none matches."""
    want = cuda_uuid.lower().removeprefix("gpu-").removeprefix("mig-")
    for i, u in enumerate(nvml_uuids):
        if u.lower().removeprefix("gpu-").removeprefix("mig-") == want:
            return i
    return None


def nvml_handle(nvml, device_index: int = 0, cuda_uuid: str | None = None):
    """NVML handle of torch's cuda:`device_index`, matched by UUID; None when it cannot be told."""
    if cuda_uuid is None:
        try:
            import torch

            cuda_uuid = str(torch.cuda.get_device_properties(device_index).uuid)
        except Exception:
            return None
    for prefix in ("GPU-", "MIG-"):  # a MIG slice has a MIG- UUID of its own
        try:
            return nvml.nvmlDeviceGetHandleByUUID(prefix + cuda_uuid.removeprefix("GPU-").removeprefix("MIG-"))
        except Exception:
            pass
    try:  # older bindings: enumerate and compare
        handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
        i = match_uuid(cuda_uuid, [_text(nvml.nvmlDeviceGetUUID(h)) for h in handles])
        return None if i is None else handles[i]
    except Exception:
        return None


def _pynvml():
    try:
        import pynvml  # provided by nvidia-ml-py

        pynvml.nvmlInit()
        return pynvml
    except Exception:
        return None


def nvml_available() -> bool:
    return _pynvml() is not None


class NvmlTelemetry:
    def __init__(self, device_index: int = 0, hz: float = 20.0, cuda_uuid: str | None = None):
        self._nvml = _pynvml()
        self._handle = nvml_handle(self._nvml, device_index, cuda_uuid) if self._nvml is not None else None
        self._sampler = PeriodicSampler(self._sample, hz)
        self._util: list[float] = []
        self._power_w: list[float] = []
        self._mem_used_peak: int | None = None
        self._sm_mhz: list[float] = []
        self._events_mask = 0  # OR of the clock event reasons seen in the window
        self._energy_start_mj: int | None = None

    @property
    def active(self) -> bool:
        return self._handle is not None

    def _call(self, fn: str, *args):
        try:
            return getattr(self._nvml, fn)(self._handle, *args)
        except Exception:  # NVMLError_NotSupported and friends
            return None

    def _events(self) -> int | None:
        # nvmlDeviceGetCurrentClocksEventReasons is the R535+ name of ...ThrottleReasons
        mask = self._call("nvmlDeviceGetCurrentClocksEventReasons")
        return mask if mask is not None else self._call("nvmlDeviceGetCurrentClocksThrottleReasons")

    def snapshot(self) -> dict[str, Any]:
        """Clocks, power and temperature now (None where not reported)."""
        if not self.active:
            return {}
        power = self._call("nvmlDeviceGetPowerUsage")  # mW
        return {
            "sm_clock_mhz": self._call("nvmlDeviceGetClockInfo", self._nvml.NVML_CLOCK_SM),
            "power_w": None if power is None else power / 1e3,
            "temperature_c": self._call("nvmlDeviceGetTemperature", self._nvml.NVML_TEMPERATURE_GPU),
            "clock_events": reason_names(self._events()),
        }

    def _sample(self) -> None:
        mask = self._events()
        if mask:
            self._events_mask |= mask
        util = self._call("nvmlDeviceGetUtilizationRates")
        if util is not None:
            self._util.append(float(util.gpu))
        power = self._call("nvmlDeviceGetPowerUsage")  # mW
        if power is not None:
            self._power_w.append(power / 1e3)
        mem = self._call("nvmlDeviceGetMemoryInfo")
        if mem is not None:
            self._mem_used_peak = max(self._mem_used_peak or 0, int(mem.used))
        sm = self._call("nvmlDeviceGetClockInfo", getattr(self._nvml, "NVML_CLOCK_SM", 1))
        if sm is not None:
            self._sm_mhz.append(float(sm))

    def start(self) -> None:
        if not self.active:
            return
        self._energy_start_mj = self._call("nvmlDeviceGetTotalEnergyConsumption")  # mJ
        self._sampler.start()

    def stop(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "gpu_util_mean": None,
            "gpu_util_samples": 0,
            "power_w_mean": None,
            "energy_j": None,
            "gpu_mem_used_peak_bytes": None,
            "nvml_hz": None,
            "sm_clock_mhz_median": None,
            "sm_clock_mhz_min": None,
            "clock_events_seen": None,
            "nvml_window_short": None,
        }
        if not self.active:
            return out
        meta = self._sampler.stop()
        end_mj = self._call("nvmlDeviceGetTotalEnergyConsumption")
        if self._util:
            out["gpu_util_mean"] = sum(self._util) / len(self._util)
            out["gpu_util_samples"] = len(self._util)
        if self._power_w:
            out["power_w_mean"] = sum(self._power_w) / len(self._power_w)
        if end_mj is not None and self._energy_start_mj is not None:
            out["energy_j"] = (end_mj - self._energy_start_mj) / 1e3
        out["gpu_mem_used_peak_bytes"] = self._mem_used_peak
        out["nvml_hz"] = meta["hz"]
        if self._sm_mhz:
            ordered = sorted(self._sm_mhz)
            out["sm_clock_mhz_median"] = ordered[len(ordered) // 2]
            out["sm_clock_mhz_min"] = ordered[0]
        out["clock_events_seen"] = [e for e in reason_names(self._events_mask) if e != "GPU_IDLE"]
        out["nvml_window_short"] = meta.get("elapsed_s", SHORT_WINDOW_S) < SHORT_WINDOW_S
        return out
