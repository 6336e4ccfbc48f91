"""``bleucli meta-eval``: the click command (parse, call :mod:`bleucli.commands.meta_eval`,
print). The launcher routes here, so the scoring command never imports it."""

from __future__ import annotations

from typing import Any

import click

from bleucli.cli.options import Variadic, deprecated, metric_options, metric_values
from bleucli.cli.run import configure_logging

HELP = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.command(name="meta-eval", context_settings=HELP)
@click.argument("refs", nargs=-1, metavar="[REFS]...")
@click.option(
    "-i",
    "--input",
    "inputs",
    cls=Variadic,
    multiple=True,
    metavar="[NAME=]FILE...",
    help="System outputs (named after the file without its extension, or NAME=FILE / NAME:FILE).",
)
@click.option("--human", metavar="FILE", help="Human scores of the -i systems.")
@click.option(
    "--human-format",
    type=click.Choice(["auto", "tsv", "wmt-da", "mqm", "mqm-avg", "mtme"]),
    default="auto",
    show_default=True,
    help="tsv: system<TAB>segment<TAB>score; wmt-da: WMT's DA segment file; mqm: Google's "
    "MQM errors; mqm-avg: its averaged scores; mtme: 'SYS SCORE' blocks.",
)
@click.option(
    "--human-field",
    type=click.Choice(["raw", "z"]),
    default="z",
    show_default=True,
    help="wmt-da: RAW.SCR or Z.SCR.",
)
@click.option("--mtme", metavar="DIR", help="An mt-metrics-eval test-set directory (with -l).")
@click.option("-l", "--language-pair", "pair", metavar="SRC-TRG", help="--mtme: the pair.")
@click.option(
    "--human-name", metavar="NAME", help="--mtme: the kind of human score (wmt-z, mqm, ...)."
)
@click.option("--ref", metavar="NAME", help="--mtme: the reference (default: the first by name).")
@click.option(
    "--include-human",
    is_flag=True,
    help="--mtme: rate human translations (outputs named like a reference) as systems.",
)
@click.option(
    "--human-rows",
    is_flag=True,
    help="--mtme: the other kinds of human score as rows (human:NAME), for comparison.",
)
@click.option(
    "-m",
    "--metrics",
    cls=Variadic,
    multiple=True,
    metavar="NAME...",
    help="bleucli metrics: bleu, chrf, ter, or a neural metric (comet, cometkiwi, xcomet, "
    "metricx24, metricx24-qe; they read the source) (default: bleu chrf ter with references; "
    "error rates (TER, MetricX) are negated).",
)
@click.option(
    "--source",
    metavar="FILE",
    help="The source sentences, for neural metrics (--mtme: the directory's sources/PAIR.txt).",
)
@metric_options(only={"bleu": ("tokenize", "lowercase")})
@click.option(
    "--segment-scores",
    multiple=True,
    metavar="NAME=FILE,...",
    help="A metric's segment scores: one file per -i system, or one MTME .seg.score "
    "file; repeatable.",
)
@click.option(
    "--stat",
    "statistics",
    cls=Variadic,
    multiple=True,
    metavar="NAME...",
    help="Statistics (default: all sys-* and seg-{pearson,kendall}-{none,item,sys}, "
    "seg-acc-t-item); see docs/meta-eval.md.",
)
@click.option(
    "-k",
    "--resamples",
    type=click.IntRange(0, 1_000_000),
    default=1000,
    show_default=True,
    help="Permutation draws per pair of metrics (0: no significance).",
)
@click.option(
    "--block-size",
    type=click.IntRange(1),
    default=None,
    help="Early stopping as MTME: check after every block of draws (default: none).",
)
@click.option(
    "--seed", type=click.IntRange(0), default=1, show_default=True, help="Seed of the draws."
)
@click.option(
    "--rng",
    type=click.Choice(["bleucli", "mtme"]),
    default="bleucli",
    show_default=True,
    help="mtme: replay MTME's own draws (np.random.seed, binomial), p-values equal MTME's.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1),
    default=0.05,
    show_default=True,
    help="Significance level of the clusters.",
)
@click.option(
    "-j",
    "--jobs",
    "threads",
    type=click.IntRange(0, 256),
    default=0,
    show_default=True,
    help="Parallel workers (threads here) for the significance tests (same results for any "
    "number); 0: one per CPU.",
)
@click.option("--threads", "threads_deprecated", type=click.IntRange(0, 256), hidden=True,
              callback=lambda c, p, v: deprecated(v, "--threads", "-j/--jobs"))  # fmt: skip
@click.option("--allow-missing", is_flag=True, help="Leave out systems without human scores.")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "latex", "tsv"]),
    default="text",
    show_default=True,
)
@click.option(
    "-w",
    "--width",
    type=click.IntRange(0, 15),
    default=4,
    show_default=True,
    help="Decimal places of the values.",
)
@click.option("-q", "--quiet", is_flag=True, help="No alignment report on stderr.")
def meta_eval_command(refs: tuple[str, ...], **params: Any) -> None:
    """How well metrics agree with human judgements: the WMT Metrics task's statistics
    (mt-metrics-eval's definitions), permutation tests and significance clusters.

    \b
      bleucli meta-eval --mtme wmt22 -l ru-en --human-name wmt-z
      bleucli meta-eval ref.en -i A.en B.en C.en --human da.tsv --segment-scores COMET=a,b,c
    """
    from bleucli.commands.meta_eval import MetaEvalRequest, run
    from bleucli.metaeval.significance import TestSettings

    configure_logging(params["quiet"])
    from bleucli import progress

    progress.configure(params["quiet"])
    ctx = click.get_current_context()
    explicit = frozenset(
        name
        for name in params
        if ctx.get_parameter_source(name) not in (click.core.ParameterSource.DEFAULT, None)
    )
    request = MetaEvalRequest(
        refs=refs,
        inputs=params["inputs"],
        mtme=params["mtme"],
        pair=params["pair"],
        human=params["human"],
        human_format=params["human_format"],
        human_field=params["human_field"],
        human_name=params["human_name"],
        ref=params["ref"],
        include_human=params["include_human"],
        human_rows=params["human_rows"],
        metrics=tuple(params["metrics"]) or None,
        source=params["source"],
        options={
            name: {k: v for k, v in given.items() if not (name == "bleu" and k == "tokenize" and v is None)}
            for name, given in metric_values(params).items()
        },
        segment_scores=params["segment_scores"],
        statistics=tuple(params["statistics"]),
        settings=TestSettings(
            resamples=params["resamples"], block_size=params["block_size"], seed=params["seed"],
            rng=params["rng"], threads=_threads(params) or _cpus(), threshold=params["alpha"],
        ),
        allow_missing=params["allow_missing"],
        fmt=params["fmt"],
        width=params["width"],
        explicit=explicit,
    )  # fmt: skip

    def report(line: str) -> None:
        if not params["quiet"]:
            click.echo(f"bleucli: meta-eval: {line}", err=True)

    click.echo(run(request, report))


def _threads(params: dict[str, Any]) -> int:
    """``-j``, or the deprecated ``--threads``."""
    given = params.pop("threads_deprecated", None)
    return int(params["threads"] if given is None else given)


def _cpus() -> int:
    import os

    return max(1, min(os.cpu_count() or 1, 256))
