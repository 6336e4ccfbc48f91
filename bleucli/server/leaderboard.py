"""A test set's leaderboard from stored per-sentence statistics: one primary submission per
team on the set's current version, ranked by the set's first metric with 95% intervals,
rank ranges and significance clusters -- :func:`bleucli.stats.ranking.rank_systems`, the
machinery of ``bleucli REF -i ... --rank``, with the same seed, so the same files give the
same clusters. Nothing is scored again.

Computed only by the workers (after scored runs, a new primary, a new version or
deadline); the web serves the stored document. Each stored board records the count of its
set's changes it was computed at: a reader whose set has changed since gets the stored
board marked ``"updating"`` (and a refresh is queued), and a run is counted once the board's
count reaches the run's own."""

from __future__ import annotations

import json
import time
from typing import Any

from bleucli.display import rounded
from bleucli.server import store

#: Resamples of the bootstrap behind intervals, ranks and clusters (as --rank's default).
N_SAMPLES = 1000


def _part_lines(version: store.Version, part: str) -> list[int] | None:
    from bleucli.server import blind

    if part == "all" or version.secret is None or version.public_fraction is None:
        return None
    pick = blind.public_lines if part == "public" else blind.rest_lines
    return pick(version.secret, version.n_lines, version.public_fraction)


def compute(engine: Any, testset: store.TestSet) -> dict[str, Any]:
    """The leaderboard document of the API (``/api/v1/leaderboards/{testset}``), as of the
    set's change count in ``testset`` (read before anything else, so a run scored while
    this computes is never counted by mistake)."""
    from bleucli.results import result_entries
    from bleucli.server.blind import part_shown
    from bleucli.server.scoring import first_metric_name, metrics_for
    from bleucli.stats.bootstrap import seed_from_environment
    from bleucli.stats.ranking import rank_systems, tied_as_shown

    document: dict[str, Any] = {
        "testset": testset.name, "signatures": {}, "rows": [], "change": testset.changes,
        "closed": testset.closed, "computed": store.iso(store.now()),
        "computed_epoch": time.time(), "waiting": [],
    }  # fmt: skip
    if testset.version_id is None:
        return document
    current = store.version(engine, testset.version_id)
    document["version"] = current.number
    document["version_created"] = store.iso(current.created_at)
    document["waiting"] = store.waiting_teams(engine, testset.id, current.id)
    kept = _previous_while_rescoring(engine, testset, current, document)
    if kept is not None:
        return kept
    ranked = store.primaries(engine, testset.id, current.id)
    if not ranked:
        return document
    part = part_shown(testset, ranked[0])
    document["part"] = part
    metrics = metrics_for(current.references, current.request)
    assert next(iter(metrics)) == current.request.metrics[0].name  # the request's order
    precision = current.request.precision
    first_key = next(iter(metrics))
    first = metrics[first_key]
    lines = _part_lines(current, part)
    stats = store.stats(engine, [row.id for row in ranked], [first_key])
    rows = {row.id: _lines_of(stats[row.id], lines)[first_key] for row in ranked}
    names = [str(row.id) for row in ranked]
    label, seed = seed_from_environment()
    stored: dict[int, Any] = {}
    if lines is None:
        stored = store.resampled(engine, [row.id for row in ranked], first_key, label, N_SAMPLES)
    reuse = [stored[row.id] for row in ranked] if seed and len(stored) == len(ranked) else None
    ranking = rank_systems(
        first, [rows[row.id] for row in ranked], names, "bs", N_SAMPLES, seed or None,
        first.higher_is_better, reuse,
    )  # fmt: skip
    ranked_by = first_metric_name(current.request, ranked[0].result)
    places = precision.decimals(ranked_by)
    # ranked as shown: equal rounded scores are a tie, listed by team name
    by_id = {str(row.id): row for row in ranked}
    tied_as_shown(ranking, places, {name: (by_id[name].team, int(name)) for name in names})
    signatures = {}
    shown: dict[int, dict[str, float]] = {}
    computed = {int(system.name): system.score for system in ranking.systems}
    for row in ranked:
        chosen = {"result": row.result, "scores": row.scores} if part == "all" else json.loads(row.parts)[part]  # fmt: skip
        for entry in result_entries(chosen["result"]):
            signatures[entry["name"]] = entry.get("signature", "")
        # the ranked metric from the statistics it was ranked by (a run stored before each
        # metric had its own decimals shows them now), the others as stored
        shown[row.id] = _shown(chosen["scores"], precision, ranked_by, computed[row.id])
    document.update(
        signatures=signatures, ranked_by=ranked_by, seed=label, resamples=N_SAMPLES,
        decimals={name: precision.decimals(name) for name in shown[ranked[0].id]},
    )  # fmt: skip
    table = []
    for system in ranking.systems:
        row = by_id[system.name]
        spread = (
            f"{system.rank_low}-{system.rank_high}"
            if system.rank_low != system.rank_high
            else str(system.rank_low)
        )
        entry = {
            "rank": system.position,
            "rank_range": spread,
            "cluster": system.cluster,
            "team": row.team,
            "name": row.name,
            "submission": row.id,
            "scores": shown[row.id],
            # the 95% interval's half-width, rounded as the score is: a blind set's board
            # says nothing finer than its rounded scores
            "ci": {ranked_by: rounded(system.ci, places)},
        }
        if part == "rest":
            public = json.loads(row.parts)["public"]["scores"]
            entry["public_scores"] = _shown(public, precision)
        table.append(entry)
    document["rows"] = table
    if testset.rank_by in AUTORANK_RECIPES:
        by_autorank(document, AUTORANK_RECIPES[testset.rank_by])
    return document


