"""Is one metric's agreement with the humans significantly better than another's?

Two permutation tests, as mt-metrics-eval (MTME) runs them:

* **PERM-BOTH** (Deutsch et al. 2021, MTME's ``PermutationSigDiff``, ``perm_test='scores'``):
  both metrics' scores are z-scored over the rated entries; each draw swaps the two
  metrics' scores entry by entry with probability 1/2 and recomputes the statistic for both
  mixtures. The p-value of "the better metric is better" is the share of draws whose
  difference is at least the observed one.
* **pairs** (MTME's ``PairwisePermutationSigDiff``, which WMT23-25 use for acc-t): each
  metric keeps its own calibrated epsilon; a draw swaps the two metrics' verdicts on each
  pair of entries.

Early stopping is MTME's: after every block of draws, stop when the p-value so far is
below ``early_min`` or above ``early_max`` (a block as large as the draws turns it off).

Draws are seeded. With the default ``rng="bleucli"`` every pair of metrics has its own
stream, derived from the seed and the statistic's and metrics' names, so p-values do not
depend on the order of the work, on threads, or on which other metrics take part.
``rng="mtme"`` replays MTME's own draws instead (``np.random.seed(seed)`` before the
statistic, ``np.random.binomial`` per draw, pairs in MTME's order): p-values then equal
MTME's, at the cost of running the pairs one after the other.

Significance clusters are MTME's ``AssignRanks``: going down the metrics in decreasing
order, a metric opens a new cluster when a metric of the current cluster beats it
significantly.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from bleucli.metaeval.ties import PairOutcomes

#: Draws are made this many entries at a time (bounded memory).
DRAW_BUDGET = 1 << 22
RNGS = ("bleucli", "mtme")


@dataclass(frozen=True)
class TestSettings:
    """How the permutation tests run: draws, early stopping, seed, generator, threads."""

    resamples: int = 1000
    block_size: int | None = None  # None: one block (no early stopping)
    early_min: float = 0.02
    early_max: float = 0.5
    seed: int = 1
    rng: str = "bleucli"
    threads: int = 1
    threshold: float = 0.05

    @property
    def block(self) -> int:
        return self.block_size or self.resamples


class Draws:
    """The swap masks of one comparison: ``next(count, n)`` gives ``count`` boolean
    vectors of length ``n`` (True: the entry comes from the other metric). ``advance``
    hears of every draw made (a progress bar)."""

    def __init__(
        self,
        generator: np.random.Generator | np.random.RandomState,
        advance: Callable[[int], None] | None = None,
    ) -> None:
        self.generator = generator
        self.advance = advance

    def next(self, count: int, n: int) -> np.ndarray:
        if self.advance is not None:
            self.advance(count)
        if isinstance(self.generator, np.random.RandomState):
            return self.generator.binomial(1, 0.5, (count, n)).astype(bool)
        return self.generator.random((count, n)) < 0.5


def pair_stream(
    seed: int, statistic: str, better: str, worse: str, advance: Callable[[int], None] | None = None
) -> Draws:
    """The seeded stream of one comparison (independent of everything else in the run)."""
    key = [zlib.crc32(text.encode("utf-8")) for text in (statistic, better, worse)]
    return Draws(np.random.default_rng([seed, *key]), advance)


def zscore(values: np.ndarray) -> np.ndarray:
    """scipy.stats.zscore (population standard deviation); a constant metric's are 0 (scipy
    divides by zero and gives NaN, which would fill PERM-BOTH's mixtures with NaN)."""
    return standardised(values, values)


def standardised(values: np.ndarray, by: np.ndarray) -> np.ndarray:
    """``values`` z-scored with the mean and deviation of ``by``; 0 where ``by`` is
    constant."""
    deviation = by.std()
    if deviation == 0:
        return values - by.mean()
    return (values - by.mean()) / deviation


