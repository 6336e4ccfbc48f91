"""AutoRank over a :class:`~bleucli.autoranking.table.ScoreTable`: the recipe's number per
system, and what WMT does not publish: each system's rank range and significance cluster
from a seeded bootstrap over documents (a document's segments are resampled together, as
WMT's segments are paragraphs of documents), and where systems added to a published pair
move the published ones.

The bootstrap draws ``n_samples`` resamples of the documents once (numpy's
``default_rng(seed).choice``, as every bleucli bootstrap), computes every metric's system
scores in each resample from per-document sums and counts of the non-null segment scores,
and the recipe's AutoRank in each. Rank ranges drop the ``n // 40`` lowest and highest
ranks (95%), as ``--rank`` does. Two systems differ significantly when the two-sided
bootstrap p-value of the sign of their AutoRank difference (twice the share of resamples,
+1 corrected, in which the order of the two is not the observed one) is below 0.05 after
Holm's correction over all pairs; a new cluster starts below a system significantly better
than every system below it. Resamples are
computed in blocks over ``jobs`` threads: any thread count gives the same numbers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bleucli.autoranking.recipes import Recipe, recipe
from bleucli.autoranking.table import Metric, ScoreTable
from bleucli.errors import ConfigError

#: Resamples computed together (bounded memory: metrics x systems x block floats).
BLOCK = 250


def enough_resamples(n_systems: int) -> int:
    """Resamples that let a Holm-corrected bootstrap p-value fall below 0.05 at all: the
    smallest two-sided p is 2 / (n + 1), multiplied by the number of pairs, so ``n`` must
    exceed 40 times the pairs (43 systems: 903 pairs, 37,000 resamples, about a second).
    At least 1,000, in whole thousands."""
    pairs = n_systems * (n_systems - 1) // 2
    return max(1000, -(-(40 * pairs + 1) // 1000) * 1000)


@dataclass
class RankedSystem:
    """One row: AutoRank, the system scores as given, and (with a bootstrap) the rank range
    and cluster; ``before``: its AutoRank without the added systems."""

    name: str
    autorank: float
    scores: dict[str, float]
    position: int = 0
    rank_low: int = 0
    rank_high: int = 0
    cluster: int = 0
    added: bool = False
    before: float | None = None


@dataclass
class AutoRank:
    """A pair's AutoRank table, best system first."""

    recipe: str
    pair: str | None
    metrics: list[Metric]
    systems: list[RankedSystem]
    turned: list[str] = field(default_factory=list)
    n_samples: int = 0
    seed: str = ""
    #: How system scores were made: ``mean-nonnull`` (means of segment scores), ``given``
    #: (system scores as the input states them) or ``mixed``.
    aggregate: str = "mean-nonnull"
    p_values: dict[tuple[str, str], float] = field(default_factory=dict)
    version: str = ""

    @property
    def signature(self) -> str:
        """``AutoRank|recipe:...|pair:...|metrics:...|...|version:...``: what the number is
        (the metrics' own signatures are listed beside it)."""
        fields = [f"recipe:{self.recipe}"]
        if self.pair:
            fields.append(f"pair:{self.pair}")
        fields.append("metrics:" + ",".join(m.name for m in self.metrics))
        if self.turned:
            fields.append("turned:" + ",".join(self.turned))
        fields.append(f"sys:{self.aggregate}")
        if self.n_samples:
            fields += [f"bs:{self.n_samples}", "unit:doc", f"seed:{self.seed}"]
        fields.append(f"version:{self.version}")
        return "AutoRank|" + "|".join(fields)


def _signs(table: ScoreTable, lower_is_better: Sequence[str]) -> tuple[Any, list[str]]:
    """+1 or -1 per metric (error rates turned), and the names turned."""
    import numpy as np

    extra = {name.lower() for name in lower_is_better}
    unknown = extra - {m.name.lower() for m in table.metrics}
    if unknown:
        raise ConfigError(
            f"--lower-is-better {sorted(unknown)[0]}: no such metric among {', '.join(table.names)}"
        )
    turned = [m.name for m in table.metrics if m.lower_is_better or m.name.lower() in extra]
    signs = np.array([-1.0 if m.name in turned else 1.0 for m in table.metrics])
    return signs, turned


def system_scores(table: ScoreTable) -> Any:
    """``[metric, system]``: every metric's system scores, as given."""
    import numpy as np

    return np.stack([table.scores(m.name) for m in table.metrics])


def _document_sums(table: ScoreTable, name: str) -> tuple[Any, Any]:
    """Per system and document, the sum and count of the non-null segment scores."""
    import numpy as np

    values = table.segments[name]
    starts = np.flatnonzero(np.r_[True, np.diff(table.document_of) != 0])
    present = ~np.isnan(values)
    sums = np.add.reduceat(np.where(present, values, 0.0), starts, axis=1)
    counts = np.add.reduceat(present.astype(np.float64), starts, axis=1)
    return sums, counts


