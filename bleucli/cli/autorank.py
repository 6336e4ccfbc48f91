"""``bleucli autorank``: WMT's AutoRank from published scores, from bleucli's own metrics
over system outputs, or from any segment scores (bleucli.commands.autorank does the work)."""

from __future__ import annotations

from typing import Any

import click

from bleucli.cli.options import (
    NEURAL_METRICS,
    Variadic,
    encoding_option,
    metric_options,
    metric_values,
    precision_from,
    width_option,
)
from bleucli.cli.run import configure_logging

HELP = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.command(name="autorank", context_settings=HELP)
@click.argument("refs", nargs=-1, metavar="[REFS]...")
@click.option(
    "--wmt-scores",
    cls=Variadic,
    multiple=True,
    metavar="PATH...",
    help="WMT25-layout segment-score files or folders (data/automatic_scores: one JSONL file "
    "per system, named after it), read as stored (higher is better).",
)
@click.option(
    "--system-scores",
    metavar="FILE",
    help="System scores, one system<TAB>metric<TAB>score line each, no header (WMT24's data).",
)
@click.option(
    "-l",
    "--language-pair",
    "pair",
    metavar="PAIR",
    help="The pair as the score files write it (en-ja_JP, en-sr_Cyrl_RS).",
)
@click.option(
    "-m",
    "--metrics",
    cls=Variadic,
    multiple=True,
    metavar="NAME...",
    help="The metrics to combine, in order: names in the score files (default: the recipe's "
    "choice for the pair), or with -i bleucli's metrics (chrf, comet, metricx24, ...) and "
    "--segment-scores names.",
)
@click.option(
    "--recipe",
    type=click.Choice(["wmt25", "wmt24"]),
    default="wmt25",
    show_default=True,
    help="wmt25: robust z-scores averaged, rescaled to 1..N; wmt24: 1 + N(x-best)/(worst-best) "
    "averaged.",
)
@click.option(
    "--lower-is-better",
    cls=Variadic,
    multiple=True,
    metavar="NAME...",
    help="Metrics given as error rates (besides MetricX... and TER, always turned).",
)
@click.option(
    "-i",
    "--input",
    "inputs",
    cls=Variadic,
    multiple=True,
    metavar="NAME=FILE...",
    help="System outputs to rank (one segment per line), scored here.",
)
@click.option(
    "--add",
    "added",
    cls=Variadic,
    multiple=True,
    metavar="NAME=FILE...",
    help="New outputs placed among the published systems (the pair's segments in the score "
    "files' order); the others' AutoRank moves, and the table says by how much.",
)
@click.option("--source", metavar="FILE", help="The source sentences (neural metrics).")
@click.option(
    "--segment-scores",
    multiple=True,
    metavar="NAME=FILE,...",
    help="A metric's segment scores from elsewhere (LLM judges, ...): one file per -i (or "
    "--add) system, in order; repeatable.",
)
@click.option("--docids", metavar="FILE", help="Document id of every line, for the bootstrap (-i).")
@click.option(
    "-ci",
    "--confidence",
    is_flag=True,
    help="Rank ranges and significance clusters from a bootstrap over documents.",
)
@click.option(
    "-cin",
    "--confidence-n",
    type=int,
    default=None,
    metavar="N",
    help="Resamples for -ci (default: enough for Holm-corrected clusters: 40 x pairs, >= 1000).",
)
@click.option(
    "-j", "--jobs", type=int, default=1, show_default=True, help="Threads for the bootstrap."
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "latex", "tsv", "html"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@width_option
@encoding_option
@click.option("-q", "--quiet", is_flag=True, help="No notices on stderr.")
@metric_options(("bleu", "chrf", "ter", *NEURAL_METRICS))
def autorank_command(
    refs: tuple[str, ...],
    wmt_scores: tuple[str, ...],
    system_scores: str | None,
    pair: str | None,
    metrics: tuple[str, ...],
    recipe: str,
    lower_is_better: tuple[str, ...],
    inputs: tuple[str, ...],
    added: tuple[str, ...],
    source: str | None,
    segment_scores: tuple[str, ...],
    docids: str | None,
    confidence: bool,
    confidence_n: int | None,
    jobs: int,
    fmt: str,
    width: list[tuple[str | None, int]],
    encoding: str,
    quiet: bool,
    **params: Any,
) -> None:
    """WMT's AutoRank: several metrics combined into one rank-like number per system (1 is
    the best), as WMT25 (default) or WMT24 computed it, from their published scores, from
    bleucli's own metrics or from any segment scores; -ci adds rank ranges and clusters.

    \b
      bleucli autorank --wmt-scores data/automatic_scores -l en-ja_JP
      bleucli autorank ref.de -i A=a.de B=b.de C=c.de -m chrf ter -cw 2
    """
    from bleucli.commands.autorank import AutorankRequest, run
    from bleucli.commands.request import check_range

    configure_logging(quiet)
    check_range("-j/--jobs", jobs, 1, 1024)
    if confidence_n is not None:
        check_range("-cin/--confidence-n", confidence_n, 1, 1_000_000)
    decimals, per_metric = precision_from(width)
    request = AutorankRequest(
        refs=refs,
        inputs=inputs,
        added=added,
        source=source,
        wmt_scores=wmt_scores,
        system_scores=system_scores,
        pair=pair,
        metrics=metrics,
        metric_options=metric_values(params),
        segment_scores=segment_scores,
        docids=docids,
        recipe=recipe,
        lower_is_better=lower_is_better,
        confidence=confidence,
        confidence_n=confidence_n,
        jobs=jobs,
        fmt=fmt,
        width=decimals,
        per_metric=per_metric,
        encoding=encoding,
    )
    click.echo(run(request))
