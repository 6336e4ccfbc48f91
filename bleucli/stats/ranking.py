"""System rankings with significance: the WMT-style table that papers rebuild by hand.

For one metric and N systems scored on the same segments:

- each system's score and bootstrap 95% interval (SacreBLEU's ``-ci`` convention);
- its **rank range**: over the same bootstrap resamples, the system's rank in each resample
  (1 + the number of systems strictly better in that resample), and the range that drops
  the ``n // 40`` lowest and highest of the sorted ranks (the 2.5%..97.5% range, as the
  interval drops scores);
- **all-pairs paired tests** (paired bootstrap as SacreBLEU's ``--paired-bs`` computes its
  p-values, over the shared resamples; or approximate randomisation), with Holm's
  step-down correction over the N(N-1)/2 comparisons;
- **significance clusters**: systems ordered by score, a boundary falls between two
  consecutive systems when the upper one is significantly better (corrected p < alpha and
  a better score) than every system below it; clusters are the runs between boundaries.

Every resample is drawn from the run's seed (``BLEUCLI_SEED``), so the table is reproducible;
the signature records the test, resamples, correction and seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bleucli.metrics.base import Metric, sum_rows
from bleucli.stats.bootstrap import draw_resamples
from bleucli.stats.paired import estimate_ci, p_value, paired_randomization

ALPHA = 0.05


@dataclass
class RankedSystem:
    """One system's line of a ranking (positions and ranks are 1-based)."""

    name: str
    score: float
    mean: float
    ci: float
    rank_low: int
    rank_high: int
    cluster: int = 0
    position: int = 0


@dataclass
class Ranking:
    """One metric's ranking: systems best first, corrected p-values by system pair."""

    metric: str
    higher_is_better: bool
    systems: list[RankedSystem]
    p_values: dict[tuple[str, str], float] = field(default_factory=dict)
    corrected: dict[tuple[str, str], float] = field(default_factory=dict)
    signature: str = ""

    def significantly_better(self, a: str, b: str) -> bool:
        """Whether ``a`` beats ``b`` with a corrected p-value below ``ALPHA``."""
        scores = {s.name: s.score for s in self.systems}
        better = scores[a] > scores[b] if self.higher_is_better else scores[a] < scores[b]
        return better and self.corrected[_pair(a, b)] < ALPHA


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order: the k-th smallest of m is
    multiplied by m - k + 1 (k from 1), made monotone, capped at 1. Ties keep input order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p_values[i]))
        adjusted[i] = running
    return adjusted


def rank_ranges(resampled: list[Any], higher_is_better: bool) -> list[tuple[int, int]]:
    """Per system, the 95% range of its ranks over the resamples (``resampled[k][s]`` is
    system k's score in resample s)."""
    import numpy as np

    scores = np.array(resampled, dtype=np.float64)  # systems x samples
    if not higher_is_better:
        scores = -scores
    # rank = 1 + number of systems strictly better in that resample
    ranks = 1 + (scores[None, :, :] > scores[:, None, :]).sum(axis=1)
    n = scores.shape[1]
    drop = n // 40
    ranges = []
    for row in np.sort(ranks, axis=1):
        ranges.append((int(row[drop]), int(row[n - 1 - drop])))
    return ranges


def clusters(order: list[str], better: Any) -> list[int]:
    """Cluster number (1-based) of each system in ``order`` (best first): a new cluster
    starts below position r when ``better(order[r], lower)`` holds for every lower system."""
    numbers = []
    current = 1
    for r, name in enumerate(order):
        numbers.append(current)
        below = order[r + 1 :]
        if below and all(better(name, other) for other in below):
            current += 1
    return numbers


def rank_systems(
    metric: Metric,
    rows: list[list[list[float]]],
    names: list[str],
    test: str,
    n_samples: int,
    seed: int | None,
    higher_is_better: bool = True,
    resampled: list[Any] | None = None,
) -> Ranking:
    """The ranking of ``names`` (whose per-segment statistics are ``rows``) by ``metric``;
    ``resampled``: each system's scores in the seeded resamples, when the caller kept them
    (the evaluation server stores them once per submission)."""
    import numpy as np

    totals = [metric.score_from_values(sum_rows(r)) for r in rows]
    scores = [total.score for total in totals]
    if resampled is None:
        resamples = draw_resamples(len(rows[0]), n_samples, seed)
        resampled = [resamples.scores(metric, r) for r in rows]
    ranges = rank_ranges(resampled, higher_is_better)
    systems = []
    for name, score, samples, (low, high) in zip(names, scores, resampled, ranges):
        mean, ci = estimate_ci(samples)
        systems.append(RankedSystem(name, float(score), float(mean), float(ci), low, high))
    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    raw = []
    for i, j in pairs:
        if test == "bs":
            differences = np.abs(resampled[i] - resampled[j])
            raw.append(p_value(differences - differences.mean(), abs(scores[i] - scores[j])))
        else:
            p = paired_randomization(metric, rows[i], rows[j], n_samples, seed).p_value
            assert p is not None  # the randomisation test always gives one
            raw.append(p)
    ranking = Ranking(totals[0].name, higher_is_better, systems)
    for (i, j), p, adjusted in zip(pairs, raw, holm(raw)):
        key = _pair(names[i], names[j])
        ranking.p_values[key] = float(p)
        ranking.corrected[key] = float(adjusted)
    sign = 1 if higher_is_better else -1
    position = sorted(range(len(systems)), key=lambda k: (-sign * systems[k].score, k))
    ranking.systems = [systems[k] for k in position]
    order = [s.name for s in ranking.systems]
    for number, system, cluster in zip(
        range(1, len(order) + 1), ranking.systems, clusters(order, ranking.significantly_better)
    ):
        system.position, system.cluster = number, cluster
    return ranking


def tied_as_shown(ranking: Ranking, places: int, tiebreak: dict[str, Any] | None = None) -> Ranking:
    """``ranking`` as a reader of scores rounded to ``places`` sees it: systems whose
    rounded scores are equal are tied -- one position (``1, 1, 3``), the union of their rank
    ranges, one cluster (clusters spanning a tie merge) -- and listed in ``tiebreak``'s
    order (default: by name), so the order says nothing the rounded numbers do not. A blind
    leaderboard ranks this way: ordering ties by the hidden digits would leak them."""
    from bleucli.display import rounded

    sign = 1 if ranking.higher_is_better else -1
    shown = {s.name: rounded(s.score, places) for s in ranking.systems}
    key = tiebreak or {s.name: s.name for s in ranking.systems}
    ordered = sorted(ranking.systems, key=lambda s: (-sign * shown[s.name], key[s.name]))
    groups: dict[float, list[RankedSystem]] = {}
    for system in ordered:
        groups.setdefault(shown[system.name], []).append(system)
    spans: list[list[int]] = []  # index ranges in the new order that must share a cluster
    for members in groups.values():
        low = min(s.rank_low for s in members)
        high = max(s.rank_high for s in members)
        first = ordered.index(members[0])
        for system in members:
            system.position, system.rank_low, system.rank_high = first + 1, low, high
        spans.append([first, first + len(members) - 1])
    for cluster in {s.cluster for s in ordered}:
        where = [k for k, s in enumerate(ordered) if s.cluster == cluster]
        spans.append([min(where), max(where)])
    spans.sort()
    merged: list[list[int]] = []
    for span in spans:
        if merged and span[0] <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], span[1])
        else:
            merged.append(span)
    for number, (start, stop) in enumerate(merged, 1):
        for system in ordered[start : stop + 1]:
            system.cluster = number
    ranking.systems = ordered
    return ranking
