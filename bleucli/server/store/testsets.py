"""Test sets and their versions: what an organiser creates, edits and reveals."""

from __future__ import annotations

import json
import secrets
import weakref
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, insert, select, update

from bleucli.errors import ConfigError
from bleucli.server import schema as t
from bleucli.server.db import writing
from bleucli.server.store.common import bump, iso, now, utc
from bleucli.server.store.models import TestSet, Version, testset_from, version_from

if TYPE_CHECKING:
    from bleucli.scoring import ScoringRequest

#: Settings an organiser may change without a new version.
EDITABLE = (
    "visibility", "opens_at", "closes_at", "limit_per_day", "limit_total",
    "limit_failures_per_day", "owner_team_id", "public_badge", "max_line_chars", "max_resamples",
    "max_scoring_seconds", "max_neural_tokens", "limit_scoring_seconds_per_day", "rank_by",
)  # fmt: skip
DEFAULTS = {
    "visibility": "blind",
    "opens_at": None,
    "closes_at": None,
    "limit_per_day": 5,
    "limit_total": 100,
    "limit_failures_per_day": 20,
    "max_resamples": 1000,
}


def save_testset(
    engine: Any,
    name: str,
    pair: str,
    references: list[list[str]],
    references_sha256: list[str],
    request: ScoringRequest,
    source: list[str] | None,
    docids: list[str] | None,
    settings: dict[str, Any],
    public_fraction: float | None = None,
    reference_bytes: list[bytes] | None = None,
) -> tuple[int, str]:
    """Create the test set, or give an existing one a new version (later submissions are
    scored against it, every team's primary is queued to be re-scored on it, and a revealed
    set is blind again) -- unless the references, options and split are those of its current
    version, when only the settings change. (id, "created" | "new version" | "unchanged")."""
    source_text = json.dumps(source, ensure_ascii=False) if source is not None else None
    docids_text = json.dumps(docids, ensure_ascii=False) if docids is not None else None
    secret = secrets.token_hex(32)
    hmacs = None
    if reference_bytes is not None:
        from bleucli.server.blind import commitment

        hmacs = json.dumps([commitment(secret, data) for data in reference_bytes])
    version = {
        "references_hmac": hmacs,
        "args": json.dumps([]),  # 0004: the request below says it all
        "request": request.dumps(),
        "references": json.dumps(references, ensure_ascii=False),
        "references_sha256": json.dumps(references_sha256),
        "source": source_text,
        "docids": docids_text,
        "n_lines": len(references[0]),
        "created_at": now(),
        "secret": secret,
        "public_fraction": public_fraction,
        "longest_line": max((len(line) for ref in references for line in ref), default=0),
    }
    with writing(engine) as connection:
        row = connection.execute(select(t.testsets).where(t.testsets.c.name == name)).first()
        if row is None:
            testset_id = connection.execute(
                insert(t.testsets)
                .values(
                    name=name, pair=pair, revealed=False, created_at=now(), changes=0,
                    **{**DEFAULTS, **settings},
                )
                .returning(t.testsets.c.id)
            ).scalar_one()  # fmt: skip
            outcome, previous = "created", None
        else:
            testset_id, previous = row.id, row.version_id
            connection.execute(
                update(t.testsets)
                .where(t.testsets.c.id == testset_id)
                .values(pair=pair, **settings)
            )
            current = (
                connection.execute(select(t.versions).where(t.versions.c.id == previous)).first()
                if previous is not None
                else None
            )
            if current is not None and (
                _same_request(current, request)
                and json.loads(current.references_sha256) == references_sha256
                and current.public_fraction == public_fraction
                and current.source == source_text
                and current.docids == docids_text
            ):
                _refuse_reopening(connection, testset_from(row), settings)  # rolls back
                if settings:
                    bump(connection, testset_id)
                return testset_id, "unchanged"
            outcome = "new version"
        number = connection.execute(
            select(func.coalesce(func.max(t.versions.c.number), 0)).where(
                t.versions.c.testset_id == testset_id
            )
        ).scalar_one()
        version_id = connection.execute(
            insert(t.versions)
            .values(testset_id=testset_id, number=int(number) + 1, **version)
            .returning(t.versions.c.id)
        ).scalar_one()
        connection.execute(
            update(t.testsets)
            .where(t.testsets.c.id == testset_id)
            .values(version_id=version_id, revealed=False)
        )
        bump(connection, testset_id)
        if previous is not None:
            from bleucli.server.store.submissions import queue_rescoring

            queue_rescoring(connection, testset_id, previous, version_id)
    return testset_id, outcome


def _same_request(row: Any, request: ScoringRequest) -> bool:
    """Whether a stored version has ``request`` (one that no longer loads has not)."""
    from bleucli.errors import BleucliError

    try:
        return _request_of(row) == request
    except BleucliError:
        return False


def _request_of(row: Any) -> ScoringRequest:
    from bleucli.scoring import ScoringRequest

    if row.request:
        return ScoringRequest.from_json(row.request)
    return ScoringRequest.from_args(json.loads(row.args))


