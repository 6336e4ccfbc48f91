"""``--paired-bs``/``--paired-ar``: every system against the first, as a table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bleucli.errors import ConfigError
from bleucli.io import TextSource
from bleucli.metrics import output_order
from bleucli.metrics.base import Metric

if TYPE_CHECKING:
    from bleucli.commands.request import Options


def paired(options: Options, metrics: dict[str, Metric], systems: list[TextSource]) -> str:
    """``--paired-bs`` / ``--paired-ar``: every system against the first one."""
    from bleucli.formats import paired_table
    from bleucli.stats.paired import run_paired

    if options.paired_bs and options.paired_ar:
        raise ConfigError("choose one of --paired-bs and --paired-ar")
    if len(systems) < 2:
        raise ConfigError("paired tests need several systems: -i baseline.txt system.txt ...")
    test = "bs" if options.paired_bs else "ar"
    n_samples = options.paired_bs_n if test == "bs" else options.paired_ar_n
    results, signatures = run_paired(
        test,
        dict(output_order(metrics)),
        [(s.name, s.lines) for s in systems],
        n_samples,
        jobs=options.jobs or automatic_jobs(len(systems)),
    )
    return paired_table(
        [s.name for s in systems],
        results,
        {k: v.format(options.short) for k, v in signatures.items()},
        options.fmt,
        options.precision,
        test,
        n_samples,
        options.json_layout,
        [s.named for s in systems],
    )


def automatic_jobs(n_systems: int) -> int:
    """``-j 0``, as SacreBLEU decides it: a worker per system, but no more than half the
    CPUs (hyper-threads do not count), and at least one."""
    import os

    return max(1, min((os.cpu_count() or 1) // 2, n_systems))
