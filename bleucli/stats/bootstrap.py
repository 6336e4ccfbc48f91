"""Bootstrap resampling over per-sentence statistics (confidence intervals).

Resamples use numpy's ``default_rng`` seeded from ``BLEUCLI_SEED`` (else SacreBLEU's
``SACREBLEU_SEED``; default 12345; ``none``
draws entropy from the OS) with the same draw order and float32 statistics as SacreBLEU, so a
fixed seed gives SacreBLEU's intervals.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Protocol

from bleucli.errors import ConfigError, UsageError


class Scorer(Protocol):
    """What resampling needs of a metric: a score from summed statistics. (A protocol
    rather than :class:`bleucli.metrics.base.Metric`, which imports this module.)"""

    def score_from_values(self, values: Sequence[float]) -> Any: ...


DEFAULT_SEED = "12345"


def seed_from_environment() -> tuple[str, int | None]:
    """The seed as recorded in signatures (``12345`` or ``none``) and as numpy takes it."""
    name = "BLEUCLI_SEED" if "BLEUCLI_SEED" in os.environ else "SACREBLEU_SEED"
    raw = os.environ.get(name, DEFAULT_SEED).strip()
    if raw.lower() == "none":
        return "none", None
    try:
        seed = int(raw)
    except ValueError:
        seed = -1
    if seed < 0:
        raise UsageError(f"{name} must be a whole number >= 0 or 'none', got {raw!r}")
    return raw, seed


#: Resampled statistics are gathered this many float32 values at a time (bounded memory;
#: SacreBLEU materialises all samples at once).
GATHER_BUDGET = 1 << 24
#: float32 holds every integer up to this exactly.
FLOAT32_EXACT = 1 << 24


#: Draw-count matrices up to this many entries are kept for reuse across statistics.
COUNTS_KEPT = 1 << 22


class Resamples:
    """Bootstrap draws: ``indices[s]`` are the sentences of resample ``s``.

    ``sums`` gives, per resample, the float32 sum of the drawn sentences' statistics in draw
    order: exactly the sums SacreBLEU computes. When the statistics are integers and no
    running sum can pass 2**24 (bounded by the sum of absolute values), every float32
    addition is exact and the order does not matter, so the sums are ``draw counts @
    statistics``: one matrix product instead of gathering every drawn row. The counts are
    computed once and shared by every statistic (all metrics and systems of a paired test
    draw the same resamples).
    """

    def __init__(self, indices, seed: int | None = None) -> None:
        self.indices = indices
        self.seed = seed
        self.per_slice = max(1, COUNTS_KEPT // max(1, indices.shape[1]))
        self._counts: list | None = None

    def _count_slices(self):
        import numpy as np

        if self._counts is not None:
            return self._counts
        n_samples, n = self.indices.shape
        slices = []
        for start in range(0, n_samples, self.per_slice):
            chunk = self.indices[start : start + self.per_slice]
            rows = len(chunk)
            flat = (np.arange(rows)[:, None] * n + chunk).ravel()
            slices.append(np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64))
        if n_samples * n <= COUNTS_KEPT:
            self._counts = slices
        return slices

    def sums(self, stats):
        import numpy as np

        if not np.array_equal(stats, np.round(stats)):
            return self._gathered(stats)
        values = stats.astype(np.float64)
        non_negative = bool((values >= 0).all())  # then the sums are their own bound
        magnitudes = None if non_negative else np.abs(values)
        pieces = []
        for counts in self._count_slices():
            sums = counts @ values
            bound = sums if magnitudes is None else counts @ magnitudes
            if bound.max(initial=0) > FLOAT32_EXACT:
                return self._gathered(stats)
            pieces.append(sums.astype(np.float32))
        return np.concatenate(pieces)

    def scores(self, metric: Any, rows: Sequence[Sequence[float]]) -> Any:
        """The metric's score in every resample of one system's per-sentence ``rows``
        (float32 statistics, as SacreBLEU resamples them)."""
        import numpy as np

        return metric.resample_scores(self.sums(np.array(rows, dtype="float32")))

    def _gathered(self, stats):
        """The general case: sum the drawn rows in draw order, as SacreBLEU does."""
        import numpy as np

        step = max(1, GATHER_BUDGET // max(1, stats.shape[0] * stats.shape[1]))
        return np.concatenate(
            [
                stats[self.indices[start : start + step]].sum(axis=1)
                for start in range(0, len(self.indices), step)
            ]
        )


def draw_resamples(n: int, n_samples: int, seed: int | None) -> Resamples:
    """SacreBLEU's draws: ``default_rng(seed).choice(n, (n_samples, n))``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return Resamples(rng.choice(n, size=(n_samples, n), replace=True), seed)


def bootstrap_scores(
    rows: Sequence[Sequence[float]],
    metric: Scorer,
    n_samples: int = 1000,
    drawn: Resamples | None = None,
) -> tuple[str, list[Any]]:
    """Score ``n_samples`` resamples (with replacement) of the sentences behind ``rows``.

    ``drawn`` may supply resamples already drawn with the environment's seed (they are
    used only if that seed is fixed and they match ``rows`` and ``n_samples``)."""
    import numpy as np

    if n_samples < 1:
        raise ConfigError(f"the number of bootstrap resamples must be positive, got {n_samples}")
    label, seed = seed_from_environment()
    if (
        drawn is not None
        and seed is not None
        and drawn.seed == seed
        and drawn.indices.shape == (n_samples, len(rows))
    ):
        resamples = drawn
    else:
        resamples = draw_resamples(len(rows), n_samples, seed)
    stats = np.array(rows, dtype="float32")
    return label, [metric.score_from_values(sums) for sums in resamples.sums(stats)]
