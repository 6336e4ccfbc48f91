"""A series' trend as inline SVG (no script): one panel per metric, each run a point with
its 95% interval as a band, runs joined by a line only while their signature stays the
same (a run under another signature starts a new segment, drawn apart and named), and
significant steps between consecutive runs marked. Colours from Okabe and Ito's palette,
with a marker shape per signature segment, so nothing relies on colour alone. And the
shields-style badge of a series' latest score and verdict."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from bleucli.server import store

#: Okabe & Ito: blue, vermillion, bluish green, reddish purple, orange, sky blue.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
SHAPES = ("circle", "square", "diamond", "triangle")
WIDTH, PANEL, LEFT, RIGHT, TOP, GAP = 720, 170, 58, 16, 26, 52


def segments(runs: list[dict[str, Any]], metric: str) -> list[list[int]]:
    """Indices of runs, split where the metric's signature changes."""
    out: list[list[int]] = []
    previous = None
    for k, run in enumerate(runs):
        signature = run["signatures"].get(metric)
        if metric not in run["scores"]:
            continue
        if not out or signature != previous:
            out.append([])
        out[-1].append(k)
        previous = signature
    return out


def interval(run: dict[str, Any], metric: str) -> tuple[float, float]:
    """The run's 95% interval of ``metric`` (its score alone when it has none)."""
    mean, half = run["intervals"].get(metric, [run["scores"][metric], 0.0])
    return mean - half, mean + half


def _marker(shape: str, x: float, y: float, colour: str, title: str) -> str:
    tip = f"<title>{escape(title)}</title>"
    if shape == "square":
        return f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="{colour}">{tip}</rect>'
    if shape == "diamond":
        points = f"{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},{y + 5:.1f} {x - 5:.1f},{y:.1f}"
        return f'<polygon points="{points}" fill="{colour}">{tip}</polygon>'
    if shape == "triangle":
        points = f"{x:.1f},{y - 5:.1f} {x + 5:.1f},{y + 4:.1f} {x - 5:.1f},{y + 4:.1f}"
        return f'<polygon points="{points}" fill="{colour}">{tip}</polygon>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}">{tip}</circle>'


#: Figures by the identity of their (cached, unchanging) run documents: a long series is
#: drawn again only when one of its runs changes or a run is added.
#: An entry keeps its documents alive, so their ids cannot be reused while it exists.
_FIGURES: dict[tuple, tuple[tuple, str]] = {}


def svg(runs: list[dict[str, Any]], metrics: list[str], alpha: float = 0.05) -> str:
    """The trend figure; ``runs`` as the series API gives them (oldest first)."""
    key = (tuple(map(id, runs)), tuple(metrics), alpha)
    found = _FIGURES.get(key)
    if found is None:
        if len(_FIGURES) >= 64:
            _FIGURES.clear()
        found = _FIGURES[key] = (tuple(runs), _svg(runs, metrics, alpha))
    return found[1]


