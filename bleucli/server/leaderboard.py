"""A test set's leaderboard from stored per-sentence statistics: one primary submission per
team, ranked by the test set's first metric with 95% intervals, rank ranges and
significance clusters -- :func:`bleucli.ranking.rank_systems`, the machinery of ``bleucli
REF -i ... --rank``, with the same seed, so the same files give the same clusters. Nothing
is scored again. Recomputed by the worker whenever a submission of the set is scored, and
served as stored (a page view never pays for 1,000 resamples)."""

from __future__ import annotations

import json
from typing import Any

from bleucli.server import store

#: Resamples of the bootstrap behind intervals, ranks and clusters (as --rank's default).
N_SAMPLES = 1000


def compute(engine: Any, testset: store.TestSet) -> dict[str, Any]:
    """The leaderboard document of the API (``/api/v1/leaderboards/{testset}``)."""
    from bleucli.ranking import rank_systems
    from bleucli.server.scoring import metrics_for
    from bleucli.significance import seed_from_environment

    document: dict[str, Any] = {"testset": testset.name, "signatures": {}, "rows": []}
    if testset.version_id is None:
        return document
    document["primaries"] = store.primary_ids(engine, testset.id)
    document["version"] = testset.version_id
    current = store.version(engine, testset.version_id)
    chosen = sorted(store.primaries(engine, testset.id), key=lambda row: row.id)
    ranked = [row for row in chosen if row.version_id == current.id]
    document["other_versions"] = [row.id for row in chosen if row.version_id != current.id]
    if not ranked:
        return document
    metrics = metrics_for(current.references, current.args)
    first_key = next(iter(metrics))
    first = metrics[first_key]
    stats = store.stats(engine, [row.id for row in ranked], [first_key])
    names = [str(row.id) for row in ranked]
    label, seed = seed_from_environment()
    by_id = {str(row.id): row for row in ranked}
    if len(ranked) == 1:
        places = {names[0]: (1, "1", 1)}
    else:
        kept = store.resampled(engine, [row.id for row in ranked], first_key, label, N_SAMPLES)
        reuse = [kept[row.id] for row in ranked] if seed and len(kept) == len(ranked) else None
        ranking = rank_systems(
            first, [stats[row.id][first_key] for row in ranked], names, "bs", N_SAMPLES,
            seed or None, first.higher_is_better, reuse,
        )  # fmt: skip
        places = {}
        for system in ranking.systems:
            spread = (
                f"{system.rank_low}-{system.rank_high}"
                if system.rank_low != system.rank_high
                else str(system.rank_low)
            )
            places[system.name] = (system.position, spread, system.cluster)
    signatures = {}
    for row in ranked:
        for entry in _entries(row.result):
            signatures[entry["name"]] = entry.get("signature", "")
    document["signatures"] = signatures
    document["ranked_by"] = next(iter(json.loads(ranked[0].scores)), "")
    document["seed"] = label
    document["resamples"] = N_SAMPLES
    rows = []
    for name in sorted(names, key=lambda n: places[n][0]):
        row = by_id[name]
        position, spread, cluster = places[name]
        rows.append(
            {
                "rank": position,
                "rank_range": spread,
                "cluster": cluster,
                "team": row.team,
                "name": row.name,
                "submission": row.id,
                "scores": json.loads(row.scores),
            }
        )
    document["rows"] = rows
    return document


def _entries(result: str | None) -> list[dict[str, Any]]:
    if not result:
        return []
    parsed = json.loads(result)
    return parsed if isinstance(parsed, list) else [parsed]


def current(engine: Any, testset: store.TestSet) -> dict[str, Any]:
    """The stored leaderboard if it ranks today's primaries (and version), else a new one,
    stored: a reader never sees a leaderboard older than the last scored submission."""
    document = store.leaderboard(engine, testset.id)
    if (
        document is None
        or document.get("primaries") != store.primary_ids(engine, testset.id)
        or document.get("version") != testset.version_id
    ):
        document = compute(engine, testset)
        store.save_leaderboard(engine, testset.id, document)
    return document


def refresh(engine: Any, testset_id: int) -> None:
    found = store.testset_by_id(engine, testset_id)
    if found is not None:
        store.save_leaderboard(engine, testset_id, compute(engine, found))
