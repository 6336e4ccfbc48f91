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
import functools
import json
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
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
            try:
                if not store.renew(engine, job, name):
                    return  # another worker holds it now
            except Exception as err:  # noqa: BLE001 - keep trying while the database is away
                if not is_outage(err):
                    log.exception("renewing the lease of %s %s failed", job.kind, job.id)

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
    testset = store.testset_by_id(engine, row.testset_id)
    assert testset is not None
    version = store.version(engine, row.version_id)
    try:
        version.request  # noqa: B018 - loaded here, so a request that no longer loads ...
    except BleucliError as err:
        # ... fails this run (the set's fault, not the team's: not charged) and the worker
        # goes on (a metric plugin uninstalled since the set was made, say)
        log.error("test set %s version %s: its scoring request does not load: %s",
                  testset.name, version.number, err)  # fmt: skip
        message = f"this test set's scoring options no longer load on the server ({err}); the organisers can see the log"  # fmt: skip
        return _finish(engine, job, name, {"status": "failed", "error": message, "charged": False})
    data = store.hypothesis(engine, job.id)
    started = time.monotonic()
    try:
        with confined(testset):
            lines = scoring.hypothesis_lines(data, version.n_lines)
            check_neural_tokens(version, testset, lines)
            scored = scoring.score(version.references, version.request, data, version.source)
            parts = _parts(version, lines)
    except BleucliError as err:
        # the set's own options failing (a database from before add-testset checked them)
        # is the server's fault, never the team's: it is not charged
        charged = not isinstance(err, ConfigError)
        return _finish(engine, job, name, {"status": "failed", "error": str(err), "charged": charged and row.charged, "scoring_seconds": time.monotonic() - started})  # fmt: skip
    except Exception as err:  # noqa: BLE001 - a failed submission, never a dead worker
        if is_outage(err):
            raise
        log.exception("scoring submission %s failed", job.id)
        message = (
            f"internal error while scoring ({type(err).__name__}); the organisers can see the log"
        )
        return _finish(engine, job, name, {"status": "failed", "error": message, "charged": False})
    finally:
        _release_after(version)
    seconds = time.monotonic() - started
    trend = _trend(engine, row, version, scored.stats)
    receipt = receipts.sign(
        receipts.document(
            job.id, testset, version, row.hypothesis_sha256, json.loads(scored.json()), parts,
            store.iso(store.now()) or "", store.server_name(engine),
        ),
        store.signing_key(engine),
    )  # fmt: skip
    return _finish(
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
            "scoring_seconds": seconds,
        },
    )


def _finish(engine: Any, job: store.Job, name: str, values: dict[str, Any]) -> str:
    """Store a run's outcome (retrying while the database is away: the scoring is not done
    twice); the status it ends in."""
    outcome = retrying(lambda: store.finish(engine, job, name, dict(values)), "store a result")
    if outcome == "written":
        if values["status"] == "scored":
            retrying(lambda: _maybe_refresh(engine, job.testset_id), "re-rank a leaderboard")
        return str(values["status"])
    return outcome  # "lost" (another worker holds it) or "requeued" (a new version)


@contextlib.contextmanager
def confined(testset: store.TestSet) -> Iterator[None]:
    """A run's neural scoring confined: its hypotheses share no cache with the set's
    sources and references or with other runs (so its time does not tell which of its
    lines match them), and it stops at the set's time limit."""
    from bleucli.neural import runtime

    with runtime.confined(isolated=True, seconds=testset.scoring_seconds):
        yield


def check_neural_tokens(version: store.Version, testset: store.TestSet, lines: list[str]) -> None:
    """Refuse a run whose hypotheses hold more tokens than neural metrics may read from one
    run (a file of 2,000 lines at the per-line cap took a worker five times a real run)."""
    from bleucli.errors import InputError
    from bleucli.metrics import metric_class

    neural = [m for m in version.request.metrics if metric_class(m.name).uses_source]
    if not neural:
        return
    cap = testset.neural_tokens(version.n_lines)
    kwargs = version.request.metric_kwargs()
    for metric in neural:
        cls, options = kwargs[metric.name]
        built: Any = cls(**options, references=version.references, sources=version.source)  # type: ignore[call-arg]
        tokens = built.count_tokens(lines)
        if tokens > cap:
            raise InputError(
                f"the hypothesis has {tokens:,} {cls.name} tokens, over this test set's "
                f"limit of {cap:,} per run"
            )


