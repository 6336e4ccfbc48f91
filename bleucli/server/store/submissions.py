"""Submissions: accepting them within a set's window and limits, reading them, primaries,
and their stored statistics.

A day (for limits) is a UTC calendar day. Writes that check a limit lock the team's row
first (``FOR UPDATE`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` takes the write lock), so
two concurrent uploads cannot both pass a limit that has room for one. Re-scoring copies
and runs the server failed on never count against a limit.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, insert, select, update

from bleucli.server import schema as t
from bleucli.server.db import writing
from bleucli.server.store.common import Refused, bump, day_start, iso, lock_team, now, utc
from bleucli.server.store.models import TestSet


def check_window(testset: TestSet, moment: datetime) -> None:
    if testset.opens_at and moment < testset.opens_at:
        raise Refused(403, f"{testset.name} opens for submissions at {iso(testset.opens_at)}")
    if testset.closes_at and moment >= testset.closes_at:
        raise Refused(403, f"{testset.name} closed for submissions at {iso(testset.closes_at)}")


def check_failures(engine: Any, testset: TestSet, team_id: int) -> None:
    """Refused files are capped per day: failing on purpose cannot probe the references."""
    moment = now()
    start = day_start(moment)
    with engine.connect() as connection:
        count = connection.execute(
            select(func.count()).where(
                t.refusals.c.team_id == team_id,
                t.refusals.c.testset_id == testset.id,
                t.refusals.c.created_at >= start,
            )
        ).scalar_one()
    if count >= testset.limit_failures_per_day:
        raise _daily_limit(f"{count} refused files today on {testset.name}", start, moment)


def _daily_limit(what: str, start: datetime, moment: datetime) -> Refused:
    """A 429 for a daily limit, with the time it resets and Retry-After."""
    reset = start + timedelta(days=1)
    return Refused(
        429,
        f"{what}, the daily limit; it resets at {iso(reset)}",
        int((reset - moment).total_seconds()) + 1,
    )


def record_refusal(engine: Any, testset: TestSet, team_id: int) -> None:
    with writing(engine) as connection:
        connection.execute(
            insert(t.refusals).values(testset_id=testset.id, team_id=team_id, created_at=now())
        )


def _replay(connection: Any, team_id: int, key: str, testset: TestSet, digest: str) -> int | None:
    """The submission an Idempotency-Key already made, if it was this same upload."""
    row = connection.execute(
        select(t.submissions.c.id, t.submissions.c.testset_id, t.submissions.c.hypothesis_sha256)
        .where(t.submissions.c.team_id == team_id, t.submissions.c.idempotency_key == key)
    ).first()  # fmt: skip
    if row is None:
        return None
    if row.testset_id != testset.id or row.hypothesis_sha256 != digest:
        raise Refused(
            422,
            f"Idempotency-Key {key!r} was used for another upload (submission {row.id}); "
            "send a new key with a new upload",
        )
    return int(row.id)


def add_submission(
    engine: Any,
    testset: TestSet,
    team_id: int,
    name: str,
    hypothesis: bytes,
    digest: str,
    series: str | None = None,
    labels: dict[str, str] | None = None,
    idempotency_key: str | None = None,
) -> tuple[int, bool]:
    """Store an accepted file as a queued submission once its limits allow; committed
    before the caller answers 202. (id, whether ``idempotency_key`` had already made it)."""
    moment = now()
    start = day_start(moment)
    with writing(engine) as connection:
        lock_team(connection, team_id)
        if idempotency_key:
            replayed = _replay(connection, team_id, idempotency_key, testset, digest)
            if replayed is not None:
                return replayed, True
        check_window(testset, moment)
        mine = and_(
            t.submissions.c.team_id == team_id,
            t.submissions.c.testset_id == testset.id,
            t.submissions.c.charged.is_(True),
            t.submissions.c.rescore_of.is_(None),
        )
        total = connection.execute(select(func.count()).where(mine)).scalar_one()
        if total >= testset.limit_total:
            raise Refused(
                429, f"{total} submissions to {testset.name}, the limit in total; it does not reset"
            )
        today = connection.execute(
            select(func.count()).where(mine, t.submissions.c.created_at >= start)
        ).scalar_one()
        if today >= testset.limit_per_day:
            raise _daily_limit(f"{today} submissions to {testset.name} today", start, moment)
        spent = connection.execute(
            select(func.coalesce(func.sum(t.submissions.c.scoring_seconds), 0.0)).where(
                mine, t.submissions.c.created_at >= start
            )
        ).scalar_one()
        if float(spent) >= testset.scoring_seconds_per_day:
            raise _daily_limit(
                f"your runs on {testset.name} took {float(spent):,.0f} s of worker time today "
                f"(limit {testset.scoring_seconds_per_day:,} s)",
                start,
                moment,
            )
        submission_id = _insert(
            connection, testset.id, testset.version_id, team_id, name, digest, hypothesis,
            series=series, labels=json.dumps(labels or {}, ensure_ascii=False),
            idempotency_key=idempotency_key or None,
        )  # fmt: skip
    return submission_id, False


def _insert(
    connection: Any,
    testset_id: int,
    version_id: int | None,
    team_id: int,
    name: str,
    digest: str,
    hypothesis: bytes,
    **values: Any,
) -> int:
    values = {"primary_choice": False, "promoted": False, "charged": True, **values}
    submission_id = int(
        connection.execute(
            insert(t.submissions)
            .values(
                testset_id=testset_id, version_id=version_id, team_id=team_id, name=name,
                status="queued", hypothesis_sha256=digest, attempts=0, created_at=now(), **values,
            )
            .returning(t.submissions.c.id)
        ).scalar_one()
    )  # fmt: skip
    connection.execute(
        insert(t.submission_data).values(submission_id=submission_id, hypothesis=hypothesis)
    )
    return submission_id


def queue_rescoring(connection: Any, testset_id: int, old_version: int, new_version: int) -> int:
    """Queue a copy of every team's primary on ``old_version`` to be scored on
    ``new_version`` (a marked primary stays marked); not charged to the team. How many."""
    rows = connection.execute(
        _ordered_scored(testset_id, old_version).add_columns(
            t.submissions.c.hypothesis_sha256, t.submissions.c.labels
        )
    ).all()
    chosen: dict[int, Any] = {}
    for row in rows:
        chosen.setdefault(row.team_id, row)
    for row in chosen.values():
        data = connection.execute(
            select(t.submission_data.c.hypothesis).where(
                t.submission_data.c.submission_id == row.id
            )
        ).scalar_one()
        _insert(
            connection, testset_id, new_version, row.team_id, row.name, row.hypothesis_sha256,
            bytes(data), labels=row.labels, rescore_of=row.id, charged=False,
            primary_choice=bool(row.primary_choice),
        )  # fmt: skip
    return len(chosen)


SUBMISSION_COLUMNS = [
    t.submissions.c.series, t.submissions.c.labels, t.submissions.c.intervals,
    t.submissions.c.promoted, t.submissions.c.gate,
    t.submissions.c.id, t.submissions.c.testset_id, t.submissions.c.version_id,
    t.submissions.c.team_id, t.submissions.c.name, t.submissions.c.status, t.submissions.c.error,
    t.submissions.c.hypothesis_sha256, t.submissions.c.result, t.submissions.c.scores,
    t.submissions.c.receipt, t.submissions.c.primary_choice, t.submissions.c.created_at,
    t.submissions.c.finished_at, t.submissions.c.rescore_of, t.submissions.c.charged,
    t.submissions.c.board_change, t.submissions.c.parts,
    t.testsets.c.name.label("testset"), t.teams.c.name.label("team"),
    t.versions.c.number.label("version_number"),
]  # fmt: skip


def _submissions_query() -> Any:
    return select(*SUBMISSION_COLUMNS).select_from(
        t.submissions.join(t.testsets, t.testsets.c.id == t.submissions.c.testset_id)
        .join(t.teams, t.teams.c.id == t.submissions.c.team_id)
        .join(t.versions, t.versions.c.id == t.submissions.c.version_id)
    )


def submission(engine: Any, submission_id: int) -> Any:
    with engine.connect() as connection:
        return connection.execute(
            _submissions_query().where(t.submissions.c.id == submission_id)
        ).first()


def submissions(engine: Any, testset_id: int | None, team_id: int | None) -> list[Any]:
    """Newest first; ``team_id`` None: every team's (admins)."""
    query = _submissions_query().order_by(t.submissions.c.id.desc())
    if testset_id is not None:
        query = query.where(t.submissions.c.testset_id == testset_id)
    if team_id is not None:
        query = query.where(t.submissions.c.team_id == team_id)
    with engine.connect() as connection:
        return list(connection.execute(query).all())


