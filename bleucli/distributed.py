"""Scoring on Dask (extra ``bleucli[dask]``): the same corpus score as one process.

Each partition of a Dask bag of ``(hypothesis, reference, ...)`` tuples (or of a Dask
dataframe whose first column is the hypothesis and the others references; with
``with_source=True`` the source comes first) is reduced to statistics in the workers and
scored once: BLEU's and chrF's integer statistics are summed per partition; TER's and the
neural metrics' float rows come back as they are and are summed in order, as one process
sums them, so every result equals a single-process run exactly. A neural metric's model
is loaded once per worker process and kept for its later partitions (on a GPU cluster,
``options={"comet": {"device": "cuda"}}`` with one worker per GPU).

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


def partition_stats(
    rows: Iterable[Any], specs: dict[str, dict[str, Any]], with_source: bool = False
) -> list[dict]:
    """One partition's statistics per metric (runs in a worker): ``(values, num_refs,
    summed)``, summed for integer statistics, the rows themselves otherwise."""
    rows = list(rows)
    sources = None
    if with_source:
        if any(isinstance(row, str) or len(row) < 2 for row in rows):
            raise ConfigError("with_source: each row must be (source, hypothesis, reference, ...)")
        sources = [row[0] for row in rows]
        rows = [tuple(row[1:]) for row in rows]
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
        if metric.uses_source:
            if sources is None:
                raise ConfigError(
                    f"{name} reads the source sentences: rows (source, hypothesis, reference, "
                    f"...) with with_source=True"
                )
            metric.bind_sources(sources)  # type: ignore[attr-defined]
        stats = metric.per_sentence_stats(hyps, refs or None)
        if metric.integer_stats:
            out[name] = (sum_rows(stats), metric.num_refs, True)
        else:
            out[name] = ([list(row) for row in stats], metric.num_refs, False)
    return [out]


def score_dask(
    collection: Any,
    metrics: Sequence[str] = ("bleu",),
    options: dict[str, dict[str, Any]] | None = None,
    with_source: bool = False,
) -> dict[str, tuple[Score, Metric]]:
    """Corpus scores of a Dask bag or dataframe: ``{name: (score, metric)}``.

    ``options`` maps a metric name to its keyword arguments, e.g. ``{"chrf": {"word_order":
    2}}`` or ``{"comet": {"model": "wmt22-comet-da"}}``; ``with_source``: each row starts
    with the source sentence (neural metrics read it). Compute happens on the current Dask
    scheduler (a ``distributed.Client`` if one is active).
    """
    try:
        import dask.bag  # noqa: F401
    except ImportError:
        raise MissingExtraError("distributed scoring", "dask", "dask") from None
    specs = {name: dict((options or {}).get(name, {})) for name in metrics}
    bag = collection.to_bag(index=False) if hasattr(collection, "to_bag") else collection
    partials = bag.map_partitions(partition_stats, specs, with_source).compute()
    totals: dict[str, list[Number]] = {}
    rows: dict[str, list[list[Number]]] = {}
    n_refs: dict[str, int | None] = {}
    for partial in partials:
        for name, (values, refs, summed) in partial.items():
            if not summed:
                rows.setdefault(name, []).extend(values)
            elif name in totals:
                totals[name] = sum_rows([totals[name], values])
            else:
                totals[name] = list(values)
            n_refs[name] = refs if n_refs.get(name) in (None, refs) else -1
    for name, stats in rows.items():
        totals[name] = sum_rows(stats)  # in order, as one process sums them
    if not totals:
        raise ConfigError("the collection has no rows to score")
    results = {}
    for name in metrics:
        metric = metric_class(name)(**specs[name])
        metric.num_refs = n_refs[name]
        results[name] = (metric.score_from_values(totals[name]), metric)
    return results
