"""The ``bleucli`` command: parse options, call the library, print, exit.

Flags and their meaning follow SacreBLEU 2.x's CLI so existing scripts keep working. Exit
codes (stable): 0 success, 1 bad data or options (a one-line ``bleucli: error:`` message on
stderr), 2 command-line usage errors (click's), 3 ``bleucli gate`` failed, 130 interrupted.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from bleucli.cli.options import (
    OUTPUT_FORMATS,
    Variadic,
    deprecated,
    encoding_option,
    metric_options,
    metric_values,
    precision_from,
    width_option,
)
from bleucli.cli.run import (
    EXIT_OK,
    configure_logging,
    run_command,
    single_threaded_blas,
)
from bleucli.cli.subcommands import subcommands_help
from bleucli.native import ENGINE
from bleucli.version import __version__


@click.command(
    name="bleucli",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="\b\n" + subcommands_help() + "Run `bleucli SUBCOMMAND --help` for each one's options.\n"
    "\b\nEnvironment: BLEUCLI_FORMAT (default -f), BLEUCLI_SEED (resampling seed, or "
    "'none'),\n"
    "  BLEUCLI_CACHE (test-set cache folder), BLEUCLI_MIRROR (download mirror prefix),\n"
    "  BLEUCLI_OFFLINE=1 (never download), BLEUCLI_TESTSETS (extra registries, "
    "':'-separated),\n"
    "  BLEUCLI_DEBUG=1 (tracebacks for unexpected errors).\n"
    "Exit codes: 0 ok, 1 bad input or options, 2 usage error, 3 gate failed, "
    "130 interrupted.",
)
@click.argument("refs", nargs=-1, metavar="[REFS]...")
@click.option(
    "-i",
    "--input",
    "inputs",
    cls=Variadic,
    multiple=True,
    metavar="FILE...",
    help="Hypothesis file(s); standard input when absent. Several files: one per system "
    "(NAME=FILE or NAME:FILE names one).",
)
@click.option(
    "-m",
    "--metrics",
    cls=Variadic,
    multiple=True,
    metavar="NAME...",
    help="Metrics to compute: bleu, chrf, ter; neural: comet, cometkiwi, xcomet, metricx24, "
    "metricx24-qe (default: bleu).",
)
@click.option(
    "-t",
    "--test-set",
    metavar="NAME[,NAME...]",
    help="Named test set(s) to score against (references are concatenated).",
)
@click.option(
    "-l",
    "--language-pair",
    metavar="SRC-TRG",
    help="Language pair; its target picks the default tokenizer (zh, ja, ko).",
)
@click.option(
    "-ol",
    "--origlang",
    metavar="LANG",
    help="Only documents originally in LANG (non-LANG: all others); WMT sets.",
)
@click.option(
    "--subset",
    metavar="REGEX",
    help="Only documents whose domain/annotation matches REGEX; WMT sets.",
)
@click.option(
    "--echo",
    cls=Variadic,
    multiple=True,
    metavar="FIELD...",
    help="Print test-set fields (src, ref, docid, origlang, ..., or all) and exit.",
)
@click.option(
    "--list",
    "list_sets",
    is_flag=True,
    help="List test sets (with -t: their language pairs and fields) and exit.",
)
@click.option("--citation", "--cite", is_flag=True, help="Print the test set's BibTeX and exit.")
@click.option("--download", metavar="NAME", help="Fetch a test set into the cache and exit.")
@click.option(
    "--testsets-file",
    "testsets_files",
    multiple=True,
    metavar="FILE",
    help="Extra test-set registry (JSON); repeatable. Env: BLEUCLI_TESTSETS.",
)
@click.option(
    "--offline",
    is_flag=True,
    help="Never use the network (env BLEUCLI_OFFLINE=1); cached sets only.",
)
@click.option(
    "-nr",
    "--num-refs",
    type=int,
    default=1,
    show_default=True,
    help="Split each reference line on tabs into this many references (1-1000).",
)
@encoding_option
@metric_options()
@click.option("-sl", "--sentence-level", is_flag=True, help="Score every sentence.")
@click.option(
    "-ci",
    "--confidence",
    is_flag=True,
    help="Bootstrap 95% confidence interval per metric (seed: BLEUCLI_SEED).",
)
@click.option(
    "-cin",
    "--confidence-n",
    type=int,
    default=1000,
    show_default=True,
    help="Bootstrap resamples for --confidence (1-100000).",
)
@click.option(
    "-pbs",
    "--paired-bs",
    is_flag=True,
    help="Paired bootstrap test of every -i system against the first.",
)
@click.option(
    "-par",
    "--paired-ar",
    is_flag=True,
    help="Paired approximate randomisation test against the first system.",
)
@click.option(
    "-pbsn",
    "--paired-bs-n",
    type=int,
    default=1000,
    show_default=True,
    help="Resamples for --paired-bs (1-100000).",
)
@click.option(
    "-parn",
    "--paired-ar-n",
    type=int,
    default=10000,
    show_default=True,
    help="Trials for --paired-ar (1-100000).",
)
@click.option(
    "-j",
    "--jobs",
    "--paired-jobs",
    "jobs",
    type=int,
    default=1,
    show_default=True,
    help="Parallel workers (processes here) for big files and paired tests (same results "
    "for any number; at most the CPUs); 0: automatic.",
)
@click.option("--threads", "jobs_deprecated", type=int, hidden=True,
              callback=lambda c, p, v: deprecated(v, "--threads", "-j/--jobs"))  # fmt: skip
@click.option("--emit-stats", is_flag=True, hidden=True)  # set by `bleucli stats`
@click.option(
    "--from-signature",
    multiple=True,
    metavar="SIG",
    help="Score with exactly the options a published signature states "
    "(repeat for several metrics).",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(OUTPUT_FORMATS),
    default=None,
    help="Output format (default json; env BLEUCLI_FORMAT).",
)
@click.option(
    "--json-layout",
    type=click.Choice(["sacrebleu", "bleucli"]),
    default="sacrebleu",
    show_default=True,
    help="Paired tests with -f json: SacreBLEU's list, or bleucli's document with "
    "test, samples and signatures.",
)
@width_option
@click.option("-b", "--score-only", is_flag=True, help="Print only the score.")
@click.option("-q", "--quiet", is_flag=True, help="No informational messages or progress bars.")
@click.option(
    "-nc",
    "--no-color",
    is_flag=True,
    help="Accepted for SacreBLEU compatibility; bleucli prints no colours.",
)
@click.option("-sh", "--short", is_flag=True, help="Abbreviated signature.")
@click.option(
    "-d",
    "--detail",
    is_flag=True,
    help="Also score each origlang and subset of the test set (text output), and "
    "each document when document ids are known (test set, or --docids).",
)
@click.option(
    "--segment-scores",
    multiple=True,
    metavar="NAME=FILE,...",
    help="External segment scores (COMET, BLEURT, human, ...) as a metric: one "
    "file per -i system, one number per line (or FILE.tsv:COLUMN, "
    "FILE.json[:FIELD], FILE.jsonl[:FIELD]); repeatable.",
)
@click.option(
    "--docids",
    metavar="FILE",
    help="Document id of every line (one per line), for per-document scores (-d).",
)
@click.option(
    "--source",
    metavar="FILE",
    help="Source sentences, one per line, for metrics that read them (COMET, "
    "CometKiwi, xCOMET); a test set (-t) brings its own.",
)
@click.option(
    "--rank",
    is_flag=True,
    help="Rank the -i systems per metric: scores with 95% intervals, bootstrap "
    "rank ranges, all-pairs paired tests (Holm-corrected) and significance "
    "clusters.",
)
@click.option(
    "--resegment",
    is_flag=True,
    help="Outputs whose lines do not match the references (speech translation, "
    "document-level output): realign each system to the reference lines by "
    "minimum-WER alignment, per document with --docids.",
)
@click.option(
    "--resegment-tokenize",
    type=click.Choice(["none", "13a", "char"]),
    help="Alignment tokenisation (default: char for zh/ja and other scripts without "
    "spaces, else 13a).",
)
@click.option(
    "--resegment-output",
    metavar="FILE",
    help="Also write the resegmented output, one line per reference line.",
)
@click.version_option(
    __version__,
    "-V",
    "--version",
    prog_name="bleucli",
    message="%(prog)s %(version)s (" + ENGINE + " engine)",
)
@click.pass_context
def command(ctx: click.Context, **params: Any) -> None:
    """Score machine translation output with BLEU, chrF and TER, identical to SacreBLEU 2.x.

    \b
      bleucli ref.de -i hyp.de              # JSON result with its signature
      cat hyp.de | bleucli ref.de -f text   # text line
      bleucli ref1.de ref2.de -i hyp.de     # two references
      bleucli ref.de -i hyp.de -m bleu chrf ter
      bleucli -t wmt14 -l en-de < hyp.de    # a named test set (downloaded once)
    """
    options = options_from(ctx, params)
    configure_logging(options.quiet)
    from bleucli import progress
    from bleucli.commands.score import run

    progress.configure(options.quiet)
    from bleucli.testsets.offline import offline_mode

    with offline_mode(options.offline):  # test sets and SentencePiece models alike
        output = run(options)
    if output and options.fmt == "html":
        from bleucli.analysis.page import output_page

        output = output_page("bleucli scores", output)
    if output:
        click.echo(output)


def options_from(ctx: click.Context, params: dict[str, Any]) -> Any:
    """The scoring command's parsed parameters as its request (:class:`Options`)."""
    explicit = {
        name
        for name in params
        if ctx.get_parameter_source(name) not in (click.core.ParameterSource.DEFAULT, None)
    }
    fmt = params["fmt"]
    if fmt is None:
        from bleucli.commands.request import default_format

        fmt = default_format(OUTPUT_FORMATS)
    from bleucli.commands.request import Options

    width, widths = precision_from(params["width"])
    return Options.from_params(
        params,
        metrics=tuple(m.lower() for m in params["metrics"]) or ("bleu",),
        width=width,
        widths=widths,
        fmt=fmt,
        jobs=params["jobs"] if params["jobs_deprecated"] is None else params["jobs_deprecated"],
        explicit=explicit,
        metric_options=metric_values(params, _metrics_of(params)),
    )


