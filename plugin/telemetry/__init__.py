"""Telemetry over a measured window: NVML on GPUs, process RSS/CPU everywhere."""

from .nvml import NvmlTelemetry, nvml_available
from .process import ProcessTelemetry
from .sampler import PeriodicSampler

__all__ = ["NvmlTelemetry", "PeriodicSampler", "ProcessTelemetry", "nvml_available"]
