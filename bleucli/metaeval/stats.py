"""The statistics of the WMT Metrics task, as mt-metrics-eval (MTME) defines them, over
numpy arrays.

Every correlation is computed for each group of a :class:`~bleucli.metaeval.groups.Groups`
at once and for a whole stack of metric vectors at once (the permutation tests score
thousands of mixtures): ``metric`` is ``(n,)`` or ``(draws, n)``, the gold vector ``(n,)``.
Per-group values follow scipy.stats (``pearsonr``, ``spearmanr``, ``kendalltau`` tau-b):
NaN for a constant vector. :func:`average` then does what MTME's ``AverageCorrelation``
does: NaN groups are dropped, and 0 stands for "no group left".

Kendall's tau-b is counted exactly (integers), by pairs for small groups and by sorting
(inversions counted merge-sort style) for long vectors, so it equals scipy's to the bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bleucli.metaeval.groups import Groups, pair_count, pair_indices

#: Work arrays are kept to about this many elements (pairs x draws, entries x draws).
CHUNK = 1 << 22


def average(values: np.ndarray) -> np.ndarray:
    """MTME's average over groups (last axis): NaN groups dropped, 0 when none is left."""
    values = np.atleast_2d(values)
    valid = ~np.isnan(values)
    counts = valid.sum(axis=1)
    totals = np.where(valid, values, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, totals / np.maximum(counts, 1), 0.0)


