"""The scoring command's request: every option of ``bleucli`` as plain data, without click.

The command-line layer fills it in; :mod:`bleucli.commands.score` and the subcommands that score
(the statistical gate) take it. Kept in its own module so that neither side imports the other.
"""

from __future__ import annotations

from typing import Any


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
    emit_stats: bool = False
    detail: bool = False
    json_layout: str = "sacrebleu"
    segment_scores: tuple[str, ...] = ()
    docids: str | None = None
    rank: bool = False
    resegment: bool = False
    resegment_tokenize: str | None = None
    resegment_output: str | None = None

    def __init__(self, **values: Any) -> None:
        self.bleu: dict[str, Any] = {}
        self.chrf: dict[str, Any] = {}
        self.ter: dict[str, Any] = {}
        self.explicit: set[str] = set()
        for name, value in values.items():
            if not hasattr(self, name):
                raise TypeError(f"unknown option {name!r}")
            setattr(self, name, value)


#: Accepted ranges of numeric options: beyond them a run would exhaust memory or never end
#: (``-cc 100000000``) rather than compute anything useful. ``--from-signature`` values are
#: checked against the same ranges.
LIMITS: dict[str, tuple[str, int, int]] = {
    "width": ("-w/--width", 0, 30),
    "num_refs": ("-nr/--num-refs", 1, 1000),
    "confidence_n": ("-cin/--confidence-n", 1, 100_000),
    "paired_bs_n": ("-pbsn/--paired-bs-n", 1, 100_000),
    "paired_ar_n": ("-parn/--paired-ar-n", 1, 100_000),
    "jobs": ("-j/--jobs", 0, 1_000_000),
}
CHRF_LIMITS: dict[str, tuple[str, int, int]] = {
    "char_order": ("-cc/--chrf-char-order", 0, 100),
    "word_order": ("-cw/--chrf-word-order", 0, 100),
    "beta": ("--chrf-beta", 0, 1000),
}


def check_range(option: str, value: Any, low: int, high: int) -> int:
    """``value`` as an integer within ``low..high``, else a usage error naming ``option``."""
    from bleucli.errors import UsageError

    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{option} must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise UsageError(f"{option} must be between {low} and {high}, got {value}")
    return value


#: Options that belong to one metric: parameter -> (metric, its flag). (Until the metrics
#: declare their options themselves, this is the one list.)
METRIC_FLAGS: dict[str, tuple[str, str]] = {
    "tokenize": ("bleu", "-tok"), "lowercase": ("bleu", "-lc"),
    "smooth_method": ("bleu", "-s"), "smooth_value": ("bleu", "-sv"),
    "chrf_char_order": ("chrf", "-cc"), "chrf_word_order": ("chrf", "-cw"),
    "chrf_beta": ("chrf", "--chrf-beta"), "chrf_whitespace": ("chrf", "--chrf-whitespace"),
    "chrf_lowercase": ("chrf", "--chrf-lowercase"),
    "chrf_eps_smoothing": ("chrf", "--chrf-eps-smoothing"),
    "ter_case_sensitive": ("ter", "--ter-case-sensitive"),
    "ter_asian_support": ("ter", "--ter-asian-support"), "ter_no_punct": ("ter", "--ter-no-punct"),
    "ter_normalized": ("ter", "--ter-normalized"),
}  # fmt: skip


def unused_metric_options(explicit: set[str], metrics: tuple[str, ...]) -> list[str]:
    """Warnings for options given for a metric that is not selected (they change nothing)."""
    unused: dict[str, list[str]] = {}
    for parameter in sorted(explicit):
        metric, flag = METRIC_FLAGS.get(parameter, ("", ""))
        if metric and metric not in metrics:
            unused.setdefault(metric, []).append(flag)
    names = {"bleu": "BLEU", "chrf": "chrF", "ter": "TER"}
    return [
        f"{' '.join(flags)}: {'an option' if len(flags) == 1 else 'options'} of {names[metric]}, "
        f"which is not selected: add {metric} to -m, or drop {'it' if len(flags) == 1 else 'them'}"
        for metric, flags in unused.items()
    ]


def validate(options: Options) -> None:
    """Check every numeric option and the ones with a syntax of their own, once, after
    ``--from-signature`` has filled in its values; resolve ``-j 0`` and cap workers at the
    CPUs (more processes than cores only cost memory)."""
    import math
    import os

    from bleucli.errors import UsageError

    if options.language_pair is not None:
        from bleucli.languages import check_pair

        check_pair(options.language_pair)
    for attribute, (option, low, high) in LIMITS.items():
        check_range(option, getattr(options, attribute), low, high)
    for key, (option, low, high) in CHRF_LIMITS.items():
        if key in options.chrf:
            check_range(option, options.chrf[key], low, high)
    smooth_value = options.bleu.get("smooth_value")
    if smooth_value is not None and not (math.isfinite(smooth_value) and smooth_value >= 0):
        raise UsageError(f"-sv/--smooth-value must be a finite number >= 0, got {smooth_value}")
    if options.subset is not None:
        import re

        try:
            re.compile(options.subset.removeprefix("country:"))
        except re.error as err:
            raise UsageError(
                f"--subset {options.subset!r} is not a valid regular expression ({err})"
            ) from None
    for warning in unused_metric_options(options.explicit, options.metrics):
        from bleucli.log import logger

        logger.warning(warning)
    cpus = os.cpu_count() or 1
    if options.jobs > cpus:
        from bleucli.log import logger

        logger.info(f"-j {options.jobs}: using {cpus} worker processes, one per CPU")
        options.jobs = cpus


def default_format(allowed: tuple[str, ...]) -> str:
    """``BLEUCLI_FORMAT`` (else SacreBLEU's ``SACREBLEU_FORMAT``) when set; it must name
    one of ``allowed``. Otherwise JSON."""
    import os

    from bleucli.errors import UsageError

    name = "BLEUCLI_FORMAT" if "BLEUCLI_FORMAT" in os.environ else "SACREBLEU_FORMAT"
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return "json"
    if value not in allowed:
        raise UsageError(f"{name}={value!r} is not one of {', '.join(allowed)}")
    return value
