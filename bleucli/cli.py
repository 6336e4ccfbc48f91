"""The ``bleucli`` command: parse options, call the library, print, exit.

Flags and their meaning follow SacreBLEU 2.x's CLI so existing scripts keep working. Exit
codes (stable): 0 success, 1 bad data or options (a one-line ``bleucli: error:`` message on
stderr), 2 command-line usage errors (click's), 3 ``bleucli gate`` failed, 130 interrupted.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from bleucli.errors import BleucliError, ConfigError, InputError
from bleucli.version import __version__

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

#: Options that take several values (``-i a.txt b.txt``), as SacreBLEU's argparse ``nargs``.
_VARIADIC = {"-i", "--input", "-m", "--metrics", "--echo"}

OUTPUT_FORMATS = ("json", "text", "latex", "markdown", "tsv", "html")


def expand_variadic(argv: Sequence[str]) -> list[str]:
    """Rewrite ``-i a b`` as ``-i a -i b`` so click's ``multiple=True`` options take lists."""
    out: list[str] = []
    current: str | None = None
    for arg in argv:
        if arg == "--":
            current = None
            out.append(arg)
        elif arg in _VARIADIC:
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


class Options:
    """The parsed command line, independent of click.

    A plain class rather than a dataclass: ``dataclasses`` costs start-up time that
    ``bleucli --help`` should not pay.
    """

    refs: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ("bleu",)
    language_pair: str | None = None
    test_set: str | None = None
    origlang: str | None = None
    subset: str | None = None
    echo: tuple[str, ...] = ()
    list_sets: bool = False
    citation: bool = False
    download: str | None = None
    testsets_files: tuple[str, ...] = ()
    offline: bool = False
    num_refs: int = 1
    encoding: str = "utf-8"
    sentence_level: bool = False
    width: int = 1
    score_only: bool = False
    fmt: str = "json"
    quiet: bool = False
    short: bool = False
    from_signature: tuple[str, ...] = ()
    jobs: int = 1
    confidence: bool = False
    confidence_n: int = 1000
    paired_bs: bool = False
    paired_ar: bool = False
    paired_bs_n: int = 1000
    paired_ar_n: int = 10000
    paired_jobs: int = 1
    emit_stats: bool = False
    detail: bool = False

    def __init__(self, **values: Any) -> None:
        self.bleu: dict[str, Any] = {}
        self.chrf: dict[str, Any] = {}
        self.ter: dict[str, Any] = {}
        self.explicit: set[str] = set()
        for name, value in values.items():
            if not hasattr(self, name):
                raise TypeError(f"unknown option {name!r}")
            setattr(self, name, value)


@click.command(
    name="bleucli",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="\b\nSubcommands: bleucli report RESULT.json...   (one table from many results)\n"
           "             bleucli gate CURRENT.json --baseline BASE.json   (CI regression gate)\n"
           "             bleucli stats REFS -i HYP ... > shard.json       (mergeable statistics)\n"
           "             bleucli merge shard*.json                         (their corpus score)\n"
           "Exit codes: 0 ok, 1 bad input or options, 2 usage error, 3 gate failed, "
           "130 interrupted.",
)
@click.argument("refs", nargs=-1, metavar="[REFS]...")
@click.option("-i", "--input", "inputs", multiple=True, metavar="FILE...",
              help="Hypothesis file(s); standard input when absent. Several files: one per system.")
@click.option("-m", "--metrics", multiple=True, metavar="NAME...",
              help="Metrics to compute: bleu, chrf, ter (default: bleu).")
@click.option("-t", "--test-set", metavar="NAME[,NAME...]",
              help="Named test set(s) to score against (references are concatenated).")
@click.option("-l", "--language-pair", metavar="SRC-TRG",
              help="Language pair; its target picks the default tokenizer (zh, ja, ko).")
@click.option("-ol", "--origlang", metavar="LANG",
              help="Only documents originally in LANG (non-LANG: all others); WMT sets.")
@click.option("--subset", metavar="REGEX",
              help="Only documents whose domain/annotation matches REGEX; WMT sets.")
@click.option("--echo", multiple=True, metavar="FIELD...",
              help="Print test-set fields (src, ref, docid, origlang, ..., or all) and exit.")
@click.option("--list", "list_sets", is_flag=True,
              help="List test sets (with -t: their language pairs and fields) and exit.")
@click.option("--citation", "--cite", is_flag=True, help="Print the test set's BibTeX and exit.")
@click.option("--download", metavar="NAME", help="Fetch a test set into the cache and exit.")
@click.option("--testsets-file", "testsets_files", multiple=True, metavar="FILE",
              help="Extra test-set registry (JSON); repeatable. Env: BLEUCLI_TESTSETS.")
