"""``bleucli analyze`` and ``bleucli plot``: where systems differ, and figures."""

from __future__ import annotations

from typing import Any

import click

from bleucli.cli.options import (
    NEURAL_METRICS,
    Variadic,
    deprecated,
    encoding_option,
    metric_options,
    metric_values,
    precision_from,
    width_option,
)
from bleucli.cli.run import (
    configure_logging,
)


def _analysis_options(function):
    """The loading options ``analyze`` and ``plot`` share with the scoring command (the
    neural metrics' own options listed last in the help: common options first)."""
    function = metric_options(NEURAL_METRICS)(function)
    for decorator in reversed(
        [
            click.argument("refs", nargs=-1, metavar="[REFS]..."),
            click.option(
                "-i",
                "--input",
                "inputs",
                cls=Variadic,
                multiple=True,
                metavar="FILE",
                help="System outputs (repeat, or several after one -i); the first is "
                "the baseline. NAME=FILE (or NAME:FILE) names a system.",
            ),
            click.option(
                "-m",
                "--metrics",
                cls=Variadic,
                multiple=True,
                metavar="NAME",
                help="Metrics: bleu, chrf, ter, or a neural metric (comet, cometkiwi, xcomet, "
                "metricx24, metricx24-qe: give the source) (default: bleu chrf).",
            ),
            click.option("-t", "--test-set", help="Named test set instead of reference files."),
            click.option("-l", "--language-pair", metavar="SRC-TRG", help="Its language pair."),
            click.option(
                "--testsets-file",
                "testsets_files",
                multiple=True,
                metavar="FILE",
                help="Extra test-set registry (JSON); repeatable.",
            ),
            click.option("--offline", is_flag=True, help="Never use the network."),
            # BLEU's tokenizer and case (the word analyses split and fold words as BLEU
            # does) and chrF's word order, as the metrics declare them
            metric_options(
                ("bleu", "chrf"), {"bleu": ("tokenize", "lowercase"), "chrf": ("word_order",)}
            ),  # fmt: skip
            click.option(
                "--segment-scores",
                multiple=True,
                metavar="NAME=FILE,...",
                help="External segment scores as a metric (see bleucli --help).",
            ),
            click.option(
                "--docids", metavar="FILE|testset", help="Document ids: per-document scores."
            ),
            click.option(
                "--resegment",
                is_flag=True,
                help="Realign outputs whose lines do not match the references "
                "(see bleucli --help).",
            ),
            click.option(
                "--resegment-tokenize",
                type=click.Choice(["none", "13a", "char"]),
                help="Alignment tokenisation (default by target language).",
            ),
            click.option(
                "-nr",
                "--num-refs",
                type=int,
                default=1,
                show_default=True,
                help="Tab-separated references per line.",
            ),
            encoding_option,
            width_option,
            click.option("-q", "--quiet", is_flag=True, help="No progress bar."),
        ]
    ):
        function = decorator(function)
    return function


def _analysis_request(params: dict[str, Any], fmt: str, chosen: str | None = None) -> Any:
    """``analyze``'s and ``plot``'s request; ``chosen``: the metric of their examples or
    figure (``--example-metric``, ``--metric``), computed too when ``-m`` did not ask for it."""
    from bleucli import progress
    from bleucli.analysis.compute import metric_key
    from bleucli.commands.request import Options

    metrics = tuple(m.lower() for m in params["metrics"]) or ("bleu", "chrf")
    key = metric_key(chosen) if chosen else None
    if key is not None and key not in metrics:
        metrics = (*metrics, key)
    explicit = {"width"} if params["width"] else set()
    width, widths = precision_from(params["width"])
    metric_options: dict[str, dict[str, Any]] = {
        "bleu": {"tokenize": params["tokenize"], "lowercase": params["lowercase"], "force": True},
        "chrf": {"word_order": params["chrf_word_order"]},
    }
    for name, given in metric_values(params, NEURAL_METRICS).items():
        metric_options.setdefault(name, {}).update(
            {k: v for k, v in given.items() if v is not None}
        )
    options = Options.from_params(
        params,
        metrics=metrics,
        width=width,
        widths=widths,
        fmt=fmt,
        explicit=explicit,
        metric_options=metric_options,
    )
    for name in metrics:
        from bleucli.metrics import metric_class

        metric_class(name)
    configure_logging(params["quiet"])
    progress.configure(params["quiet"])
    return options


@click.command(name="analyze", context_settings={"help_option_names": ["-h", "--help"]})
@_analysis_options
@click.option(
    "--source", metavar="FILE", help="Source sentences (source-length buckets, examples)."
)
@click.option("-s", "source_short", metavar="FILE", hidden=True,
              callback=lambda c, p, v: deprecated(v, "analyze -s", "--source (-s is --smooth-method in the scoring command)"))  # fmt: skip
@click.option(
    "--train",
    metavar="FILE",
    help="Training-corpus target side: word frequencies "
    "for the word-accuracy buckets (default: the references).",
)
@click.option(
    "--top",
    type=int,
    default=10,
    show_default=True,
    help="N-grams per order and direction, and examples per direction.",
)
@click.option(
    "--example-metric",
    metavar="NAME",
    help="Sentence-level metric for score bands and examples (default: BLEU).",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "latex", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--html",
    "html_path",
    metavar="FILE",
    help="Also write a self-contained HTML report (figures with bleucli[plot]).",
)
@click.option(
    "--autorank",
    type=click.Choice(["wmt25", "wmt24"]),
    default=None,
    help="Add a table of WMT's AutoRank over the metrics (that recipe).",
)
def analyze_command(
    source: str | None,
    source_short: str | None,
    train: str | None,
    top: int,
    example_metric: str | None,
    fmt: str,
    html_path: str | None,
    autorank: str | None,
    **params: Any,
) -> None:
    """Where systems differ: scores by reference/source length, sentence-score bands, word
    accuracy by frequency, n-gram differences, examples, per-document and per-origlang
    tables; every table with its signature. The word analyses split and fold words as BLEU
    does (-tok, -lc).

    \b
      bleucli analyze ref.de -i base.de new.de --source src.en --html report.html
    """
    from bleucli.commands.analyze import analyze
    from bleucli.commands.request import check_range

    check_range("--top", top, 1, 10_000)
    source = source if source_short is None else source_short
    options = _analysis_request(params, fmt, example_metric)
    click.echo(analyze(options, source, train, top, example_metric, html_path, autorank))


@click.command(name="plot", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("kind", type=click.Choice(["scores", "bootstrap", "buckets"]))
@_analysis_options
@click.option(
    "-o", "--output", required=True, metavar="FILE", help="Figure file: .pdf, .png or .svg."
)
@click.option(
    "--metric",
    "metric_name",
    metavar="NAME",
    help="The metric to plot (default BLEU, else the first of -m); added to -m if needed.",
)
def plot_command(kind: str, output: str, metric_name: str | None, **params: Any) -> None:
    """Figures for papers (needs bleucli[plot]): scores per system with 95% intervals, the
    bootstrap distribution of the first two systems' difference, or scores by reference
    length.

    \b
      bleucli plot scores ref.de -i a.de b.de -o scores.pdf
    """
    from bleucli.commands.analyze import plot

    options = _analysis_request(params, "text", metric_name)
    click.echo(plot(options, kind, output, metric_name), err=True)
