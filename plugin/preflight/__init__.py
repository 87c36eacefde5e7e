"""Preflight: validate the environment, the hardware (`--hardware`) and the whole training
pipeline on one device before scaling out (`trainbench preflight`, `pytest bench/ -m preflight`)."""

from .check import FAIL, NA, PASS, STATUSES, WARN, Check
from .environment import EnvSettings, environment_checks
from .facts import Facts, GpuFacts, gather_facts
from .hardware import HARDWARE_ITEMS, HardwareLimits, hardware_checks
from .hardware_facts import GpuHealth, HardwareFacts, gather_hardware
from .memory import MemoryFit, check_memory, estimate_fit
from .pipeline import PIPELINE_ITEMS, PipelineConfig, pipeline_checks
from .report import format_checklist, to_records
from .runner import Preflight, PreflightConfig, PreflightResult, run_preflight

__all__ = [
    "Check", "STATUSES", "PASS", "WARN", "FAIL", "NA",
    "Facts", "GpuFacts", "gather_facts",
    "EnvSettings", "environment_checks",
    "GpuHealth", "HardwareFacts", "gather_hardware", "HardwareLimits", "HARDWARE_ITEMS", "hardware_checks",
    "MemoryFit", "check_memory", "estimate_fit",
    "PipelineConfig", "PIPELINE_ITEMS", "pipeline_checks",
    "Preflight", "PreflightConfig", "PreflightResult", "run_preflight",
    "format_checklist", "to_records",
]
