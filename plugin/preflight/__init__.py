"""Preflight: validate the environment and the whole training pipeline on one device before
scaling out (`trainbench preflight`, `pytest bench/ -m preflight`)."""

from plugin.preflight.check import FAIL, NA, PASS, STATUSES, WARN, Check
from plugin.preflight.environment import EnvSettings, environment_checks
from plugin.preflight.facts import Facts, GpuFacts, gather_facts
from plugin.preflight.memory import MemoryFit, check_memory, estimate_fit
from plugin.preflight.pipeline import PIPELINE_ITEMS, PipelineConfig, pipeline_checks
from plugin.preflight.report import format_checklist, to_records
from plugin.preflight.runner import Preflight, PreflightConfig, PreflightResult, run_preflight

__all__ = [
    "Check", "STATUSES", "PASS", "WARN", "FAIL", "NA",
    "Facts", "GpuFacts", "gather_facts",
    "EnvSettings", "environment_checks",
    "MemoryFit", "check_memory", "estimate_fit",
    "PipelineConfig", "PIPELINE_ITEMS", "pipeline_checks",
    "Preflight", "PreflightConfig", "PreflightResult", "run_preflight",
    "format_checklist", "to_records",
]
