"""Append Markdown to the GitHub Actions job summary when `$GITHUB_STEP_SUMMARY` is set."""

from __future__ import annotations

import os

__all__ = ["append_step_summary"]


def append_step_summary(markdown: str) -> str | None:
    """Append (GitHub's protocol: the runner collects the file after the step); path or None."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(markdown.rstrip() + "\n\n")
    except OSError:
        return None  # a summary we cannot write must not turn a pass into a failure
    return path
