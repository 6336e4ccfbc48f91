"""The workers' queue: submissions to score and jobs (gates, reports, leaderboards), each
held under a lease; and the per-team limits on requests that make work.

A worker holds a job under a lease it renews while it works, so a worker killed at any
moment loses the job to another once the lease runs out; an outcome is written only while
the lease is held, so every job is done exactly once. On PostgreSQL ``FOR UPDATE SKIP
LOCKED`` lets workers on several machines share the queue without waiting on each other.
"""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, func, insert, or_, select, update

from bleucli.server import schema as t
from bleucli.server.db import writing
from bleucli.server.store.common import Refused, bump, iso, lock_team, now, utc
from bleucli.server.store.models import Job

#: Seconds a worker holds a job before another may take it over (it renews the lease while
#: it works); a worker killed with ``kill -9`` loses its jobs to the others after this.
#: ``BLEUCLI_SERVER_LEASE`` sets it (the crash tests use a few seconds).
LEASE_SECONDS = float(os.environ.get("BLEUCLI_SERVER_LEASE", "30"))
#: Times a job is started before it is failed: a submission that takes its worker down
#: (killed for memory, say) must not crash-loop every worker in turn.
MAX_ATTEMPTS = 3
#: Requests that make work for the workers, per team and hour.
WORK_PER_HOUR = {"gate": 60, "report": 20, "primary": 30}
#: Jobs a team may have waiting or running at once.
MAX_PENDING_JOBS = 3


# -- rate limits -------------------------------------------------------------------------------


def _check_rate(connection: Any, team_id: int, kind: str) -> None:
    """Refuse (429) a team's request for more work past its hourly limit or while it has
    :data:`MAX_PENDING_JOBS` jobs in the queue; else count it."""
    moment = now()
    window = moment - timedelta(hours=1)
    lock_team(connection, team_id)
    limit = WORK_PER_HOUR[kind]
    recent = connection.execute(
        select(t.work_requests.c.created_at)
        .where(
            t.work_requests.c.team_id == team_id,
            t.work_requests.c.kind == kind,
            t.work_requests.c.created_at >= window,
        )
        .order_by(t.work_requests.c.created_at)
    ).all()  # fmt: skip
    if len(recent) >= limit:
        oldest = utc(recent[0].created_at)
        assert oldest is not None
        wait = max(1, int((oldest + timedelta(hours=1) - moment).total_seconds()) + 1)
        raise Refused(
            429, f"{len(recent)} {kind} requests in the last hour, the limit; retry in {wait} s",
            wait,
        )  # fmt: skip
    if kind in ("gate", "report"):
        waiting = connection.execute(
            select(func.count()).where(
                t.jobs.c.team_id == team_id, t.jobs.c.status.in_(("queued", "running"))
            )
        ).scalar_one()
        if waiting >= MAX_PENDING_JOBS:
            raise Refused(
                429, f"{waiting} of your jobs are waiting for a worker, the limit; retry when one "
                "is done", 5,
            )  # fmt: skip
    connection.execute(
        insert(t.work_requests).values(team_id=team_id, kind=kind, created_at=moment)
    )


def request_work(engine: Any, team_id: int, kind: str) -> None:
    """Count a request that makes work (refused with 429 past the team's limits)."""
    with writing(engine) as connection:
        _check_rate(connection, team_id, kind)


# -- enqueueing ----------------------------------------------------------------------------------


def _enqueue(
    connection: Any,
    kind: str,
    testset_id: int,
    submission_id: int | None = None,
    team_id: int | None = None,
    payload: dict[str, Any] | None = None,
) -> int:
    return int(
        connection.execute(
            insert(t.jobs)
            .values(
                kind=kind, testset_id=testset_id, submission_id=submission_id, team_id=team_id,
                payload=json.dumps(payload) if payload is not None else None, status="queued",
                attempts=0, created_at=now(),
            )
            .returning(t.jobs.c.id)
        ).scalar_one()
    )  # fmt: skip


def enqueue_for_team(
    engine: Any,
    kind: str,
    team_id: int,
    testset_id: int,
    submission_id: int | None,
    payload: dict[str, Any] | None = None,
) -> int:
    """A team's job (a gate, a report), within its limits: the job's id."""
    with writing(engine) as connection:
        _check_rate(connection, team_id, kind)
        return _enqueue(connection, kind, testset_id, submission_id, team_id, payload)