def _svg(runs: list[dict[str, Any]], metrics: list[str], alpha: float) -> str:
    height = TOP + len(metrics) * (PANEL + GAP) + 24
    parts = [
        f'<svg class="trend" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'role="img" aria-label="scores over the runs" style="width:100%;max-width:{WIDTH}px;height:auto">',
        "<style>text{font:11px Helvetica,Arial,sans-serif;fill:#222}</style>",
    ]
    span = max(len(runs) - 1, 1)

    def x_of(k: int) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * (k / span if len(runs) > 1 else 0.5)

    for panel, metric in enumerate(metrics):
        top = TOP + panel * (PANEL + GAP)
        values = []
        for run in runs:
            if metric in run["scores"]:
                values += [run["scores"][metric], *interval(run, metric)]
        if not values:
            continue
        low, high = min(values), max(values)
        pad = max((high - low) * 0.08, 0.5)
        low, high = low - pad, high + pad

        def y_of(value: float, top: int = top, low: float = low, high: float = high) -> float:
            return top + PANEL - (value - low) / (high - low) * PANEL

        parts.append(f'<text x="4" y="{top - 8}" font-weight="bold">{escape(metric)}</text>')
        parts.append(
            f'<rect x="{LEFT}" y="{top}" width="{WIDTH - LEFT - RIGHT}" height="{PANEL}" fill="none" stroke="#999"/>'
        )
        for tick in range(5):
            value = low + (high - low) * tick / 4
            y = y_of(value)
            parts.append(
                f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
            )
            parts.append(
                f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{value:.1f}</text>'
            )
        previous_members: list[int] = []
        for number, members in enumerate(segments(runs, metric)):
            colour = PALETTE[number % len(PALETTE)]
            shape = SHAPES[number % len(SHAPES)]
            bounds = [interval(runs[k], metric) for k in members]
            upper = [(x_of(k), y_of(high)) for k, (_, high) in zip(members, bounds)]
            lower = [(x_of(k), y_of(low)) for k, (low, _) in zip(members, bounds)]
            if len(members) > 1:
                band = " ".join(f"{x:.1f},{y:.1f}" for x, y in upper + lower[::-1])
                parts.append(
                    f'<polygon points="{band}" fill="{colour}" fill-opacity="0.15" stroke="none"/>'
                )
                line = " ".join(
                    f"{x_of(k):.1f},{y_of(runs[k]['scores'][metric]):.1f}" for k in members
                )
                parts.append(
                    f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.6"/>'
                )
            for k, (ux, uy), (_, ly) in zip(members, upper, lower):
                parts.append(
                    f'<line x1="{ux:.1f}" x2="{ux:.1f}" y1="{uy:.1f}" y2="{ly:.1f}" stroke="{colour}" stroke-opacity="0.5"/>'
                )
                run = runs[k]
                labels = ", ".join(f"{key}={value}" for key, value in run["labels"].items())
                title = f"run {run['id']} {run['name']}: {metric} {run['scores'][metric]} {labels}".strip()
                y = y_of(run["scores"][metric])
                parts.append(_marker(shape, x_of(k), y, colour, title))
                step = run.get("step_p", {}).get(metric)
                # (SacreBLEU's test gives identical systems p = 1/(n+1): no change, no step)
                moved = k - 1 in members and runs[k - 1]["scores"][metric] != run["scores"][metric]
                if step is not None and step <= alpha and moved:
                    parts.append(
                        f'<text x="{x_of(k):.1f}" y="{y - 9:.1f}" text-anchor="middle" font-weight="bold">'
                        f"*<title>significant step from run {runs[k - 1]['id']}: p = {step:.4f}</title></text>"
                    )
            if number > 0:
                first = members[0]
                previous_run = runs[previous_members[-1]]
                change = signature_change(
                    previous_run["signatures"].get(metric, ""),
                    runs[first]["signatures"].get(metric, ""),
                )
                label = f"new signature from run {runs[first]['id']}: {change}"
                parts.append(
                    f'<text x="{min(x_of(first) + 6, WIDTH - RIGHT - 6 * len(label)):.1f}" y="{top + 12}">'
                    f"{escape(label)}<title>{escape(label)}</title></text>"
                )
            previous_members = members
        # the runs' ids along the x axis (at most about 12 of them, always the first and last)
        step = max(1, -(-len(runs) // 12))
        for k in range(len(runs)):
            if k % step == 0 or k == len(runs) - 1:
                parts.append(
                    f'<text x="{x_of(k):.1f}" y="{top + PANEL + 14}" text-anchor="middle">'
                    f"{runs[k]['id']}</text>"
                )
        parts.append(
            f'<text x="{WIDTH - RIGHT}" y="{top + PANEL + 28}" text-anchor="end">run</text>'
        )
    legend_y = TOP + len(metrics) * (PANEL + GAP) + 4
    parts.append(
        f'<text x="{LEFT}" y="{legend_y}">● line: runs under one signature · band: 95% interval · '
        f"* significant step (p ≤ {alpha:g}) · a new colour and marker: a new signature</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts)


def signature_change(before: str, after: str) -> str:
    """What changed between two signatures, field by field (``tok:13a -> tok:intl``)."""
    old = dict(part.split(":", 1) for part in before.split("|") if ":" in part)
    new = dict(part.split(":", 1) for part in after.split("|") if ":" in part)
    changed = [
        f"{key}:{old[key]} → {key}:{new[key]}" if key in old and key in new
        else (f"+{key}:{new[key]}" if key in new else f"-{key}:{old[key]}")
        for key in dict.fromkeys([*old, *new])
        if old.get(key) != new.get(key)
    ]  # fmt: skip
    return ", ".join(changed) or "the same fields"


def badge(label: str, message: str, colour: str) -> str:
    """A shields-style badge: grey label, coloured message (widths from character counts)."""
    left = 6 * len(label) + 12
    right = 6 * len(message) + 12
    total = left + right
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" '
        f'aria-label="{escape(label)}: {escape(message)}"><title>{escape(label)}: {escape(message)}</title>'
        f'<rect width="{left}" height="20" fill="#555"/><rect x="{left}" width="{right}" height="20" fill="{colour}"/>'
        f'<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{left / 2:.1f}" y="14">{escape(label)}</text>'
        f'<text x="{left + right / 2:.1f}" y="14">{escape(message)}</text></g></svg>'
    )


#: Run documents by (id and every column that can still change): a long series is read
#: again at every view, but its old runs do not change.
_DOCUMENTS: dict[tuple, dict[str, Any]] = {}
_DOCUMENTS_LIMIT = 50_000


def run_document(row: Any) -> dict[str, Any]:
    """A run of a series as the API gives it (cached while the run stays as it is)."""
    key = (row.id, row.status, row.promoted, row.gate, row.intervals, row.scores)
    found = _DOCUMENTS.get(key)
    if found is None:
        if len(_DOCUMENTS) >= _DOCUMENTS_LIMIT:
            _DOCUMENTS.clear()
        found = _DOCUMENTS[key] = _run_document(row)
    return found


def _run_document(row: Any) -> dict[str, Any]:
    result = json.loads(row.result) if row.result else []
    entries = result if isinstance(result, list) else [result]
    trend = json.loads(row.intervals) if row.intervals else {}
    gate = json.loads(row.gate) if row.gate else None
    return {
        "id": row.id,
        "name": row.name,
        "status": row.status,
        "submitted": store.iso(row.created_at),
        "labels": json.loads(row.labels) if row.labels else {},
        "scores": json.loads(row.scores) if row.scores else {},
        "signatures": {e["name"]: e.get("signature", "") for e in entries},
        "intervals": trend.get("ci", {}),
        "step_p": trend.get("step_p", {}),
        "promoted": bool(row.promoted),
        "gate": None if gate is None else {"passed": gate["passed"], "baseline": gate["baseline"]},
    }
