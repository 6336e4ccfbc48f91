"""One scoring layer under every front end: a typed, validated, JSON-serialisable request --
which metrics with which options, the language pair, the decimals -- and :func:`score`, which
scores one system against its references and returns the results and, from the same pass,
every sentence's statistics.

The command line, the evaluation server (which stores a test set's request as JSON),
``bleucli verify`` (which rebuilds one from a receipt's signatures), the gate and the
SacreBLEU layer build requests; none of them parses another's command line. Options are
checked against the metrics' own declarations (:mod:`bleucli.metrics.options`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bleucli.errors import ConfigError, UsageError
from bleucli.metrics import output_order

if TYPE_CHECKING:
    from bleucli.metrics.base import Metric
    from bleucli.results import Result

from bleucli.precision import WIDTH_RANGE, Precision, check_width

__all__ = ["WIDTH_RANGE", "MetricRequest", "Scored", "ScoringRequest", "score", "score_totals"]


@dataclass(frozen=True)
class MetricRequest:
    """One metric (its ``-m`` name) with the keywords of its declared options."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "options": dict(self.options)}


@dataclass(frozen=True)
class ScoringRequest:
    """What to score with: metrics and options, the language pair (its target picks BLEU's
    tokeniser), the decimals (``width`` for the metrics that follow ``-w``, ``widths`` per
    metric: :mod:`bleucli.precision`), and whether scores are per sentence (BLEU's effective
    order)."""

    metrics: tuple[MetricRequest, ...]
    language_pair: str | None = None
    width: int = 1
    sentence_level: bool = False
    widths: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        validate(self)

    @property
    def names(self) -> list[str]:
        return [metric.name for metric in self.metrics]

    @property
    def precision(self) -> Precision:
        """Each metric's decimals."""
        return Precision(self.width, self.widths)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "metrics": [metric.to_json() for metric in self.metrics],
            "language_pair": self.language_pair,
            "width": self.width,
            "sentence_level": self.sentence_level,
        }
        if self.widths:  # only when given: stored requests of earlier versions stay equal
            out["widths"] = dict(self.widths)
        return out

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    @classmethod
    def from_json(cls, data: Any, where: str = "the request") -> ScoringRequest:
        """A request from its JSON form, checked (unknown metrics, options and values are
        refused with the field named)."""
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except ValueError as err:
                raise UsageError(f"{where}: not JSON ({err})") from None
        if not isinstance(data, dict) or not isinstance(data.get("metrics"), list):
            raise UsageError(f'{where}: a JSON object with "metrics": [...]')
        unknown = set(data) - {"metrics", "language_pair", "width", "sentence_level", "widths"}
        if unknown:
            raise UsageError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        metrics = []
        for k, item in enumerate(data["metrics"]):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise UsageError(f'{where}: metrics[{k}] needs a "name"')
            options = item.get("options", {})
            if not isinstance(options, dict):
                raise UsageError(f"{where}: metrics[{k}].options must be an object")
            metrics.append(MetricRequest(item["name"].lower(), options))
        widths = data.get("widths", {})
        if not isinstance(widths, dict):
            raise UsageError(f'{where}: "widths" must be an object {{"comet": 4}}')
        return cls(
            tuple(metrics),
            data.get("language_pair"),
            data.get("width", 1),
            bool(data.get("sentence_level", False)),
            tuple(sorted(widths.items())),
        )

    @classmethod
    def from_args(cls, args: Sequence[str]) -> ScoringRequest:
        """A request from the scoring command's metric options as a command line gives them
        (``-m bleu chrf -tok intl -cw 2 -w 2``), read with the metrics' declarations (no
        command-line parser needed: a server's stored settings, add-testset's options)."""
        return parse_metric_args(args)

    @classmethod
    def from_signatures(cls, signatures: Sequence[str], width: int = 1) -> ScoringRequest:
        """The request that reproduces results from their signatures (``BLEU|nrefs:1|...``):
        each metric with the options its signature names (``bleucli verify``, a receipt)."""
        from bleucli.signature import parse_signature

        metrics = []
        for text in signatures:
            parsed = parse_signature(text)
            metrics.append(MetricRequest(parsed.metric, parsed.metric_options()))
        return cls(tuple(metrics), None, width)

    def metric_kwargs(self) -> dict[str, tuple[type[Metric], dict[str, Any]]]:
        """Per metric, its class and the keywords it is built with."""
        from bleucli.metrics import metric_class

        target = self.language_pair.split("-")[-1] if self.language_pair else ""
        out: dict[str, tuple[type[Metric], dict[str, Any]]] = {}
        for metric in self.metrics:
            cls = metric_class(metric.name)
            kwargs = dict(metric.options)
            if metric.name == "bleu":
                kwargs["trg_lang"] = target
                if self.sentence_level:
                    kwargs["effective_order"] = True
            out[metric.name] = (cls, kwargs)
        return out

    def build(
        self, references: list[list[str]], sources: list[str] | None = None
    ) -> dict[str, Metric]:
        """The metric objects, with the references prepared once (and the source
        sentences for the metrics that read them: COMET and its kin)."""
        out: dict[str, Metric] = {}
        for name, (cls, kwargs) in self.metric_kwargs().items():
            if cls.uses_source:
                kwargs = {**kwargs, "sources": sources}
            out[name] = cls(**kwargs, references=references)
        return out

    @property
    def uses_source(self) -> bool:
        """Whether a metric of the request reads the source sentences."""
        from bleucli.metrics import metric_class

        return any(metric_class(m.name).uses_source for m in self.metrics)


