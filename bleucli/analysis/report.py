"""The analysis report as a library: the HTML document of an analysis (figures where
matplotlib is installed) and the figures themselves, for ``bleucli analyze --html``, ``bleucli
plot`` and the evaluation server's report page, which builds its inputs from a test set's
scoring request (:func:`html_report`) without any command line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bleucli.analysis.compute import Analysis, Inputs

if TYPE_CHECKING:
    from bleucli.precision import Precision
    from bleucli.scoring import ScoringRequest


def html_report(
    request: ScoringRequest,
    references: list[list[str]],
    systems: Sequence[tuple[str, list[str]]],
    without_plots: str | None = None,
    back: tuple[str, str] | None = None,
    top: int = 5,
) -> str:
    """The analysis report of named systems against references, scored with ``request``'s
    metrics; the words of the word analyses are BLEU's tokens (its options in the request)."""
    from bleucli.analysis.compute import analyze, word_splitter

    metrics = request.build(references)
    bleu = next((m.options for m in request.metrics if m.name == "bleu"), {})
    words, signature = word_splitter(bleu, request.language_pair)
    signatures = {key: str(metric.get_signature()) for key, metric in metrics.items()}
    signatures["words"] = signature
    names = [system for system, _ in systems]
    inputs = Inputs(
        names, [lines for _, lines in systems], references, metrics, words, None, signatures, names
    )
    analysis = analyze(inputs, top)
    return report_document(analysis, inputs, request.precision, None, without_plots, back)


def report_document(
    analysis: Analysis,
    inputs: Inputs,
    width: int | Precision,
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
    from bleucli.stats.bootstrap import draw_resamples, seed_from_environment

    _, seed = seed_from_environment()
    drawn = draw_resamples(len(inputs.references[0]), n_samples, seed)
    return [drawn.scores(inputs.metrics[key], rows) for rows in inputs.rows[key]]


def scores_figure(
    inputs: Inputs, key: str, resampled: list[Any] | None = None, with_key: bool = False
) -> Any:
    """``with_key``: a key of the systems' files under the figure (a figure on its own; the
    report lists them in its Systems table)."""
    from bleucli.analysis.plots import scores_figure as figure
    from bleucli.stats.paired import estimate_ci

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
