"""Is a change in step time real or noise? A rank test on the raw step times of two runs.

Mann-Whitney U (scipy.stats.mannwhitneyu), one-sided in the direction the metric moved, with
the baseline's step times scaled by the threshold first: the question is "slower by more than
the threshold?", not "slower at all?". A shift of exactly the threshold is then the null
hypothesis, so random reruns of one code almost never fail the gate, at the price of needing
more steps to flag a change barely beyond the threshold. It is
distribution-free (step times are skewed: a few slow steps from GC, neighbours, clocks), and
it needs no equal variances. Exact for small samples without ties, normal approximation
with tie correction otherwise (scipy's `method="auto"`).

Caveat, stated in the README: steps of one run are not independent draws (load from
neighbours and clock changes drift over a run), so p-values are optimistic when two runs
sit in different "weather". The threshold is what absorbs run-to-run drift; the rank test
is what keeps a small number of noisy steps from failing CI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

__all__ = ["MIN_SAMPLES", "ShiftTest", "shift_test", "clean_samples"]

# Fewer steps than this on either side: no test (one-sided exact U with 3 vs 3 can reach
# p = 0.05 at best, so 3 is the least that can ever be significant at alpha = 0.05).
MIN_SAMPLES = 3


@dataclass(frozen=True)
class ShiftTest:
    p_value: float  # one-sided: P(a shift at least this large | same distribution)
    median_ratio: float  # median(current) / median(base) of the step times
    n_base: int
    n_current: int
    margin: float = 1.0  # base step times were scaled by this before the test (the threshold)


def clean_samples(values: Sequence[float] | None, positive: bool = True) -> list[float]:
    """Finite (and, for times, positive) samples only: a results file writes NaN as null."""
    out = []
    for v in values or ():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            if v > 0 or (not positive and v >= 0):
                out.append(float(v))
    return out


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def shift_test(
    base: Sequence[float], current: Sequence[float], slower: bool, margin: float = 1.0,
    offset: float = 0.0, positive: bool = True,
) -> ShiftTest | None:
    """Test whether `current` samples are larger than `base` x `margin` + `offset`
    (`slower=True`, i.e. worse for step times and stall fractions), or smaller.

    `margin`/`offset` move the null hypothesis to the threshold: with margin 1.05 a small p
    says "slower by more than 5%", not merely "slower"; offset 0.05 on stall fractions says
    "more than 5pp more stall". `positive=False` keeps zeros (a stall fraction may be 0).
    None when either side has fewer than MIN_SAMPLES usable samples.
    """
    from scipy.stats import mannwhitneyu  # imported here: ~0.3 s, only the gate needs it

    b, c = clean_samples(base, positive), clean_samples(current, positive)
    if len(b) < MIN_SAMPLES or len(c) < MIN_SAMPLES:
        return None
    if not math.isfinite(margin) or margin <= 0:  # e.g. "throughput may drop 100%": never beyond
        p = 1.0
    else:
        shifted = [x * margin + offset for x in b]
        if len(set(shifted) | set(c)) == 1:  # all equal: no evidence of a shift (U is degenerate)
            p = 1.0
        else:
            p = float(mannwhitneyu(c, shifted, alternative="greater" if slower else "less").pvalue)
    mb = _median(b)
    return ShiftTest(p, _median(c) / mb if mb else math.nan, len(b), len(c), margin)