#: What a series' history needs of each run (no receipt, no hypothesis, no statistics).
SERIES_COLUMNS = [
    t.submissions.c.id, t.submissions.c.testset_id, t.submissions.c.team_id,
    t.submissions.c.version_id, t.submissions.c.name, t.submissions.c.status,
    t.submissions.c.created_at, t.submissions.c.labels, t.submissions.c.scores,
    t.submissions.c.result, t.submissions.c.intervals, t.submissions.c.promoted,
    t.submissions.c.gate, t.submissions.c.series,
]  # fmt: skip


def series_runs(engine: Any, testset_id: int, team_id: int, series: str) -> list[Any]:
    """A team's runs of one series on one test set, oldest first."""
    query = (
        select(*SERIES_COLUMNS)
        .where(
            t.submissions.c.testset_id == testset_id,
            t.submissions.c.team_id == team_id,
            t.submissions.c.series == series,
        )
        .order_by(t.submissions.c.id)
    )
    with engine.connect() as connection:
        return list(connection.execute(query).all())


def save_gate(engine: Any, submission_id: int, document: str, promote: bool) -> None:
    values: dict[str, Any] = {"gate": document}
    if promote:
        values["promoted"] = True
    with writing(engine) as connection:
        connection.execute(
            update(t.submissions).where(t.submissions.c.id == submission_id).values(**values)
        )


