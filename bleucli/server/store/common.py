"""What every part of the store shares: times, tokens, identities, refusals, settings."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import insert, select, update

from bleucli.errors import ConfigError
from bleucli.hashing import sha256_hex
from bleucli.server import schema as t
from bleucli.server.db import writing


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


def day_start(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def token_hash(token: str) -> str:
    return sha256_hex(token)


def new_token() -> str:
    """256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


class Refused(Exception):
    """A request the server will not take: ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


@dataclass(frozen=True)
class Identity:
    """Who a token or a session is: a team, or an admin."""

    team_id: int | None
    team: str | None
    admin: bool


def lock_team(connection: Any, team_id: int) -> None:
    """Serialise a team's writes that check a limit (SQLite's BEGIN IMMEDIATE already
    does: one writer at a time)."""
    if connection.dialect.name == "postgresql":
        connection.execute(select(t.teams.c.id).where(t.teams.c.id == team_id).with_for_update())


def bump(connection: Any, testset_id: int) -> int:
    """Count a change of what the set's leaderboard shows; the new count."""
    connection.execute(
        update(t.testsets)
        .where(t.testsets.c.id == testset_id)
        .values(changes=t.testsets.c.changes + 1)
    )
    return int(
        connection.execute(
            select(t.testsets.c.changes).where(t.testsets.c.id == testset_id)
        ).scalar_one()
    )


# -- settings ------------------------------------------------------------------------------------


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
