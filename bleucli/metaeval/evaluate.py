"""Every requested statistic for every metric, with significance and clusters: the
library's entry point (:func:`evaluate`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bleucli.errors import ConfigError, UsageError
from bleucli.metaeval import significance as sig
from bleucli.metaeval import spa, ties
from bleucli.metaeval.groups import Groups, grouping
from bleucli.metaeval.stats import Correlation
from bleucli.metaeval.table import MetaEvalData


@dataclass(frozen=True)
class Statistic:
    """A statistic by MTME's names: level, correlation and ``average_by`` grouping."""

    name: str
    level: str  # "sys" or "seg"
    kind: str  # pearson, spearman, kendall, accuracy, spa, acc-t
    grouping: str = "none"

    @property
    def test(self) -> str:
        return "pairs" if self.kind == "acc-t" else "PERM-BOTH"


def _registry() -> dict[str, Statistic]:
    found = {
        f"sys-{kind}": Statistic(f"sys-{kind}", "sys", kind)
        for kind in ("pearson", "spearman", "kendall", "accuracy", "spa")
    }
    for kind in ("pearson", "kendall", "acc-t"):
        for by in ("none", "item", "sys"):
            found[f"seg-{kind}-{by}"] = Statistic(f"seg-{kind}-{by}", "seg", kind, by)
    return found


STATISTICS = _registry()
#: What ``bleucli meta-eval`` computes unless told otherwise: WMT's system- and segment-level
#: statistics (acc-t item-grouped, as WMT23-25; SPA where every system is rated alike).
DEFAULT_STATISTICS = (
    "sys-pearson",
    "sys-spearman",
    "sys-kendall",
    "sys-accuracy",
    "sys-spa",
    "seg-pearson-none",
    "seg-pearson-item",
    "seg-pearson-sys",
    "seg-kendall-none",
    "seg-kendall-item",
    "seg-kendall-sys",
    "seg-acc-t-item",
)


def statistic(name: str) -> Statistic:
    try:
        return STATISTICS[name]
    except KeyError:
        raise UsageError(
            f"--stat: unknown statistic {name!r}; choose from {', '.join(STATISTICS)}"
        ) from None


@dataclass
class Row:
    metric: str
    value: float
    cluster: int | None = None
    p_best: float | None = None  # p-value of "the best metric beats this one"
    epsilon: float | None = None  # acc-t's calibrated tie threshold


@dataclass
class StatisticResult:
    """One statistic's table: metrics best first, with clusters and all p-values."""

    statistic: Statistic
    rows: list[Row]
    p_values: np.ndarray
    draws_used: np.ndarray
    counted: str  # what was correlated: "10 systems", "1,602 items", ...
    skipped: dict[str, str] = field(default_factory=dict)  # metric -> why
    note: str = ""


# -- preparing one statistic: a preparer per kind of statistic ------------------------------

Value = Callable[[str], "tuple[float, float | None]"]
Test = Callable[[str, str, sig.Draws], "tuple[float, int]"]


@dataclass
class _Prepared:
    """The functions a statistic's table needs: each metric's value (and acc-t's epsilon)
    and the test of one metric against another."""

    value: Value
    test: Test
    counted: str  # what was correlated, for the title


def _zscored(grouped: np.ndarray, rated: np.ndarray) -> np.ndarray:
    """z-scores of the grouped entries with the mean and deviation of every rated entry
    (MTME standardises before it drops groups too small to correlate); 0 for a constant
    metric (docs/meta-eval.md: where bleucli departs from MTME)."""
    return sig.standardised(grouped, rated)


def _correlation(
    stat: Statistic, groups: Groups, gold: np.ndarray, vectors: dict[str, np.ndarray],
    rated_values: dict[str, np.ndarray], settings: sig.TestSettings, counted: str,
) -> _Prepared:  # fmt: skip
    """A correlation averaged over groups, tested by PERM-BOTH."""
    correlate = Correlation(stat.kind, groups, gold)

    def value(name: str) -> tuple[float, float | None]:
        return float(correlate(vectors[name])[0]), None

    def test(better: str, worse: str, draws: sig.Draws) -> tuple[float, int]:
        z_better = _zscored(vectors[better], rated_values[better])
        z_worse = _zscored(vectors[worse], rated_values[worse])
        return sig.perm_both_z(correlate, z_better, z_worse, settings, draws)

    return _Prepared(value, test, counted)


