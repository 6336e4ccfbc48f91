"""Paired significance tests between systems: bootstrap resampling and approximate
randomisation, with SacreBLEU's draws (numpy ``default_rng``, same order, float32 sums for
the bootstrap), so a fixed seed gives SacreBLEU's p-values.

Each system is compared with the first one (the baseline) on per-sentence statistics
extracted once; resamples never re-tokenise anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bleucli.errors import ConfigError
from bleucli.metrics.base import Metric, sum_rows
from bleucli.stats.bootstrap import Resamples, draw_resamples, seed_from_environment

DEFAULT_SAMPLES = {"bs": 1000, "ar": 10000}
#: Resampled sentences (comparisons x sentences x samples) from which the tests themselves
#: run in parallel with ``-j``; below it a pool costs more than it saves (measured: 6
#: comparisons of 2,000 sentences x 1,000 samples take 0.41 s in one process, 0.50 s in two).
PARALLEL_TESTS_WORK = 50_000_000


@dataclass
class PairedResult:
    """A system's score under one metric, with its p-value against the baseline and, for
    the bootstrap test, the resampled mean and 95% half-interval."""

    score: float
    p_value: float | None = None
    mean: float | None = None
    ci: float | None = None


def estimate_ci(scores) -> tuple[float, float]:
    """Mean and half-width of the 2.5%..97.5% range of resampled scores (numpy, as SacreBLEU)."""
    import numpy as np

    ordered = np.sort(scores)
    lower = len(ordered) // 40
    upper = len(ordered) - lower - 1
    return ordered.mean(), 0.5 * (ordered[upper] - ordered[lower])


def p_value(differences, observed: float) -> float:
    """Share of resampled differences above the observed one, with the +1 correction."""
    import numpy as np

    return (np.sum(differences > observed).item() + 1) / (len(differences) + 1)


def paired_bootstrap(
    metric: Metric,
    baseline_rows,
    system_rows,
    n_samples: int,
    seed: int | None,
    resamples: Resamples | None = None,
    system_scores: Any = None,
) -> PairedResult:
    """Moses' bootstrap-hypothesis-difference-significance, as SacreBLEU runs it: every
    comparison draws from a generator seeded alike, so with a fixed seed all of them share
    one set of ``resamples`` (passed in to reuse its draw counts; ``system_scores``: the
    system's scores in those resamples, when the caller has them already)."""
    import numpy as np

    if resamples is None:
        resamples = draw_resamples(len(system_rows), n_samples, seed)
    system_score = metric.score_from_values(sum_rows(system_rows)).score
    baseline_score = metric.score_from_values(sum_rows(baseline_rows)).score
    scores_baseline = resamples.scores(metric, baseline_rows)
    scores_system = (
        resamples.scores(metric, system_rows) if system_scores is None else system_scores
    )
    mean, ci = estimate_ci(scores_system)
    differences = np.abs(scores_system - scores_baseline)
    centred = differences - differences.mean()
    return PairedResult(
        system_score, p_value(centred, abs(baseline_score - system_score)), mean, ci
    )


def paired_randomization(
    metric: Metric,
    baseline_rows,
    system_rows,
    n_samples: int,
    seed: int | None,
    resamples: None = None,
) -> PairedResult:
    """Approximate randomisation: swap each sentence's outputs between the two systems."""
    import numpy as np

    rng = np.random.default_rng(seed)
    pick = rng.integers(2, size=(n_samples, len(system_rows)), dtype=bool)
    baseline, system = np.array(baseline_rows), np.array(system_rows)
    system_score = metric.score_from_values(sum_rows(system_rows)).score
    baseline_score = metric.score_from_values(sum_rows(baseline_rows)).score
    shuffled_a = pick @ baseline + ~pick @ system
    shuffled_b = ~pick @ baseline + pick @ system
    differences = np.abs(metric.resample_scores(shuffled_a) - metric.resample_scores(shuffled_b))
    return PairedResult(system_score, p_value(differences, abs(baseline_score - system_score)))


TESTS: dict[str, Callable[..., PairedResult]] = {"bs": paired_bootstrap, "ar": paired_randomization}


#: What forked workers read: set by run_paired just before the pool starts.
_SHARED: dict[str, Any] = {}


def _test_one(task: tuple[str, int]) -> PairedResult:
    name, k = task
    metric, rows = _SHARED["metrics"][name], _SHARED["rows"][name]
    return TESTS[_SHARED["test"]](
        metric, rows[0], rows[k], _SHARED["n"], _SHARED["seed"], _SHARED["resamples"]
    )


def run_paired(
    test: str,
    metrics: dict[str, Metric],
    systems: list[tuple[str, list[str]]],
    n_samples: int = 0,
    jobs: int = 1,
):
    """Results per metric name (display name) per system, and the signatures to print.

    With ``jobs > 1`` the (metric, system) comparisons run in forked worker processes; each
    comparison draws from its own generator seeded alike, so the results do not depend on
    ``jobs``.
    """
    import numpy as np

    if test not in TESTS:
        raise ConfigError(f"unknown paired test {test!r}")
    if len(systems) < 2:
        raise ConfigError("paired tests need at least two systems (-i baseline system ...)")
    n_samples = n_samples or DEFAULT_SAMPLES[test]
    label, seed = seed_from_environment()
    seed = seed if seed else None  # SacreBLEU treats seed 0 as "no seed"
    by_name: dict[str, Metric] = {}
    rows: dict[str, list] = {}
    results: dict[str, list[PairedResult]] = {}
    signatures = {}
    shared = None  # with a fixed seed every comparison draws the same resamples
    if test == "bs" and seed is not None:
        shared = draw_resamples(len(systems[0][1]), n_samples, seed)
    all_rows = _system_stats(list(metrics.values()), systems, jobs)
    for metric, per_system in zip(metrics.values(), all_rows):
        baseline = metric.score_from_values(sum_rows(per_system[0]))
        base_result = PairedResult(baseline.score)
        if test == "bs":
            from bleucli.stats.bootstrap import bootstrap_scores

            _, samples = bootstrap_scores(per_system[0], metric, n_samples, shared)
            base_result.mean, base_result.ci = estimate_ci(np.array([s.score for s in samples]))
        by_name[baseline.name], rows[baseline.name] = metric, per_system
        results[baseline.name] = [base_result]
        signature = metric.get_signature()
        signature.update("seed", label)
        signature.update(test, n_samples)
        signatures[baseline.name] = signature
    tasks = [(name, k) for name in results for k in range(1, len(systems))]
    _SHARED.update(metrics=by_name, rows=rows, test=test, n=n_samples, seed=seed, resamples=shared)
    # a worker pool costs a few tenths of a second: worth it only for heavy resampling
    test_jobs = jobs if len(tasks) * len(systems[0][1]) * n_samples >= PARALLEL_TESTS_WORK else 1
    from bleucli.progress import stage

    try:
        kind = "paired bootstrap" if test == "bs" else "approximate randomisation"
        with stage(f"{kind} ({n_samples} samples)", len(tasks)) as advance:
            outcomes = _map(_test_one, tasks, test_jobs, advance)
    finally:
        _SHARED.clear()
    for (name, _), outcome in zip(tasks, outcomes):
        results[name].append(outcome)
    return results, signatures


def _stats_one(task: tuple[int, int | None]) -> list:
    """Statistics of one (metric, system) pair, or of every system (``None``)."""
    m, k = task
    metric, systems = _SHARED["metric_list"][m], _SHARED["systems"]
    if k is None:
        return metric.per_sentence_stats_many([hyps for _, hyps in systems])
    return [metric.per_sentence_stats(systems[k][1], None)]


def _system_stats(
    metrics: list[Metric], systems: list[tuple[str, list[str]]], jobs: int
) -> list[list]:
    """Per metric, per system, the per-sentence statistics. Metrics whose engine batches
    systems (their references are processed once) are one task for all systems; with
    ``jobs > 1`` the others (TER) are one task per system, run first, in parallel."""
    tasks: list[tuple[int, int | None]] = []
    for m, metric in enumerate(metrics):
        if not metric.batches_systems and jobs > 1:
            tasks += [(m, k) for k in range(len(systems))]
        else:
            tasks.append((m, None))
    tasks.sort(key=lambda task: task[1] is None)
    _SHARED.update(metric_list=metrics, systems=systems)
    from bleucli.progress import stage

    try:
        with stage("sentence statistics", len(tasks)) as advance:
            done = dict(zip(tasks, _map(_stats_one, tasks, jobs, advance)))
    finally:
        _SHARED.clear()
    rows: list[list] = []
    for m in range(len(metrics)):
        if (m, None) in done:
            rows.append(done[m, None])
        else:
            rows.append([done[m, k][0] for k in range(len(systems))])
    return rows


def _map(function, tasks: list, jobs: int, advance=None) -> list:
    """``function`` over ``tasks``, in forked workers when ``jobs > 1`` (they read the
    module's ``_SHARED`` inherited at fork time); results in task order. ``advance(1)`` is
    called as each task completes (a progress bar)."""
    results = []
    if jobs > 1 and len(tasks) > 1 and _can_fork():
        from bleucli.workers import pool

        with pool(min(jobs, len(tasks)), method="fork") as workers:
            for result in workers.imap(function, tasks, chunksize=1):
                results.append(result)
                if advance is not None:
                    advance(1)
        return results
    for task in tasks:
        results.append(function(task))
        if advance is not None:
            advance(1)
    return results


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()
