"""Workloads: what is trained. Built-ins register themselves on import; users add theirs with
`register_workload` (or the `trainbench_register_workloads` hook) from a conftest."""

from .registry import get_workload, register_workload, workload_names, workloads
from .spec import Workload

__all__ = ["Workload", "get_workload", "register_workload", "workload_names", "workloads"]