def hypothesis(engine: Any, submission_id: int) -> bytes:
    with engine.connect() as connection:
        return bytes(
            connection.execute(
                select(t.submission_data.c.hypothesis).where(
                    t.submission_data.c.submission_id == submission_id
                )
            ).scalar_one()
        )


def encode_stats(stats: dict[str, list[list[float]]]) -> str:
    """Per-sentence statistics as stored: one JSON text per metric inside a JSON object, so a
    leaderboard decodes only the metric it ranks by."""
    return json.dumps({key: json.dumps(rows, separators=(",", ":")) for key, rows in stats.items()})


def stats(
    engine: Any, submission_ids: list[int], metrics: list[str] | None = None
) -> dict[int, dict[str, list[list[float]]]]:
    """Stored statistics by submission, of ``metrics`` (keys; default all)."""
    out = {}
    for submission_id, text in _data(engine, submission_ids, t.submission_data.c.stats):
        packed = json.loads(text)
        out[submission_id] = {
            k: json.loads(v) for k, v in packed.items() if metrics is None or k in metrics
        }
    return out


def _data(engine: Any, submission_ids: list[int], column: Any) -> list[tuple[int, str]]:
    """(submission id, value) of one column of ``submission_data``, where it is set."""
    if not submission_ids:
        return []
    with engine.connect() as connection:
        rows = connection.execute(
            select(t.submission_data.c.submission_id, column).where(
                t.submission_data.c.submission_id.in_(submission_ids), column.is_not(None)
            )
        ).all()
    return [(row[0], row[1]) for row in rows]


def resampled(
    engine: Any, submission_ids: list[int], metric: str, seed: str, n: int
) -> dict[int, Any]:
    """Stored resampled scores of ``metric`` (a numpy array by submission) where they were
    drawn with this seed and count; submissions without them are left out."""
    import base64

    import numpy as np

    out = {}
    for submission_id, text in _data(engine, submission_ids, t.submission_data.c.resampled):
        document = json.loads(text)
        if document["seed"] == seed and document["n"] == n and metric in document["scores"]:
            raw = base64.b64decode(document["scores"][metric])
            out[submission_id] = np.frombuffer(raw, dtype=np.float64)
    return out


# -- primaries ---------------------------------------------------------------------------------


