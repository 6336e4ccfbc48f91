"""Renderers for results: SacreBLEU-compatible text and JSON, and multi-system tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bleucli.metrics.base import Score


@dataclass
class Result:
    """One metric's score for one system, with the signature it was computed under."""

    system: str
    score: Score
    signature: str
    short_signature: str


def single_system(results: Sequence[Result], fmt: str, width: int, score_only: bool,
                  short: bool) -> str:
    """One system, one or more metrics: SacreBLEU's JSON objects or '='-aligned text lines."""
    is_json = fmt == "json"
    lines = [
        r.score.format(width, score_only,
                       r.short_signature if short and not is_json else r.signature, is_json)
        for r in results
    ]
    if is_json:
        return lines[0] if len(lines) == 1 else "[\n" + ",\n".join(lines) + "\n]"
    if len(lines) == 1 or score_only:
        return "\n".join(lines)
    split_at = [line.index(" = ") for line in lines]
    pad = max(split_at)
    return "\n".join(
        f"{line[:cut]:>{pad}}{line[cut:]}" for line, cut in zip(lines, split_at)
    )


TABLE_FORMATS = {"text": "fancy_grid", "latex": "latex_booktabs", "markdown": "github",
                 "tsv": "tsv", "html": "html"}


def multi_system(results: Sequence[Result], fmt: str, width: int, short: bool) -> str:
    """Several systems: a table of scores (systems x metrics) and the metric signatures."""
    systems: list[str] = []
    metrics: list[str] = []
    cells: dict[tuple[str, str], Score] = {}
    signatures: dict[str, str] = {}
    for r in results:
        if r.system not in systems:
            systems.append(r.system)
        if r.score.name not in metrics:
            metrics.append(r.score.name)
        cells[r.system, r.score.name] = r.score
        signatures[r.score.name] = r.short_signature if short else r.signature
    if fmt == "json":
        rows = [
            {"system": system,
             **{m: f"{cells[system, m].score:.{width}f}" for m in metrics if (system, m) in cells}}
            for system in systems
        ]
        return json.dumps(rows, indent=4, ensure_ascii=False)
    from tabulate import tabulate

    table = tabulate(
        [[system, *(f"{cells[system, m].score:.{width}f}" for m in metrics)] for system in systems],
        headers=["System", *metrics], tablefmt=TABLE_FORMATS.get(fmt, "fancy_grid"),
        colalign=("right",), stralign="center", numalign="center", disable_numparse=True,
    )
    legend = ["", "-----------------", "Metric signatures", "-----------------"]
    legend += [f" - {name:<10} {sig}" for name, sig in signatures.items()]
    return table + "\n" + "\n".join(legend)


def paired_table(systems: Sequence[str], results: dict, signatures: dict[str, str], fmt: str,
                 width: int, test: str, n_samples: int) -> str:
    """Systems x metrics with p-values against the baseline (first row), and a legend.

    A cell is ``score`` (bootstrap: ``score (mean ± half-interval)``) and ``(p = ...)``;
    ``*`` marks p <= 0.05, a difference unlikely to be chance.
    """
    names = [f"Baseline: {systems[0]}", *systems[1:]]
    if fmt == "json":
        rows = []
        for i, system in enumerate(names):
            row: dict[str, Any] = {"system": system}
            for metric, per_system in results.items():
                r = per_system[i]
                row[metric] = {"score": round(float(r.score), width),
                               "p_value": None if r.p_value is None else float(r.p_value),
                               "mean": None if r.mean is None else round(float(r.mean), width),
                               "ci": None if r.ci is None else round(float(r.ci), width),
                               "significant": r.p_value is not None and r.p_value <= 0.05}
            rows.append(row)
        return json.dumps({"test": test, "samples": n_samples, "systems": rows,
                           "signatures": signatures}, indent=1, ensure_ascii=False)
    from tabulate import tabulate

    separator = "\n" if fmt == "text" else " "
    headers = ["System"]
    columns = []
    for metric, per_system in results.items():
        bootstrap = any(r.mean is not None for r in per_system)
        headers.append(f"{metric} (μ ± 95% CI)" if bootstrap else metric)
        cells = []
        for r in per_system:
            cell = f"{r.score:.{width}f}"
            if r.mean is not None:
                cell += f" ({r.mean:.{width}f} ± {r.ci:.{width}f})"
            if r.p_value is not None:
                cell += f"{separator}(p = {r.p_value:.4f})" + ("*" if r.p_value <= 0.05 else "")
            cells.append(cell)
        columns.append(cells)
    table = tabulate([[name, *row] for name, row in zip(names, zip(*columns))],
                     headers=headers, tablefmt=TABLE_FORMATS.get(fmt, "fancy_grid"),
                     colalign=("right",), stralign="center", disable_numparse=True)
    kind = ("paired bootstrap resampling" if test == "bs" else "approximate randomization")
    legend = [
        "",
        f"{kind.capitalize()} test, {n_samples} samples; every system against the baseline.",
        "* p <= 0.05: the difference to the baseline is unlikely to be due to chance "
        "(it says nothing about which system is better).",
        "",
        "Metric signatures:",
        *[f" - {name:<10} {sig}" for name, sig in signatures.items()],
    ]
    if fmt == "latex":
        legend = ["% " + line if line else "%" for line in legend]
    return table + "\n" + "\n".join(legend)


def sentence_rows(scores: dict[str, list[Score]], signatures: dict[str, str], fmt: str,
                  width: int, score_only: bool, first_line: int) -> str:
    """Per-sentence results: SacreBLEU's text lines (metrics tab-separated), JSON lines
    (``{"line": n, "BLEU": ...}``) or TSV scores; ``first_line`` numbers the chunk."""
    names = list(scores)
    rows = list(zip(*scores.values()))
    if fmt == "json":
        return "\n".join(json.dumps({"line": first_line + i, **{
            s.name: round(float(s.score), width) for s in row}}, ensure_ascii=False)
            for i, row in enumerate(rows))
    if fmt == "tsv":
        return "\n".join("\t".join(f"{s.score:.{width}f}" for s in row) for row in rows)
    return "\n".join("\t".join(s.format(width, score_only, signatures[name])
                                for name, s in zip(names, row)) for row in rows)
