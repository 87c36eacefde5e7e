"""The workload registry: a dict, `register()` refusing duplicates, lookups
whose error lists what exists."""

from __future__ import annotations

from ..registry import Registry
from .spec import Workload

__all__ = ["register_workload", "get_workload", "workload_names", "workloads"]

_REGISTRY: Registry[Workload] = Registry("workload", flag="--workload")
_BUILTINS_LOADED = False


def _ensure_builtins() -> None:
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        _BUILTINS_LOADED = True
        from .builtin import BUILTIN_WORKLOADS  # resnet50, bert-base, gpt-small, llama-1b

        for workload in BUILTIN_WORKLOADS:
            _REGISTRY.register(workload.name, workload)


def register_workload(workload: Workload) -> Workload:
    """Register a workload; refuses a name that exists. Usable from any conftest.py."""
    _ensure_builtins()
    return _REGISTRY.register(workload.name, workload)


def get_workload(name: str) -> Workload:
    _ensure_builtins()
    return _REGISTRY.get(name)


def workload_names() -> list[str]:
    _ensure_builtins()
    return _REGISTRY.names()


def workloads() -> Registry[Workload]:
    _ensure_builtins()
    return _REGISTRY
