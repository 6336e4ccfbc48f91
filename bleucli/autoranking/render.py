"""An AutoRank table as bleucli prints every table: JSON at full precision; text, Markdown,
LaTeX and TSV as WMT's tables read (AutoRank order, one column per metric), each number at
the precision WMT prints it (AutoRank, the LLM judges, MetricX and chrF++ one decimal; the
COMET family three) or, for metrics WMT does not print, bleucli's own, with the
signatures under the table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bleucli.autoranking.compute import AutoRank
from bleucli.autoranking.wmt import PRINTED_DECIMALS


def decimals(name: str, width: int, per_metric: Mapping[str, int]) -> int:
    """Decimals of a column: ``-w NAME=N`` first, then WMT's printed precision, then
    bleucli's precision for the metric (``-w N`` for BLEU, chrF and TER)."""
    for key in (name, name.lower()):
        if key in per_metric:
            return per_metric[key]
    if name in PRINTED_DECIMALS:
        return PRINTED_DECIMALS[name]
    from bleucli.precision import decimals as own

    return own(width, name)


def as_json(result: AutoRank) -> str:
    moved = any(s.before is not None for s in result.systems)
    document: dict[str, Any] = {
        "recipe": result.recipe,
        "pair": result.pair,
        "signature": result.signature,
        "metrics": [
            {
                "name": m.name,
                "higher_is_better": not m.lower_is_better,
                "turned": m.name in result.turned,
                "origin": m.origin,
                **({"signature": m.signature} if m.signature else {}),
            }
            for m in result.metrics
        ],
        "systems": [],
    }
    if result.n_samples:
        document["resamples"] = result.n_samples
        document["seed"] = result.seed
    for s in result.systems:
        row: dict[str, Any] = {
            "system": s.name,
            "position": s.position,
            "autorank": s.autorank,
            "scores": s.scores,
        }
        if result.n_samples:
            row["rank_range"] = [s.rank_low, s.rank_high]
            row["cluster"] = s.cluster
        if moved:
            row["added"] = s.added
            if s.before is not None:
                row["autorank_without_added"] = s.before
                row["moved"] = s.autorank - s.before
        document["systems"].append(row)
    return json.dumps(document, indent=1, ensure_ascii=False)


def _title(result: AutoRank) -> str:
    what = f"AutoRank ({result.recipe}"
    what += f", {result.pair})" if result.pair else ")"
    return what + ": lower is better, 1 is the best system"


def render(
    result: AutoRank, fmt: str, width: int = 1, per_metric: Mapping[str, int] | None = None
) -> str:
    """``result`` in ``fmt`` (json, text, markdown, latex, tsv, html: a page)."""
    from bleucli.display import shown
    from bleucli.formats import rank_range, signature_list, table

    if fmt == "json":
        return as_json(result)
    per_metric = dict(per_metric or {})
    places = decimals("AutoRank", width, per_metric)
    moved = any(s.before is not None for s in result.systems)
    # the system first, as WMT's tables have it
    headers = ["System"]
    kinds = ["text"]
    if result.n_samples:
        headers += ["Cluster", "Rank range"]
        kinds += ["number", "number"]
    headers += ["AutoRank"]
    kinds += ["number"]
    for metric in result.metrics:
        arrow = "↓" if metric.lower_is_better else "↑"
        headers.append(f"{metric.name} {arrow}" if fmt != "latex" else metric.name)
        kinds.append("number")
    if moved:
        headers.append("Without added (moved)")
        kinds.append("number")
    rows = []
    for s in result.systems:
        row = [s.name + (" (added)" if s.added else "")]
        if result.n_samples:
            row += [str(s.cluster), rank_range(s.rank_low, s.rank_high, fmt)]
        row += [shown(s.autorank, places)]
        row += [
            shown(s.scores[m.name], decimals(m.name, width, per_metric)) for m in result.metrics
        ]
        if moved:
            row.append(
                ""
                if s.before is None
                else f"{shown(s.before, places)} ({s.autorank - s.before:+.{places}f})"
            )
        rows.append(row)
    rendered = table(rows, headers, fmt, kinds)
    title = _title(result)
    remarks = [
        f"AutoRank by the {result.recipe} recipe over {len(result.metrics)} metric(s)"
        + (f"; turned to higher-is-better: {', '.join(result.turned)}" if result.turned else "")
        + "."
    ]
    if result.n_samples:
        remarks.append(
            f"Rank ranges over {result.n_samples} bootstrap resamples of documents (95%); a new "
            f"cluster starts below a system significantly better (Holm-corrected p < 0.05) than "
            f"every system below it."
        )
    if moved:
        remarks.append(
            "AutoRank is relative: adding systems moves the median and the quantiles, so the "
            "published systems' numbers move too (last column)."
        )
    signatures = [f"AutoRank: {result.signature}"]
    signatures += [f"{m.name}: {m.signature}" for m in result.metrics if m.signature]
    import html

    heading = {
        "text": f"{title}\n",
        "markdown": f"**{title}**\n\n",
        "latex": f"% {title}\n",
        "tsv": f"# {title}\n",
        "html": f"<h2>{html.escape(title)}</h2>\n",
    }.get(fmt, "")
    output = heading + rendered + "\n" + signature_list(signatures, fmt, remarks)
    if fmt == "html":
        from bleucli.analysis.page import output_page

        return output_page("bleucli autorank", output)
    return output
