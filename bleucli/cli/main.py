"""The ``bleucli`` command: parse options, call the library, print, exit.

Flags and their meaning follow SacreBLEU 2.x's CLI so existing scripts keep working. Exit
codes (stable): 0 success, 1 bad data or options (a one-line ``bleucli: error:`` message on
stderr), 2 command-line usage errors (click's), 3 ``bleucli gate`` failed, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from bleucli.cli.subcommands import subcommands_help
from bleucli.display import WIDTH_RANGE, check_width
from bleucli.errors import BleucliError, ConfigError, InputError
from bleucli.native import ENGINE
from bleucli.version import __version__

#: The neural metrics (``analyze``, ``plot`` and ``gate`` take their declared options).
NEURAL_METRICS = ("comet", "cometkiwi", "xcomet", "metricx24", "metricx24-qe")

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class Variadic(click.Option):
    """An option that takes several values after one flag (``-i a.txt b.txt``), as
    SacreBLEU's argparse ``nargs="+"``: declared where the option is (``cls=Variadic``,
    with ``multiple=True``), so each command's own options say which flags take lists."""


def variadic_flags(selected: click.Command) -> set[str]:
    """The flags of ``selected``'s :class:`Variadic` options."""
    return {
        flag
        for param in selected.params
        if isinstance(param, Variadic)
        for flag in (*param.opts, *param.secondary_opts)
    }


OUTPUT_FORMATS = ("json", "text", "latex", "markdown", "tsv", "html")


def expand_prefixes(argv: Sequence[str], selected: click.Command) -> list[str]:
    """Unambiguous prefixes of long options (``--tok zh``, ``--lower``), as argparse and so
    SacreBLEU accept them; an ambiguous one is a usage error naming the candidates."""
    longs = sorted(
        {
            opt
            for param in selected.params
            if isinstance(param, click.Option)
            for opt in (*param.opts, *param.secondary_opts)
            if opt.startswith("--")
        }
        | {"--help", "--version"}
    )
    out: list[str] = []
    for k, arg in enumerate(argv):
        if arg == "--":
            return out + list(argv[k:])
        name, eq, value = arg.partition("=")
        if name.startswith("--") and name not in longs:
            candidates = [opt for opt in longs if opt.startswith(name)]
            if len(candidates) == 1:
                arg = candidates[0] + eq + value
            elif candidates:
                raise click.UsageError(
                    f"ambiguous option: {name} could match {', '.join(candidates)}"
                )
        out.append(arg)
    return out


def expand_variadic(argv: Sequence[str], flags: set[str]) -> list[str]:
    """Rewrite ``-i a b`` as ``-i a -i b`` (``flags``: the variadic ones) so click's
    ``multiple=True`` options take lists."""
    out: list[str] = []
    current: str | None = None
    for arg in argv:
        if arg == "--":
            current = None
            out.append(arg)
        elif arg in flags:
            current = arg
            out.append(arg)
        elif current is not None and (arg == "-" or not arg.startswith("-")):
            if out[-1] != current:
                out.append(current)
            out.append(arg)
        else:
            current = None
            out.append(arg)
    return out


def click_parameter(option: Any) -> click.Option:
    """The click option of a metric's declared option (:mod:`bleucli.metrics.options`)."""
    kwargs: dict[str, Any] = {"help": option.help}
    if option.kind == "flag":
        kwargs["is_flag"] = True
    else:
        if option.kind in ("int", "float"):
            kwargs["type"] = int if option.kind == "int" else float
        if option.default is not None:
            kwargs["default"] = option.default
        if option.show_default:
            kwargs["show_default"] = True
        if option.metavar:
            kwargs["metavar"] = option.metavar
    return click.Option([*option.flags, option.param], **kwargs)


def declared_options(
    names: Sequence[str] | None = None, only: dict[str, tuple[str, ...]] | None = None
) -> list[Any]:
    """The declared options of the metrics ``names`` (default: the built-in ones), in
    registry order; ``only``: metric -> the keywords to take."""
    from bleucli.metrics import builtin_names, metric_class

    chosen = []
    for name in names if names is not None else builtin_names():
        keywords = (only or {}).get(name)
        chosen += [
            o
            for o in metric_class(name).OPTIONS
            if o.cli and (keywords is None or o.keyword in keywords)
        ]
    return chosen


