"""Meta-evaluation results as text, JSON, Markdown, LaTeX or TSV: one table per statistic
(metric, value, significance cluster, p-value against the best), each with its signature."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from bleucli.formats import notes, table
from bleucli.metaeval.evaluate import StatisticResult
from bleucli.metaeval.significance import TestSettings
from bleucli.version import __version__

FORMATS = ("text", "json", "markdown", "latex", "tsv")
DESCRIPTIONS = {
    "pearson": "Pearson's r",
    "spearman": "Spearman's rho",
    "kendall": "Kendall's tau-b",
    "accuracy": "pairwise accuracy",
    "spa": "soft pairwise accuracy",
    "acc-t": "pairwise accuracy with tie calibration (acc23)",
}
GROUPED = {"none": "all segment scores as one vector", "item": "averaged over items",
           "sys": "averaged over systems"}  # fmt: skip


@dataclass
class Context:
    """What every table's signature and the JSON header name."""

    human_name: str
    human_source: str
    systems: list[str]
    n_segments: int
    reference: str | None
    settings: TestSettings
    metric_sources: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def signature(result: StatisticResult, context: Context) -> str:
    s, stat = context.settings, result.statistic
    fields = [
        f"stat:{stat.name}",
        f"human:{context.human_name}",
        f"test:{stat.test.lower()}",
        f"k:{s.resamples}",
    ]
    if s.resamples:
        fields += [f"block:{s.block}", f"seed:{s.seed}", f"rng:{s.rng}", f"alpha:{s.threshold:g}"]
    if stat.kind == "acc-t":
        fields.append("eps:opt")
    if stat.kind == "spa":
        fields.append("spa:1000@4")
    fields.append(f"version:bleucli-{__version__}")
    return "|".join(fields)


def _number(value: float | None, width: int) -> str:
    if value is None:
        return "-"
    if math.isnan(value):
        return "nan"
    return f"{value:.{width}f}"


def _title(result: StatisticResult) -> str:
    stat = result.statistic
    what = DESCRIPTIONS[stat.kind]
    if stat.level == "seg":
        what += f", {GROUPED[stat.grouping]}"
    return f"{stat.name}: {what} ({result.counted})"


def _rows(result: StatisticResult, width: int) -> tuple[list[str], list[list[str]]]:
    acc_t = result.statistic.kind == "acc-t"
    headers = ["Cluster", "Metric", "Value", "p vs best"] + (["epsilon"] if acc_t else [])
    rows = []
    for row in result.rows:
        cells = [
            "-" if row.cluster is None else str(row.cluster),
            row.metric,
            _number(row.value, width),
            _number(row.p_best, 3),
        ]
        if acc_t:
            cells.append(f"{row.epsilon:.6g}" if row.epsilon is not None else "-")
        rows.append(cells)
    return headers, rows


def render(results: Sequence[StatisticResult], context: Context, fmt: str, width: int) -> str:
    if fmt == "json":
        return json.dumps(document(results, context), indent=2, ensure_ascii=False)
    parts = []
    for result in results:
        headers, rows = _rows(result, width)
        if fmt == "tsv":
            parts.append("\n".join(
                ["statistic\t" + "\t".join(headers)]
                + [f"{result.statistic.name}\t" + "\t".join(r) for r in rows]
            ))  # fmt: skip
            continue
        title = _title(result)
        heading = {"markdown": f"### {title}", "latex": f"% {title}"}.get(fmt, title)
        body = table(rows, headers, fmt)
        remarks = [f"{m}: {why}" for m, why in result.skipped.items()]
        parts.append(
            f"{heading}\n\n{body}\n"
            + notes("Signature", [signature(result, context)], fmt, remarks)
        )
    if fmt == "tsv":
        return "\n".join(parts)
    tail = []
    if context.metric_sources:
        tail.append(
            notes("Metrics", [f"{m}: {src}" for m, src in context.metric_sources.items()], fmt)
        )
    if context.notes:
        tail.append(notes("Notes", list(context.notes), fmt))
    return "\n\n".join(parts + tail)


def document(results: Sequence[StatisticResult], context: Context) -> dict:
    """The JSON result: the data described, then every statistic with all p-values."""
    statistics = []
    for result in results:
        order = [row.metric for row in result.rows]
        stat = result.statistic
        statistics.append({
            "statistic": stat.name,
            "level": stat.level,
            "correlation": stat.kind,
            "grouping": stat.grouping,
            "test": stat.test,
            "counted": result.counted,
            "signature": signature(result, context),
            "rows": [
                {
                    "metric": row.metric,
                    "value": None if math.isnan(row.value) else row.value,
                    "cluster": row.cluster,
                    "p_best": row.p_best,
                    **({"epsilon": row.epsilon} if row.epsilon is not None else {}),
                }
                for row in result.rows
            ],
            "p_values": {
                a: {b: float(result.p_values[i, j]) for j, b in enumerate(order) if j > i}
                for i, a in enumerate(order)
            },
            "draws": {
                a: {b: int(result.draws_used[i, j]) for j, b in enumerate(order) if j > i}
                for i, a in enumerate(order)
            },
            "skipped": dict(result.skipped),
        })  # fmt: skip
    s = context.settings
    return {
        "bleucli": __version__,
        "human": {"name": context.human_name, "source": context.human_source},
        "reference": context.reference,
        "systems": context.systems,
        "segments": context.n_segments,
        "metrics": context.metric_sources,
        "significance": {
            "resamples": s.resamples,
            "block_size": s.block,
            "early_min": s.early_min,
            "early_max": s.early_max,
            "seed": s.seed,
            "rng": s.rng,
            "alpha": s.threshold,
        },  # fmt: skip
        "statistics": statistics,
        "notes": context.notes,
    }
