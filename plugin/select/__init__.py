"""`trainbench select`: the instance-selection report (cost and time per epoch, fit, spot)."""

from .rows import CostRow, Group, SelectConfig, build_groups, collect_measurements

__all__ = ["SelectConfig", "CostRow", "Group", "build_groups", "collect_measurements"]
