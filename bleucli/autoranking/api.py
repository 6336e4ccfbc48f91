"""``bleucli.autorank(...)``: AutoRank from Python, with the command's inputs and checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bleucli.autoranking.compute import AutoRank, enough_resamples
from bleucli.autoranking.compute import autorank as combine_table
from bleucli.autoranking.table import Metric, ScoreTable, document_index, lower_is_better_by_name
from bleucli.errors import ConfigError, UsageError


def _from_mapping(scores: Mapping[str, Mapping[str, Any]]) -> ScoreTable:
    """{system: {metric: system score or [segment scores (None for a null)]}}."""
    import numpy as np

    if not isinstance(scores, Mapping) or not scores:
        raise UsageError("autorank: scores must map each system to {metric: score(s)}")
    systems = list(scores)
    metrics = list(dict.fromkeys(m for s in systems for m in scores[s]))
    table = ScoreTable(systems)
    lengths = set()
    for metric in metrics:
        values = []
        for system in systems:
            if metric not in scores[system]:
                raise UsageError(f"autorank: {system} has no {metric} score")
            values.append(scores[system][metric])
        segmented = [isinstance(v, Sequence) and not isinstance(v, str) for v in values]
        if any(segmented) and not all(segmented):
            raise UsageError(f"autorank: {metric}: give every system segment scores, or none")
        try:
            if all(segmented):
                array = np.array([[np.nan if x is None else float(x) for x in v] for v in values])
                if array.ndim != 2:
                    raise UsageError(
                        f"autorank: {metric}: the systems have different segment counts"
                    )
                lengths.add(array.shape[1])
                table.add_metric(Metric(metric, lower_is_better_by_name(metric), "python"), array)
            else:
                array = np.array([float(v) for v in values])
                table.add_metric(
                    Metric(metric, lower_is_better_by_name(metric), "python"), system_scores=array
                )
        except (TypeError, ValueError):
            raise UsageError(f"autorank: {metric}: scores must be numbers") from None
        if not np.isfinite(array[~np.isnan(array)]).all():
            raise UsageError(f"autorank: {metric}: scores must be finite numbers")
    if len(lengths) > 1:
        raise UsageError("autorank: the metrics have different segment counts")
    if lengths:
        n = lengths.pop()
        table.documents = [str(k + 1) for k in range(n)]
        table.document_of = document_index([1] * n)
    return table


def autorank(
    scores: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    wmt_scores: str | Sequence[str] = (),
    system_scores: str | None = None,
    pair: str | None = None,
    metrics: Sequence[str] | None = None,
    recipe: str = "wmt25",
    lower_is_better: Sequence[str] = (),
    confidence: bool = False,
    n_samples: int | None = None,
    seed: int | None = 12345,
    jobs: int = 1,
) -> AutoRank:
    """AutoRank of one language pair's systems.

    ``scores``: {system: {metric: system score, or a list of segment scores}} (each metric
    in its own direction: a name starting with MetricX, and TER, are error rates; name
    others in ``lower_is_better``). Or ``wmt_scores``: WMT25-layout score files or folders
    (read as stored: higher is better) with ``pair`` as the files write it; and/or
    ``system_scores``: a ``system<TAB>metric<TAB>score`` file. ``metrics`` picks and orders
    the metrics (default: the recipe's choice for the pair, else all). ``confidence``: rank
    ranges and clusters from ``n_samples`` bootstrap resamples of documents (default:
    enough for the clusters to separate systems at all).

    >>> result = autorank({"A": {"chrF": 60.0, "TER": 30.0}, "B": {"chrF": 50.0, "TER": 40.0},
    ...                    "C": {"chrF": 40.0, "TER": 45.0}})
    >>> [(s.name, round(s.autorank, 2)) for s in result.systems]
    [('A', 1.0), ('B', 2.16), ('C', 3.0)]
    """
    from bleucli.autoranking.build import published
    from bleucli.autoranking.recipes import recipe as recipe_named
    from bleucli.autoranking.wmt import default_metrics

    method = recipe_named(recipe)
    if scores is not None and (wmt_scores or system_scores):
        raise UsageError("autorank: give scores, or score files, not both")
    if scores is not None:
        table = _from_mapping(scores)
    else:
        paths = [wmt_scores] if isinstance(wmt_scores, str) else list(wmt_scores)
        found = published(paths, system_scores, pair)
        if found is None:
            raise UsageError("autorank: give scores, wmt_scores or system_scores")
        table = found
    chosen = list(metrics) if metrics else default_metrics(method.name, table.pair, table.names)
    table = table.select(chosen)
    samples = 0
    if confidence:
        samples = n_samples if n_samples is not None else enough_resamples(len(table.systems))
        if samples < 1:
            raise ConfigError("autorank: n_samples must be at least 1")
    return combine_table(table, method.name, lower_is_better, samples, seed, jobs)
