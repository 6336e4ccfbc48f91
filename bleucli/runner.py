"""What the command line does, without click: load inputs, build metrics, score, format.

Kept apart from :mod:`bleucli.cli` so it can be called and tested as plain Python.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from bleucli.errors import ConfigError, InputError
from bleucli.formats import Result, multi_system, single_system
from bleucli.io import (
    TextSource,
    check_same_length,
    decode_lines,
    read_file,
    require_nonempty,
    split_multi_references,
)
from bleucli.metrics import metric_class
from bleucli.metrics.base import Metric

if TYPE_CHECKING:
    from bleucli.cli import Options

logger = logging.getLogger("bleucli")

#: CLI option name -> the signature field it conflicts with under ``--from-signature``.
_SIGNATURE_OPTIONS = {
    "tokenize": "tok", "lowercase": "case", "smooth_method": "smooth",
    "smooth_value": "smooth",
}
#: Signature fields that need features this version does not have.
_UNSUPPORTED_FIELDS = {
    "test": "named test sets", "lang": "named test sets", "origlang": "named test sets",
    "subset": "named test sets", "bs": "bootstrap confidence intervals",
    "ar": "approximate randomisation", "seed": "resampling seeds",
}


def apply_signature(options: Options) -> int | None:
    """Set BLEU options from ``--from-signature``; returns the reference count it demands."""
    from bleucli.signature import parse_signature

    parsed = parse_signature(options.from_signature or "")
    for key in parsed.fields:
        if key in _UNSUPPORTED_FIELDS:
            raise ConfigError(
                f"signature field {key}:{parsed.fields[key]} needs {_UNSUPPORTED_FIELDS[key]}, "
                f"which bleucli cannot apply here"
            )
    for name, sig_key in _SIGNATURE_OPTIONS.items():
        if name in options.explicit and sig_key in parsed.fields:
            raise ConfigError(
                f"--{name.replace('_', '-')} conflicts with --from-signature, "
                f"which sets {sig_key}:{parsed.fields[sig_key]}"
            )
    if set(options.metrics) != {parsed.metric}:
        if "metrics" in options.explicit:
            raise ConfigError(f"--metrics conflicts with the {parsed.metric} signature")
        options.metrics = (parsed.metric,)
    options.bleu.update(parsed.bleu_options())
    if "eff" in parsed.fields and parsed.fields["eff"] == "yes" and not options.sentence_level:
        options.bleu["effective_order"] = True
    version = parsed.fields.get("version")
    if version:
        logger.info(f"reproducing a signature from version {version} with the SacreBLEU 2.x rules")
    nrefs = parsed.fields.get("nrefs")
    if nrefs is None or nrefs == "var":
        return None
    try:
        return int(nrefs)
    except ValueError:
        raise ConfigError(f"signature field nrefs:{nrefs} is not a number") from None


def load_references(options: Options) -> list[TextSource]:
    """Reference streams from positional files (``--num-refs`` splits one file on tabs)."""
    if not options.refs:
        raise ConfigError("no references: give reference files before -i, e.g. "
                          "`bleucli ref.txt -i hyp.txt`")
    if options.num_refs < 1:
        raise ConfigError(f"--num-refs must be at least 1, got {options.num_refs}")
    if options.num_refs > 1 and len(options.refs) > 1:
        raise ConfigError("--num-refs splits one tab-separated reference file; "
                          "it cannot be combined with several reference files")
    sources = [read_file(path, options.encoding) for path in options.refs]
    for source in sources:
        require_nonempty(source)
    if options.num_refs == 1:
        return sources
    (source,) = sources
    streams = split_multi_references(source, options.num_refs)
    return [TextSource(f"{source.name} (reference {k + 1})", s) for k, s in enumerate(streams)]


def load_systems(options: Options) -> list[TextSource]:
    """Hypothesis streams: one per ``-i`` file, or tab-separated columns of standard input."""
    if options.inputs:
        systems = []
        for path in options.inputs:
            if path in (s.name for s in systems):
                raise ConfigError(f"{path!r} is given twice as a system")
            source = read_file(path, options.encoding)
            require_nonempty(source)
            systems.append(source)
        return systems
    if sys.stdin is None or sys.stdin.isatty():
        raise ConfigError("no hypotheses: pass -i FILE or pipe them on standard input")
    lines = decode_lines(sys.stdin.buffer.read(), "<stdin>", options.encoding)
    stdin = TextSource("<stdin>", lines)
    require_nonempty(stdin)
    width = len(lines[0].split("\t"))
    if width == 1:
        return [stdin]
    columns: list[list[str]] = [[] for _ in range(width)]
    for line_no, line in enumerate(lines, 1):
        fields = line.split("\t")
        if len(fields) != width:
            raise InputError(f"<stdin>: line {line_no}: {len(fields)} tab-separated systems, "
                             f"but line 1 has {width}")
        for column, value in zip(columns, fields):
            column.append(value.rstrip())
    return [TextSource(f"System {k + 1}", c) for k, c in enumerate(columns)]


def build_metrics(options: Options, references: list[list[str]]) -> dict[str, Metric]:
    """Instantiate every requested metric with the references pre-processed once."""
    metrics: dict[str, Metric] = {}
    trg_lang = options.language_pair.split("-")[-1] if options.language_pair else ""
    for name in options.metrics:
        cls = metric_class(name)
        if name == "bleu":
            kwargs: dict[str, Any] = {**options.bleu, "trg_lang": trg_lang}
            if options.sentence_level:
                kwargs["effective_order"] = True
        else:
            kwargs = {}
        metrics[name] = cls(**kwargs, references=references)
    return metrics


def run(options: Options) -> str:
    """Everything the main command does; returns the text to print on standard output."""
    expected_refs = apply_signature(options) if options.from_signature else None
    for name in options.metrics:
        metric_class(name)  # fail on an unknown metric before reading any file
    if options.sentence_level and len(options.metrics) > 1:
        raise ConfigError("only one metric can be used with --sentence-level")
    if options.language_pair is not None and "-" not in options.language_pair:
        raise ConfigError(f"language pair {options.language_pair!r} is not of the form src-trg")
    ref_sources = load_references(options)
    if expected_refs is not None and expected_refs != len(ref_sources):
        raise ConfigError(f"the signature says nrefs:{expected_refs} but "
                          f"{len(ref_sources)} reference stream(s) were given")
    systems = load_systems(options)
    for system in systems:
        check_same_length(system, ref_sources)
    metrics = build_metrics(options, [s.lines for s in ref_sources])
    if options.sentence_level:
        return sentence_level(options, metrics, systems)
    results = [
        Result(system.name, score, str(sig), sig.format(short=True))
        for system in systems
        for name, metric in sorted(metrics.items())
        for score, sig in [_corpus(metric, system)]
    ]
    if len(systems) == 1:
        return single_system(results, options.fmt, options.width, options.score_only,
                             options.short)
    logger.info(f"Found {len(systems)} systems.")
    return multi_system(results, options.fmt, options.width, options.short)


def _corpus(metric: Metric, system: TextSource) -> tuple[Any, Any]:
    score = metric.corpus_score(system.lines, None)
    return score, metric.get_signature()


def sentence_level(options: Options, metrics: dict[str, Metric],
                   systems: list[TextSource]) -> str:
    """One line per sentence; statistics come from the cached references, scored row by row."""
    if len(systems) > 1:
        raise ConfigError("only one system can be scored with --sentence-level")
    (metric,) = metrics.values()
    rows = metric.per_sentence_stats(systems[0].lines, None)
    signature = metric.get_signature().format(options.short)
    return "\n".join(
        metric.score_from_values(row).format(options.width, options.score_only, signature)
        for row in rows
    )
