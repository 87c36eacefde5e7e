"""Telemetry over a measured window: NVML on GPUs, process RSS/CPU everywhere."""

from plugin.telemetry.nvml import NvmlTelemetry, nvml_available
from plugin.telemetry.process import ProcessTelemetry
from plugin.telemetry.sampler import PeriodicSampler

__all__ = ["NvmlTelemetry", "PeriodicSampler", "ProcessTelemetry", "nvml_available"]
