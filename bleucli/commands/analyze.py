"""``bleucli analyze`` and ``bleucli plot``: load like the scoring command (files or a test
set, -m and metric options, --segment-scores, --docids), then analyse or draw."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from bleucli.errors import ConfigError, InputError, UsageError
from bleucli.io import check_same_length, read_file

if TYPE_CHECKING:
    from bleucli.analysis.compute import Analysis, Inputs
    from bleucli.commands.request import Options


def load(options: Options, source: str | None) -> Inputs:
    """The systems, references, source and metrics of a request, as analysis inputs."""
    from bleucli.analysis.compute import Inputs, word_splitter
    from bleucli.commands.inputs import (
        load_references,
        load_systems,
        signature_with_testset,
        testset_signature_fields,
    )
    from bleucli.commands.request import validate
    from bleucli.commands.resegment import check_options
    from bleucli.commands.score import _segment_metrics, build_metrics

    options = validate(options)
    check_options(options)
    references = load_references(options)
    systems = load_systems(options)
    alignment = None
    if options.resegment:
        from bleucli.commands.resegment import resegment_systems

        systems, alignment = resegment_systems(options, systems, references)
    for system in systems:
        check_same_length(system, references)
    files = [s.name for s in systems]
    if len(set(files)) != len(files):
        raise ConfigError("two systems have the same name; name them with name:path")
    from bleucli.analysis.names import display_names

    names = display_names(files, [s.named for s in systems])
    sources = None
    if source is not None:
        sources = read_file(source, options.encoding).lines
        if len(sources) != len(references[0].lines):
            raise InputError(
                f"{source}: {len(sources)} lines, the references have {len(references[0].lines)}"
            )
    metrics: dict[str, Any] = build_metrics(options, [r.lines for r in references], sources)
    if options.segment_scores:
        metrics.update(_segment_metrics(options, systems, len(references)))
    if alignment is not None:
        from bleucli.commands.resegment import mark

        mark(metrics, alignment)
    fields = testset_signature_fields(options)
    signatures = {
        key: signature_with_testset(metric, fields).format(options.short)
        for key, metric in metrics.items()
    }
    words, signatures["words"] = word_splitter(options.bleu, options.language_pair)
    return Inputs(
        names,
        [s.lines for s in systems],
        [r.lines for r in references],
        metrics,
        words,
        sources,
        signatures,
        files,
    )


def frequencies_from(path: str | None, inputs: Inputs, encoding: str) -> tuple[Counter | None, str]:
    if path is None:
        return None, "the references"
    counts: Counter = Counter()
    for line in read_file(path, encoding).lines:
        counts.update(inputs.words(line))
    return counts, path


def groups(
    options: Options, n_lines: int
) -> tuple[dict[str, list[int]] | None, dict[str, list[int]] | None]:
    """Lines per document (``--docids``) and per origlang (named test sets with them)."""
    from bleucli.commands.documents import document_ids, group

    documents = group(document_ids(options, n_lines)) if options.docids else None
    origlangs = None
    if options.test_set is not None and options.origlang is None and options.subset is None:
        from bleucli.commands.inputs import testsets_for

        sets = testsets_for(options)
        pair = options.language_pair or ""
        found = sets.available_origlangs(options.test_set, pair)
        if found:
            origlangs = {}
            for lang in found:
                mask = sets.keep_mask(options.test_set, pair, lang, None)
                origlangs[lang] = [i for i, keep in enumerate(mask) if keep]
    return documents, origlangs


def analyze(
    options: Options,
    source: str | None,
    train: str | None,
    top: int,
    example_metric: str | None,
    html_path: str | None,
    autorank: str | None = None,
) -> str:
    from bleucli.analysis.render import render

    analysis, inputs = _analysis(options, source, train, top, example_metric, autorank)
    if html_path:
        write_html(analysis, inputs, html_path, options.precision, example_metric)
    return render(analysis, options.fmt, options.precision)


def _analysis(
    options: Options,
    source: str | None,
    train: str | None,
    top: int,
    example_metric: str | None,
    autorank: str | None = None,
) -> tuple[Analysis, Inputs]:
    from bleucli.analysis.compute import analyze as run
    from bleucli.progress import stage

    inputs = load(options, source)
    if len(inputs.names) < 1:
        raise ConfigError("analyze needs at least one system (-i)")
    frequencies, frequency_source = frequencies_from(train, inputs, options.encoding)
    documents, origlangs = groups(options, len(inputs.references[0]))
    with stage("analysing", 3 + max(0, len(inputs.names) - 1)) as advance:
        analysis = run(
            inputs,
            top,
            example_metric,
            frequencies,
            frequency_source,
            documents,
            origlangs,
            advance,
            autorank,
        )
    return analysis, inputs


def write_html(
    analysis: Analysis, inputs: Inputs, path: str, width: int, example_metric: str | None
) -> None:
    from bleucli.analysis.report import report_document
    from bleucli.io import write_atomic

    write_atomic(path, report_document(analysis, inputs, width, example_metric))


def plot(options: Options, kind: str, output: str, metric_name: str | None) -> str:
    from bleucli.analysis import plots
    from bleucli.analysis.compute import (
        LENGTH_EDGES,
        bucket_label,
        choose_metric,
        length_labels,
    )
    from bleucli.analysis.report import bootstrap_figure, scores_figure

    if not plots.available():
        raise ConfigError(f"plots need matplotlib: {plots.INSTALL_HINT}")
    if not output.lower().endswith(plots.SUFFIXES):
        raise UsageError(f"{output}: plots are written as {', '.join(plots.SUFFIXES)}")
    inputs = load(options, None)
    key = choose_metric(inputs, metric_name, "--metric")
    if metric_name is None and inputs.display[key] != "BLEU":
        from bleucli.log import logger

        logger.info(f"plot: {inputs.display[key]}, the first of -m (--metric picks another)")
    if kind == "scores":
        fig = scores_figure(inputs, key, with_key=True)
    elif kind == "bootstrap":
        if len(inputs.names) < 2:
            raise ConfigError("a paired difference needs two systems: -i baseline system")
        fig = bootstrap_figure(inputs, key, 1, with_key=True)
    else:
        lengths = [len(inputs.words(line)) for line in inputs.references[0]]
        buckets: dict[str, list[int]] = {label: [] for label in length_labels()}
        for i, length in enumerate(lengths):
            buckets[bucket_label(length, LENGTH_EDGES)].append(i)
        used = [label for label, lines in buckets.items() if lines]
        series = {
            name: [inputs.score(key, k, buckets[label]) for label in used]
            for k, name in enumerate(inputs.names)
        }
        fig = plots.buckets_figure(
            f"{inputs.display[key]} by reference length",
            used,
            {inputs.display[key]: series},
            "reference length (words)",
            inputs.files,
        )
    plots.save(fig, output)
    return f"wrote {output}"