@click.option("--offline", is_flag=True,
              help="Never use the network (env BLEUCLI_OFFLINE=1); cached sets only.")
@click.option("-nr", "--num-refs", type=int, default=1, show_default=True,
              help="Split each reference line on tabs into this many references.")
@click.option("-e", "--encoding", default="utf-8", show_default=True,
              help="Encoding of input files.")
@click.option("-tok", "--tokenize", metavar="NAME",
              help="BLEU tokenizer: none, 13a, intl, char, zh, ja-mecab, ko-mecab, spm, "
                   "flores101, flores200 (default: by target language, else 13a).")
@click.option("-lc", "--lowercase", is_flag=True, help="Case-insensitive BLEU.")
@click.option("-s", "--smooth-method", default="exp", show_default=True,
              metavar="exp|floor|add-k|none", help="BLEU smoothing method.")
@click.option("-sv", "--smooth-value", type=float,
              help="Smoothing value for floor (default 0.1) and add-k (default 1).")
@click.option("--force", is_flag=True, help="Do not warn about input that looks tokenised.")
@click.option("-cc", "--chrf-char-order", type=int, default=6, show_default=True,
              help="chrF character n-gram order.")
@click.option("-cw", "--chrf-word-order", type=int, default=0, show_default=True,
              help="chrF word n-gram order (2 = chrF++).")
@click.option("--chrf-beta", type=int, default=2, show_default=True,
              help="chrF recall weight.")
@click.option("--chrf-whitespace", is_flag=True, help="chrF: keep spaces in character n-grams.")
@click.option("--chrf-lowercase", is_flag=True, help="Case-insensitive chrF.")
@click.option("--chrf-eps-smoothing", is_flag=True,
              help="chrF: epsilon smoothing (chrF++.py, NLTK, Moses) instead of effective order.")
@click.option("--ter-case-sensitive", is_flag=True, help="Case-sensitive TER.")
@click.option("--ter-asian-support", is_flag=True, help="TER: split CJK characters.")
@click.option("--ter-no-punct", is_flag=True, help="TER: remove punctuation.")
@click.option("--ter-normalized", is_flag=True, help="TER: tercom normalisation/tokenisation.")
@click.option("-sl", "--sentence-level", is_flag=True, help="Score every sentence.")
@click.option("-ci", "--confidence", is_flag=True,
              help="Bootstrap 95% confidence interval per metric (seed: BLEUCLI_SEED).")
@click.option("-cin", "--confidence-n", type=click.IntRange(min=1), default=1000,
              show_default=True, help="Bootstrap resamples for --confidence.")
@click.option("-pbs", "--paired-bs", is_flag=True,
              help="Paired bootstrap test of every -i system against the first.")
@click.option("-par", "--paired-ar", is_flag=True,
              help="Paired approximate randomisation test against the first system.")
@click.option("-pbsn", "--paired-bs-n", type=click.IntRange(min=1), default=1000,
              show_default=True, help="Resamples for --paired-bs.")
@click.option("-parn", "--paired-ar-n", type=click.IntRange(min=1), default=10000,
              show_default=True, help="Trials for --paired-ar.")
@click.option("-j", "--paired-jobs", type=click.IntRange(min=0), default=1, show_default=True,
              help="Worker processes for paired tests (same results for any number); 0: "
                   "one per system, at most half the CPUs (as SacreBLEU).")
@click.option("--emit-stats", is_flag=True, hidden=True)  # set by `bleucli stats`
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes for big files (same result for any number).")
@click.option("--from-signature", multiple=True, metavar="SIG",
              help="Score with exactly the options a published signature states "
                   "(repeat for several metrics).")
@click.option("-f", "--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default=None,
              help="Output format (default json; env BLEUCLI_FORMAT).")
@click.option("-w", "--width", type=int, default=1, show_default=True,
              help="Decimal places of scores.")
@click.option("-b", "--score-only", is_flag=True, help="Print only the score.")
@click.option("-q", "--quiet", is_flag=True, help="No informational messages or progress bars.")
@click.option("-nc", "--no-color", is_flag=True,
              help="Accepted for SacreBLEU compatibility; bleucli prints no colours.")
@click.option("-sh", "--short", is_flag=True, help="Abbreviated signature.")
@click.option("-d", "--detail", is_flag=True,
              help="Also score each origlang and subset of the test set (text output).")
