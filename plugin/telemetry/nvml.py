"""NVML telemetry: GPU utilization, memory and power sampled at >= 10 Hz, energy from the
board's total-energy counter (Volta and newer). Every field is None when NVML or the GPU is
absent, or when the board does not report it; nothing fails."""

from __future__ import annotations

from typing import Any

from .sampler import PeriodicSampler

__all__ = ["NvmlTelemetry", "nvml_available", "CLOCK_EVENT_BITS", "reason_names"]

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
    def __init__(self, device_index: int = 0, hz: float = 20.0):
        self._nvml = _pynvml()
        self._handle = None
        if self._nvml is not None:
            try:
                self._handle = self._nvml.nvmlDeviceGetHandleByIndex(device_index)
            except Exception:
                self._handle = None
        self._sampler = PeriodicSampler(self._sample, hz)
        self._util: list[float] = []
        self._power_w: list[float] = []
        self._mem_used_peak: int | None = None
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
            "clock_events_seen": None,
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
        out["clock_events_seen"] = [e for e in reason_names(self._events_mask) if e != "GPU_IDLE"]
        return out