def enqueue_once(engine: Any, kind: str, testset_id: int, submission_id: int | None = None) -> int:
    """A job nobody asked for by name (a leaderboard refresh, a report), unless one of its
    kind for the same set and submission is waiting already: the job's id. Atomic: the
    check and the insert happen under the set's row lock (SQLite: the write lock), so 40
    readers of a stale board at once queue one refresh, not several."""
    with engine.connect() as connection:  # the common case, without taking a lock
        waiting = _waiting(connection, kind, testset_id, submission_id)
    if waiting is not None:
        return waiting
    with writing(engine) as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(
                select(t.testsets.c.id).where(t.testsets.c.id == testset_id).with_for_update()
            )
        waiting = _waiting(connection, kind, testset_id, submission_id)
        if waiting is not None:
            return waiting
        return _enqueue(connection, kind, testset_id, submission_id)


def _waiting(connection: Any, kind: str, testset_id: int, submission_id: int | None) -> int | None:
    query = select(t.jobs.c.id).where(
        t.jobs.c.kind == kind,
        t.jobs.c.testset_id == testset_id,
        t.jobs.c.status == "queued",
    )
    if submission_id is not None:
        query = query.where(t.jobs.c.submission_id == submission_id)
    found = connection.execute(query.limit(1)).scalar()
    return int(found) if found is not None else None


def job(engine: Any, job_id: int) -> Any:
    with engine.connect() as connection:
        return connection.execute(select(t.jobs).where(t.jobs.c.id == job_id)).first()


def latest_job(engine: Any, kind: str, submission_id: int) -> Any:
    """The newest job of ``kind`` about a submission (any state), or None."""
    with engine.connect() as connection:
        return connection.execute(
            select(t.jobs)
            .where(t.jobs.c.kind == kind, t.jobs.c.submission_id == submission_id)
            .order_by(t.jobs.c.id.desc())
            .limit(1)
        ).first()


# -- leases --------------------------------------------------------------------------------------


class _Queue:
    """One table worked under leases: its running status and what a job needs of a row."""

    def __init__(self, table: Any, running: str, columns: list[Any]) -> None:
        self.table, self.running, self.columns = table, running, columns

    def ready(self, moment: float) -> Any:
        c = self.table.c
        return or_(
            c.status == "queued",
            and_(c.status == self.running, c.lease_until < moment),
        )

    def held(self, job: Job, worker: str) -> Any:
        c = self.table.c
        return and_(
            c.id == job.id, c.status == self.running, c.worker == worker, c.attempts == job.attempt
        )


SUBMISSIONS = _Queue(
    t.submissions, "scoring",
    [t.submissions.c.testset_id, t.submissions.c.version_id, t.submissions.c.team_id],
)  # fmt: skip
JOBS = _Queue(
    t.jobs, "running",
    [t.jobs.c.testset_id, t.jobs.c.kind, t.jobs.c.submission_id, t.jobs.c.team_id, t.jobs.c.payload],
)  # fmt: skip


def _queue(job: Job) -> _Queue:
    return SUBMISSIONS if job.kind == "score" else JOBS


def claim(engine: Any, worker: str, jobs_first: bool = True) -> Job | None:
    """Take the oldest waiting job of one queue, else of the other (or one whose worker's
    lease ran out: a crashed worker). A worker alternates which queue it looks at first
    (``jobs_first``), so neither starves: five teams gating at their cap used to keep a
    submission waiting a minute behind their gates."""
    order = (JOBS, SUBMISSIONS) if jobs_first else (SUBMISSIONS, JOBS)
    return _claim(engine, worker, order[0]) or _claim(engine, worker, order[1])


def _claim(engine: Any, worker: str, queue: _Queue) -> Job | None:
    moment = time.time()
    table = queue.table
    query = (
        select(table.c.id, table.c.attempts, *queue.columns)
        .where(queue.ready(moment))
        .order_by(table.c.id)
        .limit(1)
    )
    with writing(engine) as connection:
        if connection.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        row = connection.execute(query).first()
        if row is None:
            return None
        if row.attempts >= MAX_ATTEMPTS:  # it took a worker down each time: stop trying
            connection.execute(
                update(table)
                .where(table.c.id == row.id)
                .values(
                    status="failed",
                    lease_until=None,
                    finished_at=now(),
                    error=f"the work did not finish in {MAX_ATTEMPTS} attempts; the organisers "
                    "can see the workers' logs",
                )
            )
            return None
        values = {
            "status": queue.running, "worker": worker, "attempts": row.attempts + 1,
            "lease_until": moment + LEASE_SECONDS,
        }  # fmt: skip
        version_id = None
        if queue is SUBMISSIONS:
            # a run accepted before a new version is scored on the set's current one
            version_id = _current_version(connection, row.testset_id) or row.version_id
            values["version_id"] = version_id
        connection.execute(update(table).where(table.c.id == row.id).values(**values))
    if queue is SUBMISSIONS:
        return Job(
            row.id, row.attempts + 1, row.testset_id, version_id, "score", row.id, row.team_id
        )
    payload = json.loads(row.payload) if row.payload else None
    return Job(
        row.id, row.attempts + 1, row.testset_id, None, row.kind, row.submission_id, row.team_id,
        payload,
    )  # fmt: skip


