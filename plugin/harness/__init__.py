"""The harness: one timing primitive, precision, the training step and the measured window."""

from plugin.harness.epochs import Epochs
from plugin.harness.measure import Measurement, measure
from plugin.harness.precision import PRECISIONS, Precision, UnsupportedPrecision, get_precision
from plugin.harness.run import RunConfig, RunOutput, build_trainer, resolve_device, run
from plugin.harness.timing import DeviceClock
from plugin.harness.trainer import Trainer, to_device

__all__ = [
    "PRECISIONS", "DeviceClock", "Epochs", "Measurement", "Precision", "RunConfig", "RunOutput", "Trainer",
    "UnsupportedPrecision", "build_trainer", "get_precision", "measure", "resolve_device",
    "run", "to_device",
]