def validate(request: ScoringRequest) -> None:
    """Refuse what no metric could be built with: an unknown metric or option, a value out of
    its declared range, a malformed language pair, decimals out of range."""
    from bleucli.metrics import metric_class

    if not request.metrics:
        raise UsageError("a scoring request needs at least one metric")
    seen = set()
    for metric in request.metrics:
        if metric.name in seen:
            raise UsageError(f"metric {metric.name} is requested twice")
        seen.add(metric.name)
        declared = {option.keyword: option for option in metric_class(metric.name).OPTIONS}
        for keyword, value in metric.options.items():
            if keyword not in declared:
                raise UsageError(
                    f"{metric.name} has no option {keyword!r}; its options: "
                    f"{', '.join(declared) or 'none'}"
                )
            declared[keyword].check(value)
    check_width(request.width)
    for key, value in request.widths:
        check_width(value, f"-w {key}=")
    if request.language_pair is not None:
        from bleucli.languages import check_pair

        check_pair(request.language_pair)


def parse_metric_args(args: Sequence[str]) -> ScoringRequest:
    """The metric options of a scoring command line: ``-m`` names, each metric's declared
    flags (short, long, a unique prefix of a long one, ``--flag=value``), ``-w/--width`` and
    ``-sl``. Anything else is refused with its name."""
    from bleucli.metrics import available_metrics, builtin_names, metric_class

    names: list[str] = []
    given: dict[str, dict[str, Any]] = {}
    width = 1
    widths: dict[str, int] = {}
    sentence_level = False
    flags: dict[str, tuple[str, Any]] = {}

    def learn(metric_names: Sequence[str]) -> None:
        for name in metric_names:
            for option in metric_class(name).OPTIONS:
                for flag in option.flags:
                    if flag in flags and flags[flag][0] != name:
                        raise ConfigError(
                            f"metric plugin {name}: its option {flag} is already "
                            f"{flags[flag][0]}'s; the plugin must declare other flags"
                        )
                    flags[flag] = (name, option)

    learn(builtin_names())
    plugins_learned = False
    tokens = list(args)
    k = 0
    while k < len(tokens):
        token = tokens[k]
        head, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        k += 1
        if head in ("-m", "--metrics"):
            while k < len(tokens) and not tokens[k].startswith("-"):
                names.append(tokens[k].lower())
                k += 1
            if any(name not in builtin_names() for name in names) and not plugins_learned:
                learn([n for n in available_metrics() if n not in builtin_names()])
                plugins_learned = True
            continue
        if head in ("-w", "--width"):
            value = inline if eq else (tokens[k] if k < len(tokens) else "")
            k += 0 if eq else 1
            key, per_metric, value = value.rpartition("=") if "=" in value else ("", "", value)
            try:
                number = int(value)
            except ValueError:
                raise UsageError(f"-w/--width: {value!r} is not a whole number") from None
            if per_metric:
                widths[key.lower()] = number
            else:
                width = number
            continue
        if head in ("-sl", "--sentence-level"):
            sentence_level = True
            continue
        if head.startswith("-") and head not in flags and not plugins_learned:
            learn([n for n in available_metrics() if n not in builtin_names()])  # a plugin's?
            plugins_learned = True
        if head.startswith("--") and head not in flags:
            matches = [flag for flag in flags if flag.startswith(head)]
            if len(matches) == 1:
                head = matches[0]
        if head not in flags:
            raise UsageError(
                f"{token}: not a metric option of the scoring command (-m, -tok, -lc, -cw, ...)"
            )
        metric, option = flags[head]
        if option.kind == "flag":
            given.setdefault(metric, {})[option.keyword] = True
            continue
        if eq:
            text = inline
        elif k < len(tokens):
            text, k = tokens[k], k + 1
        else:
            raise UsageError(f"{head} needs a value")
        given.setdefault(metric, {})[option.keyword] = _typed(option, text)
    names = names or ["bleu"]
    return ScoringRequest(
        tuple(MetricRequest(name, _with_defaults(name, given.get(name, {}))) for name in names),
        None,
        width,
        sentence_level,
        tuple(sorted(widths.items())),
    )


