"""Exceptions with a message a user can act on: what was wrong, where, and the fix.

Every error the tool raises on bad input is a `TrainbenchError`; the CLI prints its message
and exits 2, the pytest plugin turns it into a `pytest.UsageError`. Nothing here carries a
traceback to the user.
"""

from __future__ import annotations

__all__ = ["TrainbenchError", "InputError", "DeviceMismatch", "PerformanceRegression"]


class TrainbenchError(Exception):
    """Base class: the message is complete and meant for the user."""


class InputError(TrainbenchError):
    """A flag, file or value the user gave is unusable; the message names it and the fix."""


class DeviceMismatch(TrainbenchError):
    """The requested `--gpu` profile is not the device that is present (results would lie)."""


class PerformanceRegression(TrainbenchError):
    """A gated metric got worse than its threshold allows (pytest-benchmark has the same idea)."""
