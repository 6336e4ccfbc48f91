"""The statistics against scipy.stats and against plain re-statements of their definitions,
on generated matrices full of ties and missing ratings; the compiled Kendall counts against
the numpy specification; significance reproducible for any thread count."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

from bleucli.metaeval import significance as sig
from bleucli.metaeval import stats, ties
from bleucli.metaeval.groups import GROUPINGS, grouping
from bleucli.native import native


@st.composite
def rated_matrices(draw, max_systems: int = 6, max_items: int = 30):
    """(gold with NaN for unrated, metric) with few distinct values: many ties."""
    n_sys = draw(st.integers(1, max_systems))
    n_items = draw(st.integers(1, max_items))
    levels = draw(st.sampled_from([2, 3, 5, 1000]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, levels, (n_sys, n_items)).astype(float)
    gold[rng.random((n_sys, n_items)) < draw(st.sampled_from([0.0, 0.2, 0.6]))] = np.nan
    metric = rng.integers(0, levels, (n_sys, n_items)) / 7.0
    return gold, metric


def _per_group(groups, gold, metric):
    for g in range(groups.count):
        lo, hi = groups.starts[g], groups.starts[g + 1]
        yield gold[lo:hi], metric[lo:hi]


def _same(a: float, b: float, tol: float = 1e-12) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


@given(rated_matrices(), st.sampled_from(GROUPINGS))
def test_grouped_correlations_equal_scipy(data, by) -> None:
    gold_matrix, metric_matrix = data
    groups = grouping(~np.isnan(gold_matrix), by)
    gold, metric = groups.take(gold_matrix), groups.take(metric_matrix)
    pearson = stats.pearson(groups, gold, metric)[0]
    spearman = stats.spearman(groups, gold, metric)[0]
    kendall = stats.Kendall(groups, gold)(metric)[0]
    for g, (x, y) in enumerate(_per_group(groups, gold, metric)):
        constant = (x == x[0]).all() or (y == y[0]).all()
        want_p = math.nan if constant else scipy.stats.pearsonr(x, y).statistic
        want_s = math.nan if constant else scipy.stats.spearmanr(x, y).statistic
        assert _same(pearson[g], want_p, 1e-9)
        assert _same(spearman[g], want_s, 1e-9)
        assert _same(kendall[g], scipy.stats.kendalltau(x, y).statistic, 0.0)  # exact


@given(rated_matrices())
def test_accuracy_is_agreement_of_signs(data) -> None:
    gold_matrix, metric_matrix = data
    groups = grouping(~np.isnan(gold_matrix), "none")
    gold, metric = groups.take(gold_matrix), groups.take(metric_matrix)
    pairs = list(itertools.combinations(range(len(gold)), 2))
    got = stats.accuracy(groups, gold, metric)[0]
    if not pairs:
        assert math.isnan(got)
        return
    agree = sum(np.sign(gold[i] - gold[j]) == np.sign(metric[i] - metric[j]) for i, j in pairs)
    assert got == pytest.approx(agree / len(pairs), abs=1e-15)


def _acc23_naive(groups, gold, metric, epsilon):
    """acc23 at one epsilon, pair by pair (Deutsch et al. 2023)."""
    values = []
    for x, y in _per_group(groups, gold, metric):
        right = total = 0
        for i, j in itertools.combinations(range(len(x)), 2):
            human = np.sign(x[i] - x[j])
            machine = 0 if abs(y[i] - y[j]) <= epsilon else np.sign(y[i] - y[j])
            right += human == machine
            total += 1
        values.append(right / total)
    return sum(values) / len(values)


@given(rated_matrices(max_items=12), st.sampled_from(GROUPINGS))
def test_tie_calibration_is_the_best_threshold(data, by) -> None:
    gold_matrix, metric_matrix = data
    groups = grouping(~np.isnan(gold_matrix), by)
    if groups.count == 0:
        return
    gold, metric = groups.take(gold_matrix), groups.take(metric_matrix)
    got = ties.calibrate(groups, gold, metric)
    candidates = sorted(
        {0.0}
        | {
            abs(a - b)
            for x, y in _per_group(groups, gold, metric)
            for a, b in itertools.combinations(y, 2)
        }
    )
    accuracies = [_acc23_naive(groups, gold, metric, e) for e in candidates]
    best = max(accuracies)
    first = next(e for e, a in zip(candidates, accuracies) if a >= best - 1e-12)
    assert got.accuracy == pytest.approx(best, abs=1e-12)
    assert got.epsilon == first
    assert list(got.thresholds) == candidates


@pytest.mark.skipif(native is None, reason="the compiled core is not built")
@given(rated_matrices(max_items=60), st.sampled_from(GROUPINGS), st.integers(1, 4))
def test_compiled_kendall_counts_equal_the_specification(data, by, threads) -> None:
    gold_matrix, metric_matrix = data
    groups = grouping(~np.isnan(gold_matrix), by)
    if groups.count == 0:
        return
    gold = groups.take(gold_matrix)
    rng = np.random.default_rng(len(gold))
    draws = np.vstack([groups.take(metric_matrix), rng.integers(0, 4, (5, len(gold))) / 3.0])
    kendall = stats.Kendall(groups, gold)
    compiled = kendall._native_counts(draws, threads)
    ids = groups.ids
    g = groups.count
    group = (np.arange(len(draws))[:, None] * g + ids[None, :]).ravel()
    spec = stats.sorted_counts(group, np.tile(gold, len(draws)), draws.ravel(), len(draws) * g)
    for name in ("x_ties", "y_ties", "both_ties", "discordant"):
        got = np.broadcast_to(getattr(compiled, name), (len(draws), g)).ravel()
        assert (got == getattr(spec, name)).all(), name


@pytest.mark.skipif(native is None, reason="the compiled core is not built")
def test_compiled_kendall_refuses_bad_shapes() -> None:
    perm = np.arange(3, dtype=np.int64)
    runs = np.ones(3, dtype=np.uint8)
    starts = np.array([0, 3], dtype=np.int64)
    metric = np.zeros(3)
    with pytest.raises(ValueError):
        native.kendall_counts(metric, 2, 3, perm, runs, starts, 1, 1)  # too few values
    with pytest.raises(ValueError):
        native.kendall_counts(metric, 1, 3, np.array([0, 1, 7]), runs, starts, 1, 1)
    with pytest.raises(ValueError):
        native.kendall_counts(metric, 1, 3, perm, runs, np.array([0, 2], dtype=np.int64), 1, 1)
    with pytest.raises(ValueError):
        native.kendall_counts(metric, -1, 3, perm, runs, starts, 1, 1)
    # NaN scores sort somewhere, but never out of bounds
    raw = native.kendall_counts(np.array([np.nan, 1.0, np.nan]), 1, 3, perm, runs, starts, 1, 3)
    assert len(raw) == 24


def _two_metrics(seed: int = 0, noise: tuple[float, float] = (0.5, 1.5)):
    rng = np.random.default_rng(seed)
    gold_matrix = rng.normal(size=(6, 40))
    gold_matrix[rng.random(gold_matrix.shape) < 0.2] = np.nan
    groups = grouping(~np.isnan(gold_matrix), "item")
    gold = groups.take(gold_matrix)
    better = gold + rng.normal(scale=noise[0], size=len(gold))
    worse = gold + rng.normal(scale=noise[1], size=len(gold))
    return groups, gold, better, worse


def test_perm_both_is_seeded_and_sees_a_real_difference() -> None:
    groups, gold, better, worse = _two_metrics()
    statistic = stats.Correlation("pearson", groups, gold)
    settings = sig.TestSettings(resamples=500)
    p, used = sig.perm_both(statistic, better, worse, settings, sig.pair_stream(7, "s", "a", "b"))
    assert used == 500 and p < 0.05
    groups, gold, close, closer = _two_metrics(noise=(1.0, 1.05))
    statistic = stats.Correlation("pearson", groups, gold)
    run = [
        sig.perm_both(statistic, close, closer, settings, sig.pair_stream(7, "s", "a", "b"))
        for _ in range(2)
    ]
    assert run[0] == run[1] and 0.05 < run[0][0] < 0.95
    other = sig.perm_both(statistic, close, closer, settings, sig.pair_stream(8, "s", "a", "b"))
    assert other != run[0]
    # a metric against itself: every draw ties the observed difference of zero
    same = sig.perm_both(statistic, close, close, settings, sig.pair_stream(7, "s", "a", "a"))
    assert same == (1.0, 500)


def test_early_stopping_stops_at_a_block_boundary() -> None:
    groups, gold, better, worse = _two_metrics()
    statistic = stats.Correlation("pearson", groups, gold)
    settings = sig.TestSettings(resamples=1000, block_size=100)
    p, used = sig.perm_both(statistic, better, worse, settings, sig.pair_stream(1, "s", "a", "b"))
    assert used == 100 and p < 0.02


def test_comparisons_are_the_same_for_any_thread_count() -> None:
    groups, gold, better, worse = _two_metrics()
    rng = np.random.default_rng(3)
    vectors = {"A": better, "B": worse, "C": gold + rng.normal(size=len(gold)), "D": worse[::-1]}
    statistic = stats.Correlation("kendall", groups, gold)

    def test(a, b, draws):
        return sig.perm_both(statistic, vectors[a], vectors[b], settings, draws)

    results = []
    for threads in (1, 2, 4):
        settings = sig.TestSettings(resamples=200, threads=threads)
        comparison = sig.compare("seg-kendall-item", list(vectors), test, settings)
        results.append((comparison.p_values.tolist(), comparison.clusters))
    assert results[0] == results[1] == results[2]


def test_pairs_test_counts_swapped_verdicts() -> None:
    groups, gold, better, worse = _two_metrics()
    outcomes = ties.pair_outcomes(groups, gold)
    right_better = outcomes.right(better, 0.0)
    right_worse = outcomes.right(worse, 0.0)
    settings = sig.TestSettings(resamples=300)
    p, used = sig.pairs_test(
        outcomes, right_better, right_worse, settings, sig.pair_stream(1, "a", "b", "c")
    )
    assert used == 300 and p < 0.05
    p_same, _ = sig.pairs_test(
        outcomes, right_better, right_better, settings, sig.pair_stream(1, "a", "b", "c")
    )
    assert p_same == 1.0


def test_zscore_matches_scipy() -> None:
    values = np.array([1.0, 2.0, 2.0, 7.5, -3.0])
    assert sig.zscore(values) == pytest.approx(scipy.stats.zscore(values), abs=1e-15)


def test_package_example_runs() -> None:
    """The example in bleucli.metaeval's docstring (checked against scipy by hand: Pearson
    of the system means, Kendall's tau-b per item) runs as written."""
    import doctest

    import bleucli.metaeval

    failures, tried = doctest.testmod(bleucli.metaeval)
    assert tried >= 6 and failures == 0


def test_library_refuses_malformed_tables() -> None:
    from bleucli.errors import InputError
    from bleucli.metaeval import MetaEvalData, MetricScores

    human = np.array([[1.0, 2.0], [2.0, np.nan]])
    good = MetricScores("M", seg=np.array([[0.1, 0.2], [0.3, np.nan]]), sys=np.array([0.1, 0.2]))
    MetaEvalData(["A", "B"], 2, "h", "", human, None, {"M": good})  # NaN where unrated is fine
    cases = [
        (MetricScores("M", seg=np.zeros((2, 3))), "shape (2, 3), expected (2, 2)"),
        (MetricScores("M", seg=np.array([[0.1, np.nan], [0.3, 0.0]])), "system 'A', segment 2"),
        (MetricScores("M", sys=np.array([0.1, np.inf])), "one finite system score per system"),
    ]
    for metric, message in cases:
        with pytest.raises(InputError, match=re.escape(message)):
            MetaEvalData(["A", "B"], 2, "h", "", human, None, {"M": metric})
    with pytest.raises(InputError, match="distinct"):
        MetaEvalData(["A", "A"], 2, "h", "", human, None, {})
