"""The scoring worker: takes queued submissions from the database, scores them through the
command line's code path (:mod:`.scoring`), and writes result, statistics and receipt in
one transaction. Durable: a job is held under a lease the worker renews while it scores, so
a worker killed at any moment loses its job to another (or to itself after a restart)
once the lease runs out; a result is written only while the lease is held, so every
acknowledged submission is scored exactly once. SIGTERM lets the job at hand finish (or
puts it back) before the worker exits. A scoring error fails the submission with its
message and never takes the worker down."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import threading
from typing import Any

from bleucli.server import store

log = logging.getLogger("bleucli.server")

#: Seconds between looks at an empty queue.
POLL_SECONDS = 0.1


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
    trend = scoring.intervals(version.references, version.args, stats, previous)
    trend["step_from"] = step_from
    return trend


def run_job(engine: Any, job: store.Job, name: str) -> str:
    """Score one held job; the status it ends in."""
    from bleucli.errors import BleucliError
    from bleucli.server import leaderboard, receipts, scoring
    from bleucli.version import __version__

    done = threading.Event()
    renewer = _renewing(engine, job, name, done)
    try:
        row = store.submission(engine, job.id)
        version = store.version(engine, job.version_id)
        try:
            scored = scoring.score(
                version.references, version.args, store.hypothesis(engine, job.id)
            )
        except BleucliError as err:
            store.finish(engine, job, name, {"status": "failed", "error": str(err)})
            return "failed"
        except Exception as err:  # noqa: BLE001 - a failed submission, never a dead worker
            log.exception("scoring submission %s failed", job.id)
            message = f"internal error while scoring ({type(err).__name__}); the organisers can see the log"
            store.finish(engine, job, name, {"status": "failed", "error": message})
            return "failed"
        trend = _trend(engine, row, version, scored.stats)
        receipt = receipts.sign(
            {
                "bleucli_receipt": receipts.RECEIPT_VERSION,
                "submission": job.id,
                "testset": row.testset,
                "references_sha256": version.references_sha256,
                "hypothesis_sha256": row.hypothesis_sha256,
                "result": json.loads(scored.result),
                "version": __version__,
                "issued_at": store.iso(store.now()),
                "server": store.server_name(engine),
            },
            store.signing_key(engine),
        )
        written = store.finish(
            engine,
            job,
            name,
            {
                "status": "scored",
                "error": None,
                "result": scored.result,
                "scores": json.dumps(scored.scores),
                "stats": store.encode_stats(scored.stats),
                "receipt": json.dumps(receipt, ensure_ascii=False),
                "intervals": json.dumps(trend) if row.series else None,
                "resampled": json.dumps(trend.pop("resampled")),
            },
        )
        if written and store.pending(engine, job.testset_id) == 0:
            # the last of a burst re-ranks (readers re-rank a stale board themselves)
            leaderboard.refresh(engine, job.testset_id)
        return "scored" if written else "lost"
    finally:
        done.set()
        renewer.join()


def work(url: str, once: bool = False, stop: threading.Event | None = None) -> int:
    """Score jobs until SIGTERM/SIGINT (or, ``once``, until the queue is empty); how many."""
    from bleucli.server.db import connect

    engine = connect(url)
    stop = stop or threading.Event()
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, lambda *_: stop.set())
    name = worker_name()
    handled = 0
    try:
        while not stop.is_set():
            job = store.claim(engine, name)
            if job is None:
                if once:
                    break
                stop.wait(POLL_SECONDS)
                continue
            run_job(engine, job, name)
            handled += 1
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        engine.dispose()
    return handled