def _reduce(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return np.add.reduceat(values, starts, axis=-1)


def _constant(values: np.ndarray, groups: Groups) -> np.ndarray:
    starts = groups.starts[:-1]
    return np.maximum.reduceat(values, starts, axis=-1) == np.minimum.reduceat(
        values, starts, axis=-1
    )


def pearson(groups: Groups, gold: np.ndarray, metric: np.ndarray) -> np.ndarray:
    """Pearson's r per group (scipy.stats.pearsonr): ``(draws, groups)``."""
    metric = np.atleast_2d(metric)
    if groups.count == 0:
        return np.zeros((len(metric), 0))
    starts, sizes = groups.starts[:-1], groups.sizes

    def centred_unit(values: np.ndarray) -> np.ndarray:
        centred = values - np.repeat(_reduce(values, starts) / sizes, sizes, axis=-1)
        norms = np.sqrt(_reduce(centred * centred, starts))
        with np.errstate(invalid="ignore", divide="ignore"):
            return centred / np.repeat(norms, sizes, axis=-1)

    with np.errstate(invalid="ignore"):
        r = _reduce(centred_unit(gold)[None, :] * centred_unit(metric), starts)
    r = np.clip(r, -1.0, 1.0)
    constant = _constant(gold, groups)[None, :] | _constant(metric, groups)
    return np.where(constant, np.nan, r)


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing their average rank (scipy.stats.rankdata), row by row."""
    values = np.atleast_2d(values)
    ranks = np.empty(values.shape, dtype=np.float64)
    for row, vector in enumerate(values):
        order = np.argsort(vector, kind="mergesort")
        ordered = vector[order]
        new = np.r_[True, ordered[1:] != ordered[:-1]]
        dense = np.cumsum(new)
        bounds = np.r_[np.flatnonzero(new), len(vector)]
        ranked = 0.5 * (bounds[dense] + bounds[dense - 1] + 1)
        ranks[row, order] = ranked
    return ranks


def spearman(groups: Groups, gold: np.ndarray, metric: np.ndarray) -> np.ndarray:
    """Spearman's rho per group (scipy.stats.spearmanr): Pearson's r of average ranks."""
    metric = np.atleast_2d(metric)
    out = np.full((len(metric), groups.count), np.nan)
    for g in range(groups.count):
        lo, hi = groups.starts[g], groups.starts[g + 1]
        one = Groups(groups.by, groups.positions[lo:hi], np.array([0, hi - lo]))
        out[:, g] = pearson(one, average_ranks(gold[lo:hi])[0], average_ranks(metric[:, lo:hi]))[
            :, 0
        ]
    # NaN propagates, as scipy's spearmanr does (ranks would place it last instead)
    broken = nan_groups(groups, metric) | nan_groups(groups, gold[None, :])
    return np.where(broken, np.nan, out)


# -- Kendall's tau: exact pair counts ---------------------------------------------------------


@dataclass
class PairCounts:
    """Per group: all pairs, pairs tied in gold (x), in the metric (y), in both, and
    discordant pairs (opposite strict order)."""

    total: np.ndarray
    x_ties: np.ndarray
    y_ties: np.ndarray
    both_ties: np.ndarray
    discordant: np.ndarray

    def tau_b(self) -> np.ndarray:
        """scipy's tau-b from the counts (NaN when either side is all ties)."""
        con_minus_dis = (
            self.total - self.x_ties - self.y_ties + self.both_ties - 2 * self.discordant
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = (
                con_minus_dis
                / np.sqrt(self.total - self.x_ties)
                / np.sqrt(self.total - self.y_ties)
            )
        undefined = (self.x_ties == self.total) | (self.y_ties == self.total)
        return np.where(undefined, np.nan, np.clip(tau, -1.0, 1.0))


class PairTable:
    """Every within-group pair of a grouping, for groups small enough to list."""

    def __init__(self, groups: Groups) -> None:
        self.groups = groups
        self.first, self.second, self.owner = pair_indices(groups)
        self.starts = np.searchsorted(self.owner, np.arange(groups.count))
        self.total = np.bincount(self.owner, minlength=groups.count).astype(np.int64)

    def signs(self, values: np.ndarray) -> np.ndarray:
        return np.sign(values[..., self.first] - values[..., self.second])

    def sum(self, flags: np.ndarray) -> np.ndarray:
        """Per-group sums of a (draws, pairs) array."""
        if flags.shape[-1] == 0:
            return np.zeros((*flags.shape[:-1], self.groups.count), dtype=np.int64)
        return np.add.reduceat(flags.astype(np.int64), self.starts, axis=-1)

    def counts(self, gold_signs: np.ndarray, metric: np.ndarray) -> PairCounts:
        metric_signs = self.signs(metric)
        x_tie = gold_signs == 0
        y_tie = metric_signs == 0
        return PairCounts(
            total=self.total,
            x_ties=self.sum(x_tie[None, :]),
            y_ties=self.sum(y_tie),
            both_ties=self.sum(x_tie & y_tie),
            discordant=self.sum(gold_signs * metric_signs < 0),
        )


def _tie_pairs(group: np.ndarray, new_run: np.ndarray, n_groups: int) -> np.ndarray:
    """Pairs inside runs of equal values (``new_run`` marks each run's start), per group."""
    run = np.cumsum(new_run) - 1
    lengths = np.bincount(run).astype(np.int64)
    pairs = lengths * (lengths - 1) // 2
    return np.bincount(group[new_run], weights=pairs, minlength=n_groups).astype(np.int64)


def _inversions(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the pairs ``p < q`` of the same group with ``values[p] > values[q]``
    (``group`` non-decreasing, ``values`` whole numbers >= 0). Merge sort's count, one
    vectorised pass per doubling of the block width."""
    n = len(values)
    out = np.zeros(n_groups, dtype=np.int64)
    if n < 2:
        return out
    span = int(values.max()) + 1
    position = np.arange(n)
    width = 1
    while width < n:
        block = position // (2 * width)
        change = (block[1:] != block[:-1]) | (group[1:] != group[:-1])
        segment = np.r_[0, np.cumsum(change)]
        keys = segment * span + values
        right = ((position // width) & 1).astype(bool)
        left_keys = np.sort(keys[~right])
        right_keys, right_segment = keys[right], segment[right]
        above = np.searchsorted(left_keys, (right_segment + 1) * span, side="left")
        at_most = np.searchsorted(left_keys, right_keys, side="right")
        out += np.bincount(group[right], weights=above - at_most, minlength=n_groups).astype(
            np.int64
        )
        width *= 2
    return out


def sorted_counts(group: np.ndarray, x: np.ndarray, y: np.ndarray, n_groups: int) -> PairCounts:
    """Pair counts of long vectors by sorting (scipy's method, vectorised over groups)."""
    if len(group) == 0:
        zeros = np.zeros(n_groups, dtype=np.int64)
        return PairCounts(zeros, zeros, zeros, zeros, zeros)
    order = np.lexsort((y, x, group))
    g, xs, ys = group[order], x[order], y[order]
    same_group = np.r_[False, g[1:] == g[:-1]]
    new_x = ~(same_group & np.r_[False, xs[1:] == xs[:-1]])
    new_xy = new_x | np.r_[True, ys[1:] != ys[:-1]]
    by_y = np.lexsort((y, group))
    gy, yy = group[by_y], y[by_y]
    new_y = ~(np.r_[False, gy[1:] == gy[:-1]] & np.r_[False, yy[1:] == yy[:-1]])
    sizes = np.bincount(group, minlength=n_groups).astype(np.int64)
    ranks = np.unique(ys, return_inverse=True)[1].ravel()
    return PairCounts(
        total=sizes * (sizes - 1) // 2,
        x_ties=_tie_pairs(g, new_x, n_groups),
        y_ties=_tie_pairs(gy, new_y, n_groups),
        both_ties=_tie_pairs(g, new_xy, n_groups),
        discordant=_inversions(g, ranks, n_groups),
    )


class Kendall:
    """Kendall's tau-b per group for many metric vectors against one gold vector."""

    #: Groupings are counted pair by pair when they have at most this many pairs per entry
    #: (short groups: items); long vectors by sorting, O(n log^2 n) per draw.
    PAIRS_PER_ENTRY = 32

    def __init__(self, groups: Groups, gold: np.ndarray) -> None:
        check_groups(groups, len(gold))
        self.groups = groups
        self.gold = gold
        self.table: PairTable | None = None
        if pair_count(groups) <= self.PAIRS_PER_ENTRY * len(gold) and _native() is None:
            self.table = PairTable(groups)
            self.gold_signs = self.table.signs(gold)

    def __call__(self, metric: np.ndarray) -> np.ndarray:
        metric = np.atleast_2d(np.asarray(metric, dtype=np.float64))
        if metric.ndim != 2 or metric.shape[1] != len(self.gold):
            raise ValueError(
                f"Kendall: a metric vector has one score per gold entry ({len(self.gold)}), "
                f"not shape {metric.shape}"
            )
        g = self.groups.count
        if g == 0:
            return np.zeros((len(metric), 0))
        # a NaN score makes its group's tau NaN on either engine (scipy's kendalltau
        # propagates NaN; MTME's average then drops the group)
        broken = nan_groups(self.groups, metric) | nan_groups(self.groups, self.gold[None, :])
        return np.where(broken, np.nan, self._tau(metric))

    def _tau(self, metric: np.ndarray) -> np.ndarray:
        g = self.groups.count
        if _native() is not None:
            return self._native_counts(metric).tau_b()
        if self.table is not None:
            step = max(1, CHUNK // max(1, len(self.table.first)))
            return np.concatenate(
                [
                    self.table.counts(self.gold_signs, metric[s : s + step]).tau_b()
                    for s in range(0, len(metric), step)
                ]
            )
        n = len(self.gold)
        step = max(1, CHUNK // (8 * n))
        rows = []
        ids = self.groups.ids
        for s in range(0, len(metric), step):
            chunk = metric[s : s + step]
            draws = len(chunk)
            group = (np.arange(draws)[:, None] * g + ids[None, :]).ravel()
            counts = sorted_counts(group, np.tile(self.gold, draws), chunk.ravel(), draws * g)
            rows.append(counts.tau_b().reshape(draws, g))
        return np.concatenate(rows)

    def _native_counts(self, metric: np.ndarray, threads: int = 1) -> PairCounts:
        """The compiled core's counts (the same integers as :func:`sorted_counts`)."""
        core = _native()
        g, n = self.groups.count, len(self.gold)
        if not hasattr(self, "_perm"):
            ids = self.groups.ids
            self._perm = np.lexsort((self.gold, ids)).astype(np.int64)
            ordered, owner = self.gold[self._perm], ids[self._perm]
            same = np.zeros(n, dtype=bool)
            same[1:] = (owner[1:] == owner[:-1]) & (ordered[1:] == ordered[:-1])
            self._new_run = (~same).astype(np.uint8)
            self._x_ties = _tie_pairs(owner, self._new_run.astype(bool), g)
        metric = np.ascontiguousarray(metric, dtype=np.float64)
        raw = core.kendall_counts(metric, len(metric), n, self._perm, self._new_run,
                                  self.groups.starts, g, threads)  # fmt: skip
        counts = np.frombuffer(raw, dtype=np.int64).reshape(len(metric), g, 3)
        sizes = self.groups.sizes.astype(np.int64)
        return PairCounts(sizes * (sizes - 1) // 2, self._x_ties, counts[..., 1], counts[..., 2],
                          counts[..., 0])  # fmt: skip


def check_groups(groups: Groups, n: int) -> None:
    """Refuse groupings that do not cover ``n`` entries in order (their offsets run from 0 to
    ``n`` and never go back): the compiled core trusts them."""
    starts = np.asarray(groups.starts)
    if starts.ndim != 1 or len(starts) < 1 or not np.issubdtype(starts.dtype, np.integer):
        raise ValueError("groups: starts must be a 1-d integer array of offsets")
    if starts[0] != 0 or starts[-1] != n or (np.diff(starts) < 0).any():
        raise ValueError(f"groups: starts must run from 0 to {n} without going back")


def nan_groups(groups: Groups, values: np.ndarray) -> np.ndarray:
    """``(rows, groups)``: whether a group of each row holds a NaN."""
    flags = np.isnan(values)
    running = np.concatenate(
        [np.zeros((len(flags), 1), dtype=np.int64), np.cumsum(flags, axis=1, dtype=np.int64)],
        axis=1,
    )
    starts = groups.starts
    return (running[:, starts[1:]] - running[:, starts[:-1]]) > 0


def _native() -> Any:
    """The compiled core, or None (imported late: meta-eval's numpy code loads without it)."""
    from bleucli.native import native

    return native


# -- pairwise accuracy ------------------------------------------------------------------------


def accuracy(
    groups: Groups, gold: np.ndarray, metric: np.ndarray, table: PairTable | None = None
) -> np.ndarray:
    """Pairwise accuracy (MTME's ``Agreement``): the share of pairs whose gold and metric
    differences have the same sign (ties agree with ties), per draw over all groups
    (``table``: the grouping's pairs, listed once for many calls)."""
    table = table or PairTable(groups)
    gold_signs = table.signs(gold)
    metric = np.atleast_2d(metric)
    if len(table.first) == 0:
        return np.full(len(metric), np.nan)
    agree = (table.signs(metric) == gold_signs[None, :]).sum(axis=1)
    return agree / len(table.first)


# -- statistics as callables over metric stacks ------------------------------------------------


class Correlation:
    """One averaged statistic: ``Correlation(kind, groups, gold)(metric_stack)`` gives the
    value for each metric vector of the stack (MTME's ``AverageCorrelation``)."""

    def __init__(self, kind: str, groups: Groups, gold: np.ndarray) -> None:
        self.kind, self.groups, self.gold = kind, groups, gold
        self._kendall = Kendall(groups, gold) if kind == "kendall" else None
        self._pairs = PairTable(groups) if kind == "accuracy" else None
        functions: dict[str, Callable[[np.ndarray], np.ndarray]] = {
            "pearson": lambda m: average(pearson(groups, gold, m)),
            "spearman": lambda m: average(spearman(groups, gold, m)),
            "kendall": lambda m: average(self._kendall(m)),  # type: ignore[misc]
            "accuracy": lambda m: accuracy(groups, gold, m, self._pairs),
        }
        if kind not in functions:
            raise ValueError(f"unknown correlation {kind!r}")
        self._function = functions[kind]

    def __call__(self, metric: np.ndarray) -> np.ndarray:
        return self._function(np.atleast_2d(metric))
