"""Hooks that pytest-trainbench calls; implement them in a conftest.py or plugin."""

from __future__ import annotations

import pytest


@pytest.hookspec
def pytest_trainbench_register_workloads(register) -> None:
    """Register your own workloads so the harness benchmarks your model too.

    Called once at configure time. `register` is `plugin.workloads.register_workload`::

        # conftest.py
        from ..workloads import Workload

        def pytest_trainbench_register_workloads(register):
            register(Workload(name="my-model", model=..., dataset=..., loss=...,
                              optimizer=..., flops_per_sample=..., epoch_samples=50_000,
                              batch_size={"tiny": 8, "full": 64}))

    Then `pytest bench/ --workload=my-model` trains it with the same harness.
    """