def metric_options(
    names: Sequence[str] | None = None, only: dict[str, tuple[str, ...]] | None = None
) -> Any:
    """A decorator adding the declared options of the metrics ``names`` to a command."""

    def decorate(function: Any) -> Any:
        if not hasattr(function, "__click_params__"):
            function.__click_params__ = []
        for option in reversed(declared_options(names, only)):
            function.__click_params__.append(click_parameter(option))
        return function

    return decorate


def with_plugin_options(selected: click.Command, args: Sequence[str]) -> click.Command:
    """``selected`` with the declared options of the plugin metrics ``args`` ask for: a
    ``-m`` name that is not built in, or a flag the command does not know (a plugin's). The
    entry points are read only then, so plain scoring never pays for them."""
    from bleucli.metrics import available_metrics, builtin_names, metric_class

    known = {opt for param in selected.params for opt in (*param.opts, *param.secondary_opts)}

    def unknown(arg: str) -> bool:
        head = arg.partition("=")[0]
        if not head.startswith("-") or head in ("-", "--") or head in known or _number(head):
            return False
        return not (head.startswith("--") and any(k.startswith(head) for k in known))

    names = _metric_names(args)
    if not any(unknown(arg) for arg in args) and all(n in builtin_names() for n in names):
        return selected

    extra = []
    for name in available_metrics():
        if name in builtin_names():
            continue
        for option in metric_class(name).OPTIONS:
            if not option.cli:
                continue
            clash = [flag for flag in option.flags if flag in known]
            if clash:
                raise ConfigError(
                    f"metric plugin {name}: its option {', '.join(clash)} is already "
                    "bleucli's; the plugin must declare other flags"
                )
            known.update(option.flags)
            extra.append(click_parameter(option))
    if not extra:
        return selected
    from copy import copy

    widened = copy(selected)
    widened.params = [*selected.params, *extra]
    return widened


def _number(arg: str) -> bool:
    try:
        float(arg)
    except ValueError:
        return False
    return True


def _metric_names(args: Sequence[str]) -> list[str]:
    """The names given to ``-m``/``--metrics`` (before click has parsed anything)."""
    names: list[str] = []
    taking = False
    for arg in args:
        head, eq, value = arg.partition("=")
        if head in ("-m", "--metrics"):
            taking = not eq
            if eq:
                names.append(value.lower())
        elif taking and not arg.startswith("-"):
            names.append(arg.lower())
        else:
            taking = False
    return names