def _release_after(version: store.Version) -> None:
    """After a neural run, give the memory it took back to the system."""
    try:
        uses_source = version.request.uses_source
    except Exception:  # noqa: BLE001 - a request that does not load took no memory
        return
    if uses_source:
        from bleucli.neural.runtime import release_memory

        release_memory()


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


# -- the database going away ---------------------------------------------------------------------

#: Backoff between attempts while the database is away (seconds): doubling up to the last.
BACKOFF = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def is_outage(err: BaseException) -> bool:
    from bleucli.server.db import is_outage as check

    return check(err)


def retrying(action: Any, what: str, stop: threading.Event | None = None) -> Any:
    """``action()``, retried with backoff while the database is away (a restart, a failover,
    a network blip), one line in the log when it goes and when it is back. Gives up only
    when ``stop`` is set (the worker is stopping): then the outage error is raised."""
    failures = 0
    while True:
        try:
            result = action()
        except Exception as err:
            if not is_outage(err) or (stop is not None and stop.is_set()):
                raise
            if failures == 0:
                log.warning("the database is not answering (%s: %s); retrying to %s",
                            type(err).__name__, str(err).splitlines()[0][:200], what)  # fmt: skip
            wait = BACKOFF[min(failures, len(BACKOFF) - 1)]
            failures += 1
            if stop is not None:
                stop.wait(wait)
            else:
                time.sleep(wait)
            continue
        if failures:
            log.warning("the database is back after %d attempt(s)", failures)
        return result


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


def _heartbeats(engine: Any, name: str, holding: list[store.Job], stop: threading.Event) -> None:
    """Say this worker is alive every few seconds (the health endpoint counts the workers
    seen lately), whatever the database does meanwhile."""
    started = time.time()

    def beat() -> None:
        while True:
            job = f"{holding[0].kind}:{holding[0].id}" if holding else None
            try:
                store.heartbeat(engine, name, started, job)
            except Exception as err:  # noqa: BLE001 - never a dead worker for a heartbeat
                if not is_outage(err):
                    log.exception("worker heartbeat failed")
            if stop.wait(store.HEARTBEAT_SECONDS):
                return

    threading.Thread(target=beat, daemon=True, name="heartbeat").start()


def work(
    url: str,
    once: bool = False,
    stop: threading.Event | None = None,
    parent_fd: int | None = None,
    device: str | None = None,
) -> int:
    """Do jobs until SIGTERM/SIGINT (or, ``once``, until the queue is empty); how many.
    ``parent_fd``: the read end of a pipe whose closing means the parent died; ``device``:
    where neural metrics run (``cuda:0``). A database that goes away is waited for (with
    backoff), never a reason to exit; nor is a job that fails."""
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
        with contextlib.suppress(Exception):
            store.forget_worker(engine, name)
        os._exit(0)

    if parent_fd is not None:
        _watch_parent(parent_fd, orphaned)
    beating = threading.Event()
    if not once:
        _heartbeats(engine, name, holding, beating)
    handled = 0
    jobs_first = True
    try:
        while not stop.is_set():
            try:
                job = retrying(
                    functools.partial(store.claim, engine, name, jobs_first), "take work", stop
                )
            except Exception as err:
                if is_outage(err):
                    break  # stopping while the database is away
                log.exception("taking work failed")
                stop.wait(1.0)
                continue
            if job is None:
                if once:
                    break
                stop.wait(POLL_SECONDS)
                continue
            jobs_first = job.kind == "score"  # the other queue first next time
            holding.append(job)
            try:
                run_job(engine, job, name)
            except Exception as err:  # noqa: BLE001 - the worker goes on
                if is_outage(err):
                    # the database went away in the middle: put the job back once it is
                    # here again (the attempt not counted), then go on
                    with contextlib.suppress(Exception):
                        retrying(
                            functools.partial(store.release, engine, job, name),
                            "put a job back",
                            stop,
                        )
                else:
                    log.exception("%s job %s failed in the worker", job.kind, job.id)
                    with contextlib.suppress(Exception):
                        store.release(engine, job, name)
            finally:
                holding.clear()
            handled += 1
    finally:
        beating.set()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        with contextlib.suppress(Exception):
            store.forget_worker(engine, name)
        engine.dispose()
    return handled
