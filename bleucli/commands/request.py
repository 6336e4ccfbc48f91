"""The scoring command's request: every option of ``bleucli`` as plain data, without click.

The command-line layer fills it in; :mod:`bleucli.commands.score` and the subcommands that score
(the statistical gate) take it. Kept in its own module so that neither side imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from bleucli.display import WIDTH_RANGE
from bleucli.metrics.options import Option

if TYPE_CHECKING:
    from bleucli.scoring import ScoringRequest


@dataclass(frozen=True)
class Options:
    """The parsed command line, independent of click: a value. ``--from-signature`` makes a
    new one with what the signatures set (:func:`bleucli.commands.score.apply_signatures`),
    :func:`validate` checks it once; its metrics become the library's
    :class:`bleucli.scoring.ScoringRequest` (:meth:`scoring`)."""

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
    source: str | None = None
    rank: bool = False
    resegment: bool = False
    resegment_tokenize: str | None = None
    resegment_output: str | None = None

    #: Per metric (``-m`` name), the keywords of its declared options as given.
    metric_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ``-w METRIC=N``: decimals of one metric (``width`` is the 0-100 metrics').
    widths: dict[str, int] = field(default_factory=dict)
    #: The parameters the user gave (not defaults): conflicts and warnings need them.
    explicit: set[str] = field(default_factory=set)

    @classmethod
    def from_params(cls, params: Mapping[str, Any], **values: Any) -> Options:
        """The request from a click command's parameters: every field the command has, by
        its name, then ``values`` (what the command computes: the metrics' own options,
        decimals, the format)."""
        names = {item.name for item in fields(cls)}
        return cls(**{**{name: value for name, value in params.items() if name in names}, **values})

    def scoring(self) -> ScoringRequest:
        """The library's request (:class:`bleucli.scoring.ScoringRequest`): the metrics with
        their options, the language pair and the decimals, validated by the metrics'
        declarations."""
        from bleucli.metrics import metric_class
        from bleucli.scoring import MetricRequest, ScoringRequest

        for name in self.metrics:
            metric_class(name)  # an unknown metric: its own error, before its options
        return ScoringRequest(
            tuple(MetricRequest(name, dict(self.options_for(name))) for name in self.metrics),
            self.language_pair,
            self.width,
            self.sentence_level,
            tuple(sorted(self.widths.items())),
        )

    @property
    def precision(self) -> Any:
        """Each metric's decimals (:class:`bleucli.precision.Precision`)."""
        from bleucli.precision import Precision

        return Precision(self.width, tuple(sorted(self.widths.items())))

    def options_for(self, metric: str) -> Mapping[str, Any]:
        """The keywords given for ``metric`` (read-only: a new request changes them)."""
        return MappingProxyType(self.metric_options.get(metric, {}))

    @property
    def bleu(self) -> Mapping[str, Any]:
        return self.options_for("bleu")

    @property
    def chrf(self) -> Mapping[str, Any]:
        return self.options_for("chrf")

    @property
    def ter(self) -> Mapping[str, Any]:
        return self.options_for("ter")


#: The command's own numeric options, declared as the metrics declare theirs, so that one
#: validator (:meth:`Option.check`) checks every option. Beyond these ranges a run would
#: exhaust memory or never end (``-cc 100000000``) rather than compute anything useful;
#: ``--from-signature`` values are checked against the same declarations.
COMMAND_OPTIONS: tuple[Option, ...] = (
    Option("width", ("-w", "--width"), "decimals", kind="int", low=WIDTH_RANGE[0], high=WIDTH_RANGE[1]),
    Option("num_refs", ("-nr", "--num-refs"), "references per line", kind="int", low=1, high=1000),
    Option("confidence_n", ("-cin", "--confidence-n"), "bootstrap resamples", kind="int", low=1, high=100_000),
    Option("paired_bs_n", ("-pbsn", "--paired-bs-n"), "paired bootstrap resamples", kind="int", low=1, high=100_000),
    Option("paired_ar_n", ("-parn", "--paired-ar-n"), "randomisation trials", kind="int", low=1, high=100_000),
    Option("jobs", ("-j", "--jobs"), "worker processes", kind="int", low=0, high=1_000_000),
)  # fmt: skip


def command_option(keyword: str) -> Option:
    """One of :data:`COMMAND_OPTIONS` by keyword."""
    return next(option for option in COMMAND_OPTIONS if option.keyword == keyword)


def check_range(option: str, value: Any, low: int, high: int) -> int:
    """``value`` as a whole number within ``low..high``, else a usage error naming ``option``
    (a subcommand's own number, checked by the one validator)."""
    return int(Option(option, (), option, kind="int", low=low, high=high, cli=False).check(value))


def metric_flags(names: tuple[str, ...] | None = None) -> dict[str, tuple[str, str]]:
    """Options that belong to one metric: command-line parameter -> (metric, its first
    flag), from the metrics' declarations."""
    from bleucli.metrics import builtin_names, metric_class

    return {
        option.param: (name, option.flags[0])
        for name in (names or tuple(builtin_names()))
        for option in metric_class(name).OPTIONS
        if option.cli
    }


def unused_metric_options(explicit: set[str], metrics: tuple[str, ...]) -> list[str]:
    """Warnings for options given for a metric that is not selected (they change nothing)."""
    from bleucli.metrics import metric_class

    flags = metric_flags()
    unused: dict[str, list[str]] = {}
    for parameter in sorted(explicit):
        metric, flag = flags.get(parameter, ("", ""))
        if metric and metric not in metrics:
            unused.setdefault(metric, []).append(flag)
    return [
        f"{' '.join(given)}: {'an option' if len(given) == 1 else 'options'} of "
        f"{metric_class(metric).name}, which is not selected: add {metric} to -m, or drop "
        f"{'it' if len(given) == 1 else 'them'}"
        for metric, given in unused.items()
    ]


def validate(options: Options) -> Options:
    """Check every numeric option and the ones with a syntax of their own, once, after
    ``--from-signature`` has filled in its values; the request with workers capped at the
    CPUs (more processes than cores only cost memory)."""
    import os

    from bleucli.errors import UsageError

    if options.language_pair is not None:
        from bleucli.languages import check_pair

        check_pair(options.language_pair)
    for declared in COMMAND_OPTIONS:
        declared.check(getattr(options, declared.keyword))
    from bleucli.metrics import metric_class

    for metric, given in options.metric_options.items():  # each option's own declaration
        for option in metric_class(metric).OPTIONS:
            option.check(given.get(option.keyword))
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
        return replace(options, jobs=cpus)
    return options


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
