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


def bootstrap_scores(rows: Sequence[Sequence[Number]], metric: Metric,
                     n_samples: int = 1000) -> tuple[str, list[Score]]:
    """Score ``n_samples`` resamples (with replacement) of the sentences behind ``rows``."""
    import numpy as np

    label, seed = seed_from_environment()
    rng = np.random.default_rng(seed)
    indices = rng.choice(len(rows), size=(n_samples, len(rows)), replace=True)
    stats = np.array(rows, dtype="float32")
    scores = [metric.score_from_values(sample.sum(0)) for sample in stats[indices]]
    return label, scores
