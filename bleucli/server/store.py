"""Every query of the server, in one module: the web app, the worker and the administration
commands call these functions and never write SQL of their own.

Times are UTC. A day (for limits) is a UTC calendar day. Writes that check a limit lock the
team's row first (``FOR UPDATE`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` takes the write
lock), so two concurrent uploads cannot both pass a limit that has room for one.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import and_, func, insert, or_, select, update

from bleucli.errors import ConfigError
from bleucli.server import schema as t
from bleucli.server.db import writing

#: Seconds a worker holds a job before another may take it over (it renews the lease while
#: it scores); a worker killed with ``kill -9`` loses its jobs to the others after this.
#: ``BLEUCLI_SERVER_LEASE`` sets it (the crash tests use a few seconds).
LEASE_SECONDS = float(os.environ.get("BLEUCLI_SERVER_LEASE", "30"))
#: Times a job is started before it is failed: a submission that takes its worker down
#: (killed for memory, say) must not crash-loop every worker in turn.
MAX_ATTEMPTS = 3
#: Web sessions last a week.
SESSION_SECONDS = 7 * 24 * 3600


def now() -> datetime:
    return datetime.now(timezone.utc)


def utc(value: datetime | None) -> datetime | None:
    """A stored time as an aware UTC datetime (SQLite gives them back naive)."""
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def iso(value: datetime | None) -> str | None:
    value = utc(value)
    return value.isoformat(timespec="seconds").replace("+00:00", "Z") if value else None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


# -- set-up -------------------------------------------------------------------------------------


def setting(connection: Any, key: str) -> str | None:
    row = connection.execute(select(t.settings.c.value).where(t.settings.c.key == key)).first()
    return row[0] if row else None


def initialise(engine: Any) -> tuple[str, bool]:
    """Migrate, and create the signing key once. (revision, whether the key is new)."""
    from bleucli.server.db import migrate
    from bleucli.server.receipts import new_private_key

    revision = migrate(engine)
    with writing(engine) as connection:
        if setting(connection, "signing_key") is not None:
            return revision, False
        connection.execute(insert(t.settings).values(key="signing_key", value=new_private_key()))
    return revision, True


def server_name(engine: Any) -> str:
    with engine.connect() as connection:
        return setting(connection, "server_name") or "bleucli-server"


def set_server_name(engine: Any, name: str) -> None:
    with writing(engine) as connection:
        done = connection.execute(
            update(t.settings).where(t.settings.c.key == "server_name").values(value=name)
        )
        if not done.rowcount:
            connection.execute(insert(t.settings).values(key="server_name", value=name))


def signing_key(engine: Any) -> str:
    with engine.connect() as connection:
        key = setting(connection, "signing_key")
    if key is None:
        raise ConfigError("the database has no signing key: run `bleucli server init --db ...`")
    return key


# -- teams and tokens -------------------------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    """Who a token or a session is: a team, or an admin."""

    team_id: int | None
    team: str | None
    admin: bool


def add_team(engine: Any, name: str) -> str:
    """Create a team and its token (returned once; only its hash is kept)."""
    if not name.strip():
        raise ConfigError("a team needs a name")
    token = new_token()
    with writing(engine) as connection:
        exists = connection.execute(select(t.teams.c.id).where(t.teams.c.name == name)).first()
        if exists:
            raise ConfigError(f"a team named {name!r} exists already")
        team_id = connection.execute(
            insert(t.teams).values(name=name, created_at=now()).returning(t.teams.c.id)
        ).scalar_one()
        connection.execute(
            insert(t.tokens).values(
                hash=token_hash(token), team_id=team_id, admin=False, created_at=now()
            )
        )
    return token


def add_admin_token(engine: Any) -> str:
    token = new_token()
    with writing(engine) as connection:
        connection.execute(
            insert(t.tokens).values(
                hash=token_hash(token), team_id=None, admin=True, created_at=now()
            )
        )
    return token


def identify(engine: Any, token: str) -> Identity | None:
    if not token:
        return None
    query = (
        select(t.tokens.c.team_id, t.tokens.c.admin, t.teams.c.name)
        .select_from(t.tokens.outerjoin(t.teams, t.teams.c.id == t.tokens.c.team_id))
        .where(t.tokens.c.hash == token_hash(token))
    )
    with engine.connect() as connection:
        row = connection.execute(query).first()
    return Identity(row.team_id, row.name, bool(row.admin)) if row else None


# -- test sets --------------------------------------------------------------------------------


@dataclass
class TestSet:
    id: int
    name: str
    pair: str
    visibility: str
    opens_at: datetime | None
    closes_at: datetime | None
    limit_per_day: int
    limit_total: int
    limit_failures_per_day: int
    revealed: bool
    version_id: int | None
    owner_team_id: int | None = None
    public_badge: bool = False

    __test__ = False  # not a pytest class

    def visible_to(self, who: Identity | None) -> bool:
        """A private set exists only for its owning team (and admins)."""
        if self.visibility != "private":
            return True
        return who is not None and (who.admin or who.team_id == self.owner_team_id)

    def public(self, metrics: list[str]) -> dict[str, Any]:
        """What anyone may know of it."""
        return {
            "name": self.name,
            "pair": self.pair,
            "metrics": metrics,
            "visibility": self.visibility,
            "revealed": self.revealed,
            "opens": iso(self.opens_at),
            "closes": iso(self.closes_at),
            "limits": {
                "per_day": self.limit_per_day,
                "total": self.limit_total,
                "failures_per_day": self.limit_failures_per_day,
            },
        }

    @property
    def blind(self) -> bool:
        return self.visibility == "blind" and not self.revealed

    def sees_everything(self, who: Identity | None) -> bool:
        """Per-sentence scores and reports: a public or revealed set, or the owner of a
        private one."""
        return not self.blind and self.visible_to(who)


@dataclass
class Version:
    id: int
    args: list[str]
    references: list[list[str]]
    references_sha256: list[str]
    source: list[str] | None
    docids: list[str] | None
    n_lines: int


def _testset(row: Any) -> TestSet:
    return TestSet(
        row.id, row.name, row.pair, row.visibility, utc(row.opens_at), utc(row.closes_at),
        row.limit_per_day, row.limit_total, row.limit_failures_per_day, bool(row.revealed),
        row.version_id, row.owner_team_id, bool(row.public_badge),
    )  # fmt: skip


def team_id(engine: Any, name: str) -> int:
    with engine.connect() as connection:
        found = connection.execute(select(t.teams.c.id).where(t.teams.c.name == name)).scalar()
    if found is None:
        raise ConfigError(f"no team named {name!r}: create it with `bleucli server add-team`")
    return int(found)


def save_testset(
    engine: Any,
    name: str,
    pair: str,
    references: list[list[str]],
    references_sha256: list[str],
    args: list[str],
    source: list[str] | None,
    docids: list[str] | None,
    settings: dict[str, Any],
) -> tuple[int, bool]:
    """Create the test set, or give an existing one a new version (later submissions are
    scored against it; earlier ones keep theirs) and the settings given. (id, created)."""
    version = {
        "args": json.dumps(args),
        "references": json.dumps(references, ensure_ascii=False),
        "references_sha256": json.dumps(references_sha256),
        "source": json.dumps(source, ensure_ascii=False) if source is not None else None,
        "docids": json.dumps(docids, ensure_ascii=False) if docids is not None else None,
        "n_lines": len(references[0]),
        "created_at": now(),
    }
    with writing(engine) as connection:
        row = connection.execute(select(t.testsets).where(t.testsets.c.name == name)).first()
        created = row is None
        if created:
            values = {
                "visibility": "blind",
                "opens_at": None,
                "closes_at": None,
                "limit_per_day": 5,
                "limit_total": 100,
                "limit_failures_per_day": 20,
                **settings,
            }
            testset_id = connection.execute(
                insert(t.testsets)
                .values(name=name, pair=pair, revealed=False, created_at=now(), **values)
                .returning(t.testsets.c.id)
            ).scalar_one()
        else:
            testset_id = row.id
            connection.execute(
                update(t.testsets)
                .where(t.testsets.c.id == testset_id)
                .values(pair=pair, **settings)
            )
        version_id = connection.execute(
            insert(t.versions).values(testset_id=testset_id, **version).returning(t.versions.c.id)
        ).scalar_one()
        connection.execute(
            update(t.testsets).where(t.testsets.c.id == testset_id).values(version_id=version_id)
        )
    return testset_id, created


def testset(engine: Any, name: str) -> TestSet | None:
    with engine.connect() as connection:
        row = connection.execute(select(t.testsets).where(t.testsets.c.name == name)).first()
    return _testset(row) if row else None


def testset_by_id(engine: Any, testset_id: int) -> TestSet | None:
    with engine.connect() as connection:
        row = connection.execute(select(t.testsets).where(t.testsets.c.id == testset_id)).first()
    return _testset(row) if row else None


def testsets(engine: Any) -> list[TestSet]:
    with engine.connect() as connection:
        rows = connection.execute(select(t.testsets).order_by(t.testsets.c.name)).all()
    return [_testset(row) for row in rows]


def version(engine: Any, version_id: int) -> Version:
    with engine.connect() as connection:
        row = connection.execute(select(t.versions).where(t.versions.c.id == version_id)).one()
    return Version(
        row.id,
        json.loads(row.args),
        json.loads(row.references),
        json.loads(row.references_sha256),
        json.loads(row.source) if row.source else None,
        json.loads(row.docids) if row.docids else None,
        row.n_lines,
    )


def reveal(engine: Any, name: str) -> None:
    with writing(engine) as connection:
        done = connection.execute(
            update(t.testsets).where(t.testsets.c.name == name).values(revealed=True)
        )
    if done.rowcount == 0:
        raise ConfigError(f"no test set named {name!r}")


# -- submissions ---------------------------------------------------------------------------------


class Refused(Exception):
    """A submission the server will not take: ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


