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
    from bleucli.analysis.compute import Inputs
    from bleucli.commands.inputs import (
        load_references,
        load_systems,
        signature_with_testset,
        testset_signature_fields,
    )
    from bleucli.commands.request import validate
    from bleucli.commands.resegment import check_options
    from bleucli.commands.score import _segment_metrics, build_metrics

    validate(options)
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
    metrics: dict[str, Any] = build_metrics(options, [r.lines for r in references])
    if options.segment_scores:
        metrics.update(_segment_metrics(options, systems, len(references)))
    if alignment is not None:
        from bleucli.commands.resegment import mark

        mark(metrics, alignment)
    sources = None
    if source is not None:
        sources = read_file(source, options.encoding).lines
        if len(sources) != len(references[0].lines):
            raise InputError(
                f"{source}: {len(sources)} lines, the references have {len(references[0].lines)}"
            )
    fields = testset_signature_fields(options)
    signatures = {
        key: signature_with_testset(metric, fields).format(options.short)
        for key, metric in metrics.items()
    }
    tokenizer = _word_tokenizer(options)
    lowercase = bool(options.bleu.get("lowercase"))

    def words(line: str) -> list[str]:
        return tokenizer(line.lower() if lowercase else line).split()

    signatures["words"] = f"tok:{tokenizer.signature()}|case:{'lc' if lowercase else 'mixed'}"
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


def _word_tokenizer(options: Options) -> Any:
    from bleucli.tokenizers import default_tokenizer, get_tokenizer

    name = options.bleu.get("tokenize")
    if name is None:
        pair = options.language_pair or ""
        name = default_tokenizer(pair.split("-")[-1] if "-" in pair else "")
    return get_tokenizer(name)


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
) -> str:
    from bleucli.analysis.render import render

    analysis, inputs = _analysis(options, source, train, top, example_metric)
    if html_path:
        write_html(analysis, inputs, html_path, options.width, example_metric)
    return render(analysis, options.fmt, options.width)


def html_report(
    options: Options,
    example_metric: str | None,
    without_plots: str | None = None,
    back: tuple[str, str] | None = None,
) -> str:
    """The HTML report alone (the evaluation server's report page)."""
    analysis, inputs = _analysis(options, None, None, 5, example_metric)
    return report_document(analysis, inputs, options.width, example_metric, without_plots, back)


def _analysis(
    options: Options,
    source: str | None,
    train: str | None,
    top: int,
    example_metric: str | None,
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
        )
    return analysis, inputs


def write_html(
    analysis: Analysis, inputs: Inputs, path: str, width: int, example_metric: str | None
) -> None:
    from bleucli.io import write_atomic

    write_atomic(path, report_document(analysis, inputs, width, example_metric))


def report_document(
    analysis: Analysis,
    inputs: Inputs,
    width: int,
    example_metric: str | None,
    without_plots: str | None = None,
    back: tuple[str, str] | None = None,
) -> str:
    """The HTML report; ``without_plots``: the note shown when matplotlib is missing (the
    install hint by default)."""
    from bleucli.analysis import html, plots
    from bleucli.analysis.compute import choose_metric

    figures: list[tuple[str, str]] = []
    missing = None
    if plots.available():
        key = choose_metric(inputs, example_metric)
        resampled = _resampled(inputs, key)  # one set of resamples for every figure
        extra = [
            (
                f"{inputs.display[key]} per system with 95% bootstrap intervals",
                scores_figure(inputs, key, resampled),
            )
        ]
        for other in range(1, len(inputs.names)):
            extra.append(
                (
                    f"Bootstrap distribution of {inputs.display[key]} differences, "
                    f"{inputs.names[other]} - {inputs.names[0]}",
                    bootstrap_figure(inputs, key, other, resampled),
                )
            )
        figures = html.figures_for(analysis, extra)
    else:
        missing = without_plots or f"Figures need matplotlib: {plots.INSTALL_HINT}"
    return html.document(analysis, width, figures, missing, back)


# -- figures -------------------------------------------------------------------------------


def _resampled(inputs: Inputs, key: str, n_samples: int = 1000) -> list[Any]:
    from bleucli.significance import draw_resamples, seed_from_environment

    _, seed = seed_from_environment()
    drawn = draw_resamples(len(inputs.references[0]), n_samples, seed)
    return [drawn.scores(inputs.metrics[key], rows) for rows in inputs.rows[key]]


def scores_figure(
    inputs: Inputs, key: str, resampled: list[Any] | None = None, with_key: bool = False
) -> Any:
    """``with_key``: a key of the systems' files under the figure (a figure on its own; the
    report lists them in its Systems table)."""
    from bleucli.analysis.plots import scores_figure as figure
    from bleucli.paired import estimate_ci

    every = range(len(inputs.references[0]))
    scores = [inputs.score(key, k, every) for k in range(len(inputs.names))]
    intervals = [estimate_ci(samples) for samples in resampled or _resampled(inputs, key)]
    return figure(
        inputs.names,
        inputs.display[key],
        scores,
        [float(m) for m, _ in intervals],
        [float(h) for _, h in intervals],
        inputs.files if with_key else None,
    )


def bootstrap_figure(
    inputs: Inputs, key: str, other: int, resampled: list[Any] | None = None, with_key: bool = False
) -> Any:
    from bleucli.analysis.plots import bootstrap_figure as figure

    every = range(len(inputs.references[0]))
    resampled = resampled or _resampled(inputs, key)
    differences = resampled[other] - resampled[0]
    observed = inputs.score(key, other, every) - inputs.score(key, 0, every)
    return figure(
        list(differences),
        observed,
        inputs.display[key],
        (inputs.names[0], inputs.names[other]),
        [inputs.files[0], inputs.files[other]] if with_key else None,
    )


def plot(options: Options, kind: str, output: str, metric_name: str | None) -> str:
    from bleucli.analysis import plots
    from bleucli.analysis.compute import (
        LENGTH_EDGES,
        bucket_label,
        choose_metric,
        length_labels,
    )

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
