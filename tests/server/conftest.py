"""Real servers for the server tests: ``bleucli server run`` processes on 127.0.0.1, over
SQLite (a file) and over a real PostgreSQL that this session starts (Debian's postgresql,
run as the ``postgres`` user; ``.ci/run`` installs it). Without PostgreSQL's programs or
its user, its tests skip with the reason."""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT

pytest.importorskip("sqlalchemy", reason="the server tests need the bleucli[server] extra")
pytest.importorskip("starlette", reason="the server tests need the bleucli[server] extra")

PG_BIN = Path("/usr/lib/postgresql")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _pg_programs() -> Path | None:
    found = sorted(PG_BIN.glob("*/bin/pg_ctl")) if PG_BIN.is_dir() else []
    if found:
        return found[-1].parent
    located = shutil.which("pg_ctl")
    return Path(located).parent if located else None


def _as_postgres(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    if os.geteuid() == 0:
        args = ["runuser", "-u", "postgres", "--", *args]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, **kwargs)


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A PostgreSQL server for this session: its base URL (``postgresql://postgres@...``)."""
    programs = _pg_programs()
    if programs is None:
        pytest.skip("PostgreSQL is not installed (Debian's postgresql; .ci/run installs it)")
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("no postgres user to run PostgreSQL as")
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="bleucli-pg-"))  # under /tmp: postgres reaches it
    data = folder / "data"
    if os.geteuid() == 0:
        import pwd

        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
    port = free_port()
    init = _as_postgres(
        [str(programs / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8"]
    )
    if init.returncode != 0:
        pytest.skip(f"initdb failed: {init.stderr.strip()[-300:]}")
    log = folder / "server.log"
    start = _as_postgres(
        [
            str(programs / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60",
            "-o", f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=200",
            "start",
        ]
    )  # fmt: skip
    if start.returncode != 0:
        pytest.skip(f"PostgreSQL did not start: {start.stderr.strip()[-300:]}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        _as_postgres([str(programs / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"])
        shutil.rmtree(folder, ignore_errors=True)


_counter = itertools.count()


def new_database(kind: str, tmp_path: Path, request) -> str:
    """A fresh, empty database of ``kind`` (sqlite or postgresql) for one test."""
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'server.db'}"
    base = request.getfixturevalue("postgres")
    import psycopg

    name = f"bleucli_test_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(base + "/postgres", autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return f"{base}/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    return new_database(request.param, tmp_path, request)


def bleucli(*args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "bleucli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


REF = str(EXAMPLES / "ref.de")
HYP = str(EXAMPLES / "hyp.de")
HYP2 = str(EXAMPLES / "hyp2.de")


@dataclass
class Server:
    url: str
    db: str
    process: subprocess.Popen
    log: Path

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


def start_server(
    db: str, folder: Path, workers: int = 1, env: dict | None = None, port: int | None = None
) -> Server:
    """``bleucli server run`` in its own process group, answering on 127.0.0.1."""
    import requests

    port = port or free_port()
    log = folder / f"server-{port}.log"
    with open(log, "ab") as handle:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(
            [sys.executable, "-m", "bleucli", "server", "run", "--db", db, "--port", str(port),
             "--workers", str(workers), "--max-upload", str(200_000)],
            stdout=handle, stderr=handle, cwd=ROOT, start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "BLEUCLI_SERVER_LEASE": "3", **(env or {})},
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {log.read_text()[-2000:]}")
        try:
            if requests.get(url + "/api/v1/testsets", timeout=2).status_code == 200:
                return Server(url, db, process, log)
        except requests.RequestException:
            time.sleep(0.1)
    raise AssertionError(f"the server did not answer: {log.read_text()[-2000:]}")


@dataclass
class Task:
    """A set-up shared task: a database, a test set, teams with tokens, a running server."""

    server: Server
    tokens: dict[str, str]
    folder: Path

    def token_file(self, team: str) -> str:
        path = self.folder / f"{team}.token"
        path.write_text(self.tokens[team] + "\n")
        return str(path)


def add_testset(db: str, *args: str, name: str = "news") -> None:
    """``bleucli server add-testset`` of the example references (create or update)."""
    bleucli("server", "add-testset", "--db", db, name, "-l", "en-de", "--ref", REF, *args)


@contextmanager
def serving(
    folder: Path, teams=("alpha", "beta"), testset_args=(), workers: int = 1
) -> Iterator[Task]:
    """A SQLite shared task set up and served for the body of the ``with``."""
    db = f"sqlite:///{folder / 'task.db'}"
    tokens = set_up(db, folder, teams, testset_args)
    server = start_server(db, folder, workers=workers)
    try:
        yield Task(server, tokens, folder)
    finally:
        server.stop()


def set_up(
    db: str, folder: Path, teams=("alpha", "beta"), testset_args=(), workers: int = 1
) -> dict[str, str]:
    bleucli("server", "init", "--db", db)
    add_testset(db, *testset_args)
    tokens = {}
    for team in teams:
        tokens[team] = (
            bleucli("server", "add-team", "--db", db, team).stdout.strip().splitlines()[-1]
        )
    return tokens


@pytest.fixture
def task(db_url, tmp_path) -> Iterator[Task]:
    """The suite's shared task: one worker on SQLite, two sharing the queue on PostgreSQL."""
    tokens = set_up(db_url, tmp_path, testset_args=("-m", "bleu", "chrf", "ter"))
    server = start_server(db_url, tmp_path, workers=2 if db_url.startswith("postgresql") else 1)
    try:
        yield Task(server, tokens, tmp_path)
    finally:
        server.stop()
