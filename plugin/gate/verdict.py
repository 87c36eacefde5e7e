"""The verdict classes of a window gate, and the one rule that assigns them.

    regression         worse beyond the threshold AND beyond the measured run-to-run band
    suspicious         worse beyond the threshold, but inside the band: cannot be told from noise
    within noise       not beyond the threshold (or beyond it only in the better direction
                       and inside the band)
    insufficient data  beyond the threshold, but fewer than MIN_RUNS baseline runs: the
                       run-to-run spread is not measured, so noise cannot be told from the threshold
    improvement        better beyond the threshold AND beyond the band

Only "regression" fails a gate; `--fail-on-suspicious` makes "suspicious" fail too.
"""

from __future__ import annotations

__all__ = ["REGRESSION", "SUSPICIOUS", "WITHIN_NOISE", "INSUFFICIENT", "IMPROVEMENT", "VERDICTS", "classify"]

REGRESSION = "regression"
SUSPICIOUS = "suspicious"
WITHIN_NOISE = "within noise"
INSUFFICIENT = "insufficient data"
IMPROVEMENT = "improvement"
VERDICTS = (REGRESSION, SUSPICIOUS, WITHIN_NOISE, INSUFFICIENT, IMPROVEMENT)


def classify(worse_by: float, threshold: float, noise_move: float | None) -> str:
    """`worse_by`: the move in the bad direction (>0 worse) in the threshold's unit; `noise_move`:
    the same move measured against the noise band (the log ratio for relative thresholds, the
    plain difference for pp ones, signed the same way), divided by the band; None when the band
    is not measured. |noise_move| > 1 means beyond the band."""
    if abs(worse_by) <= threshold:
        return WITHIN_NOISE
    if noise_move is None:
        return INSUFFICIENT
    if worse_by > 0:
        return REGRESSION if noise_move > 1 else SUSPICIOUS
    return IMPROVEMENT if noise_move < -1 else WITHIN_NOISE
