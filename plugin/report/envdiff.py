"""Which environment entries differ between runs (report shows them; gate refuses some)."""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["EnvDiff", "environment_differences"]

# Always different between two runs, so never a finding.
_IGNORED = ("start_time",)

EnvDiff = tuple[str, list[Any]]  # (key, value per run in the order given)


def environment_differences(
    envs: Mapping[str, Mapping[str, Any]], keys: tuple[str, ...] | None = None
) -> list[EnvDiff]:
    """Keys whose values are not all equal across `envs` ({run label: environment}).

    `keys` restricts the check (the gate passes ENV_MATCH_KEYS); by default every key any run
    has, except `_IGNORED`, in first-seen order. A key a run lacks counts as None.
    """
    labels = list(envs)
    if keys is None:
        seen: dict[str, None] = {}
        for env in envs.values():
            seen.update(dict.fromkeys(k for k in env if k not in _IGNORED))
        keys = tuple(seen)
    out = []
    for key in keys:
        values = [envs[label].get(key) for label in labels]
        if any(v != values[0] for v in values[1:]):
            out.append((key, values))
    return out
