"""``bleucli server ...``: administration on the database directly (no running server
needed), and ``server run`` / ``server worker`` to serve. Thin: parse, call the server
package, print."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import replace
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


def pin_models(request: Any, references: list[list[str]], sources: list[str] | None) -> Any:
    """A test set's neural metrics, checked and pinned before the set exists: the source is
    there, each model loads (on this machine, as a worker will load it) and is the kind the
    metric takes, and the stored request names its weights' hash (``MODEL@SHA256``), so a
    worker finding other weights under that name fails instead of scoring with them."""
    from bleucli.metrics import metric_class
    from bleucli.neural.load import split_spec
    from bleucli.scoring import MetricRequest

    neural = [m.name for m in request.metrics if metric_class(m.name).uses_source]
    if sources is None:
        raise UsageError(
            f"-m {' '.join(neural)}: neural metrics read the source sentences: give the test "
            f"set's --source FILE"
        )
    built = request.build(references, sources)
    pinned = []
    for metric in request.metrics:
        if metric.name in neural:
            loaded = built[metric.name].loaded
            spec, _ = split_spec(built[metric.name].model_spec)
            metric = MetricRequest(
                metric.name, {**metric.options, "model": f"{spec}@{loaded.sha256}"}
            )
        pinned.append(metric)
    return replace(request, metrics=tuple(pinned))


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
    public_fraction: float | None = None,
) -> str:
    """Register a test set, or give it a new version (other references, metric options or
    split): checked through the scoring command's own code before anything is stored, so a
    set no submission could be scored on is never created."""
    from bleucli.hashing import sha256_hex as sha256
    from bleucli.io import read_file, require_nonempty
    from bleucli.scoring import ScoringRequest
    from bleucli.server import leaderboard, store

    if not name.strip() or "/" in name:
        raise UsageError(f"test set name {name!r}: give a non-empty name without '/'")
    from bleucli.languages import check_pair

    check_pair(pair)
    if not refs:
        raise UsageError("give the references with --ref FILE (once per reference)")
    # metric options only (anything else is refused); the pair's target picks BLEU's
    # tokeniser as it does for the scoring command's -l
    request = replace(ScoringRequest.from_args(args), language_pair=pair)
    references = []
    originals = []
    for path in refs:
        source_text = read_file(path)
        require_nonempty(source_text)
        references.append(source_text.lines)
        with open(path, "rb") as handle:
            originals.append(handle.read())
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
    if request.uses_source:
        request = pin_models(request, references, extra.get("source"))
    request.build(references)  # the metrics, built as the scoring command builds them
    engine = _ready(url)
    existing = store.testset(engine, name)
    owner = settings.pop("owner", None)
    if owner is not None:
        settings["owner_team_id"] = store.team_id(engine, owner)
    visibility = settings.get("visibility") or (existing.visibility if existing else "blind")
    if public_fraction is not None and visibility != "blind":
        raise UsageError(f"--public-fraction splits a blind test set; {name} is {visibility}")
    if (
        visibility == "private"
        and owner is None
        and (existing is None or existing.owner_team_id is None)
    ):
        raise UsageError("a private test set needs its owning team: --owner TEAM")
    testset_id, outcome = store.save_testset(
        engine, name, pair, references, [sha256(data) for data in originals], request,
        extra.get("source"), extra.get("docids"),
        {k: v for k, v in settings.items() if v is not None}, public_fraction, originals,
    )  # fmt: skip
    leaderboard.refresh(engine, testset_id)
    found = store.testset_by_id(engine, testset_id)
    assert found is not None and found.version_id is not None
    number = store.version(engine, found.version_id).number
    shape = f"{len(references[0])} lines, {len(references)} reference(s)"
    if outcome == "created":
        return f"test set {name} created: {shape}"
    if outcome == "unchanged":
        return (
            f"test set {name}: references and options unchanged (still version {number}); "
            "settings updated -- `bleucli server edit-testset` changes settings alone"
        )
    return (
        f"test set {name}: version {number} ({shape}); later submissions are scored with it, "
        "and every team's primary is queued to be re-scored on it"
        + ("; it is blind again until revealed" if found.visibility == "blind" else "")
    )


def edit_testset(url: str, name: str, settings: dict[str, Any]) -> str:
    """Change a set's window, limits, caps or visibility without a new version."""
    from bleucli.server import leaderboard, store

    engine = _ready(url)
    owner = settings.pop("owner", None)
    if owner is not None:
        settings["owner_team_id"] = store.team_id(engine, owner)
    given = {k: v for k, v in settings.items() if v is not None}
    if not given:
        raise UsageError("edit-testset changes nothing: give --closes, --limit-per-day, ...")
    found = store.edit_testset(engine, name, given)
    leaderboard.refresh(engine, found.id)
    return f"test set {name} edited ({', '.join(_describe(k, v) for k, v in given.items())})"


