"""``bleucli mbr``: minimum Bayes risk selection per line."""

from __future__ import annotations

from typing import Any

import click

from bleucli.cli.options import (
    Variadic,
    deprecated,
    encoding_option,
    metric_options,
    metric_values,
)
from bleucli.cli.run import (
    configure_logging,
)


@click.command(name="mbr", context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-i",
    "--input",
    "inputs",
    cls=Variadic,
    multiple=True,
    metavar="FILE...",
    help="Line-aligned outputs of several systems: each line's candidates (-: stdin; "
    "NAME=FILE names one).",
)
@click.option(
    "--samples",
    metavar="FILE.jsonl",
    help="Samples per source: a JSON list a line, or objects with --field (-: stdin).",
)
@click.option(
    "--field",
    "samples_field",
    default="samples",
    show_default=True,
    help="The samples' field in --samples objects.",
)
@click.option(
    "--pseudo-field",
    metavar="NAME",
    help="A field of --samples objects holding pseudo-references (default: the other samples).",
)
@click.option(
    "-m",
    "--metric",
    type=click.Choice(
        ["chrf", "bleu", "ter", "comet", "xcomet", "metricx24"], case_sensitive=False
    ),
    default="chrf",
    show_default=True,
    help="Utility: sentence chrF, BLEU, TER, or a neural metric with --source (TER and "
    "MetricX pick the lowest).",
)
@click.option(
    "--source",
    metavar="FILE",
    help="Source sentences, one per candidate group (neural metrics read them).",
)
@metric_options(
    ("bleu", "chrf", "ter", "comet", "xcomet", "metricx24"),  # what its -m takes
    only={
        "bleu": ("tokenize", "lowercase", "smooth_method", "smooth_value"),
        **{
            m: ("model", "batch_size", "precision", "device")
            for m in ("comet", "xcomet", "metricx24")
        },
    },
)
@click.option(
    "-j",
    "--jobs",
    "threads",
    type=int,
    default=0,
    show_default=True,
    help="Parallel workers (threads here; 0: one per CPU); any number gives the same choices.",
)
@click.option("--threads", "threads_deprecated", type=int, hidden=True,
              callback=lambda c, p, v: deprecated(v, "--threads", "-j/--jobs"))  # fmt: skip
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: the chosen line per source; json: choices and utilities.",
)
@encoding_option
@click.option("-q", "--quiet", is_flag=True, help="No signature line on stderr.")
def mbr_command(
    inputs: tuple[str, ...],
    samples: str | None,
    samples_field: str,
    pseudo_field: str | None,
    metric: str,
    source: str | None,
    threads: int,
    threads_deprecated: int | None,
    fmt: str,
    encoding: str,
    quiet: bool,
    **params: Any,
) -> None:
    """Minimum Bayes risk selection: for every source, the candidate with the highest
    mean sentence score against the other candidates (or the pseudo-references). Prints
    the chosen line per source; the signature (metric and options) goes to stderr.

    \b
      bleucli mbr -i sysA.de sysB.de sysC.de > combined.de      # system combination
      bleucli mbr --samples samples.jsonl -m bleu -f json        # sampled candidates
    """
    from bleucli.commands.mbr import MBRRequest, run
    from bleucli.commands.request import check_range
    from bleucli.metrics import metric_class

    metric = metric.lower()
    threads = threads if threads_deprecated is None else threads_deprecated
    options = metric_values(params, (metric,))[metric]
    for option in metric_class(metric).OPTIONS:  # each option's own declaration
        if option.keyword in options:
            option.check(options[option.keyword])
    check_range("-j/--jobs", threads, 0, 1024)
    configure_logging(quiet)
    click.echo(
        run(
            MBRRequest(
                list(inputs),
                samples,
                samples_field,
                pseudo_field,
                metric,
                options,
                threads,
                fmt,
                encoding,
                source,
            )
        )
    )