def renew(engine: Any, job: Job, worker: str) -> bool:
    queue = _queue(job)
    with writing(engine) as connection:
        done = connection.execute(
            update(queue.table)
            .where(queue.held(job, worker))
            .values(lease_until=time.time() + LEASE_SECONDS)
        )
    return bool(done.rowcount)


def _current_version(connection: Any, testset_id: int) -> int | None:
    found = connection.execute(
        select(t.testsets.c.version_id).where(t.testsets.c.id == testset_id)
    ).scalar()
    return int(found) if found is not None else None


def finish(engine: Any, job: Job, worker: str, values: dict[str, Any]) -> str:
    """Write a submission's outcome in one transaction, only while this worker still holds
    it: it is scored exactly once even if a lease ran out and another worker took it over.
    A finished run counts as a change of its set's leaderboard (its ``board_change``).

    ``"written"``; ``"lost"`` (another worker holds it now); or ``"requeued"``: a new
    version of the set arrived while it was scored, so it goes back to the queue (the
    attempt not counted) to be scored on that version -- every run accepted before a
    version change ends up scored on the current version."""
    data = {key: values.pop(key) for key in ("stats", "resampled") if key in values}
    with writing(engine) as connection:
        current = _current_version(connection, job.testset_id)
        if values.get("status") == "scored" and current not in (None, job.version_id):
            moved = connection.execute(
                update(t.submissions)
                .where(SUBMISSIONS.held(job, worker))
                .values(status="queued", lease_until=None, worker=None,
                        attempts=job.attempt - 1, version_id=current)
            )  # fmt: skip
            return "requeued" if moved.rowcount else "lost"
        done = connection.execute(
            update(t.submissions)
            .where(SUBMISSIONS.held(job, worker))
            .values(finished_at=now(), lease_until=None, **values)
        )
        if not done.rowcount:
            return "lost"
        if data:
            connection.execute(
                update(t.submission_data)
                .where(t.submission_data.c.submission_id == job.id)
                .values(**data)
            )
        if values.get("status") in ("scored", "failed"):  # a failed re-scoring shows too
            change = bump(connection, job.testset_id)
            connection.execute(
                update(t.submissions)
                .where(t.submissions.c.id == job.id)
                .values(board_change=change)
            )
    return "written"


def finish_job(
    engine: Any, job: Job, worker: str, status: str, result: str | None, error: str | None
) -> bool:
    with writing(engine) as connection:
        done = connection.execute(
            update(t.jobs)
            .where(JOBS.held(job, worker))
            .values(status=status, result=result, error=error, finished_at=now(), lease_until=None)
        )
    return bool(done.rowcount)


def release(engine: Any, job: Job, worker: str) -> None:
    """Put a job back in the queue, the attempt not counted (a worker stopping before it
    finished: SIGTERM, or its parent gone)."""
    queue = _queue(job)
    with writing(engine) as connection:
        connection.execute(
            update(queue.table)
            .where(queue.held(job, worker))
            .values(status="queued", lease_until=None, attempts=job.attempt - 1)
        )


def pending(engine: Any, testset_id: int) -> int:
    """Submissions of a test set still queued or being scored."""
    with engine.connect() as connection:
        return int(
            connection.execute(
                select(func.count()).where(
                    t.submissions.c.testset_id == testset_id,
                    t.submissions.c.status.in_(("queued", "scoring")),
                )
            ).scalar_one()
        )


def queue_counts(engine: Any) -> dict[str, int]:
    with engine.connect() as connection:
        rows = connection.execute(
            select(t.submissions.c.status, func.count()).group_by(t.submissions.c.status)
        ).all()
    return {row[0]: int(row[1]) for row in rows}


