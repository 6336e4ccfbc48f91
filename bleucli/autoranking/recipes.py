"""AutoRank recipes: how WMT combines several metrics' system scores into one rank-like
number per system (1 is the best system). Each recipe works on an array of system scores
``x[metric, system, ...]`` in which every metric is higher-is-better (the caller turns
error rates around first), so the same code combines the observed scores and every
bootstrap resample at once (trailing axes).

- ``wmt25`` (WMT25 preliminary ranking, "Automatic Ranking"): per metric, the robust scale
  z = (x - median) / max(eps, Q100 - Q25) over the pair's systems, with numpy's default
  ('linear') percentiles; z averaged over the metrics with equal weights; then
  AutoRank = 1 + (max zbar - zbar) / (max zbar - min zbar) * (N - 1).
- ``wmt24`` (WMT24 findings, "Automatic Ranking"): per metric, rank = 1 + N * (x - best) /
  (worst - best), a scale from 1 to N + 1 as the published numbers follow (the text says 1
  to N); the metrics' ranks averaged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The epsilon of WMT25's max(eps, Q100 - Q25): a metric on which every system scores the
#: same contributes z = 0 instead of a division by zero.
EPSILON = 1e-12


@dataclass(frozen=True)
class Recipe:
    """A way to combine metrics; ``combine`` maps ``x[metric, system, ...]`` (higher is
    better) to AutoRank ``[system, ...]`` (lower is better, the best system 1)."""

    name: str
    source: str
    description: str

    def combine(self, x: Any) -> Any:  # pragma: no cover - every recipe overrides it
        raise NotImplementedError


class WMT25(Recipe):
    def combine(self, x: Any) -> Any:
        import numpy as np

        x = np.asarray(x, dtype=np.float64)
        n = x.shape[1]
        median = np.median(x, axis=1, keepdims=True)
        q25, q100 = np.percentile(x, [25, 100], axis=1, keepdims=True)  # 'linear'
        z = (x - median) / np.maximum(EPSILON, q100 - q25)
        zbar = z.mean(axis=0)
        top, bottom = zbar.max(axis=0, keepdims=True), zbar.min(axis=0, keepdims=True)
        spread = top - bottom
        with np.errstate(invalid="ignore", divide="ignore"):
            rank = 1 + (top - zbar) / spread * (n - 1)
        return np.where(spread > 0, rank, 1.0)


class WMT24(Recipe):
    def combine(self, x: Any) -> Any:
        import numpy as np

        x = np.asarray(x, dtype=np.float64)
        n = x.shape[1]
        best, worst = x.max(axis=1, keepdims=True), x.min(axis=1, keepdims=True)
        spread = worst - best
        with np.errstate(invalid="ignore", divide="ignore"):
            ranks = 1 + n * (x - best) / spread
        ranks = np.where(spread != 0, ranks, 1.0)
        return ranks.mean(axis=0)


RECIPES: dict[str, Recipe] = {
    "wmt25": WMT25(
        "wmt25",
        "WMT25 preliminary ranking (wmt-conference/wmt25-general-mt, preliminary_ranking), "
        "'Automatic Ranking'",
        "z = (x - median) / max(eps, Q100 - Q25) per metric ('linear' percentiles), mean z "
        "over metrics, rescaled to 1..N",
    ),
    "wmt24": WMT24(
        "wmt24",
        "WMT24 findings (arXiv 2407.19884), 'Automatic Ranking'; humeval/AutoRank.xlsx",
        "rank = 1 + N (x - best) / (worst - best) per metric, averaged over metrics",
    ),
}


def recipe(name: str) -> Recipe:
    """The recipe ``name`` (``wmt25``, ``wmt24``), else a usage error listing them."""
    from bleucli.errors import UsageError

    try:
        return RECIPES[name.lower()]
    except KeyError:
        raise UsageError(f"--recipe {name!r}: unknown; recipes: {', '.join(RECIPES)}") from None
