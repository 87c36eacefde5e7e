"""`trainbench select`: the instance-selection report (cost and time per epoch, fit, spot)."""

from plugin.select.command import add_parser, run
from plugin.select.rows import CostRow, Group, SelectConfig, build_groups, collect_measurements

__all__ = ["add_parser", "run", "SelectConfig", "CostRow", "Group", "build_groups", "collect_measurements"]
