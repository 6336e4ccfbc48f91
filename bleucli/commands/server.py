"""``bleucli server ...``: administration on the database directly (no running server
needed), and ``server run`` / ``server worker`` to serve. Thin: parse, call the server
package, print."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import datetime, timezone
from typing import Any

from bleucli.errors import ConfigError, UsageError


def _engine(url: str) -> Any:
    from bleucli.server.db import connect

    return connect(url)


def _ready(url: str) -> Any:
    """An engine on a database ``server init`` has set up."""
    from sqlalchemy import inspect

    engine = _engine(url)
    if not inspect(engine).has_table("testsets"):
        raise ConfigError(
            f"{url} has no bleucli server schema: run `bleucli server init --db {url}`"
        )
    return engine


def init(url: str, name: str | None) -> str:
    from bleucli.server import store

    engine = _engine(url)
    revision, created = store.initialise(engine)
    if name:
        store.set_server_name(engine, name)
    key = "created a signing key" if created else "signing key kept"
    return f"database {url} at schema revision {revision}; {key}"


def parse_time(value: str | None, option: str) -> datetime | None:
    """An ISO 8601 time (UTC unless it says otherwise)."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{option} {value!r} is not an ISO 8601 time (2026-06-01T12:00Z)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def add_testset(
    url: str,
    name: str,
    pair: str,
    refs: tuple[str, ...],
    source: str | None,
    docids: str | None,
    args: list[str],
    settings: dict[str, Any],
) -> str:
    from bleucli.io import read_file, require_nonempty
    from bleucli.server import leaderboard, store
    from bleucli.server.scoring import check_arguments, sha256

    if not name.strip() or "/" in name:
        raise UsageError(f"test set name {name!r}: give a non-empty name without '/'")
    if "-" not in pair:
        raise UsageError(f"-l {pair!r}: give the language pair as SRC-TRG (en-de)")
    if not refs:
        raise UsageError("give the references with --ref FILE (once per reference)")
    check_arguments(args)
    engine = _ready(url)
    owner = settings.pop("owner", None)
    if owner is not None:
        settings["owner_team_id"] = store.team_id(engine, owner)
    if settings.get("visibility") == "private" and owner is None:
        raise UsageError("a private test set needs its owning team: --owner TEAM")
    references = []
    digests = []
    for path in refs:
        source_text = read_file(path)
        require_nonempty(source_text)
        references.append(source_text.lines)
        with open(path, "rb") as handle:
            digests.append(sha256(handle.read()))
    for path, lines in zip(refs, references):
        if len(lines) != len(references[0]):
            raise ConfigError(f"{path}: {len(lines)} lines, but {refs[0]} has {len(references[0])}")
    extra = {}
    for option, given in (("source", source), ("docids", docids)):
        if given is not None:
            lines = read_file(given).lines
            if len(lines) != len(references[0]):
                raise ConfigError(
                    f"{given}: {len(lines)} lines, the references have {len(references[0])}"
                )
            extra[option] = lines
    testset_id, created = store.save_testset(
        engine, name, pair, references, digests, args, extra.get("source"), extra.get("docids"),
        {k: v for k, v in settings.items() if v is not None},
    )  # fmt: skip
    leaderboard.refresh(engine, testset_id)
    verb = "created" if created else "updated (later submissions are scored with this version)"
    return f"test set {name} {verb}: {len(references[0])} lines, {len(references)} reference(s)"


def add_team(url: str, name: str) -> str:
    from bleucli.server import store

    token = store.add_team(_ready(url), name)
    return f"team {name} created; its token (shown once, keep it secret):\n{token}"


def admin_token(url: str) -> str:
    from bleucli.server import store

    token = store.add_admin_token(_ready(url))
    return f"admin token (shown once, keep it secret):\n{token}"


def reveal(url: str, name: str) -> str:
    from bleucli.server import store

    store.reveal(_ready(url), name)
    return f"test set {name} revealed: participants now see per-sentence scores and reports"


def backup(url: str, target: str) -> str:
    """A consistent copy of a SQLite database while it runs (SQLite's online backup)."""
    import sqlite3

    from bleucli.server.db import engine_url

    full = engine_url(url)
    if not full.startswith("sqlite:///"):
        raise ConfigError(
            "backup copies SQLite databases; for PostgreSQL use pg_dump (docs/server.md)"
        )
    if os.path.exists(target):
        raise ConfigError(f"{target} exists; give a new file")
    source = sqlite3.connect(full[len("sqlite:///") :])
    copy = sqlite3.connect(target)
    with copy:
        source.backup(copy)
    copy.close()
    source.close()
    return f"backed up {url} to {target} (serve it with --db {target})"


def run(url: str, host: str, port: int, workers: int, max_upload: int) -> None:
    """The web server (uvicorn) and ``workers`` scoring workers beside it, until stopped."""
    import uvicorn

    from bleucli.server.app import create_app

    if workers < 0:
        raise UsageError(f"--workers must be 0 or more, got {workers}")
    _ready(url)
    app = create_app(url, max_upload)
    children = [
        subprocess.Popen([sys.executable, "-m", "bleucli", "server", "worker", "--db", url])
        for _ in range(workers)
    ]
    print(
        f"bleucli server on http://{host}:{port} with {workers} scoring worker(s)",
        file=sys.stderr,
        flush=True,
    )

    def stop(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    # uvicorn shuts down on SIGTERM/SIGINT and then raises the signal again under the
    # handlers it found: with these that ends in SystemExit here, so the workers are
    # stopped below, not left running when only this process was signalled
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for child in children:
            child.terminate()  # SIGTERM: the job at hand is finished first
        for child in children:
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()


def worker(url: str, once: bool) -> str:
    from bleucli.server.worker import work

    _ready(url)
    handled = work(url, once=once)
    return f"worker stopped after {handled} job(s)"
