"""End-to-end gate checks run the real bench many times (minutes): only with `-m gate_e2e`."""

import pytest


def pytest_collection_modifyitems(config, items):
    if "gate_e2e" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="end-to-end gate run: select with -m gate_e2e")
    for item in items:
        if "gate_e2e" in item.keywords:
            item.add_marker(skip)