#: ``--rank-by`` -> the AutoRank recipe.
AUTORANK_RECIPES = {"autorank": "wmt25", "autorank-wmt24": "wmt24"}


def by_autorank(document: dict[str, Any], recipe: str) -> None:
    """Rank the board's rows by WMT's AutoRank over the set's metrics, computed from the
    scores the board shows (so anyone can recompute it from the page, and a blind set
    ranks by nothing finer than it shows); AutoRank is shown to one decimal, as WMT prints
    it, and equal shown values are a tie (one rank, listed by team name). AutoRank has no
    bootstrap here: the rank range is the rank, and there are no clusters."""
    import numpy as np

    from bleucli.autoranking.compute import autorank
    from bleucli.autoranking.table import Metric, ScoreTable, lower_is_better_by_name
    from bleucli.display import rounded

    rows = document["rows"]
    if not rows:
        return
    names = list(rows[0]["scores"])
    if len(rows) == 1:
        values = {rows[0]["submission"]: 1.0}
        signature = ""
    else:
        table = ScoreTable([str(row["submission"]) for row in rows])
        for name in names:
            table.add_metric(
                Metric(name, lower_is_better_by_name(name), "board"),
                system_scores=np.array([row["scores"][name] for row in rows], dtype=np.float64),
            )
        result = autorank(table, recipe)
        values = {int(s.name): s.autorank for s in result.systems}
        signature = result.signature
    for row in rows:
        row["autorank"] = rounded(values[row["submission"]], 1)
    rows.sort(key=lambda row: (row["autorank"], row["team"], row["submission"]))
    rank = 0
    for position, row in enumerate(rows, start=1):
        if position == 1 or row["autorank"] != rows[position - 2]["autorank"]:
            rank = position
        row["rank"], row["rank_range"], row["cluster"] = rank, str(rank), ""
        row["ci"] = {}
    document["ranked_by"] = "AutoRank"
    document["autorank"] = {"recipe": recipe, "metrics": names, "signature": signature}
    document["decimals"] = {"AutoRank": 1, **document.get("decimals", {})}


def _previous_while_rescoring(
    engine: Any, testset: store.TestSet, current: store.Version, document: dict[str, Any]
) -> dict[str, Any] | None:
    """While teams' runs are still being re-scored on a new version, the board keeps the
    previous version's ranking, marked as such (``"previous_version"``, with the version
    it waits for), instead of emptying and refilling team by team: None once every team
    is scored (or failed) on the current version."""
    if not any(team["state"] == "being re-scored" for team in document["waiting"]):
        return None
    stored = store.leaderboard(engine, testset.id)
    if stored is None or not stored[0].get("rows"):
        return None
    previous = stored[0]
    if previous.get("version") == current.number and not previous.get("previous_version"):
        return None
    return {
        **previous, "change": document["change"], "closed": document["closed"],
        "computed": document["computed"], "computed_epoch": document["computed_epoch"],
        "previous_version": True, "pending_version": current.number,
        "waiting": document["waiting"],
    }  # fmt: skip


def _shown(
    scores: Any, precision: Any, ranked_by: str | None = None, exact: float | None = None
) -> dict[str, float]:
    """Stored scores at each metric's decimals; ``ranked_by``'s from ``exact``."""
    values = json.loads(scores) if isinstance(scores, str) else dict(scores)
    if ranked_by is not None and exact is not None:
        values[ranked_by] = exact
    return {name: rounded(value, precision.decimals(name)) for name, value in values.items()}


def _lines_of(
    stats: dict[str, list[list[float]]], lines: list[int] | None
) -> dict[str, list[list[float]]]:
    """Statistics of some lines only (None: all)."""
    if lines is None:
        return stats
    return {key: [rows[i] for i in lines] for key, rows in stats.items()}


def current(engine: Any, testset: store.TestSet) -> dict[str, Any]:
    """The stored leaderboard; marked ``"updating"`` (and a refresh queued for the workers)
    when the set has changed since it was computed. Never computes."""
    stored = store.leaderboard(engine, testset.id)
    if stored is None:
        document: dict[str, Any] = {"testset": testset.name, "signatures": {}, "rows": [],
                                    "change": -1, "waiting": []}  # fmt: skip
        change = -1
    else:
        document, change = stored
    if change < testset.changes or document.get("closed") != testset.closed:
        store.enqueue_once(engine, "leaderboard", testset.id)
        document = {**document, "updating": True}
    else:  # a previous version's board kept while re-scoring is being updated too
        document = {**document, "updating": bool(document.get("previous_version"))}
    return document


def counts(document: dict[str, Any], row: Any) -> bool:
    """Whether a stored board already counts a scored run (a previous version's board,
    kept while re-scoring, counts no run of the new one)."""
    if document.get("previous_version") or document.get("version") != row.version_number:
        return False
    return row.board_change is not None and document.get("change", -1) >= row.board_change


def refresh(engine: Any, testset_id: int) -> None:
    found = store.testset_by_id(engine, testset_id)
    if found is not None:
        store.save_leaderboard(engine, testset_id, compute(engine, found), found.changes)
