"""What a submission shows, given its test set's state: on a blind set before the reveal only
the rounded scores and signatures (never BLEU's precisions and lengths); on a split set the
public part's scores until the deadline, and the rest's after it."""

from __future__ import annotations

import json
from typing import Any

from bleucli.server.blind import part_shown, public_result
from bleucli.server.store import TestSet


def shown(testset: TestSet, row: Any) -> tuple[Any, dict[str, float] | None, str]:
    """(result, scores, part) of a scored run as a participant may see them now."""
    part = part_shown(testset, row)
    if part == "all":
        result = json.loads(row.result) if row.result else None
        scores = json.loads(row.scores) if row.scores else None
    else:
        chosen = json.loads(row.parts)[part]
        result, scores = chosen["result"], chosen["scores"]
    if result is not None and testset.blind:
        result = public_result(result)
    return result, scores, part


def parts_shown(testset: TestSet, row: Any) -> dict[str, Any] | None:
    """A split set's scores by part, as far as they may be seen now (the rest's after the
    deadline only)."""
    if not row.parts:
        return None
    parts = json.loads(row.parts)
    out = {"public": parts["public"]["scores"]}
    if part_shown(testset, row) == "rest":
        out["rest"] = parts["rest"]["scores"]
    return out


def submission_document(engine: Any, testset: TestSet, row: Any) -> dict[str, Any]:
    """A run as its team reads it (the API's and the page's): its result and scores as far
    as the set's state allows, its receipt, and whether the leaderboard counts it yet."""
    from bleucli.server import leaderboard, store

    result, scores, part = shown(testset, row) if row.status == "scored" else (None, None, "all")
    board = None
    if row.status == "scored" and row.version_id != testset.version_id:
        board = "earlier version"  # the leaderboard ranks runs of the current version
    elif row.status == "scored":
        stored = store.leaderboard(engine, testset.id)
        board = "counted" if stored and leaderboard.counts(stored[0], row) else "updating"
    return {
        "id": row.id,
        "testset": row.testset,
        "version": row.version_number,
        "team": row.team,
        "name": row.name,
        "status": row.status,
        "error": row.error,
        "result": result,
        "scores": scores,
        "part": part,
        "parts": parts_shown(testset, row) if row.status == "scored" else None,
        "receipt": json.loads(row.receipt) if row.receipt else None,
        "primary": bool(row.primary_choice),
        "rescore_of": row.rescore_of,
        "leaderboard": board,
        "submitted": team_time(testset, row.created_at),
        "finished": team_time(testset, row.finished_at),
    }


def team_time(testset: TestSet, moment: Any) -> str | None:
    """A run's time as a team reads it: on a blind set to the minute only (seconds would
    time the scoring, and how long a run took must say nothing about the references)."""
    from bleucli.server import store

    moment = store.utc(moment)
    if moment is not None and testset.blind:
        moment = moment.replace(second=0, microsecond=0)
    return store.iso(moment)


def segment_scores(engine: Any, row: Any) -> dict[str, list[float]]:
    """Per-sentence scores of a scored run, by metric name (callers check the set allows
    them: they would leak a blind set's references)."""
    from bleucli.analysis.compute import sentence_scorer
    from bleucli.server import store
    from bleucli.server.scoring import metrics_for

    version = store.version(engine, row.version_id)
    metrics = metrics_for(version.references, version.request)
    stats = store.stats(engine, [row.id])[row.id]
    out = {}
    for key, metric in metrics.items():
        scorer = sentence_scorer(metric)
        out[metric.score_from_values(stats[key][0]).name] = [
            scorer.score_from_values(values).score for values in stats[key]
        ]
    return out


def csv_cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows as text: a string whose first character after
    any spaces, tabs and line breaks is ``= + - @`` (spreadsheets skip the blanks and read
    a formula), or that starts with a tab or a carriage return, gets a leading quote.
    Numbers are left as they are."""
    if isinstance(value, str) and (
        value[:1] in ("\t", "\r") or value.lstrip(" \t\r\n")[:1] in ("=", "+", "-", "@")
    ):
        return "'" + value
    return value


def csv_text(header: list[str], rows: list[list[Any]]) -> str:
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(cell) for cell in header])
    for row in rows:
        writer.writerow([csv_cell(cell) for cell in row])
    return out.getvalue()
