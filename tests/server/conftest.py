"""Real servers for the server tests: ``bleucli server run`` processes on 127.0.0.1, over
SQLite (a file) and over a real PostgreSQL that this session starts (Debian's postgresql,
run as the ``postgres`` user; ``.ci/run`` installs it). Without PostgreSQL's programs or
its user, its tests skip with the reason."""

from __future__ import annotations

import itertools
import os
import re
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


class PostgresCluster:
    """A PostgreSQL server of the tests' own, in a temporary folder (Debian's programs, run
    as the ``postgres`` user): started, stopped and started again on the same port (the
    outage tests stop it under load)."""

    def __init__(self) -> None:
        import tempfile

        programs = _pg_programs()
        if programs is None:
            pytest.skip("PostgreSQL is not installed (Debian's postgresql; .ci/run installs it)")
        if os.geteuid() == 0:
            import pwd

            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("no postgres user to run PostgreSQL as")
        self.programs = programs
        self.folder = Path(
            tempfile.mkdtemp(prefix="bleucli-pg-")
        )  # under /tmp: postgres reaches it
        self.data = self.folder / "data"
        if os.geteuid() == 0:
            os.chown(self.folder, user.pw_uid, user.pw_gid)
        self.port = free_port()
        init = _as_postgres(
            [str(programs / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
             "-E", "UTF8"]
        )  # fmt: skip
        if init.returncode != 0:
            pytest.skip(f"initdb failed: {init.stderr.strip()[-300:]}")
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}"

    def start(self) -> None:
        # fsync off: the tests' clusters are thrown away, and a commit's durability on a
        # machine crash is PostgreSQL's to prove, not ours (it made each test wait on disk)
        started = _as_postgres(
            [
                str(self.programs / "pg_ctl"), "-D", str(self.data), "-l",
                str(self.folder / "server.log"), "-w", "-t", "60",
                "-o", f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
                "-c fsync=off -c synchronous_commit=off -c max_connections=200",
                "start",
            ]
        )  # fmt: skip
        if started.returncode != 0:
            pytest.skip(f"PostgreSQL did not start: {started.stderr.strip()[-300:]}")

    def stop(self, mode: str = "fast") -> None:
        _as_postgres([str(self.programs / "pg_ctl"), "-D", str(self.data), "-m", mode, "stop"])

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A PostgreSQL server for this session: its base URL (``postgresql://postgres@...``)."""
    cluster = PostgresCluster()
    cluster.start()
    try:
        yield cluster.url
    finally:
        cluster.remove()


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


def _served(db_url: str, tmp_path: Path, visibility: str) -> Iterator[Task]:
    tokens = set_up(
        db_url, tmp_path, testset_args=("-m", "bleu", "chrf", "ter", "--visibility", visibility)
    )
    server = start_server(db_url, tmp_path, workers=2 if db_url.startswith("postgresql") else 1)
    try:
        yield Task(server, tokens, tmp_path)
    finally:
        server.stop()


@pytest.fixture
def task(db_url, tmp_path) -> Iterator[Task]:
    """The suite's shared task on a public set: one worker on SQLite, two sharing the queue
    on PostgreSQL."""
    yield from _served(db_url, tmp_path, "public")


@pytest.fixture
def blind_task(db_url, tmp_path) -> Iterator[Task]:
    """The same on a blind set."""
    yield from _served(db_url, tmp_path, "blind")


# -- the in-process tier ---------------------------------------------------------------------------
# The ASGI app driven through Starlette's TestClient (an in-memory transport: no port, no
# process) and the worker run in this process when a test asks: for routes, refusals and the
# life cycle. Real processes stay for durability, signals, PostgreSQL's workers and the browser.


@dataclass
class Local:
    """A set-up shared task served in-process."""

    db: str
    client: object  # starlette.testclient.TestClient
    tokens: dict[str, str]
    folder: Path

    def auth(self, team: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[team]}"}

    def upload(self, team: str, data: bytes | str = HYP, name: str = "run",
               testset: str = "news", headers: dict | None = None, **fields):  # fmt: skip
        if isinstance(data, str):
            data = Path(data).read_bytes()
        return self.client.post(
            "/api/v1/submissions",
            headers={**self.auth(team), **(headers or {})},
            data={"testset": testset, "name": name, **fields},
            files={"hypothesis": ("hyp.txt", data)},
        )

    def drain(self) -> int:
        """Run a worker in this process until the queue is empty; how many jobs it did."""
        from bleucli.server.worker import work

        return work(self.db, once=True)

    def scored(self, team: str, data: bytes | str = HYP, **kwargs) -> dict:
        """Upload, score, and the submission as its team reads it."""
        answer = self.upload(team, data, **kwargs)
        assert answer.status_code == 202, answer.text
        self.drain()
        state = self.client.get(
            f"/api/v1/submissions/{answer.json()['id']}", headers=self.auth(team)
        ).json()
        assert state["status"] == "scored", state
        return state

    def add_team(self, name: str) -> str:
        from bleucli.commands.server import add_team

        self.tokens[name] = add_team(self.db, name).splitlines()[-1]
        return self.tokens[name]

    def sign_in(self, team: str) -> None:
        """Sign the client in through the sign-in form (its CSRF token included)."""
        form = self.client.get("/signin")
        csrf = re.search(
            r'action="/signin">\s*<input type="hidden" name="csrf" value="([^"]+)"', form.text
        ).group(1)
        answer = self.client.post(
            "/signin", data={"token": self.tokens[team], "csrf": csrf}, follow_redirects=False
        )
        assert answer.status_code == 303, answer.text


def local_testset(db: str, *args: str, name: str = "news", refs: tuple = (REF,),
                  pair: str = "en-de", **settings) -> str:  # fmt: skip
    """``add-testset`` through its library call: metric options ``args``; settings by name
    (visibility, closes_at, limit_per_day, ...); ``public_fraction``."""
    from bleucli.commands.server import add_testset

    fraction = settings.pop("public_fraction", None)
    source = settings.pop("source", None)
    full = {
        "visibility": None, "owner": None, "public_badge": None, "opens_at": None,
        "closes_at": None, "limit_per_day": None, "limit_total": None,
        "limit_failures_per_day": None, "max_line_chars": None, "max_resamples": None,
        "max_scoring_seconds": None, "max_neural_tokens": None,
        "limit_scoring_seconds_per_day": None,
        **settings,
    }  # fmt: skip
    metrics = list(args) if "-m" in args else ["-m", "bleu", "chrf", "ter", *args]
    return add_testset(db, name, pair, refs, source, None, metrics, full, fraction)


@contextmanager
def in_process(
    db: str, folder: Path, teams=("alpha", "beta"), *args: str, **settings
) -> Iterator[Local]:
    from starlette.testclient import TestClient

    from bleucli.commands.server import init
    from bleucli.server.app import create_app

    init(db, None)
    local_testset(db, *args, **settings)
    app = create_app(db, max_upload=200_000)
    with TestClient(app, base_url="http://testserver") as client:
        task = Local(db, client, {}, folder)
        for team in teams:
            task.add_team(team)
        try:
            yield task
        finally:
            app.state.engine.dispose()


@pytest.fixture
def local(db_url, tmp_path) -> Iterator[Local]:
    """A public test set (news: the example's 30 lines, BLEU, chrF, TER) with teams alpha
    and beta, served in-process, on SQLite and on PostgreSQL."""
    with in_process(db_url, tmp_path, ("alpha", "beta"), visibility="public",
                    limit_per_day=50) as task:  # fmt: skip
        yield task


@pytest.fixture
def blind(db_url, tmp_path) -> Iterator[Local]:
    """The same test set blind (the default), on SQLite and on PostgreSQL."""
    with in_process(db_url, tmp_path, ("alpha", "beta"), limit_per_day=50) as task:
        yield task
