"""`trainbench fleet`: plan, launch and collect the suite across GPU types and clouds on SkyPilot."""

from .collect import fetch_results, results_files, select_report
from .launch import Launcher, Sky, launch_plan
from .manifest import Plan, PlannedTask, read_plan, write_plan
from .plan import Candidate, PlanConfig, check_budget, choose_candidates, total_usd
from .task import task_dict, task_yaml

__all__ = [
    "Candidate", "Launcher", "Plan", "PlanConfig", "PlannedTask", "Sky", "check_budget", "choose_candidates",
    "fetch_results", "launch_plan", "read_plan", "results_files", "select_report", "task_dict", "task_yaml",
    "total_usd", "write_plan",
]