def _typed(option: Any, text: str) -> Any:
    try:
        if option.kind == "int":
            return int(text)
        if option.kind == "float":
            return float(text)
    except ValueError:
        raise UsageError(f"{option.label}: {text!r} is not a number") from None
    return text


def _with_defaults(name: str, given: dict[str, Any]) -> dict[str, Any]:
    """Every declared option of ``name``: as given, else its default (the command line's
    behaviour, so a stored request says everything that was used)."""
    from bleucli.metrics import metric_class

    return {
        option.keyword: given.get(
            option.keyword, option.default if option.kind != "flag" else False
        )
        for option in metric_class(name).OPTIONS
        if option.cli
    }


@dataclass
class Scored:
    """One system's results (in the command line's order: metrics sorted by name), their
    JSON as ``bleucli -f json`` prints it, and every sentence's statistics per metric."""

    results: list[Result]
    stats: dict[str, list[list[float]]]
    width: int | Precision

    @property
    def scores(self) -> dict[str, float]:
        """Metric name (``BLEU``, ``chrF2``) -> score, as the JSON prints it."""
        document = json.loads(self.json())
        entries = document if isinstance(document, list) else [document]
        return {entry["name"]: float(entry["score"]) for entry in entries}

    def json(self) -> str:
        from bleucli.formats import single_system

        return single_system(self.results, "json", self.width, False, False)


def score(
    request: ScoringRequest,
    hypotheses: list[str],
    references: list[list[str]],
    system: str = "",
    metrics: dict[str, Metric] | None = None,
    *,
    n_bootstrap: int = 1,
    signature_fields: dict[str, str | None] | None = None,
    keep_stats: bool = True,
    progress: Any = None,
) -> Scored:
    """Score ``hypotheses`` against ``references`` (one list of lines per reference) in one
    pass: the corpus scores are the summed sentence statistics' (``metrics``: objects built
    by :meth:`ScoringRequest.build` for these references, to reuse). The command line, the
    server and ``verify`` score through here: ``n_bootstrap`` adds 95% intervals (``-ci``),
    ``signature_fields`` the test set's fields (``test:``, ``lang:``...), ``progress(1)``
    after each metric; ``keep_stats=False`` keeps no per-sentence statistics."""
    metrics = metrics if metrics is not None else request.build(references)
    results = []
    stats: dict[str, list[list[float]]] = {}
    for name, metric in output_order(metrics):
        rows = metric.per_sentence_stats(hypotheses, None)
        if keep_stats:
            stats[name] = [list(row) for row in rows]
        results.append(
            result_of(metric, metric.score_rows(rows, n_bootstrap), system, signature_fields)
        )
        if progress is not None:
            progress(1)
    return Scored(results, stats, request.precision)


def score_totals(
    metrics: dict[str, Metric],
    totals: Mapping[str, Sequence[float]],
    system: str = "",
    signature_fields: dict[str, str | None] | None = None,
) -> list[Result]:
    """The results of summed sentence statistics (``totals``: per metric), in output order:
    where streaming, which never holds every sentence, ends, as :func:`score` does."""
    return [
        result_of(metric, metric.score_from_values(list(totals[name])), system, signature_fields)
        for name, metric in output_order(metrics)
    ]


def result_of(
    metric: Metric, value: Any, system: str, signature_fields: dict[str, str | None] | None = None
) -> Result:
    """One metric's result: its score and its signature, with the test set's fields."""
    from bleucli.results import Result

    signature = metric.get_signature()
    for key, field_value in (signature_fields or {}).items():
        if field_value is not None:
            signature.update(key, field_value)
    return Result(system, value, str(signature), signature.format(short=True))
