"""Run-to-run spread of a metric over a window of baseline runs, and the noise band it implies.

One value per run (the run's median-based metric), never the steps of one run: between-run
drift (neighbours, clocks, scheduling) is larger than anything within one run shows, so only
repeated runs measure the noise a gate must stay quiet on.

Spread is in the threshold's unit: for relative thresholds the sample standard deviation of
ln(value) (a relative spread that is symmetric for up and down moves); for pp thresholds the
standard deviation of the value itself. The band is the one-sided prediction bound for one
new run drawn from the same distribution as the k baseline runs:
    band = t_{1-alpha, k-1} * s * sqrt(1 + 1/k)
(Student t: s is estimated from k runs, the new run adds its own variance.)

`prior`: the typical spread of the same metric over the benchmarks of the same kind in the
window (the gate passes their median). Nine runs can give one metric a standard deviation far
below its true one by chance, and a gate judging hundreds of metrics meets that chance every
run. So the metric's variance is moderated toward the prior, as limma does for many parallel
tests with few replicates (Smyth 2004), with the prior weighted like the metric's own k-1
degrees of freedom: s^2 = (s_own^2 + prior^2) / 2 on 2(k-1) degrees of freedom.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Hashable, Iterable, Sequence

__all__ = ["MIN_RUNS", "Spread", "own_spread", "kind_priors", "measure_spread", "detectable_move"]

# Fewer baseline runs than this: the spread is not measured (two runs give a standard deviation
# with one degree of freedom; t_{0.99,1} = 31.8 makes the band useless), so the verdict of a
# move beyond its threshold is "insufficient data".
MIN_RUNS = 3


@dataclass(frozen=True)
class Spread:
    runs: int  # baseline runs with a usable value
    center: float  # median of the baseline values, in the metric's unit
    spread: float | None  # std of ln(values) (relative) or of values (absolute); None: < MIN_RUNS
    band: float | None  # one-sided prediction bound at the false-alarm rate, same unit as spread
    absolute: bool  # True: spread/band are plain differences (pp), not log ratios
    own: float | None = None  # this metric's own spread (== spread when no prior was pooled in)
    prior: float | None = None  # the kind's typical spread pooled in, or None


def _t_quantile(p: float, dof: int) -> float:
    from scipy.stats import t  # imported here: only the gate needs scipy

    return float(t.ppf(p, dof))


def _usable(values: Sequence[float], absolute: bool) -> list[float]:
    return [float(v) for v in values if math.isfinite(v) and (absolute or v > 0)]


def own_spread(values: Sequence[float], absolute: bool = False) -> float | None:
    """Std of ln(values) (or of values, absolute) over runs; None below MIN_RUNS usable values."""
    xs = _usable(values, absolute)
    if len(xs) < MIN_RUNS:
        return None
    return statistics.stdev(xs if absolute else [math.log(x) for x in xs])


def kind_priors(spreads: Iterable[tuple[Hashable, float]], min_benchmarks: int = 3) -> dict[Hashable, float]:
    """The `prior` per group (the gate and noise group by record kind and metric key): the
    median of the benchmarks' own spreads, where at least `min_benchmarks` have one."""
    groups: dict[Hashable, list[float]] = {}
    for group, s in spreads:
        groups.setdefault(group, []).append(s)
    return {g: statistics.median(v) for g, v in groups.items() if len(v) >= min_benchmarks}


def measure_spread(values: Sequence[float], alpha: float, absolute: bool = False,
                   prior: float | None = None) -> Spread | None:
    """Spread of one metric over baseline runs, moderated toward `prior` when given; None when no
    value is usable."""
    xs = _usable(values, absolute)
    if not xs:
        return None
    center = statistics.median(xs)
    own = own_spread(xs, absolute)
    if own is None:
        return Spread(len(xs), center, None, None, absolute)
    dof = len(xs) - 1
    s = own
    if prior is not None:
        s, dof = math.sqrt((own**2 + prior**2) / 2.0), 2 * dof
    band = _t_quantile(1.0 - alpha, dof) * s * math.sqrt(1.0 + 1.0 / len(xs))
    return Spread(len(xs), center, s, band, absolute, own, prior)


def detectable_move(spread: Spread, higher_is_better: bool) -> float | None:
    """The smallest worsening a gate at this spread calls a regression, in the threshold's unit
    (a fraction: 0.08 = 8% or 8pp). A log band b is a drop to exp(-b) for throughput-like
    metrics and a rise to exp(b) for time-like ones."""
    if spread.band is None:
        return None
    if spread.absolute:
        return spread.band
    return 1.0 - math.exp(-spread.band) if higher_is_better else math.exp(spread.band) - 1.0
