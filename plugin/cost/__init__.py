"""Cost per epoch (on-demand and spot with interruptions), memory fit and projections."""

from plugin.cost.epoch import cost_per_epoch, epoch_hours
from plugin.cost.fit import Fit, check_fit, usable_bytes
from plugin.cost.memory import MemoryEstimate, estimate_memory, saved_activation_bytes, state_bytes
from plugin.cost.projection import Projection, project
from plugin.cost.record_cost import cost_for_record, fill_costs
from plugin.cost.spot import (
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
    "Projection",
    "project",
]
