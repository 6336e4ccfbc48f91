"""Pairwise accuracy with tie calibration (acc-t, "acc23"; Deutsch et al. 2023,
https://arxiv.org/abs/2305.14324), as MTME's ``KendallWithTiesOpt(variant='acc23',
sample_rate=1.0)`` computes it.

A pair of entries of a group counts as right when the human and the metric order it the
same way, or when both call it a tie. The metric's ties are widened by epsilon: pairs whose
metric scores differ by at most epsilon become ties. Each group's accuracy is its share of
right pairs; the statistic is their mean over groups that have a pair. The calibration tries
epsilon = 0 and every distinct metric difference, in increasing order, and keeps the first
epsilon whose accuracy is the maximum.

Every pair is listed once with its metric difference and what turning it into a tie does
(+1 for a human tie, -1 for a concordant pair, 0 otherwise); the accuracy at every
threshold is then a cumulative sum over the pairs sorted by difference. MTME walks the same
pairs one Python object at a time; the result is the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bleucli.errors import ConfigError
from bleucli.metaeval.groups import Groups, pair_count, pair_indices

#: Thresholds whose accuracies differ by less than this are equal (the accuracy is a mean
#: of fractions with denominators below 10**8; distinct values differ by far more).
TIE_TOLERANCE = 1e-12
#: Pairs acc-t lists at most (memory: about 30 bytes each).
PAIR_LIMIT = 60_000_000


@dataclass(frozen=True)
class TieCalibration:
    """The calibrated accuracy, its epsilon, and every threshold with its accuracy."""

    accuracy: float
    epsilon: float
    thresholds: np.ndarray
    accuracies: np.ndarray

    @property
    def epsilons_at_max(self) -> list[float]:
        best = self.accuracies.max()
        return [float(t) for t in self.thresholds[self.accuracies >= best - TIE_TOLERANCE]]


@dataclass(frozen=True)
class PairOutcomes:
    """The listed pairs of a grouping with their gold relation and per-group weights."""

    first: np.ndarray
    second: np.ndarray
    gold_signs: np.ndarray
    weights: np.ndarray  # 1 / (pairs of the group x groups with a pair)

    def right(self, metric: np.ndarray, epsilon: float) -> np.ndarray:
        """Which pairs the metric gets right with ties widened to ``epsilon``."""
        difference = metric[..., self.first] - metric[..., self.second]
        signs = np.where(np.abs(difference) <= epsilon, 0, np.sign(difference))
        return signs == self.gold_signs


def pair_outcomes(groups: Groups, gold: np.ndarray) -> PairOutcomes:
    n_pairs = pair_count(groups)
    if n_pairs > PAIR_LIMIT:
        raise ConfigError(
            f"acc-t with grouping {groups.by!r} would compare {n_pairs:,} pairs of segments "
            f"(at most {PAIR_LIMIT:,}); use --stat seg-acc-t-item, as WMT does"
        )
    first, second, owner = pair_indices(groups)
    per_group = np.bincount(owner, minlength=groups.count).astype(np.float64)
    with_pairs = int((per_group > 0).sum())
    weights = 1.0 / (per_group[owner] * max(with_pairs, 1))
    return PairOutcomes(first, second, np.sign(gold[first] - gold[second]), weights)


def calibrate(
    groups: Groups, gold: np.ndarray, metric: np.ndarray, pairs: PairOutcomes | None = None
) -> TieCalibration:
    """acc-t of one metric vector with its optimal epsilon (``pairs``: the grouping's
    :func:`pair_outcomes`, when several metrics are calibrated on the same gold scores)."""
    if pairs is None:
        pairs = pair_outcomes(groups, gold)
    if len(pairs.first) == 0:
        raise ConfigError(
            f"acc-t with grouping {groups.by!r}: no group has two rated entries to compare"
        )
    difference = metric[pairs.first] - metric[pairs.second]
    metric_signs = np.sign(difference)
    gold_tie = pairs.gold_signs == 0
    right = np.where(gold_tie, metric_signs == 0, pairs.gold_signs == metric_signs)
    base = float((right * pairs.weights).sum())
    concordant = ~gold_tie & (pairs.gold_signs == metric_signs)
    change = np.where(gold_tie & (metric_signs != 0), 1.0, 0.0) - concordant
    gaps = np.abs(difference)
    order = np.argsort(gaps, kind="stable")
    gaps, steps = gaps[order], (change * pairs.weights)[order]
    running = base + np.cumsum(steps)
    last_of_run = np.r_[gaps[1:] != gaps[:-1], True]
    thresholds = gaps[last_of_run]
    accuracies = running[last_of_run]
    if thresholds[0] != 0.0:  # epsilon 0 is always a candidate
        thresholds = np.r_[0.0, thresholds]
        accuracies = np.r_[base, accuracies]
    best = accuracies.max()
    index = int(np.flatnonzero(accuracies >= best - TIE_TOLERANCE)[0])
    return TieCalibration(
        float(accuracies[index]), float(thresholds[index]), thresholds, accuracies
    )
