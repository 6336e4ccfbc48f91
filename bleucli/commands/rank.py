"""``--rank``: every -i system ranked per metric, with intervals, rank ranges, Holm-corrected
all-pairs tests and significance clusters (the computation is :mod:`bleucli.stats.ranking`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bleucli.errors import ConfigError
from bleucli.io import TextSource
from bleucli.metrics import output_order
from bleucli.metrics.base import Metric

if TYPE_CHECKING:
    from bleucli.commands.request import Options
    from bleucli.stats.ranking import Ranking


def rank(options: Options, metrics: dict[str, Metric], systems: list[TextSource]) -> str:
    from bleucli.commands.paired import automatic_jobs
    from bleucli.formats import rank_table

    if len(systems) < 2:
        raise ConfigError("--rank needs several systems: -i a.txt b.txt c.txt ...")
    if options.paired_bs and options.paired_ar:
        raise ConfigError("choose one of --paired-bs and --paired-ar for --rank's tests")
    if options.confidence:
        raise ConfigError("--rank already gives every system its interval; drop -ci")
    test = "ar" if options.paired_ar else "bs"
    n_samples = options.paired_ar_n if test == "ar" else options.paired_bs_n
    rankings = rank_all(
        metrics,
        systems,
        test,
        n_samples,
        options.jobs or automatic_jobs(len(systems)),
        options.short,
    )
    explicit = {s.name: s.named for s in systems}
    return rank_table(rankings, options.fmt, options.precision, test, n_samples, explicit)


def rank_all(
    metrics: dict[str, Metric],
    systems: list[TextSource],
    test: str,
    n_samples: int,
    jobs: int = 1,
    short: bool = False,
) -> list[Ranking]:
    """One ranking per metric (in the order results print: :func:`output_order`)."""
    from bleucli.progress import stage
    from bleucli.stats.bootstrap import seed_from_environment
    from bleucli.stats.paired import _system_stats
    from bleucli.stats.ranking import rank_systems

    label, seed = seed_from_environment()
    seed = seed if seed else None  # as the paired tests: seed 0 means "no seed"
    ordered = dict(output_order(metrics))
    all_rows = _system_stats(list(ordered.values()), [(s.name, s.lines) for s in systems], jobs)
    names = [s.name for s in systems]
    rankings = []
    with stage(f"ranking ({n_samples} samples)", len(ordered)) as advance:
        for metric, rows in zip(ordered.values(), all_rows):
            ranking = rank_systems(
                metric, rows, names, test, n_samples, seed, metric.higher_is_better
            )
            signature = metric.get_signature()
            signature.update(test, n_samples)
            signature.update("seed", label)
            signature.update("corr", "holm")
            ranking.signature = signature.format(short)
            rankings.append(ranking)
            advance(1)
    return rankings
