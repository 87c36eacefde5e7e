"""Cost per epoch (on-demand and spot with interruptions), memory fit and projections."""

from .epoch import cost_per_epoch, epoch_hours
from .fit import Fit, check_fit, usable_bytes
from .memory import MemoryEstimate, estimate_memory, saved_activation_bytes, state_bytes
from .projection import Efficiency, Projection, project
from .step import StepCost, step_cost
from .record_cost import cost_for_record, fill_costs
from .spot import (
    SpotAssumptions,
    SpotEstimate,
    daly_interval,
    expected_wall_time,
    spot_estimate,
    young_interval,
)

__all__ = [
    "cost_per_epoch",
    "epoch_hours",
    "cost_for_record",
    "fill_costs",
    "SpotAssumptions",
    "SpotEstimate",
    "spot_estimate",
    "young_interval",
    "daly_interval",
    "expected_wall_time",
    "MemoryEstimate",
    "estimate_memory",
    "saved_activation_bytes",
    "state_bytes",
    "Fit",
    "check_fit",
    "usable_bytes",
    "Efficiency",
    "Projection",
    "project",
    "StepCost",
    "step_cost",
]
