"""``comet-compare``'s statistics on segment scores, so a comparison made with unbabel-comet's
tool can be reproduced from bleucli's scores (or from the tool's own ``--to_json``): for each
pair of systems a paired t-test on the segment scores (two-sided by default) and the
bootstrap *win ratios* of ``num_splits`` subsamples of ``sample_ratio`` of the segments,
drawn with NumPy's legacy generator seeded as the tool seeds it (1).

This is not bleucli's paired bootstrap (``--paired-bs``, SacreBLEU's test, which gives a
p-value from resampled differences): comet-compare's p-value is the t-test's, and its
bootstrap gives only how often each system won (docs/neural.md). The t distribution is
computed here (regularised incomplete beta function), not taken from SciPy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from bleucli.errors import ConfigError, InputError

#: comet-compare's threshold for a tie between two resampled system scores.
EPS = 0.001
ALTERNATIVES = ("two-sided", "less", "greater")


@dataclass(frozen=True)
class PairComparison:
    x: str
    y: str
    t_statistic: float
    p_value: float
    x_mean: float  # the mean of x's resampled system scores
    y_mean: float
    ties: float  # share of the splits
    x_wins: float
    y_wins: float


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 10_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return result


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def paired_t_test(
    x: Sequence[float], y: Sequence[float], alternative: str = "two-sided"
) -> tuple[float, float]:
    """(t, p) of the paired t-test of ``x`` against ``y`` (SciPy's ``ttest_rel``)."""
    if alternative not in ALTERNATIVES:
        raise ConfigError(f"alternative {alternative!r}: expected one of {', '.join(ALTERNATIVES)}")
    n = len(x)
    if n != len(y) or n < 2:
        raise InputError(f"a paired t-test needs two lists of equal length >= 2 ({n}, {len(y)})")
    import numpy as np

    d = np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64)
    sd = float(np.std(d, ddof=1))
    mean = float(np.mean(d))
    if sd == 0.0:
        t = math.copysign(math.inf, mean) if mean else math.nan
    else:
        t = mean / (sd / math.sqrt(n))
    if math.isnan(t):
        return t, math.nan
    df = n - 1.0
    if alternative == "less":
        return t, t_cdf(t, df)
    if alternative == "greater":
        return t, t_cdf(-t, df)
    return t, min(1.0, 2.0 * t_cdf(-abs(t), df))


def comet_compare(
    scores: Sequence[Sequence[float]],
    names: Sequence[str],
    num_splits: int = 300,
    sample_ratio: float = 0.4,
    seed: int = 1,
    alternative: str = "two-sided",
) -> list[PairComparison]:
    """comet-compare's table for systems' segment scores (one row per system, in order):
    every pair (x before y), its t-test and bootstrap win ratios."""
    import numpy as np

    if len(scores) != len(names) or len(scores) < 2:
        raise InputError("comet_compare: at least two systems, one name each")
    if num_splits < 1 or not 0.0 < sample_ratio <= 1.0:
        raise ConfigError("comet_compare: num_splits >= 1 and 0 < sample_ratio <= 1")
    matrix = np.asarray(scores, dtype=np.float32)  # the tool keeps segment scores as float32
    population = matrix.shape[1]
    size = max(int(population * sample_ratio), 1)
    ids = np.random.RandomState(seed).choice(population, size=(size, num_splits), replace=True)
    system_scores = np.take(matrix, ids, axis=1).mean(axis=1)  # systems x splits
    out = []
    for (i, x), (j, y) in combinations(enumerate(names), 2):
        delta = system_scores[i] - system_scores[j]
        t, p = paired_t_test(matrix[i].tolist(), matrix[j].tolist(), alternative)
        out.append(
            PairComparison(
                x, y, t, p,
                float(np.mean(system_scores[i])), float(np.mean(system_scores[j])),
                float((np.abs(delta) < EPS).sum()) / num_splits,
                float((delta >= EPS).sum()) / num_splits,
                float((delta <= -EPS).sum()) / num_splits,
            )
        )  # fmt: skip
    return out