@click.version_option(__version__, "-V", "--version", prog_name="bleucli",
                      message="%(prog)s %(version)s")
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
    explicit = {
        name for name in params
        if ctx.get_parameter_source(name) not in (click.core.ParameterSource.DEFAULT, None)
    }
    fmt = params["fmt"]
    if fmt is None:
        env_fmt = os.environ.get("BLEUCLI_FORMAT", "").lower()
        fmt = env_fmt if env_fmt in OUTPUT_FORMATS else "json"
    options = Options(
        refs=params["refs"], inputs=params["inputs"],
        metrics=tuple(m.lower() for m in params["metrics"]) or ("bleu",),
        language_pair=params["language_pair"], test_set=params["test_set"],
        origlang=params["origlang"], subset=params["subset"], echo=params["echo"],
        list_sets=params["list_sets"], citation=params["citation"],
        download=params["download"], testsets_files=params["testsets_files"],
        offline=params["offline"], num_refs=params["num_refs"],
        encoding=params["encoding"], sentence_level=params["sentence_level"],
        width=params["width"], score_only=params["score_only"], fmt=fmt,
        quiet=params["quiet"], short=params["short"],
        from_signature=params["from_signature"], jobs=params["jobs"],
        confidence=params["confidence"], confidence_n=params["confidence_n"],
        paired_bs=params["paired_bs"], paired_ar=params["paired_ar"],
        paired_bs_n=params["paired_bs_n"], paired_ar_n=params["paired_ar_n"],
        paired_jobs=params["paired_jobs"], emit_stats=params["emit_stats"],
        detail=params["detail"],
        bleu={
            "tokenize": params["tokenize"], "lowercase": params["lowercase"],
            "smooth_method": params["smooth_method"], "smooth_value": params["smooth_value"],
            "force": params["force"],
        },
        chrf={
            "char_order": params["chrf_char_order"], "word_order": params["chrf_word_order"],
            "beta": params["chrf_beta"], "whitespace": params["chrf_whitespace"],
            "lowercase": params["chrf_lowercase"], "eps_smoothing": params["chrf_eps_smoothing"],
        },
        ter={
            "case_sensitive": params["ter_case_sensitive"],
            "asian_support": params["ter_asian_support"], "no_punct": params["ter_no_punct"],
            "normalized": params["ter_normalized"],
        },
        explicit=explicit,
    )
    _configure_logging(options.quiet)
    from bleucli.runner import run

    output = run(options)
    if output:
        click.echo(output)


