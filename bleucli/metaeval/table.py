"""The one in-memory table every reader fills and every statistic reads: human and metric
scores of the same systems on the same segments."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bleucli.errors import InputError


@dataclass
class MetricScores:
    """One metric's scores: ``seg`` (systems x segments) and/or ``sys`` (systems), in the
    table's system order. Higher is better (error rates such as TER come negated)."""

    name: str
    seg: np.ndarray | None = None
    sys: np.ndarray | None = None
    source: str = ""


@dataclass
class HumanScores:
    """Human judgements keyed by system name: segment scores (NaN where unrated, 0-based
    segment index) and system scores."""

    name: str
    source: str
    seg: dict[str, np.ndarray] = field(default_factory=dict)
    sys: dict[str, float] = field(default_factory=dict)


@dataclass
class MetaEvalData:
    """Systems, their human scores and the metrics to evaluate."""

    systems: list[str]
    n_segments: int
    human_name: str
    human_source: str
    human_seg: np.ndarray | None  # (systems x segments), NaN where unrated
    human_sys: np.ndarray | None  # (systems,), NaN where unrated
    metrics: dict[str, MetricScores] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Shapes and values checked once, so that every statistic can trust them."""
        n_sys = len(self.systems)
        shape = (n_sys, self.n_segments)
        if len(set(self.systems)) != n_sys:
            raise InputError("meta-eval: system names must be distinct")
        if self.human_seg is not None and np.shape(self.human_seg) != shape:
            raise InputError(
                f"meta-eval: human segment scores are {np.shape(self.human_seg)}, expected "
                f"{shape} (systems x segments)"
            )
        if self.human_sys is not None and np.shape(self.human_sys) != (n_sys,):
            raise InputError(f"meta-eval: human system scores need one value per system ({n_sys})")
        rated = self.seg_rated()
        for name, scores in self.metrics.items():
            if scores.seg is not None:
                if np.shape(scores.seg) != shape:
                    raise InputError(
                        f"meta-eval: metric {name!r} has segment scores of shape "
                        f"{np.shape(scores.seg)}, expected {shape} (systems x segments)"
                    )
                bad = ~np.isfinite(scores.seg) & rated
                if bad.any():
                    k, j = (int(x[0]) for x in np.nonzero(bad))
                    raise InputError(
                        f"meta-eval: metric {name!r} has no finite score for system "
                        f"{self.systems[k]!r}, segment {j + 1}, which the human scores rate"
                    )
            if scores.sys is not None and (
                np.shape(scores.sys) != (n_sys,) or not np.isfinite(scores.sys).all()
            ):
                raise InputError(
                    f"meta-eval: metric {name!r} needs one finite system score per system"
                )

    def seg_rated(self) -> np.ndarray:
        if self.human_seg is None:
            return np.zeros((len(self.systems), self.n_segments), dtype=bool)
        return ~np.isnan(self.human_seg)

    def system_gold(self) -> np.ndarray | None:
        """System-level human scores: the released ones, else the mean of each system's
        rated segments (WMT's system scores are that mean)."""
        if self.human_sys is not None:
            return self.human_sys
        if self.human_seg is None:
            return None
        rated = self.seg_rated()
        with np.errstate(invalid="ignore", divide="ignore"):
            totals = np.where(rated, self.human_seg, 0.0).sum(axis=1)
            return np.where(rated.any(axis=1), totals / rated.sum(axis=1), np.nan)