def resampled_autoranks(
    table: ScoreTable,
    method: Recipe,
    signs: Any,
    n_samples: int,
    seed: int | None,
    jobs: int = 1,
    observed: Any = None,
) -> Any:
    """AutoRank ``[system, resample]`` over document resamples."""
    import numpy as np

    without = [m.name for m in table.metrics if not table.has_segments(m.name)]
    if without:
        raise ConfigError(
            f"rank ranges resample documents, and {without[0]} has system scores only "
            f"(--system-scores): give its segment scores, or leave out --confidence"
        )
    n_docs = len(table.documents)
    draws = np.random.default_rng(seed).choice(n_docs, size=(n_samples, n_docs), replace=True)
    per_metric = [_document_sums(table, m.name) for m in table.metrics]
    observed = system_scores(table) if observed is None else observed

    def block(start: int) -> Any:
        rows = draws[start : start + BLOCK]
        flat = (np.arange(len(rows))[:, None] * n_docs + rows).ravel()
        weights = np.bincount(flat, minlength=len(rows) * n_docs).reshape(len(rows), n_docs)
        weights = weights.astype(np.float64).T  # documents x resamples
        x = np.empty((len(per_metric), len(table.systems), len(rows)))
        for k, (sums, counts) in enumerate(per_metric):
            with np.errstate(invalid="ignore", divide="ignore"):
                values = (sums @ weights) / (counts @ weights)
            # a resample of documents whose every score is null keeps the observed score
            x[k] = np.where(np.isnan(values), observed[k][:, None], values)
        return method.combine(x * signs[:, None, None])

    starts = list(range(0, n_samples, BLOCK))
    if jobs > 1 and len(starts) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            blocks = list(pool.map(block, starts))
    else:
        blocks = [block(start) for start in starts]
    return np.concatenate(blocks, axis=1)


def autorank(
    table: ScoreTable,
    recipe_name: str = "wmt25",
    lower_is_better: Sequence[str] = (),
    n_samples: int = 0,
    seed: int | None = 12345,
    jobs: int = 1,
    added: Sequence[str] = (),
) -> AutoRank:
    """The AutoRank table of ``table`` (``n_samples`` > 0: with rank ranges and clusters;
    ``added``: systems placed among the others, whose AutoRank without them is kept)."""
    import numpy as np

    from bleucli.stats.ranking import ALPHA, clusters, holm, rank_ranges
    from bleucli.version import __version__

    if not table.metrics:
        raise ConfigError("no metric to combine")
    if len(table.systems) < 2:
        raise ConfigError(
            f"AutoRank ranks systems against each other: {len(table.systems)} system given"
        )
    table.check()
    method = recipe(recipe_name)
    signs, turned = _signs(table, lower_is_better)
    observed = system_scores(table)  # [metric, system], once
    ranks = method.combine(observed * signs[:, None])
    before: dict[str, float] = {}
    if added:
        kept = [s for s in table.systems if s not in set(added)]
        if len(kept) >= 2:
            rows = [table.systems.index(s) for s in kept]
            x = observed[:, rows] * signs[:, None]
            before = dict(zip(kept, (float(v) for v in method.combine(x))))
    systems = [
        RankedSystem(
            name,
            float(rank),
            {m.name: float(observed[j, k]) for j, m in enumerate(table.metrics)},
            added=name in set(added),
            before=before.get(name),
        )
        for k, (name, rank) in enumerate(zip(table.systems, ranks))
    ]
    order = sorted(range(len(systems)), key=lambda k: (systems[k].autorank, systems[k].name))
    result = AutoRank(
        method.name, table.pair, list(table.metrics), [systems[k] for k in order], turned,
        version=f"bleucli-{__version__}",
    )  # fmt: skip
    for position, system in enumerate(result.systems, start=1):
        system.position = position
    segmented = [table.has_segments(m.name) for m in table.metrics]
    result.aggregate = (
        "mean-nonnull" if all(segmented) else "given" if not any(segmented) else "mixed"
    )
    if n_samples <= 0:
        return result
    resampled = resampled_autoranks(table, method, signs, n_samples, seed, jobs, observed)
    resampled = resampled[order]
    ranges = rank_ranges(list(resampled), higher_is_better=False)
    names = [s.name for s in result.systems]
    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    raw = []
    for i, j in pairs:
        # i is ranked above j: how often the resamples do not order them so
        flipped = int(np.count_nonzero(resampled[i] >= resampled[j]))
        raw.append(min(1.0, 2 * (flipped + 1) / (n_samples + 1)))
    corrected = dict(zip(pairs, holm(raw)))
    index = {name: k for k, name in enumerate(names)}

    def better(a: str, b: str) -> bool:
        i, j = sorted((index[a], index[b]))
        first, second = result.systems[index[a]], result.systems[index[b]]
        return first.autorank < second.autorank and corrected[(i, j)] < ALPHA

    for system, (low, high), cluster in zip(result.systems, ranges, clusters(names, better)):
        system.rank_low, system.rank_high, system.cluster = low, high, cluster
    result.p_values = {(names[i], names[j]): corrected[(i, j)] for i, j in pairs}
    result.n_samples = n_samples
    result.seed = "none" if seed is None else str(seed)
    return result