def _describe(key: str, value: Any) -> str:
    from bleucli.server.store import iso

    shown = iso(value) if isinstance(value, datetime) else value
    return f"{key.replace('_at', '').replace('_', '-')} {shown}"


def add_team(url: str, name: str) -> str:
    from bleucli.server import store
    from bleucli.server.names import normalised

    name = normalised(name)
    token = store.add_team(_ready(url), name)
    return f"team {name} created; its token (shown once, keep it secret):\n{token}"


def admin_token(url: str) -> str:
    from bleucli.server import store

    token = store.add_admin_token(_ready(url))
    return f"admin token (shown once, keep it secret):\n{token}"


def reveal(url: str, name: str, force: bool) -> str:
    from bleucli.server import leaderboard, store

    engine = _ready(url)
    found = store.reveal(engine, name, force)
    leaderboard.refresh(engine, found.id)
    return (
        f"test set {name} revealed (closed since {store.iso(found.closes_at)}): participants now "
        "see per-sentence scores, series and reports, and the key of its receipts' "
        "commitments is published (/api/v1/testsets/" + name + ")"
    )


def teams(url: str) -> str:
    from tabulate import tabulate

    from bleucli.server import store

    rows = [
        [team.name, team.submissions, store.iso(team.last_submission) or "-", team.tokens,
         store.iso(team.created)]
        for team in store.teams(_ready(url))
    ]  # fmt: skip
    if not rows:
        return "no teams yet: create one with `bleucli server add-team`"
    return tabulate(rows, ["team", "submissions", "last submission", "tokens", "created"])


def rotate_token(url: str, name: str) -> str:
    from bleucli.server import store

    token = store.rotate_token(_ready(url), name)
    return (
        f"team {name}: its old token and web sessions no longer work; its new token "
        f"(shown once, keep it secret):\n{token}"
    )


def queue(url: str, fmt: str) -> str:
    """Jobs waiting, running and failed, with their messages."""
    import json

    from tabulate import tabulate

    from bleucli.server import store

    rows = store.listing(_ready(url))
    if fmt == "json":
        return json.dumps(rows, indent=1, ensure_ascii=False)
    if not rows:
        return "the queue is empty: nothing waiting, running or failed"
    table = [
        [row["kind"], row["id"], printable(row["testset"]), printable(row["team"] or "-"),
         printable(row["name"] or "-"), row["status"], row["attempts"],
         printable(row["worker"] or "-"),
         "-" if row["lease_left"] is None else f"{row['lease_left']:g} s", row["created"],
         printable((row["error"] or "")[:80])]
        for row in rows
    ]  # fmt: skip
    header = ["kind", "id", "test set", "team", "name", "status", "attempts", "worker", "lease",
              "created", "error"]  # fmt: skip
    return tabulate(table, header)


def printable(text: str) -> str:
    """``text`` safe for the organiser's terminal: control characters (an ESC sequence in a
    submission's name would rewrite the screen) and lone surrogates as escapes."""
    return "".join(
        char
        if char.isprintable() and not 0xD800 <= ord(char) <= 0xDFFF
        else char.encode("unicode_escape", "backslashreplace").decode("ascii")
        for char in str(text)
    )


def backup(url: str, target: str) -> str:
    """A consistent copy of a SQLite database while it runs (SQLite's online backup)."""
    import sqlite3

    from bleucli.server.db import engine_url

    full = engine_url(url)
    if not full.startswith("sqlite:///"):
        raise ConfigError(
            "backup copies SQLite databases; for PostgreSQL use pg_dump (docs/server.md)"
        )
    try:  # created readable by its owner only: it holds the key and the references
        os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        raise ConfigError(f"{target} exists; give a new file") from None
    except OSError as err:
        raise ConfigError(f"{target}: cannot create ({err.strerror or err})") from None
    source = sqlite3.connect(full[len("sqlite:///") :])
    copy = sqlite3.connect(target)
    with copy:
        source.backup(copy)
    copy.close()
    source.close()
    return f"backed up {url} to {target} (serve it with --db {target})"


