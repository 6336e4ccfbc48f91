"""``-sl/--sentence-level``: one score per sentence (and system), with its signature."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bleucli.commands.inputs import signature_with_testset
from bleucli.io import TextSource
from bleucli.metrics import output_order
from bleucli.metrics.base import Metric

if TYPE_CHECKING:
    from bleucli.commands.request import Options


def sentence_format(options: Options) -> str:
    """``-sl`` prints SacreBLEU's text lines unless ``-f json`` (JSON lines) or ``-f tsv`` is
    asked for explicitly (JSON is only the default for corpus scores)."""
    return options.fmt if "fmt" in options.explicit and options.fmt in ("json", "tsv") else "text"


def sentence_level(
    options: Options,
    metrics: dict[str, Metric],
    systems: list[TextSource],
    testset_fields: dict[str, str | None],
) -> str:
    """One line per sentence (and system); statistics come from the cached references and
    each sentence's row is scored on its own."""
    from bleucli.formats import sentence_header, sentence_rows

    signatures = {
        name: signature_with_testset(metric, testset_fields).format(options.short)
        for name, metric in output_order(metrics)
    }
    fmt = sentence_format(options)
    parts: list[str] = []
    for system in systems:
        scores = {}
        for name, metric in output_order(metrics):
            rows = metric.per_sentence_stats(system.lines, None)
            scores[name] = [metric.score_from_values(row) for row in rows]
            spans = getattr(getattr(metric, "last_prediction", None), "spans", None)
            if spans is not None:  # xCOMET's error spans, beside each sentence's score
                for score, found in zip(scores[name], spans):
                    score.error_spans = found  # type: ignore[attr-defined]
        if not parts and fmt == "tsv":
            parts.append(
                sentence_header([s[0].name for s in scores.values() if s], signatures, fmt)
            )
        parts.append(
            sentence_rows(
                scores,
                signatures,
                fmt,
                options.precision,
                options.score_only,
                1,
                system.name,
                numbered=len(systems) > 1,
            )
        )
    return "\n".join(parts)