def edit_testset(engine: Any, name: str, settings: dict[str, Any]) -> TestSet:
    """Change a set's window, limits, caps or visibility without a new version."""
    unknown = set(settings) - set(EDITABLE)
    if unknown:
        raise ConfigError(f"cannot edit {', '.join(sorted(unknown))}")
    with writing(engine) as connection:
        row = connection.execute(select(t.testsets).where(t.testsets.c.name == name)).first()
        if row is None:
            raise ConfigError(f"no test set named {name!r}")
        before = testset_from(row)
        target = settings.get("visibility", before.visibility)
        if target == "blind" and before.visibility != "blind":
            used = connection.execute(
                select(func.count()).where(t.submissions.c.testset_id == before.id)
            ).scalar_one()
            if used:
                raise ConfigError(
                    f"{name} has been {before.visibility} with submissions: their per-sentence "
                    "scores may have been read, so it cannot become blind; add a new test set"
                )
        _refuse_reopening(connection, before, settings)
        owner = settings.get("owner_team_id", before.owner_team_id)
        if target == "private" and owner is None:
            raise ConfigError("a private test set needs its owning team: --owner TEAM")
        if settings:
            connection.execute(
                update(t.testsets).where(t.testsets.c.id == before.id).values(**settings)
            )
            bump(connection, before.id)
        row = connection.execute(select(t.testsets).where(t.testsets.c.id == before.id)).one()
    return testset_from(row)


def _refuse_reopening(connection: Any, before: TestSet, settings: dict[str, Any]) -> None:
    """A deadline moved into the future reopens a closed set. Refused for a revealed set (a
    new run's per-sentence scores are public: it would go on the board with its lines
    known) and for a split set past its deadline (teams have seen the rest-part scores,
    which a reopened set would hide again): a new version is the way to reopen them."""
    if "closes_at" not in settings or not before.closed:
        return
    closes = utc(settings["closes_at"])
    if closes is not None and closes <= now():
        return
    why = None
    if before.revealed:
        why = "it was revealed: runs added now would be scored with their lines known"
    elif before.version_id is not None:
        fraction = connection.execute(
            select(t.versions.c.public_fraction).where(t.versions.c.id == before.version_id)
        ).scalar()
        if fraction is not None:
            why = "it is split and teams have seen its rest-part scores since the deadline"
    if why is not None:
        raise ConfigError(
            f"{before.name} closed at {iso(before.closes_at)} and cannot reopen: {why}; to take "
            f"runs again, add a new version (bleucli server add-testset {before.name} ...)"
        )


def reveal(engine: Any, name: str, force: bool = False) -> TestSet:
    """Reveal a blind set after its deadline (``force``: close it now and reveal)."""
    with writing(engine) as connection:
        row = connection.execute(select(t.testsets).where(t.testsets.c.name == name)).first()
        if row is None:
            raise ConfigError(f"no test set named {name!r}")
        found = testset_from(row)
        if found.visibility != "blind":
            raise ConfigError(f"{name} is {found.visibility}: only a blind set is revealed")
        values: dict[str, Any] = {"revealed": True}
        if not found.closed:
            if not force:
                when = f"closes at {iso(found.closes_at)}" if found.closes_at else "has no deadline"
                raise ConfigError(
                    f"{name} is still open for submissions ({when}): reveal it after the "
                    "deadline, or add --force to close it now and reveal it"
                )
            values["closes_at"] = now()
        connection.execute(update(t.testsets).where(t.testsets.c.id == found.id).values(**values))
        bump(connection, found.id)
        row = connection.execute(select(t.testsets).where(t.testsets.c.id == found.id)).one()
    return testset_from(row)


def testset(engine: Any, name: str) -> TestSet | None:
    with engine.connect() as connection:
        row = connection.execute(select(t.testsets).where(t.testsets.c.name == name)).first()
    return testset_from(row) if row else None


def testset_by_id(engine: Any, testset_id: int) -> TestSet | None:
    with engine.connect() as connection:
        row = connection.execute(select(t.testsets).where(t.testsets.c.id == testset_id)).first()
    return testset_from(row) if row else None


def testsets(engine: Any) -> list[TestSet]:
    with engine.connect() as connection:
        rows = connection.execute(select(t.testsets).order_by(t.testsets.c.name)).all()
    return [testset_from(row) for row in rows]


#: Parsed versions by engine and id: a version never changes once written, and the web
#: reads the current one at every view.
_VERSIONS: weakref.WeakKeyDictionary[Any, dict[int, Version]] = weakref.WeakKeyDictionary()


def version(engine: Any, version_id: int) -> Version:
    cache = _VERSIONS.setdefault(engine, {})
    found = cache.get(version_id)
    if found is None:
        with engine.connect() as connection:
            row = connection.execute(select(t.versions).where(t.versions.c.id == version_id)).one()
        if len(cache) > 64:
            cache.clear()
        found = cache[version_id] = version_from(row)
    return found


@dataclass(frozen=True)
class VersionSummary:
    """A version without its references: what the API may say of it."""

    id: int
    number: int
    n_lines: int
    created_at: datetime | None
    secret: str | None
    public_fraction: float | None


def versions(engine: Any, testset_id: int) -> list[VersionSummary]:
    query = (
        select(
            t.versions.c.id, t.versions.c.number, t.versions.c.n_lines, t.versions.c.created_at,
            t.versions.c.secret, t.versions.c.public_fraction,
        )
        .where(t.versions.c.testset_id == testset_id)
        .order_by(t.versions.c.id)
    )  # fmt: skip
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    return [
        VersionSummary(
            row.id, int(row.number or k + 1), row.n_lines, utc(row.created_at), row.secret,
            row.public_fraction,
        )
        for k, row in enumerate(rows)
    ]  # fmt: skip