def _day_start(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _lock_team(connection: Any, team_id: int) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(select(t.teams.c.id).where(t.teams.c.id == team_id).with_for_update())


def check_window(testset: TestSet, moment: datetime) -> None:
    if testset.opens_at and moment < testset.opens_at:
        raise Refused(403, f"{testset.name} opens for submissions at {iso(testset.opens_at)}")
    if testset.closes_at and moment >= testset.closes_at:
        raise Refused(403, f"{testset.name} closed for submissions at {iso(testset.closes_at)}")


def check_failures(engine: Any, testset: TestSet, team_id: int) -> None:
    """Refused files are capped per day: failing on purpose cannot probe the references."""
    moment = now()
    start = _day_start(moment)
    with engine.connect() as connection:
        count = connection.execute(
            select(func.count()).where(
                t.refusals.c.team_id == team_id,
                t.refusals.c.testset_id == testset.id,
                t.refusals.c.created_at >= start,
            )
        ).scalar_one()
    if count >= testset.limit_failures_per_day:
        reset = start + timedelta(days=1)
        raise Refused(
            429,
            f"{count} refused files today on {testset.name}, the daily limit; "
            f"it resets at {iso(reset)}",
            int((reset - moment).total_seconds()) + 1,
        )


def record_refusal(engine: Any, testset: TestSet, team_id: int) -> None:
    with writing(engine) as connection:
        connection.execute(
            insert(t.refusals).values(testset_id=testset.id, team_id=team_id, created_at=now())
        )


def add_submission(
    engine: Any,
    testset: TestSet,
    team_id: int,
    name: str,
    hypothesis: bytes,
    digest: str,
    series: str | None = None,
    labels: dict[str, str] | None = None,
) -> int:
    """Store an accepted file as a queued submission once its limits allow; committed
    before the caller answers 202."""
    moment = now()
    check_window(testset, moment)
    start = _day_start(moment)
    with writing(engine) as connection:
        _lock_team(connection, team_id)
        mine = and_(t.submissions.c.team_id == team_id, t.submissions.c.testset_id == testset.id)
        total = connection.execute(select(func.count()).where(mine)).scalar_one()
        if total >= testset.limit_total:
            raise Refused(
                429, f"{total} submissions to {testset.name}, the limit in total; it does not reset"
            )
        today = connection.execute(
            select(func.count()).where(mine, t.submissions.c.created_at >= start)
        ).scalar_one()
        if today >= testset.limit_per_day:
            reset = start + timedelta(days=1)
            raise Refused(
                429,
                f"{today} submissions to {testset.name} today, the daily limit; it resets at "
                f"{iso(reset)}",
                int((reset - moment).total_seconds()) + 1,
            )
        submission_id = int(
            connection.execute(
                insert(t.submissions)
                .values(
                    testset_id=testset.id, version_id=testset.version_id, team_id=team_id,
                    name=name, status="queued", hypothesis_sha256=digest,
                    primary_choice=False, attempts=0, created_at=moment, series=series,
                    labels=json.dumps(labels or {}, ensure_ascii=False), promoted=False,
                )
                .returning(t.submissions.c.id)
            ).scalar_one()
        )  # fmt: skip
        connection.execute(
            insert(t.submission_data).values(submission_id=submission_id, hypothesis=hypothesis)
        )
        return submission_id


SUBMISSION_COLUMNS = [
    t.submissions.c.series, t.submissions.c.labels, t.submissions.c.intervals,
    t.submissions.c.promoted, t.submissions.c.gate,
    t.submissions.c.id, t.submissions.c.testset_id, t.submissions.c.version_id,
    t.submissions.c.team_id, t.submissions.c.name, t.submissions.c.status, t.submissions.c.error,
    t.submissions.c.hypothesis_sha256, t.submissions.c.result, t.submissions.c.scores,
    t.submissions.c.receipt, t.submissions.c.primary_choice, t.submissions.c.created_at,
    t.submissions.c.finished_at, t.testsets.c.name.label("testset"), t.teams.c.name.label("team"),
]  # fmt: skip


def _submissions_query() -> Any:
    return select(*SUBMISSION_COLUMNS).select_from(
        t.submissions.join(t.testsets, t.testsets.c.id == t.submissions.c.testset_id).join(
            t.teams, t.teams.c.id == t.submissions.c.team_id
        )
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


def choose_primary(engine: Any, submission_id: int, team_id: int) -> int:
    """Mark a scored submission as its team's primary on its test set; its test set."""
    with writing(engine) as connection:
        row = connection.execute(
            select(t.submissions.c.testset_id, t.submissions.c.status).where(
                t.submissions.c.id == submission_id, t.submissions.c.team_id == team_id
            )
        ).first()
        if row is None:
            raise Refused(404, f"no submission {submission_id}")
        if row.status != "scored":
            raise Refused(409, f"submission {submission_id} is {row.status}, not scored")
        connection.execute(
            update(t.submissions)
            .where(t.submissions.c.team_id == team_id, t.submissions.c.testset_id == row.testset_id)
            .values(primary_choice=t.submissions.c.id == submission_id)
        )
    return int(row.testset_id)


def primary_ids(engine: Any, testset_id: int) -> list[int]:
    """The submissions a leaderboard ranks now (a cheap query: is a stored one current?)."""
    query = (
        select(t.submissions.c.team_id, t.submissions.c.id)
        .where(t.submissions.c.testset_id == testset_id, t.submissions.c.status == "scored")
        .order_by(t.submissions.c.team_id, t.submissions.c.primary_choice.desc(), t.submissions.c.id.desc())
    )  # fmt: skip
    chosen: dict[int, int] = {}
    with engine.connect() as connection:
        for team_id, submission_id in connection.execute(query):
            chosen.setdefault(team_id, submission_id)
    return sorted(chosen.values())


def primaries(engine: Any, testset_id: int) -> list[Any]:
    """Each team's primary scored submission: the one it marked, else its latest."""
    query = (
        _submissions_query()
        .where(t.submissions.c.testset_id == testset_id, t.submissions.c.status == "scored")
        .order_by(t.submissions.c.team_id, t.submissions.c.primary_choice.desc(), t.submissions.c.id.desc())
    )  # fmt: skip
    chosen: dict[int, Any] = {}
    with engine.connect() as connection:
        for row in connection.execute(query):
            chosen.setdefault(row.team_id, row)
    return list(chosen.values())


# -- the job queue ---------------------------------------------------------------------------


@dataclass
class Job:
    id: int
    attempt: int
    testset_id: int
    version_id: int


def claim(engine: Any, worker: str) -> Job | None:
    """Take the oldest queued job, or one whose worker's lease ran out (a crashed worker).
    On PostgreSQL ``FOR UPDATE SKIP LOCKED`` lets workers on several machines share the
    queue without waiting on each other."""
    moment = time.time()
    ready = or_(
        t.submissions.c.status == "queued",
        and_(t.submissions.c.status == "scoring", t.submissions.c.lease_until < moment),
    )
    query = (
        select(
            t.submissions.c.id, t.submissions.c.attempts, t.submissions.c.testset_id,
            t.submissions.c.version_id,
        )
        .where(ready)
        .order_by(t.submissions.c.id)
        .limit(1)
    )  # fmt: skip
    with writing(engine) as connection:
        if connection.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        row = connection.execute(query).first()
        if row is None:
            return None
        if row.attempts >= MAX_ATTEMPTS:  # it took a worker down each time: stop trying
            connection.execute(
                update(t.submissions)
                .where(t.submissions.c.id == row.id)
                .values(
                    status="failed",
                    lease_until=None,
                    finished_at=now(),
                    error=f"scoring did not finish in {MAX_ATTEMPTS} attempts; the organisers "
                    "can see the workers' logs",
                )
            )
            return None
        connection.execute(
            update(t.submissions)
            .where(t.submissions.c.id == row.id)
            .values(
                status="scoring",
                worker=worker,
                attempts=row.attempts + 1,
                lease_until=moment + LEASE_SECONDS,
            )
        )
    return Job(row.id, row.attempts + 1, row.testset_id, row.version_id)


def _held(job: Job, worker: str) -> Any:
    return and_(
        t.submissions.c.id == job.id,
        t.submissions.c.status == "scoring",
        t.submissions.c.worker == worker,
        t.submissions.c.attempts == job.attempt,
    )


def renew(engine: Any, job: Job, worker: str) -> bool:
    with writing(engine) as connection:
        done = connection.execute(
            update(t.submissions)
            .where(_held(job, worker))
            .values(lease_until=time.time() + LEASE_SECONDS)
        )
    return bool(done.rowcount)


def finish(engine: Any, job: Job, worker: str, values: dict[str, Any]) -> bool:
    """Write a job's outcome in one transaction, only while this worker still holds it: a
    job is scored exactly once even if a lease ran out and another worker took it over."""
    data = {key: values.pop(key) for key in ("stats", "resampled") if key in values}
    with writing(engine) as connection:
        done = connection.execute(
            update(t.submissions)
            .where(_held(job, worker))
            .values(finished_at=now(), lease_until=None, **values)
        )
        if done.rowcount and data:
            connection.execute(
                update(t.submission_data)
                .where(t.submission_data.c.submission_id == job.id)
                .values(**data)
            )
    return bool(done.rowcount)


def release(engine: Any, job: Job, worker: str) -> None:
    """Put a job back in the queue (a worker stopping with SIGTERM before it finished)."""
    with writing(engine) as connection:
        connection.execute(
            update(t.submissions)
            .where(_held(job, worker))
            .values(status="queued", lease_until=None)
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


# -- leaderboards ---------------------------------------------------------------------------------


def save_leaderboard(engine: Any, testset_id: int, document: dict[str, Any]) -> None:
    text = json.dumps(document, ensure_ascii=False)
    with writing(engine) as connection:
        done = connection.execute(
            update(t.leaderboards)
            .where(t.leaderboards.c.testset_id == testset_id)
            .values(document=text, computed_at=now())
        )
        if not done.rowcount:
            connection.execute(
                insert(t.leaderboards).values(
                    testset_id=testset_id, document=text, computed_at=now()
                )
            )


def leaderboard(engine: Any, testset_id: int) -> dict[str, Any] | None:
    with engine.connect() as connection:
        text = connection.execute(
            select(t.leaderboards.c.document).where(t.leaderboards.c.testset_id == testset_id)
        ).scalar()
    return json.loads(text) if text else None


# -- web sessions ---------------------------------------------------------------------------------


def open_session(engine: Any, identity: Identity) -> tuple[str, str]:
    """A new session for ``identity``: (cookie value, CSRF token)."""
    cookie, csrf = new_token(), new_token()
    with writing(engine) as connection:
        connection.execute(
            insert(t.web_sessions).values(
                hash=token_hash(cookie), team_id=identity.team_id, admin=identity.admin,
                csrf=csrf, expires_at=time.time() + SESSION_SECONDS,
            )
        )  # fmt: skip
    return cookie, csrf


def session(engine: Any, cookie: str) -> tuple[Identity, str] | None:
    """The identity and CSRF token of a live session cookie."""
    if not cookie:
        return None
    query = (
        select(t.web_sessions.c.team_id, t.web_sessions.c.admin, t.web_sessions.c.csrf, t.teams.c.name)
        .select_from(t.web_sessions.outerjoin(t.teams, t.teams.c.id == t.web_sessions.c.team_id))
        .where(t.web_sessions.c.hash == token_hash(cookie), t.web_sessions.c.expires_at > time.time())
    )  # fmt: skip
    with engine.connect() as connection:
        row = connection.execute(query).first()
    return (Identity(row.team_id, row.name, bool(row.admin)), row.csrf) if row else None


def close_session(engine: Any, cookie: str) -> None:
    from sqlalchemy import delete

    with writing(engine) as connection:
        connection.execute(
            delete(t.web_sessions).where(t.web_sessions.c.hash == token_hash(cookie))
        )
