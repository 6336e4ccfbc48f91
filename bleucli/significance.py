"""Bootstrap resampling over per-sentence statistics (confidence intervals).

Resamples use numpy's ``default_rng`` seeded from ``BLEUCLI_SEED`` (default 12345; ``none``
draws entropy from the OS) with the same draw order and float32 statistics as SacreBLEU, so a
fixed seed gives SacreBLEU's intervals.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bleucli.errors import ConfigError

if TYPE_CHECKING:
    from bleucli.metrics.base import Metric, Number, Score

DEFAULT_SEED = "12345"


def seed_from_environment() -> tuple[str, int | None]:
    """The seed as recorded in signatures (``12345`` or ``none``) and as numpy takes it."""
    raw = os.environ.get("BLEUCLI_SEED", DEFAULT_SEED).strip()
    if raw.lower() == "none":
        return "none", None
    try:
        return raw, int(raw)
    except ValueError:
        raise ConfigError(f"BLEUCLI_SEED must be an integer or 'none', got {raw!r}") from None


#: Resampled statistics are gathered this many float32 values at a time (bounded memory;
#: SacreBLEU materialises all samples at once).
GATHER_BUDGET = 1 << 24


def resampled_sums(stats, indices):
    """Per resample, the float32 sum of the drawn sentences' statistics, in draw order.

    Exactly the sums SacreBLEU computes (same dtype, same order), in slices of samples.
    """
    import numpy as np

    per_sample = max(1, GATHER_BUDGET // max(1, stats.shape[0] * stats.shape[1]))
    return np.concatenate([stats[indices[start:start + per_sample]].sum(axis=1)
                           for start in range(0, len(indices), per_sample)])


def bootstrap_scores(rows: Sequence[Sequence[Number]], metric: Metric,
                     n_samples: int = 1000) -> tuple[str, list[Score]]:
    """Score ``n_samples`` resamples (with replacement) of the sentences behind ``rows``."""
    import numpy as np

    if n_samples < 1:
        raise ConfigError(f"the number of bootstrap resamples must be positive, got {n_samples}")
    label, seed = seed_from_environment()
    rng = np.random.default_rng(seed)
    indices = rng.choice(len(rows), size=(n_samples, len(rows)), replace=True)
    stats = np.array(rows, dtype="float32")
    scores = [metric.score_from_values(sums) for sums in resampled_sums(stats, indices)]
    return label, scores