def _segment_human(stat: Statistic, data: MetaEvalData) -> np.ndarray:
    if data.human_seg is None:
        raise ConfigError(f"{stat.name}: no segment-level human scores")
    return data.human_seg


def _prepare_system(stat: Statistic, data: MetaEvalData, names: list[str],
                    settings: sig.TestSettings) -> _Prepared:  # fmt: skip
    """System-level correlations and accuracy, on system scores."""
    gold_sys = data.system_gold()
    if gold_sys is None:
        raise ConfigError(f"{stat.name}: no system-level human scores")
    rated = ~np.isnan(gold_sys)[None, :]
    groups = grouping(rated, "none")
    gold = groups.take(gold_sys[None, :])
    vectors = {n: groups.take(data.metrics[n].sys[None, :]) for n in names}  # type: ignore[index]
    return _correlation(
        stat, groups, gold, vectors, vectors, settings, f"{int(rated.sum())} systems"
    )


def _prepare_segment(stat: Statistic, data: MetaEvalData, names: list[str],
                     settings: sig.TestSettings) -> _Prepared:  # fmt: skip
    """Segment-level correlations, grouped as MTME's average_by."""
    human = _segment_human(stat, data)
    rated = ~np.isnan(human)
    groups = grouping(rated, stat.grouping)
    vectors = {n: groups.take(data.metrics[n].seg) for n in names}  # type: ignore[arg-type]
    rated_values = {n: data.metrics[n].seg[rated] for n in names}  # type: ignore[index]
    return _correlation(stat, groups, groups.take(human), vectors, rated_values, settings,
                        _counted(stat, groups))  # fmt: skip


def _counted(stat: Statistic, groups: Groups) -> str:
    if stat.grouping == "none":
        return f"{len(groups.positions):,} segment scores"
    return f"{groups.count:,} {'items' if stat.grouping == 'item' else 'systems'}"


def _prepare_acc_t(stat: Statistic, data: MetaEvalData, names: list[str],
                   settings: sig.TestSettings) -> _Prepared:  # fmt: skip
    """acc-t: each metric calibrated once, then the pairs test with its own epsilon."""
    human = _segment_human(stat, data)
    groups = grouping(~np.isnan(human), stat.grouping)
    gold = groups.take(human)
    vectors = {n: groups.take(data.metrics[n].seg) for n in names}  # type: ignore[arg-type]
    outcomes = ties.pair_outcomes(groups, gold)
    calibrated = {n: ties.calibrate(groups, gold, vectors[n], outcomes) for n in names}

    def value(name: str) -> tuple[float, float | None]:
        return calibrated[name].accuracy, calibrated[name].epsilon

    def test(better: str, worse: str, draws: sig.Draws) -> tuple[float, int]:
        right_better = outcomes.right(vectors[better], calibrated[better].epsilon)
        right_worse = outcomes.right(vectors[worse], calibrated[worse].epsilon)
        return sig.pairs_test(outcomes, right_better, right_worse, settings, draws)

    return _Prepared(value, test, f"{len(outcomes.first):,} pairs in {_counted(stat, groups)}")


