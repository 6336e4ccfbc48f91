"""A test set's leaderboard from stored per-sentence statistics: one primary submission per
team on the set's current version, ranked by the set's first metric with 95% intervals,
rank ranges and significance clusters -- :func:`bleucli.ranking.rank_systems`, the
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
    from bleucli.ranking import rank_systems
    from bleucli.server.blind import part_shown
    from bleucli.server.scoring import first_metric_name, metrics_for, result_entries
    from bleucli.significance import seed_from_environment

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
    ranked = store.primaries(engine, testset.id, current.id)
    if not ranked:
        return document
    part = part_shown(testset, ranked[0])
    document["part"] = part
    metrics = metrics_for(current.references, current.request)
    assert next(iter(metrics)) == current.request.metrics[0].name  # the request's order
    width = current.request.width
    first_key = next(iter(metrics))
    first = metrics[first_key]
    lines = _part_lines(current, part)
    stats = store.stats(engine, [row.id for row in ranked], [first_key])
    rows = {row.id: stats[row.id][first_key] for row in ranked}
    if lines is not None:
        rows = {k: [v[i] for i in lines] for k, v in rows.items()}
    names = [str(row.id) for row in ranked]
    label, seed = seed_from_environment()
    kept = {}
    if lines is None:
        kept = store.resampled(engine, [row.id for row in ranked], first_key, label, N_SAMPLES)
    reuse = [kept[row.id] for row in ranked] if seed and len(kept) == len(ranked) else None
    ranking = rank_systems(
        first, [rows[row.id] for row in ranked], names, "bs", N_SAMPLES, seed or None,
        first.higher_is_better, reuse,
    )  # fmt: skip
    places = {}
    for system in ranking.systems:
        spread = (
            f"{system.rank_low}-{system.rank_high}"
            if system.rank_low != system.rank_high
            else str(system.rank_low)
        )
        places[system.name] = (system.position, spread, system.cluster, system.ci)
    signatures = {}
    shown: dict[int, dict[str, float]] = {}
    for row in ranked:
        if part == "all":
            entries = result_entries(row.result)
            shown[row.id] = json.loads(row.scores)
        else:
            chosen = json.loads(row.parts)[part]
            entries = result_entries(chosen["result"])
            shown[row.id] = chosen["scores"]
        for entry in entries:
            signatures[entry["name"]] = entry.get("signature", "")
    ranked_by = first_metric_name(current.request, ranked[0].result)
    document.update(
        signatures=signatures, ranked_by=ranked_by, seed=label, resamples=N_SAMPLES,
        decimals=width,
    )  # fmt: skip
    by_id = {str(row.id): row for row in ranked}
    table = []
    for name in sorted(names, key=lambda n: places[n][0]):
        row = by_id[name]
        position, spread, cluster, half = places[name]
        entry = {
            "rank": position,
            "rank_range": spread,
            "cluster": cluster,
            "team": row.team,
            "name": row.name,
            "submission": row.id,
            "scores": shown[row.id],
            # the 95% interval's half-width, rounded as the scores are: a blind set's board
            # says nothing finer than its rounded scores
            "ci": {ranked_by: round(half, width)},
        }
        if part == "rest":
            entry["public_scores"] = json.loads(row.parts)["public"]["scores"]
        table.append(entry)
    document["rows"] = table
    return document


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
    else:
        document = {**document, "updating": False}
    return document


def counts(document: dict[str, Any], row: Any) -> bool:
    """Whether a stored board already counts a scored run."""
    return row.board_change is not None and document.get("change", -1) >= row.board_change


def refresh(engine: Any, testset_id: int) -> None:
    found = store.testset_by_id(engine, testset_id)
    if found is not None:
        store.save_leaderboard(engine, testset_id, compute(engine, found), found.changes)