def bind(host: str, port: int) -> Any:
    """The listening socket, bound before anything says the server is up: a busy port is a
    one-line error, not a printed URL and then a failure."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port}: {err.strerror or err} (another server on that port? "
            "choose one with --port)"
        ) from None
    sock.listen(2048)
    sock.set_inheritable(False)
    return sock


def run(url: str, host: str, port: int, workers: int, max_upload: int) -> None:
    """The web server (uvicorn) and ``workers`` scoring workers beside it, until stopped.
    The workers watch a pipe from this process: if it dies, ``kill -9`` included, they put
    their jobs back and exit. A worker that ends while this process runs (a crash, ``kill
    -9``, the memory killer) is replaced (:class:`Supervisor`)."""
    import uvicorn

    from bleucli.server.app import create_app

    if workers < 0:
        raise UsageError(f"--workers must be 0 or more, got {workers}")
    _ready(url)
    sock = bind(host, port)
    app = create_app(url, max_upload)
    supervisor = Supervisor(url, workers)
    supervisor.start()
    actual = sock.getsockname()[1]
    print(
        f"bleucli server on http://{host}:{actual} with {workers} worker(s)",
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
        config = uvicorn.Config(app, log_level="warning")
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        supervisor.stop()


class Supervisor:
    """``server run``'s workers: started, watched, and replaced when one ends while the
    server runs (a crash, ``kill -9``, the memory killer; ended children are reaped, never
    left defunct). A worker that keeps dying at once is restarted less and less often (up
    to :data:`MAX_RESTART_DELAY` s apart), so a broken machine does not spin."""

    #: Seconds between looks at the workers.
    POLL = 0.5
    #: A worker that lived less than this was a crash at start-up (seconds).
    QUICK_DEATH = 10.0
    MAX_RESTART_DELAY = 30.0

    def __init__(self, url: str, count: int) -> None:
        import threading

        self.url, self.count = url, count
        # the workers hold the read end; this process the write end until it dies (and
        # the read end too, to start replacements: that does not keep the pipe open)
        self.watch, self.keep = os.pipe()
        self.children: list[subprocess.Popen[bytes] | None] = [None] * count
        self.started: list[float] = [0.0] * count
        self.delays: list[float] = [0.0] * count
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True, name="supervisor")
        self.restarts = 0

    def _spawn(self, slot: int) -> None:
        import time

        self.children[slot] = subprocess.Popen(
            [sys.executable, "-m", "bleucli", "server", "worker", "--db", self.url,
             "--parent-fd", str(self.watch)],
            pass_fds=(self.watch,),
        )  # fmt: skip
        self.started[slot] = time.monotonic()

    def start(self) -> None:
        for slot in range(self.count):
            self._spawn(slot)
        if self.count:
            self.thread.start()

    def _loop(self) -> None:
        import time

        while not self.stopping.wait(self.POLL):
            for slot, child in enumerate(self.children):
                if child is None or child.poll() is None:
                    continue
                if self.stopping.is_set():
                    return
                if child.returncode == 0:  # asked to stop (SIGTERM to the group): not a death
                    self.children[slot] = None
                    continue
                lived = time.monotonic() - self.started[slot]
                code = child.returncode
                how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
                if lived < self.QUICK_DEATH:
                    self.delays[slot] = min(self.MAX_RESTART_DELAY, max(1.0, 2 * self.delays[slot]))
                else:
                    self.delays[slot] = 0.0
                print(
                    f"bleucli server: worker {slot + 1} (pid {child.pid}) ended ({how}); "
                    f"starting another" + (f" in {self.delays[slot]:g} s" if self.delays[slot] else ""),
                    file=sys.stderr, flush=True,
                )  # fmt: skip
                self.children[slot] = None
                if self.stopping.wait(self.delays[slot]):
                    return
                self._spawn(slot)
                self.restarts += 1

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout=5)
        children = [child for child in self.children if child is not None]
        for child in children:
            if child.poll() is None:
                child.terminate()  # SIGTERM: the job at hand is finished first
        for child in children:
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        for fd in (self.watch, self.keep):
            with contextlib.suppress(OSError):
                os.close(fd)


def worker(url: str, once: bool, parent_fd: int | None = None, device: str | None = None) -> str:
    from bleucli.server.worker import work

    _ready(url)
    handled = work(url, once=once, parent_fd=parent_fd, device=device)
    return f"worker stopped after {handled} job(s)"
