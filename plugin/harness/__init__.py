"""The harness: one timing primitive, precision, the training step and the measured window."""

from .epochs import Epochs
from .measure import Measurement, measure
from .precision import PRECISIONS, Precision, UnsupportedPrecision, get_precision
from .run import RunConfig, RunOutput, build_trainer, resolve_device, run
from .timing import DeviceClock
from .trainer import Trainer, to_device

__all__ = [
    "PRECISIONS", "DeviceClock", "Epochs", "Measurement", "Precision", "RunConfig", "RunOutput", "Trainer",
    "UnsupportedPrecision", "build_trainer", "get_precision", "measure", "resolve_device",
    "run", "to_device",
]