def choose_primary(engine: Any, submission_id: int, team_id: int) -> int:
    """Mark a scored submission as its team's primary on its test set (while the set takes
    submissions, and only a run scored on its current version); its test set."""
    with writing(engine) as connection:
        row = connection.execute(
            select(
                t.submissions.c.testset_id, t.submissions.c.status, t.submissions.c.version_id,
                t.testsets.c.name, t.testsets.c.closes_at, t.testsets.c.version_id.label("current"),
            )
            .select_from(t.submissions.join(t.testsets, t.testsets.c.id == t.submissions.c.testset_id))
            .where(t.submissions.c.id == submission_id, t.submissions.c.team_id == team_id)
        ).first()  # fmt: skip
        if row is None:
            raise Refused(404, f"no submission {submission_id}")
        closes = utc(row.closes_at)
        if closes is not None and now() >= closes:
            raise Refused(
                403, f"{row.name} closed at {iso(closes)}: primaries are frozen since then"
            )
        if row.status != "scored":
            raise Refused(409, f"submission {submission_id} is {row.status}, not scored")
        if row.version_id != row.current:
            raise Refused(
                409,
                f"submission {submission_id} was scored on an earlier version of {row.name}; "
                "choose a run scored on the current one (your primary's re-scored copy, say)",
            )
        connection.execute(
            update(t.submissions)
            .where(t.submissions.c.team_id == team_id, t.submissions.c.testset_id == row.testset_id)
            .values(primary_choice=t.submissions.c.id == submission_id)
        )
        bump(connection, row.testset_id)
    return int(row.testset_id)


def _ordered_scored(testset_id: int, version_id: int) -> Any:
    """Scored runs of one version, each team's primary first: the one it marked, else its
    latest own run, else its latest re-scored copy."""
    return (
        select(
            t.submissions.c.id, t.submissions.c.team_id, t.submissions.c.name,
            t.submissions.c.primary_choice,
        )
        .where(
            t.submissions.c.testset_id == testset_id,
            t.submissions.c.version_id == version_id,
            t.submissions.c.status == "scored",
        )
        .order_by(
            t.submissions.c.team_id, t.submissions.c.primary_choice.desc(),
            t.submissions.c.rescore_of.is_(None).desc(), t.submissions.c.id.desc(),
        )
    )  # fmt: skip


def primary_ids(engine: Any, testset_id: int, version_id: int) -> list[int]:
    """The submissions a leaderboard of ``version_id`` ranks."""
    chosen: dict[int, int] = {}
    with engine.connect() as connection:
        for row in connection.execute(_ordered_scored(testset_id, version_id)):
            chosen.setdefault(row.team_id, row.id)
    return sorted(chosen.values())


def primaries(engine: Any, testset_id: int, version_id: int) -> list[Any]:
    """Each team's primary scored submission on ``version_id`` (full rows)."""
    ids = primary_ids(engine, testset_id, version_id)
    if not ids:
        return []
    with engine.connect() as connection:
        rows = connection.execute(
            _submissions_query().where(t.submissions.c.id.in_(ids)).order_by(t.submissions.c.id)
        ).all()
    return list(rows)


def waiting_teams(engine: Any, testset_id: int, version_id: int) -> list[dict[str, Any]]:
    """Teams with a scored run on an earlier version and none on ``version_id``: who the
    leaderboard of this version does not show yet, and why (their re-scoring's state)."""
    with engine.connect() as connection:
        earlier = connection.execute(
            select(t.submissions.c.team_id, t.teams.c.name)
            .select_from(t.submissions.join(t.teams, t.teams.c.id == t.submissions.c.team_id))
            .where(
                t.submissions.c.testset_id == testset_id,
                t.submissions.c.version_id != version_id,
                t.submissions.c.status == "scored",
            )
            .distinct()
        ).all()  # fmt: skip
        current = connection.execute(
            select(t.submissions.c.team_id, t.submissions.c.status, t.submissions.c.error)
            .where(
                t.submissions.c.testset_id == testset_id,
                t.submissions.c.version_id == version_id,
            )
            .order_by(t.submissions.c.id)
        ).all()  # fmt: skip
    states: dict[int, list[Any]] = {}
    for row in current:
        states.setdefault(row.team_id, []).append(row)
    out = []
    for team_id, name in sorted(earlier, key=lambda r: r.name):
        runs = states.get(team_id, [])
        if any(run.status == "scored" for run in runs):
            continue
        if any(run.status in ("queued", "scoring") for run in runs):
            state, error = "being re-scored", None
        elif runs:
            state, error = "re-scoring failed", runs[-1].error
        else:
            state, error = "no run on this version", None
        out.append({"team": name, "state": state, "error": error})
    return out
