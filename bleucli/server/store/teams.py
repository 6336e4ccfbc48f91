"""Teams, their tokens (stored as SHA-256 hashes only) and web sessions."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, select

from bleucli.errors import ConfigError
from bleucli.server import schema as t
from bleucli.server.db import writing
from bleucli.server.store.common import Identity, new_token, now, token_hash, utc

#: Web sessions last a week.
SESSION_SECONDS = 7 * 24 * 3600


def add_team(engine: Any, name: str) -> str:
    """Create a team and its token (returned once; only its hash is kept). The name is
    normalised and refused when it reads like an existing team's (:mod:`..names`)."""
    from bleucli.server.names import check_new

    token = new_token()
    with writing(engine) as connection:
        existing = [row[0] for row in connection.execute(select(t.teams.c.name)).all()]
        name = check_new(name, existing)
        team_id = connection.execute(
            insert(t.teams).values(name=name, created_at=now()).returning(t.teams.c.id)
        ).scalar_one()
        _add_token(connection, team_id, admin=False, token=token)
    return token


def _add_token(connection: Any, team_id: int | None, admin: bool, token: str) -> None:
    connection.execute(
        insert(t.tokens).values(
            hash=token_hash(token), team_id=team_id, admin=admin, created_at=now()
        )
    )


def add_admin_token(engine: Any) -> str:
    token = new_token()
    with writing(engine) as connection:
        _add_token(connection, None, admin=True, token=token)
    return token


def rotate_token(engine: Any, name: str) -> str:
    """A new token for team ``name``; its old tokens and web sessions stop working at once
    (in the same transaction)."""
    token = new_token()
    with writing(engine) as connection:
        team_id = connection.execute(
            select(t.teams.c.id).where(t.teams.c.name.in_(_spellings(name)))
        ).scalar()
        if team_id is None:
            raise ConfigError(f"no team named {name!r}: `bleucli server teams` lists them")
        connection.execute(delete(t.tokens).where(t.tokens.c.team_id == team_id))
        connection.execute(delete(t.web_sessions).where(t.web_sessions.c.team_id == team_id))
        _add_token(connection, team_id, admin=False, token=token)
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


def _spellings(name: str) -> list[str]:
    """A name as typed and as stored (normalised: ``"Team A "`` finds ``Team A``)."""
    import unicodedata

    return list(dict.fromkeys([name, " ".join(unicodedata.normalize("NFKC", name).split())]))


def team_id(engine: Any, name: str) -> int:
    with engine.connect() as connection:
        found = connection.execute(
            select(t.teams.c.id).where(t.teams.c.name.in_(_spellings(name)))
        ).scalar()
    if found is None:
        raise ConfigError(f"no team named {name!r}: create it with `bleucli server add-team`")
    return int(found)


@dataclass(frozen=True)
class TeamSummary:
    name: str
    created: datetime | None
    submissions: int
    last_submission: datetime | None
    tokens: int


def teams(engine: Any) -> list[TeamSummary]:
    """Every team with its number of submissions, its latest and its live tokens."""
    runs = (
        select(
            t.submissions.c.team_id,
            func.count().label("n"),
            func.max(t.submissions.c.created_at).label("last"),
        )
        .where(t.submissions.c.rescore_of.is_(None))
        .group_by(t.submissions.c.team_id)
        .subquery()
    )
    keys = (
        select(t.tokens.c.team_id, func.count().label("k")).group_by(t.tokens.c.team_id).subquery()
    )
    query = (
        select(t.teams.c.name, t.teams.c.created_at, runs.c.n, runs.c.last, keys.c.k)
        .select_from(
            t.teams.outerjoin(runs, runs.c.team_id == t.teams.c.id).outerjoin(
                keys, keys.c.team_id == t.teams.c.id
            )
        )
        .order_by(t.teams.c.name)
    )
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    return [
        TeamSummary(row.name, utc(row.created_at), int(row.n or 0), utc(row.last), int(row.k or 0))
        for row in rows
    ]


# -- web sessions ---------------------------------------------------------------------------------


def open_session(engine: Any, identity: Identity, previous: str = "") -> tuple[str, str]:
    """A new session for ``identity`` (the cookie it came with, if any, is ended: a session
    id never survives a sign-in): (cookie value, CSRF token)."""
    cookie, csrf = new_token(), new_token()
    with writing(engine) as connection:
        if previous:
            connection.execute(
                delete(t.web_sessions).where(t.web_sessions.c.hash == token_hash(previous))
            )
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
    with writing(engine) as connection:
        connection.execute(
            delete(t.web_sessions).where(t.web_sessions.c.hash == token_hash(cookie))
        )
