"""Scoring on Dask (extra ``bleucli[dask]``): the same corpus score as one process.

Each partition of a Dask bag of ``(hypothesis, reference, ...)`` tuples (or of a Dask
dataframe whose first column is the hypothesis and the others references) is reduced to
summed sufficient statistics in the workers; the partitions' sums are added in partition
order and scored once. BLEU and chrF statistics are integers, so the result equals a
single-process run exactly (TER with several references: up to the last float bits).

The same pattern works on PySpark: ``rdd.mapPartitions(partition_stats_fn)`` then add the
per-partition lists in order (see the README).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bleucli.errors import ConfigError, MissingExtraError
from bleucli.metrics import metric_class
from bleucli.metrics.base import Metric, Number, Score, sum_rows


def _split(row: Any) -> tuple[str, list[str]]:
    if isinstance(row, str):
        raise ConfigError("each row must be (hypothesis, reference, ...), not a string")
    hyp, *refs = row
    if len(refs) == 1 and isinstance(refs[0], (list, tuple)):
        refs = list(refs[0])
    return hyp, refs


def partition_stats(rows: Iterable[Any], specs: dict[str, dict[str, Any]]) -> list[dict]:
    """Summed statistics of one partition per metric (runs in a worker)."""
    rows = [_split(row) for row in rows]
    if not rows:
        return [{}]
    hyps = [h for h, _ in rows]
    n_refs = len(rows[0][1])
    if any(len(r) != n_refs for _, r in rows):
        raise ConfigError("every row needs the same number of references")
    refs = [[r[k] for _, r in rows] for k in range(n_refs)]
    out: dict[str, Any] = {}
    for name, kwargs in specs.items():
        metric = metric_class(name)(**kwargs)
        out[name] = (sum_rows(metric.per_sentence_stats(hyps, refs)), metric.num_refs)
    return [out]


def score_dask(
    collection: Any,
    metrics: Sequence[str] = ("bleu",),
    options: dict[str, dict[str, Any]] | None = None,
) -> dict[str, tuple[Score, Metric]]:
    """Corpus scores of a Dask bag or dataframe: ``{name: (score, metric)}``.

    ``options`` maps a metric name to its keyword arguments, e.g. ``{"chrf": {"word_order":
    2}}``. Compute happens on the current Dask scheduler (a ``distributed.Client`` if one
    is active).
    """
    try:
        import dask.bag  # noqa: F401
    except ImportError:
        raise MissingExtraError("distributed scoring", "dask", "dask") from None
    specs = {name: dict((options or {}).get(name, {})) for name in metrics}
    bag = collection.to_bag(index=False) if hasattr(collection, "to_bag") else collection
    partials = bag.map_partitions(partition_stats, specs).compute()
    totals: dict[str, list[Number]] = {}
    n_refs: dict[str, int | None] = {}
    for partial in partials:
        for name, (values, refs) in partial.items():
            if name in totals:
                totals[name] = sum_rows([totals[name], values])
            else:
                totals[name] = list(values)
            n_refs[name] = refs if n_refs.get(name) in (None, refs) else -1
    if not totals:
        raise ConfigError("the collection has no rows to score")
    results = {}
    for name in metrics:
        metric = metric_class(name)(**specs[name])
        metric.num_refs = n_refs[name]
        results[name] = (metric.score_from_values(totals[name]), metric)
    return results