@click.command(name="report",
               context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("results", nargs=-1, required=True, metavar="[NAME:]RESULT.json...")
@click.option("-f", "--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="text",
              show_default=True)
@click.option("-w", "--width", type=int, default=1, show_default=True)
def report_command(results: tuple[str, ...], fmt: str, width: int) -> None:
    """Systems x test sets x metrics from bleucli JSON results (one file per system)."""
    from bleucli.report import build_report

    click.echo(build_report(list(results), fmt, width))


@click.command(name="gate", context_settings={"help_option_names": ["-h", "--help"]},
               epilog="Exit codes: 0 all checks passed, 3 a check failed, 1 unusable input, "
                      "2 usage error.")
@click.argument("current", metavar="CURRENT.json")
@click.option("--baseline", "baseline_path", required=True, metavar="FILE",
              help="Baseline results (JSON written by bleucli).")
@click.option("--tolerance", type=float, default=0.0, show_default=True,
              help="Allowed drop in absolute points for every metric.")
@click.option("--tolerance-for", multiple=True, metavar="METRIC=POINTS",
              help="Per-metric tolerance, e.g. chrF2=0.5 (repeatable).")
@click.option("--min-score", multiple=True, metavar="METRIC=SCORE",
              help="Required score, e.g. BLEU=30 (for TER: the maximum).")
@click.option("--update-baseline", is_flag=True,
              help="Replace the baseline with the current results (atomically) and pass.")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--junit", metavar="FILE", help="Also write a JUnit XML report.")
@click.option("--baseline-output", metavar="FILE",
              help="Statistical gate: the baseline system's translations. A drop then fails "
                   "only if a paired bootstrap test finds it significant.")
@click.option("--output", "current_output", metavar="FILE",
              help="Statistical gate: the current system's translations.")
@click.option("--refs", multiple=True, metavar="FILE",
              help="Statistical gate: reference file(s); default: the test set named in the "
                   "results' signatures.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Statistical gate: significance level.")
@click.option("--paired-bs-n", type=int, default=1000, show_default=True,
              help="Statistical gate: bootstrap resamples.")
def gate_command(current: str, baseline_path: str, tolerance: float,
                 tolerance_for: tuple[str, ...], min_score: tuple[str, ...],
                 update_baseline: bool, fmt: str, junit: str | None,
                 baseline_output: str | None, current_output: str | None,
                 refs: tuple[str, ...], alpha: float, paired_bs_n: int) -> None:
    """Compare CURRENT.json (bleucli's JSON output; - for stdin) with a baseline."""
    from bleucli import gate

    current_results = gate.load_results(current)
    if update_baseline:
        records = list(current_results.values())
        gate.write_atomic(baseline_path, json.dumps(
            records[0] if len(records) == 1 else records, indent=1, ensure_ascii=False) + "\n")
        click.echo(f"baseline {baseline_path} updated with {len(records)} result(s)")
        return
    baseline_results = gate.load_results(baseline_path)
    checks = gate.run_checks(baseline_results, current_results, tolerance,
                             gate.parse_thresholds(tolerance_for, "--tolerance-for"),
                             gate.parse_thresholds(min_score, "--min-score"))
    if baseline_output or current_output:
        from bleucli.runner import significance_gate

        checks = significance_gate(checks, baseline_results, current_results,
                                   baseline_output, current_output, refs, alpha, paired_bs_n)
    click.echo(gate.render_json(checks) if fmt == "json" else gate.render_text(checks))
    if os.environ.get("GITHUB_ACTIONS") == "true":
        annotations = gate.github_annotations(checks)
        if annotations:
            click.echo(annotations)
    if junit:
        gate.write_junit(checks, junit)
    if any(c.status == "fail" for c in checks):
        raise click.exceptions.Exit(gate.EXIT_GATE_FAILED)


@click.command(name="merge", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("shards", nargs=-1, required=True, metavar="SHARD.json...")
@click.option("-f", "--format", "fmt", type=click.Choice(["json", "text"]), default=None)
@click.option("-w", "--width", type=int, default=1, show_default=True)
@click.option("-b", "--score-only", is_flag=True)
@click.option("-sh", "--short", is_flag=True)
def merge_command(shards: tuple[str, ...], fmt: str | None, width: int, score_only: bool,
                  short: bool) -> None:
    """Add statistics written by `bleucli stats` and print the corpus score."""
    from bleucli.formats import Result, single_system
    from bleucli.metrics.base import Signature
    from bleucli.shards import merge

    if fmt is None:
        env_fmt = os.environ.get("BLEUCLI_FORMAT", "").lower()
        fmt = env_fmt if env_fmt in ("json", "text") else "json"
    results = []
    for metric, score, signature in merge(list(shards)):
        shortener = Signature(1, {}, metric.signature_abbreviations)
        results.append(Result("merged", score, signature, shortener.shorten(signature)))
    click.echo(single_system(results, fmt, width, score_only, short))


def _stats_main(args: list[str]) -> list[str]:
    """``bleucli stats ...`` is the main command writing statistics instead of scores."""
    return ["--emit-stats", *args]


SUBCOMMANDS = {"report": report_command, "gate": gate_command, "merge": merge_command}


def _configure_logging(quiet: bool) -> None:
    """Messages go to stderr as ``bleucli: ...``; ``-q`` keeps only warnings and errors."""
    import logging

    class StderrHandler(logging.StreamHandler):
        """Writes to whatever ``sys.stderr`` is at the time (tests and tools swap it)."""

        @property  # type: ignore[override]
        def stream(self):
            return sys.stderr

        @stream.setter
        def stream(self, _value) -> None:
            pass

    logger = logging.getLogger("bleucli")
    handler = StderrHandler()
    handler.setFormatter(logging.Formatter("bleucli: %(message)s"))
    logger.handlers[:] = [handler]
    logger.setLevel(logging.WARNING if quiet else logging.INFO)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: turns library errors into one-line messages and exit codes."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:  # let `bleucli ... | head` end quietly, as Unix tools do
        from signal import SIG_DFL, SIGPIPE, signal

        signal(SIGPIPE, SIG_DFL)
    except (ImportError, ValueError):
        pass
    selected, prog = command, "bleucli"
    if args and args[0] == "stats":
        args = _stats_main(args[1:])
    elif args and args[0] in SUBCOMMANDS:
        selected, prog, args = SUBCOMMANDS[args[0]], f"bleucli {args[0]}", args[1:]
    try:
        returned = selected.main(expand_variadic(args) if selected is command else args,
                                 prog_name=prog, standalone_mode=False)
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
        click.echo(f"bleucli: error: {err}", err=True)
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        click.echo("bleucli: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(EXIT_OK)


__all__ = ["main", "command", "Options", "ConfigError", "InputError"]
