"""The worker: takes submissions to score and jobs (gates, reports, leaderboards) from the
database, so that no web request computes for long. Durable: a job is held under a lease
the worker renews while it works, so a worker killed at any moment loses its job to another
(or to itself after a restart) once the lease runs out; an outcome is written only while
the lease is held, so every acknowledged submission is scored exactly once. SIGTERM lets
the job at hand finish before the worker exits. A worker started by ``server run`` watches
a pipe from its parent: when the parent dies (``kill -9`` included) the pipe closes, and the
worker puts its job back and exits at once -- no orphan keeps scoring. A scoring error fails
the submission with its message and never takes the worker down."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import threading
import time
from typing import Any

from bleucli.server import store

log = logging.getLogger("bleucli.server")

#: Seconds between looks at an empty queue.
POLL_SECONDS = 0.1
#: A scored run re-ranks its set's leaderboard when the set's queue is empty, or when the
#: stored board is older than this (seconds): a burst re-ranks a few times, not per run.
BOARD_LAG_SECONDS = 5.0


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _renewing(engine: Any, job: store.Job, name: str, done: threading.Event) -> threading.Thread:
    def renew() -> None:
        while not done.wait(store.LEASE_SECONDS / 3):
            if not store.renew(engine, job, name):
                return

    thread = threading.Thread(target=renew, daemon=True)
    thread.start()
    return thread


def _trend(engine: Any, row: Any, version: Any, stats: dict[str, Any]) -> dict[str, Any]:
    """Bands, resampled scores (every run: leaderboards reuse them) and, in a series, the
    step from its previous scored run (when that was scored against the same test set
    version: otherwise the numbers do not compare)."""
    from bleucli.server import scoring

    earlier = []
    if row.series:
        runs = store.series_runs(engine, row.testset_id, row.team_id, row.series)
        earlier = [run for run in runs if run.id < row.id and run.status == "scored"]
    previous = None
    step_from = None
    if earlier and earlier[-1].version_id == row.version_id:
        previous = store.stats(engine, [earlier[-1].id])[earlier[-1].id]
        step_from = earlier[-1].id
    trend = scoring.intervals(version.references, version.request, stats, previous)
    trend["step_from"] = step_from
    return trend


def _parts(version: store.Version, lines: list[str]) -> dict[str, Any] | None:
    """A split set's results of the public part and of the rest, each as the scoring
    command prints it for those lines alone."""
    from bleucli.server import blind, scoring

    if version.public_fraction is None or version.secret is None:
        return None
    out = {}
    for part, chosen in (
        ("public", blind.public_lines(version.secret, version.n_lines, version.public_fraction)),
        ("rest", blind.rest_lines(version.secret, version.n_lines, version.public_fraction)),
    ):
        references = [[reference[k] for k in chosen] for reference in version.references]
        sources = [version.source[k] for k in chosen] if version.source is not None else None
        scored = scoring.score(
            references, version.request, scoring.lines_bytes([lines[k] for k in chosen]), sources
        )
        out[part] = {"result": json.loads(scored.json()), "scores": scored.scores}
    return out


def score_submission(engine: Any, job: store.Job, name: str) -> str:
    """Score one held submission; the status it ends in."""
    from bleucli.errors import BleucliError, ConfigError
    from bleucli.server import receipts, scoring

    row = store.submission(engine, job.id)
    version = store.version(engine, row.version_id)
    testset = store.testset_by_id(engine, row.testset_id)
    assert testset is not None
    data = store.hypothesis(engine, job.id)
    try:
        scored = scoring.score(version.references, version.request, data, version.source)
        parts = _parts(version, scoring.hypothesis_lines(data, version.n_lines))
    except BleucliError as err:
        # the set's own options failing (a database from before add-testset checked them)
        # is the server's fault, never the team's: it is not charged
        charged = not isinstance(err, ConfigError)
        store.finish(engine, job, name, {"status": "failed", "error": str(err), "charged": charged and row.charged})  # fmt: skip
        return "failed"
    except Exception as err:  # noqa: BLE001 - a failed submission, never a dead worker
        log.exception("scoring submission %s failed", job.id)
        message = (
            f"internal error while scoring ({type(err).__name__}); the organisers can see the log"
        )
        store.finish(engine, job, name, {"status": "failed", "error": message, "charged": False})
        return "failed"
    trend = _trend(engine, row, version, scored.stats)
    receipt = receipts.sign(
        receipts.document(
            job.id, testset, version, row.hypothesis_sha256, json.loads(scored.json()), parts,
            store.iso(store.now()) or "", store.server_name(engine),
        ),
        store.signing_key(engine),
    )  # fmt: skip
    written = store.finish(
        engine,
        job,
        name,
        {
            "status": "scored",
            "error": None,
            "result": scored.json(),
            "scores": json.dumps(scored.scores),
            "stats": store.encode_stats(scored.stats),
            "receipt": json.dumps(receipt, ensure_ascii=False),
            "intervals": json.dumps(trend) if row.series else None,
            "resampled": json.dumps(trend.pop("resampled")),
            "parts": json.dumps(parts, ensure_ascii=False) if parts else None,
        },
    )
    if written:
        _maybe_refresh(engine, job.testset_id)
    return "scored" if written else "lost"


def _maybe_refresh(engine: Any, testset_id: int) -> None:
    """Re-rank after a scored run when the set's queue is empty (the last of a burst), or
    the stored board lags by more than :data:`BOARD_LAG_SECONDS`."""
    from bleucli.server import leaderboard

    stored = store.leaderboard(engine, testset_id)
    computed = stored[0].get("computed_epoch", 0.0) if stored else 0.0
    if store.pending(engine, testset_id) == 0 or time.time() - computed > BOARD_LAG_SECONDS:
        leaderboard.refresh(engine, testset_id)


def run_job(engine: Any, job: store.Job, name: str) -> str:
    """Do one held job; the status it ends in."""
    from bleucli.server.jobs import run

    done = threading.Event()
    renewer = _renewing(engine, job, name, done)
    try:
        if job.kind == "score":
            return score_submission(engine, job, name)
        return run(engine, job, name)
    finally:
        done.set()
        renewer.join()


def _watch_parent(fd: int, on_gone: Any) -> None:
    """Call ``on_gone`` when the pipe from the parent closes (the parent died)."""

    def watch() -> None:
        try:
            while os.read(fd, 1):
                pass
        except OSError:
            pass
        on_gone()

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def work(
    url: str,
    once: bool = False,
    stop: threading.Event | None = None,
    parent_fd: int | None = None,
    device: str | None = None,
) -> int:
    """Do jobs until SIGTERM/SIGINT (or, ``once``, until the queue is empty); how many.
    ``parent_fd``: the read end of a pipe whose closing means the parent died; ``device``:
    where neural metrics run (``cuda:0``)."""
    from bleucli.server import scoring
    from bleucli.server.db import connect

    scoring.use_device(device)
    engine = connect(url)
    stop = stop or threading.Event()
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, lambda *_: stop.set())
    name = worker_name()
    holding: list[store.Job] = []

    def orphaned() -> None:
        # the parent is gone: put the job at hand back for another worker and exit now
        for job in list(holding):
            with contextlib.suppress(Exception):  # exiting regardless; the lease runs out
                store.release(engine, job, name)
        os._exit(0)

    if parent_fd is not None:
        _watch_parent(parent_fd, orphaned)
    handled = 0
    try:
        while not stop.is_set():
            job = store.claim(engine, name)
            if job is None:
                if once:
                    break
                stop.wait(POLL_SECONDS)
                continue
            holding.append(job)
            try:
                run_job(engine, job, name)
            finally:
                holding.clear()
            handled += 1
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        engine.dispose()
    return handled
