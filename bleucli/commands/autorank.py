"""``bleucli autorank``: the request the command line builds, and the run: read the
published scores or score the outputs, pick the metrics, add new systems, combine, render."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bleucli.errors import ConfigError, UsageError


@dataclass
class AutorankRequest:
    """Every option of ``bleucli autorank`` as plain values."""

    refs: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    source: str | None = None
    wmt_scores: tuple[str, ...] = ()
    system_scores: str | None = None
    pair: str | None = None
    metrics: tuple[str, ...] = ()
    metric_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    segment_scores: tuple[str, ...] = ()
    docids: str | None = None
    recipe: str = "wmt25"
    lower_is_better: tuple[str, ...] = ()
    confidence: bool = False
    confidence_n: int | None = None
    jobs: int = 1
    fmt: str = "text"
    width: int = 1
    per_metric: dict[str, int] = field(default_factory=dict)
    encoding: str = "utf-8"


def _systems(specs: tuple[str, ...], flag: str, encoding: str) -> list[Any]:
    import os

    from bleucli.autoranking.build import System
    from bleucli.io import read_file, split_named

    systems: list[System] = []
    for spec in specs:
        name, path = split_named(spec)
        source = read_file(path, encoding)
        label = name or os.path.splitext(os.path.basename(path))[0]
        if any(s.name == label for s in systems):
            raise UsageError(f"{flag} {spec}: a second system named {label}; name them NAME=FILE")
        systems.append(System(label, source.lines, path))
    return systems


def _segment_specs(values: tuple[str, ...]) -> dict[str, list[str]]:
    from bleucli.metrics.segment import parse_option

    found: dict[str, list[str]] = {}
    for value in values:
        name, files = parse_option(value)
        if name in found:
            raise UsageError(f"--segment-scores {name}: given twice")
        found[name] = files
    return found


def _own_or_external(
    request: AutorankRequest, segment: dict[str, list[str]]
) -> tuple[list[Any], dict[str, list[str]]]:
    """-m names split into bleucli's metrics (with their options) and segment-score names."""
    from bleucli.autoranking.build import Own
    from bleucli.metrics import available_metrics

    names = list(request.metrics) or list(segment)
    if not names:
        raise UsageError(
            "name the metrics to combine: -m with bleucli's metrics (chrf, comet, metricx24, ...) "
            "and/or --segment-scores NAME=FILE,... for scores from elsewhere"
        )
    own = []
    for name in names:
        if name in segment:
            continue
        if name.lower() not in available_metrics():
            raise UsageError(
                f"-m {name}: neither a bleucli metric ({', '.join(available_metrics())}) nor a "
                f"--segment-scores name"
            )
        own.append(Own(name.lower(), dict(request.metric_options.get(name.lower(), {}))))
    unused = [name for name in segment if name not in names]
    if unused:
        raise UsageError(
            f"--segment-scores {unused[0]}: not among the metrics to combine (-m "
            f"{' '.join(names)}); add it to -m or leave it out"
        )
    external = {name: segment[name] for name in names if name in segment}
    return own, external


def run(request: AutorankRequest) -> str:
    from bleucli.autoranking.build import add_systems, outputs_table, published
    from bleucli.autoranking.compute import autorank, enough_resamples
    from bleucli.autoranking.recipes import recipe
    from bleucli.autoranking.render import render
    from bleucli.autoranking.wmt import default_metrics
    from bleucli.io import read_file
    from bleucli.stats.bootstrap import seed_from_environment

    method = recipe(request.recipe)
    segment = _segment_specs(request.segment_scores)
    have_published = bool(request.wmt_scores or request.system_scores)
    if have_published and request.inputs:
        raise UsageError(
            "-i ranks outputs of your own; to place new outputs among published scores, "
            "give them with --add NAME=FILE"
        )
    if request.added and not have_published:
        raise UsageError(
            "--add places outputs among published scores (--wmt-scores or --system-scores); "
            "rank outputs of your own with -i"
        )
    if not have_published and not request.inputs:
        raise UsageError(
            "give the scores to combine: --wmt-scores FILES/FOLDER -l PAIR, --system-scores "
            "FILE, or outputs with -i NAME=FILE and their references"
        )
    references = [read_file(path, request.encoding).lines for path in request.refs]
    sources = read_file(request.source, request.encoding).lines if request.source else None
    added: list[str] = []
    if have_published:
        table = published(request.wmt_scores, request.system_scores, request.pair)
        assert table is not None
        chosen = list(request.metrics) or default_metrics(method.name, table.pair, table.names)
        table = table.select(chosen)
        if request.added:
            systems = _systems(request.added, "--add", request.encoding)
            unknown = [name for name in segment if name not in chosen]
            if unknown:
                raise UsageError(
                    f"--segment-scores {unknown[0]}: not one of the metrics combined "
                    f"({', '.join(chosen)})"
                )
            table = add_systems(table, systems, references, sources, segment)
            added = [s.name for s in systems]
        elif segment:
            raise UsageError("--segment-scores with published scores are for --add systems")
    else:
        systems = _systems(request.inputs, "-i", request.encoding)
        own, external = _own_or_external(request, segment)
        documents = read_file(request.docids, request.encoding).lines if request.docids else None
        table = outputs_table(systems, references, sources, own, external, documents)
    samples = 0
    seed_text, seed = seed_from_environment()
    if request.confidence:
        samples = request.confidence_n or enough_resamples(len(table.systems))
    elif request.confidence_n is not None:
        raise UsageError("-cin/--confidence-n sets the resamples of --confidence; add -ci")
    result = autorank(table, method.name, request.lower_is_better, samples, seed, request.jobs,
                      added)  # fmt: skip
    if samples:
        result.seed = seed_text
    if not result.metrics:
        raise ConfigError("no metric to combine")
    return render(result, request.fmt, request.width, request.per_metric)
