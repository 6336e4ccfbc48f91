"""Database URLs and the schema's life: ``--db`` takes ``sqlite:///PATH``, a plain file
path (SQLite), or ``postgresql://...`` (psycopg 3), as MLflow's ``--backend-store-uri``
does. SQLite runs in WAL mode with full synchronous commits (a commit survives a crash
of the process or the machine); :func:`migrate` brings any database to the latest schema
(idempotent)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bleucli.errors import ConfigError, UsageError


def engine_url(url: str) -> str:
    """SQLAlchemy's URL for ``--db``."""
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    if url.startswith("postgresql+psycopg://") or url.startswith("sqlite:///"):
        return url
    if "://" in url:
        raise UsageError(f"--db {url!r}: use sqlite:///PATH, a file path or postgresql://...")
    return "sqlite:///" + os.path.abspath(url)


def connect(url: str) -> Any:
    """An engine for ``--db``; SQLite with WAL, foreign keys and a 30 s busy timeout."""
    try:
        from sqlalchemy import create_engine, event
    except ImportError:
        from bleucli.server import INSTALL_HINT

        raise ConfigError(f"the server needs its extra: {INSTALL_HINT}") from None
    full = engine_url(url)
    if full.startswith("sqlite:///"):
        path = full[len("sqlite:///") :]
        folder = os.path.dirname(path) or "."
        if not os.path.isdir(folder):
            raise ConfigError(f"--db {url}: the folder {folder} does not exist")
        private_file(path)
        engine = create_engine(full, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # SQLAlchemy's BEGIN, not sqlite3's
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(connection: Any) -> None:
            # a writing transaction takes the write lock at BEGIN (two writers never
            # deadlock on an upgrade); a reading one stays deferred (WAL: readers never
            # wait for the writer)
            immediate = connection.get_execution_options().get("bleucli_write")
            connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine
    return create_engine(full, pool_pre_ping=True, pool_size=5, max_overflow=10)


def private_file(path: str) -> None:
    """Create the database file readable by its owner only (it holds the signing key and the
    blind references; SQLite gives its WAL and shared-memory files the same mode), or narrow
    an existing one that others could read."""
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
        os.close(descriptor)
        return
    except FileExistsError:
        pass
    except OSError:
        return  # SQLite says what is wrong when it opens it
    for candidate in (path, path + "-wal", path + "-shm"):
        try:
            info = os.stat(candidate)
            if info.st_mode & 0o077 and info.st_uid == os.geteuid():
                os.chmod(candidate, 0o600)
        except OSError:
            continue


@contextmanager
def writing(engine: Any) -> Iterator[Any]:
    """A connection in a transaction that writes (committed at the end, rolled back on an
    error); on SQLite it holds the write lock from its first statement."""
    with engine.connect().execution_options(bleucli_write=True) as connection, connection.begin():
        yield connection


def is_sqlite(engine: Any) -> bool:
    return bool(engine.dialect.name == "sqlite")


def migrate(engine: Any) -> str:
    """Create or upgrade the schema to the latest revision; the revision reached."""
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext

    config = Config()
    config.set_main_option("script_location", os.path.join(os.path.dirname(__file__), "migrations"))
    with writing(engine) as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    with engine.connect() as connection:
        revision = MigrationContext.configure(connection).get_current_revision()
    return str(revision)


def is_outage(err: BaseException) -> bool:
    """Whether ``err`` means the database is away (stopped, restarting, unreachable, or a
    connection it dropped), not that a query was wrong: what the workers wait out and the
    web answers with 503 and Retry-After."""
    try:
        from sqlalchemy import exc
    except ImportError:
        return False
    if isinstance(err, exc.DBAPIError) and err.connection_invalidated:
        return True
    if isinstance(err, exc.OperationalError) and "sqlite" in type(err.orig).__module__:
        # SQLite's OperationalError is also "no such table": only a busy or lost file waits
        text = str(err.orig).lower()
        return any(k in text for k in ("locked", "busy", "unable to open", "disk i/o"))
    if isinstance(err, (exc.OperationalError, exc.InterfaceError, exc.DisconnectionError)):
        return True
    if isinstance(err, exc.TimeoutError):  # the connection pool found no free connection
        return True
    try:
        import psycopg
    except ImportError:
        return False
    return isinstance(err, (psycopg.OperationalError, psycopg.InterfaceError))