def _prepare_spa(stat: Statistic, data: MetaEvalData, names: list[str],
                 settings: sig.TestSettings) -> _Prepared:  # fmt: skip
    """SPA on the segments every system is rated on; PERM-BOTH over those scores."""
    human = _segment_human(stat, data)
    rated = ~np.isnan(human)
    spa.check_aligned(rated)
    columns = rated[0]
    gold = human[:, columns]
    signs = spa.sign_matrix(int(columns.sum()))
    human_p = spa.pairwise_p_values(gold, signs)  # the same for every metric and draw
    vectors = {n: data.metrics[n].seg[:, columns].ravel() for n in names}  # type: ignore[index]

    def of(stack: np.ndarray) -> np.ndarray:
        return spa.soft_pairwise_accuracy(
            gold, np.atleast_2d(stack).reshape(-1, *gold.shape), signs, human_p
        )

    def value(name: str) -> tuple[float, float | None]:
        return float(
            spa.soft_pairwise_accuracy(gold, vectors[name].reshape(gold.shape), signs, human_p)
        ), None

    def test(better: str, worse: str, draws: sig.Draws) -> tuple[float, int]:
        z_better, z_worse = sig.zscore(vectors[better]), sig.zscore(vectors[worse])
        return sig.perm_both_z(of, z_better, z_worse, settings, draws)

    return _Prepared(value, test, f"{gold.shape[0]} systems x {gold.shape[1]} segments")


Preparer = Callable[[Statistic, MetaEvalData, "list[str]", sig.TestSettings], _Prepared]


def _preparer(stat: Statistic) -> Preparer:
    if stat.kind in PREPARERS:
        return PREPARERS[stat.kind]
    return _prepare_system if stat.level == "sys" else _prepare_segment


#: Statistics with their own preparation; the others are correlations at their level.
PREPARERS: dict[str, Preparer] = {"spa": _prepare_spa, "acc-t": _prepare_acc_t}


def _usable(stat: Statistic, data: MetaEvalData) -> tuple[list[str], dict[str, str]]:
    names, skipped = [], {}
    for name, scores in data.metrics.items():
        needs_seg = stat.level == "seg" or stat.kind == "spa"
        if needs_seg and scores.seg is None:
            skipped[name] = "no segment scores"
        elif not needs_seg and scores.sys is None:
            skipped[name] = "no system scores"
        else:
            names.append(name)
    return names, skipped


def _sort_key(item: tuple[str, tuple[float, float | None]]) -> tuple[bool, float, str]:
    name, (value, _) = item
    return (math.isnan(value), -value if not math.isnan(value) else 0.0, name)


def evaluate_one(
    stat: Statistic, data: MetaEvalData, settings: sig.TestSettings, label: str | None = None
) -> StatisticResult:
    names, skipped = _usable(stat, data)
    if not names:
        raise ConfigError(f"{stat.name}: no metric has the scores it needs")
    prepared = _preparer(stat)(stat, data, names, settings)
    values = dict(sorted(((n, prepared.value(n)) for n in names), key=_sort_key))
    order = list(values)
    comparison = sig.compare(stat.name, order, prepared.test, settings, label)
    rows = []
    for i, name in enumerate(order):
        value, epsilon = values[name]
        rows.append(
            Row(
                metric=name,
                value=value,
                cluster=comparison.clusters[i] if comparison.clusters else None,
                p_best=float(comparison.p_values[0, i]) if settings.resamples and i else None,
                epsilon=epsilon,
            )
        )
    return StatisticResult(
        stat, rows, comparison.p_values, comparison.draws_used, prepared.counted, skipped
    )


def evaluate(
    data: MetaEvalData,
    statistics: Sequence[str],
    settings: sig.TestSettings,
    optional: frozenset[str] = frozenset(),
    on_done: Callable[[str, float], None] | None = None,
) -> tuple[list[StatisticResult], list[str]]:
    """Each statistic in turn, and notes on the ``optional`` ones left out because the data
    cannot give them (SPA on human scores missing in different places). ``on_done(label,
    seconds)`` after each (``label``: ``5 of 12: sys-pearson``)."""
    import time

    results, notes = [], []
    for k, name in enumerate(statistics, 1):
        label = f"{k} of {len(statistics)}: {name}"
        started = time.monotonic()
        try:
            results.append(evaluate_one(statistic(name), data, settings, label))
        except ConfigError as err:
            if name not in optional:
                raise
            notes.append(f"{name} left out: {_reason(err)}")
            label += " (left out)"
        if on_done is not None:
            on_done(label, time.monotonic() - started)
    return results, notes


def _reason(err: ConfigError) -> str:
    """Why a statistic cannot be computed, without advice to leave it out (it is)."""
    return str(err).split(": leave it out with --stat, or ")[0]
