"""Convergence: time, steps and dollars to a loss target on synthetic data whose optimum is known."""

from .floors import markov_entropy_rate, noisy_label_floor, stationary_distribution
from .tasks import Task, task_for

__all__ = ["Task", "task_for", "markov_entropy_rate", "noisy_label_floor", "stationary_distribution"]