def _metrics_of(params: dict[str, Any]) -> list[str]:
    """The metrics whose declared options a command has (built-in, and plugins it was built
    with)."""
    from bleucli.metrics import available_metrics, builtin_names, metric_class

    names = list(builtin_names())
    if any(name not in builtin_names() for name in params.get("metrics", ())):
        names = available_metrics()
    return [n for n in names if all(o.param in params for o in metric_class(n).OPTIONS if o.cli)]


STATS_HELP = """Usage: bleucli stats [REFS]... -i HYP [SCORING OPTIONS]

  Write the summed sufficient statistics of one system (JSON) instead of its score, for
  sharded or distributed scoring; `bleucli merge` adds shards and prints the corpus score.

    bleucli stats ref.part1 -i hyp.part1 -m bleu chrf > part1.json
    bleucli stats ref.part2 -i hyp.part2 -m bleu chrf > part2.json
    bleucli merge part1.json part2.json

  Takes the scoring options of `bleucli` (see `bleucli --help`): -m, -tok, -lc, -s, -sv,
  -cc, -cw, --chrf-*, --ter-*, -t/-l, -nr, -e, -j/--jobs, --from-signature.
  Every shard records a hash of its hypotheses and references and its line count, so
  that `bleucli merge` refuses a shard given twice.
"""


def _stats_main(args: list[str]) -> list[str]:
    """``bleucli stats ...`` is the main command writing statistics instead of scores."""
    return ["--emit-stats", *args]


def main(argv: Sequence[str] | None = None) -> None:
    """The scoring command (and ``bleucli stats``): library errors as one-line messages and
    exit codes. Subcommands are dispatched by :mod:`bleucli.cli.launch`."""
    args = list(sys.argv[1:] if argv is None else argv)
    single_threaded_blas()
    if args and args[0] == "stats":
        if any(a in ("-h", "--help") for a in args[1:]):
            click.echo(STATS_HELP, nl=False)
            sys.exit(EXIT_OK)
        args = _stats_main(args[1:])
    run_command(command, args, "bleucli", plugins=True)


__all__ = ["main", "command"]
