"""Checkpoints that survive preemption: atomic saves with a checksum, weights_only loading,
the latest valid checkpoint on resume, signal and metadata-notice handling, and comparing a
resumed run with an uninterrupted one."""

from .compare import TOLERANCES, compare_logs, compare_states, final_state, read_loss_log, within_tolerance
from .preempt import EXIT_PREEMPTED, MetadataWatcher, Preemption
from .state import capture, fingerprint, restore
from .store import (
    CheckpointCorrupt,
    CheckpointRefused,
    CheckpointStore,
    CheckpointWriteError,
    LoadedCheckpoint,
    SavedCheckpoint,
    read_checkpoint,
)

__all__ = [
    "CheckpointStore", "SavedCheckpoint", "LoadedCheckpoint", "read_checkpoint",
    "CheckpointWriteError", "CheckpointRefused", "CheckpointCorrupt",
    "capture", "restore", "fingerprint",
    "Preemption", "MetadataWatcher", "EXIT_PREEMPTED",
    "final_state", "compare_states", "within_tolerance", "read_loss_log", "compare_logs", "TOLERANCES",
]