def metric_values(
    params: dict[str, Any], names: Sequence[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Per metric, the keywords of the declared options a command parsed (those it has)."""
    from bleucli.metrics import builtin_names, metric_class

    out: dict[str, dict[str, Any]] = {}
    for name in names if names is not None else builtin_names():
        out[name] = {
            option.keyword: params[option.param]
            for option in metric_class(name).OPTIONS
            if option.cli and option.param in params
        }
    return out


def _width_value(text: str) -> tuple[str | None, int]:
    """``N`` or ``METRIC=N`` (``-w comet=6``)."""
    name, sep, number = text.rpartition("=")
    try:
        value = int(number)
    except ValueError:
        raise click.BadParameter(f"{text!r}: give N, or METRIC=N (-w comet=6)") from None
    if sep and not name:
        raise click.BadParameter(f"{text!r}: name the metric before '=' (-w comet=6)")
    return (name.lower() if sep else None), value


#: ``-w``: decimals of the 0-100 metrics (BLEU, chrF, TER), and ``-w METRIC=N`` for one
#: metric; every other metric keeps its own (COMET 4, MetricX 2: bleucli.precision).
width_option = click.option(
    "-w",
    "--width",
    "width",
    multiple=True,
    metavar="N|METRIC=N",
    callback=lambda _ctx, _param, values: [_width_value(v) for v in values],
    help=f"Decimal places of BLEU, chrF and TER ({WIDTH_RANGE[0]}-{WIDTH_RANGE[1]}; default 1); "
    "METRIC=N for one metric (-w comet=6). COMET, CometKiwi and xCOMET show 4, MetricX 2.",
)


def precision_from(values: Sequence[tuple[str | None, int]]) -> tuple[int, dict[str, int]]:
    """(the 0-100 metrics' decimals, per-metric decimals) of the ``-w`` values given."""
    width = 1
    per_metric: dict[str, int] = {}
    for name, value in values:
        check_width(value, "-w/--width" if name is None else f"-w {name}=")
        if name is None:
            width = value
        else:
            per_metric[name] = value
    return width, per_metric


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
@click.option(
    "-e", "--encoding", default="utf-8", show_default=True, help="Encoding of input files."
)
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

    options = Options(
        refs=params["refs"],
        inputs=params["inputs"],
        metrics=tuple(m.lower() for m in params["metrics"]) or ("bleu",),
        language_pair=params["language_pair"],
        test_set=params["test_set"],
        origlang=params["origlang"],
        subset=params["subset"],
        echo=params["echo"],
        list_sets=params["list_sets"],
        citation=params["citation"],
        download=params["download"],
        testsets_files=params["testsets_files"],
        offline=params["offline"],
        num_refs=params["num_refs"],
        encoding=params["encoding"],
        sentence_level=params["sentence_level"],
        width=precision_from(params["width"])[0],
        widths=precision_from(params["width"])[1],
        score_only=params["score_only"],
        fmt=fmt,
        quiet=params["quiet"],
        short=params["short"],
        from_signature=params["from_signature"],
        jobs=params["jobs"] if params["jobs_deprecated"] is None else params["jobs_deprecated"],
        confidence=params["confidence"],
        confidence_n=params["confidence_n"],
        paired_bs=params["paired_bs"],
        paired_ar=params["paired_ar"],
        paired_bs_n=params["paired_bs_n"],
        paired_ar_n=params["paired_ar_n"],
        emit_stats=params["emit_stats"],
        detail=params["detail"],
        json_layout=params["json_layout"],
        segment_scores=params["segment_scores"],
        docids=params["docids"],
        source=params["source"],
        rank=params["rank"],
        resegment=params["resegment"],
        resegment_tokenize=params["resegment_tokenize"],
        resegment_output=params["resegment_output"],
        explicit=explicit,
    )
    options.metric_options = metric_values(params, _metrics_of(params))
    return options


def _metrics_of(params: dict[str, Any]) -> list[str]:
    """The metrics whose declared options a command has (built-in, and plugins it was built
    with)."""
    from bleucli.metrics import available_metrics, builtin_names, metric_class

    names = list(builtin_names())
    if any(name not in builtin_names() for name in params.get("metrics", ())):
        names = available_metrics()
    return [n for n in names if all(o.param in params for o in metric_class(n).OPTIONS if o.cli)]


@click.command(name="report", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("results", nargs=-1, required=True, metavar="[NAME=]RESULT.json...")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(OUTPUT_FORMATS),
    default="text",
    show_default=True,
    help="Table format (latex and markdown paste into papers).",
)
@width_option
@click.option(
    "--autorank",
    type=click.Choice(["wmt25", "wmt24"]),
    default=None,
    help="Add WMT's AutoRank over every column (that recipe) and order the rows by it.",
)
def report_command(
    results: tuple[str, ...], fmt: str, width: list[Any], autorank: str | None
) -> None:
    """One table, systems x (test set, metric), from result files of bleucli or SacreBLEU.

    Each file is any JSON that bleucli writes (one result, several metrics, several systems,
    paired tests) or SacreBLEU's. Rows are named after the file, or NAME in NAME=RESULT.json
    (or NAME:RESULT.json).
    Signatures are compared without their version field; a column that mixes signatures is
    reported on stderr.
    """
    from bleucli.commands.report import ReportRequest, build_report
    from bleucli.precision import Precision

    output = build_report(ReportRequest(list(results), fmt, Precision(*_pair(width)), autorank))
    if fmt == "html":
        from bleucli.analysis.page import output_page

        output = output_page("bleucli report", output)
    click.echo(output)


@click.command(
    name="gate",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 all checks passed, 3 a check failed, 1 unusable input, 2 usage error.",
)
@click.argument("current", metavar="CURRENT.json")
@click.argument("refs", nargs=-1, metavar="[REFS]...")
@click.option(
    "--baseline",
    "baseline_path",
    required=True,
    metavar="FILE",
    help="Baseline results (JSON written by bleucli).",
)
@click.option(
    "--tolerance",
    type=float,
    default=0.0,
    show_default=True,
    help="Allowed drop in absolute points for every metric.",
)
@click.option(
    "--tolerance-for",
    multiple=True,
    metavar="METRIC=POINTS",
    help="Per-metric tolerance, e.g. chrF2=0.5 (repeatable; names as in the results, any case).",
)
@click.option(
    "--min-score",
    multiple=True,
    metavar="METRIC=SCORE",
    help="Required score, e.g. BLEU=30 (for TER: the maximum).",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="Replace the baseline with the current results (atomically) and pass.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Report format on stdout.",
)
@click.option("--junit", metavar="FILE", help="Also write a JUnit XML report.")
@click.option(
    "--baseline-output",
    metavar="FILE",
    help="Statistical gate: the baseline system's translations. A drop then fails "
    "only if a paired bootstrap test finds it significant.",
)
@click.option(
    "-i",
    "--input",
    "current_output",
    metavar="FILE",
    help="Statistical gate: the current system's translations (the references follow "
    "CURRENT.json, as in the scoring command; default: the test set its signatures name).",
)
@click.option(
    "--output",
    "output_deprecated",
    metavar="FILE",
    hidden=True,
    callback=lambda c, p, v: deprecated(v, "gate --output", "-i/--input"),
)
@click.option("--refs", "refs_deprecated", multiple=True, metavar="FILE", hidden=True,
              callback=lambda c, p, v: deprecated(v, "gate --refs", "the references after CURRENT.json"))  # fmt: skip
@click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="Statistical gate: significance level.",
)
@click.option(
    "--paired-bs-n",
    type=int,
    default=1000,
    show_default=True,
    help="Statistical gate: bootstrap resamples (1-100000).",
)
@click.option(
    "--source",
    metavar="FILE",
    help="Statistical gate: the source sentences (neural metrics such as COMET read them).",
)
@metric_options(NEURAL_METRICS, only={m: ("model",) for m in NEURAL_METRICS})
@click.option("--model", "models_deprecated", multiple=True, metavar="DIR", hidden=True,
              callback=lambda c, p, v: deprecated(v, "gate --model", "--comet-model (or the metric's own --...-model)"))  # fmt: skip
def gate_command(current: str, baseline_path: str, **params: Any) -> None:
    """Compare CURRENT.json (bleucli's JSON output; - for stdin) with a baseline. The
    statistical gate (--baseline-output, -i) takes the references as the scoring command
    does: after CURRENT.json.

    \b
      bleucli gate current.json --baseline base.json --tolerance 0.5
      bleucli gate current.json ref.de --baseline base.json --baseline-output base.de -i new.de
    """
    from bleucli.commands.gate import GateRequest, run

    refs = tuple(params.pop("refs")) + tuple(params.pop("refs_deprecated"))
    output = params.pop("output_deprecated")
    if params["current_output"] is None:
        params["current_output"] = output
    models = tuple(params.pop("models_deprecated"))
    for name in NEURAL_METRICS:  # a neural metric's model folder, matched by its hash
        given = params.pop(f"{name.replace('-', '_')}_model", None)
        if given:
            models += (given,)
    outcome = run(GateRequest(current=current, baseline=baseline_path, refs=refs,
                              models=models, **params))  # fmt: skip
    click.echo(outcome.text)
    if outcome.annotations:
        click.echo(outcome.annotations, err=True)
    if outcome.exit_code:
        raise click.exceptions.Exit(outcome.exit_code)


@click.command(name="merge", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("shards", nargs=-1, required=True, metavar="SHARD.json...")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["json", "text"]),
    default=None,
    help="Output format (default json; env BLEUCLI_FORMAT).",
)
@width_option
@click.option("-b", "--score-only", is_flag=True, help="Print only the score.")
@click.option("-sh", "--short", is_flag=True, help="Abbreviated signature.")
def merge_command(
    shards: tuple[str, ...], fmt: str | None, width: list[Any], score_only: bool, short: bool
) -> None:
    """Add statistics written by `bleucli stats` (one shard per part of a corpus) and print
    the corpus score, identical to scoring the whole corpus at once.

    Shards must come from the same metric options and from distinct, non-overlapping parts
    of the data: a shard given twice, or with negative or impossible counts, is refused.
    """
    from bleucli.commands.merge import MergeRequest, run
    from bleucli.precision import Precision

    click.echo(run(MergeRequest(list(shards), fmt, Precision(*_pair(width)), score_only, short)))


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
@click.option(
    "-e", "--encoding", default="utf-8", show_default=True, help="Encoding of input files."
)
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
    from bleucli.commands.request import check_range, metric_limits

    metric = metric.lower()
    threads = threads if threads_deprecated is None else threads_deprecated
    options = metric_values(params, (metric,))[metric]
    for key, (option, low, high) in metric_limits(metric).items():
        check_range(option, options[key], low, high)
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
            click.option(
                "-tok",
                "--tokenize",
                metavar="NAME",
                help="BLEU tokenizer, also the word tokenizer of the word analyses.",
            ),
            click.option("-lc", "--lowercase", is_flag=True, help="Case-insensitive BLEU/words."),
            click.option(
                "-cw",
                "--chrf-word-order",
                type=int,
                default=0,
                show_default=True,
                help="chrF word n-gram order (2 = chrF++).",
            ),
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
            click.option(
                "-e",
                "--encoding",
                default="utf-8",
                show_default=True,
                help="Encoding of input files.",
            ),
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
    options = Options(
        refs=params["refs"],
        inputs=params["inputs"],
        metrics=metrics,
        test_set=params["test_set"],
        language_pair=params["language_pair"],
        num_refs=params["num_refs"],
        encoding=params["encoding"],
        width=width,
        widths=widths,
        fmt=fmt,
        quiet=params["quiet"],
        segment_scores=params["segment_scores"],
        docids=params["docids"],
        resegment=params["resegment"],
        resegment_tokenize=params["resegment_tokenize"],
        testsets_files=params["testsets_files"],
        offline=params["offline"],
        explicit=explicit,
        bleu={"tokenize": params["tokenize"], "lowercase": params["lowercase"], "force": True},
        chrf={"word_order": params["chrf_word_order"]},
    )
    for name, given in metric_values(params, NEURAL_METRICS).items():
        options.options_for(name).update({k: v for k, v in given.items() if v is not None})
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
    tables; every table with its signature.

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


def _pair(values: Sequence[tuple[str | None, int]]) -> tuple[int, tuple[tuple[str, int], ...]]:
    width, per_metric = precision_from(values)
    return width, tuple(sorted(per_metric.items()))


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


@click.command(name="resegment", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("refs", nargs=-1, metavar="[REF]...")
@click.option("-i", "--input", "hypothesis", metavar="FILE", help="The output to realign.")
@click.option("-t", "--test-set", metavar="NAME", help="Take the reference from a test set.")
@click.option("-l", "--language-pair", metavar="SRC-TRG", help="The test set's language pair.")
@click.option(
    "--docids",
    metavar="FILE|testset",
    help="Document id of every reference line: the output then has one line per "
    "document (or one per reference line), each aligned within its document.",
)
@click.option(
    "--tokenize",
    "resegment_tokenize",
    type=click.Choice(["none", "13a", "char"]),
    help="Alignment tokenisation (default: char for zh/ja and other scripts without "
    "spaces, else 13a).",
)
@click.option("-o", "--output", metavar="FILE", help="Write the segments here (default: stdout).")
@click.option(
    "-e", "--encoding", default="utf-8", show_default=True, help="Encoding of input files."
)
@click.option("--offline", is_flag=True, help="Never use the network.")
@click.option("-q", "--quiet", is_flag=True, help="No summary line on stderr.")
def resegment_command(
    refs: tuple[str, ...],
    hypothesis: str | None,
    output: str | None,
    quiet: bool,
    **params: Any,
) -> None:
    """Cut an output whose lines do not match the reference into one segment per
    reference line (minimum-WER alignment, identical to mweralign 1.4.1).

    \b
      bleucli resegment ref.de -i unsegmented.de > resegmented.de
      bleucli resegment ref.de -i per-document.de --docids docids.txt -o resegmented.de
    """
    from bleucli.commands.request import Options
    from bleucli.commands.resegment import run

    configure_logging(quiet)
    options = Options(
        refs=refs,
        inputs=(hypothesis,) if hypothesis else (),
        resegment=True,
        resegment_output=output,
        quiet=quiet,
        **params,
    )
    text = run(options)
    if text:
        click.echo(text, nl=False)


def _stats_main(args: list[str]) -> list[str]:
    """``bleucli stats ...`` is the main command writing statistics instead of scores."""
    return ["--emit-stats", *args]


def deprecated(value: Any, old: str, new: str) -> Any:
    """A deprecated spelling still works, with a one-line warning naming the one to use."""
    if value is not None and value is not False and value != ():
        click.echo(f"bleucli: {old} is deprecated and will be removed: use {new}", err=True)
    return value


def configure_logging(quiet: bool) -> None:
    from bleucli.log import configure

    configure(quiet)


def single_threaded_blas() -> None:
    """One BLAS thread unless the user chose otherwise: the command line's matrix products
    (bootstrap draw counts x statistics) are small, and a thread pool spinning beside them
    doubled the CPU time of paired tests for no gain in wall time. Set before numpy loads;
    the Python API leaves the caller's setting alone."""
    import os

    # Threads that wait for work sleep instead of spinning (OpenMP's PASSIVE policy): on a
    # machine where other jobs run (a shared CI runner) spinning threads fight them for the
    # cores. Measured (scripts/BENCHMARKS-neural.md, COMET, 2 cores): as fast idle (1.03x),
    # and 58 s where spinning took 86-97 s and one thread 77 s beside two busy processes.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if "numpy" not in sys.modules:
        if "OMP_NUM_THREADS" not in os.environ:  # neural models take every core back
            from bleucli.neural.runtime import CLI_PINNED_THREADS

            os.environ[CLI_PINNED_THREADS] = "1"
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")


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


def run_command(selected: click.Command, args: list[str], prog: str, plugins: bool = False) -> None:
    """Run a click command as the tool runs every command: library errors as one line and
    their exit code, interrupts, a closed pipe (``bleucli.cli.server`` runs its commands
    through this too)."""
    try:
        if plugins:  # the metric plugins' options, when the arguments ask for one
            selected = with_plugin_options(selected, args)
        args = expand_prefixes(args, selected)
        returned = selected.main(
            expand_variadic(args, variadic_flags(selected)), prog_name=prog, standalone_mode=False
        )
        if isinstance(returned, int) and returned:  # click returns Exit codes here
            sys.exit(returned)
    except click.exceptions.Abort:
        click.echo("bleucli: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.exceptions.Exit as stop:
        sys.exit(stop.exit_code)
    except click.ClickException as err:
        err.show()
        sys.exit(EXIT_USAGE if isinstance(err, click.UsageError) else EXIT_ERROR)
    except BleucliError as err:
        click.echo(f"bleucli: error: {_one_line(str(err))}", err=True)
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        click.echo("bleucli: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except BrokenPipeError:  # the reader went away (`| head`): nothing left to say
        _quiet_stdout()
        sys.exit(EXIT_OK)
    except MemoryError:
        click.echo(
            "bleucli: error: out of memory; score the corpus in parts with "
            "`bleucli stats` and `bleucli merge`",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        click.echo(f"bleucli: error: {where}{err.strerror or err}", err=True)
        sys.exit(EXIT_ERROR)
    except Exception as err:  # a bug: one line unless the user asks for the traceback
        if os.environ.get("BLEUCLI_DEBUG", "") not in ("", "0"):
            raise
        click.echo(
            f"bleucli: internal error: {type(err).__name__}: {_one_line(str(err))} "
            f"(run with BLEUCLI_DEBUG=1 for the traceback, and please report it)",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_OK)


def _one_line(text: str) -> str:
    """Error messages are one line: embedded line breaks (from servers, files) are folded."""
    return " ".join(text.split())


def _quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush does
    not raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


__all__ = ["main", "command", "ConfigError", "InputError"]