def _count(
    observed: float,
    differences: Callable[[np.ndarray], np.ndarray],
    n: int,
    settings: TestSettings,
    draws: Draws,
) -> tuple[float, int]:
    """p-value and draws used: ``differences(masks)`` gives each draw's difference."""
    at_least, used = 0, 0
    per_call = max(1, DRAW_BUDGET // max(1, n))
    while used < settings.resamples:
        block = min(settings.block, settings.resamples - used)
        done = 0
        while done < block:
            count = min(per_call, block - done)
            at_least += int((differences(draws.next(count, n)) >= observed).sum())
            done += count
        used += block
        p = at_least / used
        if used < settings.resamples and (p < settings.early_min or p > settings.early_max):
            break
    return at_least / max(used, 1), used


def perm_both(
    statistic: Callable[[np.ndarray], np.ndarray],
    better: np.ndarray,
    worse: np.ndarray,
    settings: TestSettings,
    draws: Draws,
) -> tuple[float, int]:
    """PERM-BOTH p-value that ``better`` beats ``worse`` under ``statistic`` (a function of a
    stack of metric vectors), and the number of draws used."""
    return perm_both_z(statistic, zscore(better), zscore(worse), settings, draws)


def perm_both_z(
    statistic: Callable[[np.ndarray], np.ndarray],
    z_better: np.ndarray,
    z_worse: np.ndarray,
    settings: TestSettings,
    draws: Draws,
) -> tuple[float, int]:
    """:func:`perm_both` on scores already standardised."""
    observed = float(statistic(z_better)[0] - statistic(z_worse)[0])

    def differences(masks: np.ndarray) -> np.ndarray:
        towards_better = np.where(masks, z_better, z_worse)  # MTME's m2
        towards_worse = np.where(masks, z_worse, z_better)
        return statistic(towards_better) - statistic(towards_worse)

    return _count(observed, differences, len(z_better), settings, draws)


def pairs_test(
    outcomes: PairOutcomes,
    right_better: np.ndarray,
    right_worse: np.ndarray,
    settings: TestSettings,
    draws: Draws,
) -> tuple[float, int]:
    """MTME's pairs test for acc-t: verdicts per pair swapped between the two metrics."""
    gap = outcomes.weights * (right_better.astype(np.float64) - right_worse)
    observed = float(outcomes.weights @ right_better - outcomes.weights @ right_worse)

    def differences(masks: np.ndarray) -> np.ndarray:
        return (2.0 * masks - 1.0) @ gap

    return _count(observed, differences, len(gap), settings, draws)


def assign_ranks(p_values: np.ndarray, threshold: float) -> list[int]:
    """MTME's ``AssignRanks``: ``p_values[i, j]`` (i < j, metrics in decreasing order) is
    the p-value of "metric i beats metric j"; a metric opens a new cluster when some metric
    of the current cluster beats it (p <= threshold)."""
    ranks, current, start = [], 1, 0
    for i in range(len(p_values)):
        if (p_values[start:i, i] <= threshold).any():
            current += 1
            start = i
        ranks.append(current)
    return ranks


@dataclass
class Comparison:
    """Every pair of metrics compared under one statistic."""

    order: list[str]
    p_values: np.ndarray
    draws_used: np.ndarray
    clusters: list[int] = field(default_factory=list)


def compare(
    statistic: str,
    order: list[str],
    test: Callable[[str, str, Draws], tuple[float, int]],
    settings: TestSettings,
    label: str | None = None,
) -> Comparison:
    """Run ``test(better, worse, draws)`` for every pair of ``order`` (best first);
    ``label``: what the progress bar calls it (``3 of 12: sys-pearson``)."""
    import threading

    from bleucli.progress import stage

    n = len(order)
    p_values = np.zeros((n, n))
    used = np.zeros((n, n), dtype=np.int64)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if settings.resamples and pairs:
        lock = threading.Lock()
        with stage(
            f"{label or statistic}: permutation draws", len(pairs) * settings.resamples
        ) as bar:

            def advance(count: int) -> None:
                with lock:  # draws come from several threads
                    bar(count)

            if settings.rng == "mtme":
                shared = Draws(np.random.RandomState(settings.seed), advance)
                results = [test(order[i], order[j], shared) for i, j in pairs]
            else:

                def run(pair: tuple[int, int]) -> tuple[float, int]:
                    i, j = pair
                    stream = pair_stream(settings.seed, statistic, order[i], order[j], advance)
                    result = test(order[i], order[j], stream)
                    advance(settings.resamples - result[1])  # early stopping skipped the rest
                    return result

                if settings.threads > 1 and len(pairs) > 1:
                    with ThreadPoolExecutor(settings.threads) as pool:
                        results = list(pool.map(run, pairs))
                else:
                    results = [run(pair) for pair in pairs]
        for (i, j), (p, k) in zip(pairs, results):
            p_values[i, j], used[i, j] = p, k
    clusters = assign_ranks(p_values, settings.threshold) if settings.resamples else []
    return Comparison(list(order), p_values, used, clusters)
