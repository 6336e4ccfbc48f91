"""The scores AutoRank combines, as one table: systems x metrics, each metric either with
its segment scores (documents known, so documents can be resampled) or with system scores
only (``--system-scores``). A system's score on a metric is the mean of its non-null
segment scores, as WMT25 computes it; a null (a judge that returned nothing) is left out,
never counted as 0."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bleucli.errors import InputError

#: Metric names whose scores are error rates (lower is better) unless stored otherwise:
#: MetricX-23/24 on their 0-25 scale (a name starting with "MetricX") and TER.
LOWER_PREFIXES = ("metricx",)
LOWER_NAMES = ("ter",)


def lower_is_better_by_name(name: str) -> bool:
    """The documented rule for scores given in their own direction: a name starting with
    ``MetricX`` or the name ``TER`` (any case) is an error rate."""
    lowered = name.lower()
    return lowered.startswith(LOWER_PREFIXES) or lowered in LOWER_NAMES


@dataclass
class Metric:
    """One metric column: its name as the data or the user writes it, whether its values
    are lower-is-better as given (they are turned before combining), where it came from,
    and bleucli's signature when bleucli computed it."""

    name: str
    lower_is_better: bool = False
    origin: str = ""
    signature: str = ""


@dataclass
class ScoreTable:
    """Systems x metrics. ``segments[metric]`` is a ``[system, segment]`` float array (NaN
    for a null) whose segments belong to ``documents`` (``document_of[segment]``);
    ``system_scores[metric]`` a ``[system]`` array for metrics known only per system."""

    systems: list[str]
    metrics: list[Metric] = field(default_factory=list)
    segments: dict[str, Any] = field(default_factory=dict)
    system_scores: dict[str, Any] = field(default_factory=dict)
    documents: list[str] = field(default_factory=list)
    document_of: Any = None
    pair: str | None = None

    def metric(self, name: str) -> Metric:
        for metric in self.metrics:
            if metric.name == name:
                return metric
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def has_segments(self, name: str) -> bool:
        return name in self.segments

    def scores(self, name: str) -> Any:
        """``[system]`` system scores of one metric, as given (its own direction)."""
        import numpy as np

        if name in self.system_scores:
            return np.asarray(self.system_scores[name], dtype=np.float64)
        values = self.segments[name]
        counts = (~np.isnan(values)).sum(axis=1)
        return np.nansum(values, axis=1) / counts

    def check(self) -> None:
        """Refuse what would make a system score meaningless: a metric with no value at
        all for a system (every segment null)."""
        import numpy as np

        for name, values in self.segments.items():
            empty = [s for s, row in zip(self.systems, values) if np.isnan(row).all()]
            if empty:
                raise InputError(
                    f"metric {name}: every segment score of {', '.join(empty[:3])} is null; "
                    f"leave the metric out (--metrics) or the system out"
                )

    def add_metric(self, metric: Metric, segments: Any = None, system_scores: Any = None) -> None:
        if any(m.name == metric.name for m in self.metrics):
            raise InputError(f"metric {metric.name} is given twice")
        self.metrics.append(metric)
        if segments is not None:
            self.segments[metric.name] = segments
        if system_scores is not None:
            self.system_scores[metric.name] = system_scores

    def select(self, names: Sequence[str]) -> ScoreTable:
        """The table of ``names`` only, in that order (metrics the data lacks are refused,
        listing those it has)."""
        missing = [n for n in names if n not in self.names]
        if missing:
            where = f" for {self.pair}" if self.pair else ""
            raise InputError(
                f"metric {missing[0]} is not in the data{where}; metrics there: "
                f"{', '.join(self.names) or 'none'}"
            )
        chosen = [self.metric(n) for n in names]
        return ScoreTable(
            list(self.systems),
            chosen,
            {n: self.segments[n] for n in names if n in self.segments},
            {n: self.system_scores[n] for n in names if n in self.system_scores},
            list(self.documents),
            self.document_of,
            self.pair,
        )


def document_index(segments_per_document: Sequence[int]) -> Any:
    """``document_of[segment]`` for documents of the given segment counts."""
    import numpy as np

    return np.repeat(np.arange(len(segments_per_document)), segments_per_document)