def listing(engine: Any, failed: int = 20) -> list[dict[str, Any]]:
    """What ``bleucli server queue`` shows: every submission and job waiting or running,
    and the latest ``failed`` failures of each, with their messages; oldest first."""
    out: list[dict[str, Any]] = []
    sources = (
        ("score", t.submissions, t.submissions.c.name, ("queued", "scoring")),
        (None, t.jobs, t.jobs.c.kind, ("queued", "running")),
    )
    moment = time.time()
    with engine.connect() as connection:
        for kind, table, what, live in sources:
            columns = [
                table.c.id, what.label("what"), table.c.status, table.c.attempts,
                table.c.worker, table.c.lease_until, table.c.created_at, table.c.error,
                t.testsets.c.name.label("testset"), t.teams.c.name.label("team"),
            ]  # fmt: skip
            joined = table.join(t.testsets, t.testsets.c.id == table.c.testset_id).outerjoin(
                t.teams, t.teams.c.id == table.c.team_id
            )
            base = select(*columns).select_from(joined)
            rows = list(connection.execute(base.where(table.c.status.in_(live))).all())
            rows += list(
                connection.execute(
                    base.where(table.c.status == "failed").order_by(table.c.id.desc()).limit(failed)
                ).all()
            )
            for row in rows:
                lease = None if row.lease_until is None else round(row.lease_until - moment, 1)
                out.append(
                    {
                        "kind": kind or row.what,
                        "id": row.id,
                        "testset": row.testset,
                        "team": row.team,
                        "name": row.what if kind else None,
                        "status": row.status,
                        "attempts": row.attempts,
                        "worker": row.worker,
                        "lease_left": lease,
                        "created": iso(row.created_at),
                        "error": row.error,
                    }
                )
    order = {"running": 0, "scoring": 0, "queued": 1, "failed": 2}
    out.sort(key=lambda r: (order.get(r["status"], 3), r["created"] or ""))
    return out


# -- workers alive -----------------------------------------------------------------------------

#: Seconds between a worker's heartbeats; one not seen for three of them counts as gone.
HEARTBEAT_SECONDS = 2.0
#: Rows of workers gone this long are removed (seconds).
FORGET_SECONDS = 3600.0


def heartbeat(engine: Any, worker: str, started: float, job: str | None) -> None:
    """Say this worker is alive (and what it holds); forget workers long gone."""
    moment = time.time()
    with writing(engine) as connection:
        done = connection.execute(
            update(t.workers).where(t.workers.c.name == worker).values(seen_at=moment, job=job)
        )
        if not done.rowcount:
            connection.execute(
                insert(t.workers).values(name=worker, started_at=started, seen_at=moment, job=job)
            )
        connection.execute(t.workers.delete().where(t.workers.c.seen_at < moment - FORGET_SECONDS))


def forget_worker(engine: Any, worker: str) -> None:
    with writing(engine) as connection:
        connection.execute(t.workers.delete().where(t.workers.c.name == worker))


def health(engine: Any) -> dict[str, Any]:
    """What ``/api/v1/health`` says: workers seen lately (and busy), and the queue -- how
    many runs wait, how long the oldest has waited."""
    moment = time.time()
    alive_since = moment - 3 * HEARTBEAT_SECONDS
    with engine.connect() as connection:
        workers = connection.execute(
            select(t.workers.c.name, t.workers.c.job).where(t.workers.c.seen_at >= alive_since)
        ).all()
        counts = dict(
            connection.execute(
                select(t.submissions.c.status, func.count())
                .where(t.submissions.c.status.in_(("queued", "scoring")))
                .group_by(t.submissions.c.status)
            ).all()
        )
        oldest = connection.execute(
            select(func.min(t.submissions.c.created_at)).where(t.submissions.c.status == "queued")
        ).scalar()
        jobs = connection.execute(
            select(func.count()).where(t.jobs.c.status == "queued")
        ).scalar_one()
    waited = None
    if oldest is not None:
        waited = round(max(0.0, (now() - (utc(oldest) or now())).total_seconds()), 1)
    return {
        "workers": {"alive": len(workers), "busy": sum(1 for w in workers if w.job)},
        "queue": {
            "queued": int(counts.get("queued", 0)),
            "scoring": int(counts.get("scoring", 0)),
            "jobs_queued": int(jobs),
            "oldest_queued_seconds": waited,
        },
    }
