"""Nothing acknowledged is lost: ``kill -9`` of the whole server (web process and workers)
in the middle of a burst of uploads, then a restart, and every submission answered 202 is
scored exactly once, with no half-written row; on PostgreSQL two workers share one queue.
Loopback only, bounded loops."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import requests

from tests.server.conftest import HYP, HYP2, REF, Task, set_up, start_server


def burst(task: Task, count: int, accepted: list[int], stop: threading.Event) -> None:
    """Upload ``count`` files one after another (until the server dies), keeping the ids
    of those answered 202."""
    for k in range(count):
        if stop.is_set():
            return
        path = HYP if k % 2 else HYP2
        try:
            with open(path, "rb") as handle:
                answer = requests.post(
                    task.server.url + "/api/v1/submissions",
                    headers={"Authorization": f"Bearer {task.tokens['alpha']}"},
                    data={"testset": "news", "name": f"run {k}"},
                    files={"hypothesis": ("h.txt", handle.read())},
                    timeout=10,
                )
        except requests.RequestException:
            return  # the server is gone
        if answer.status_code == 202:
            accepted.append(answer.json()["id"])


def all_rows(db: str) -> list:
    from sqlalchemy import select

    from bleucli.server import schema
    from bleucli.server.db import connect

    engine = connect(db)
    with engine.connect() as connection:
        rows = connection.execute(select(schema.submissions)).all()
    engine.dispose()
    return rows


def wait_until_done(db: str, ids: list[int], timeout: float = 120) -> list:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = [row for row in all_rows(db) if row.id in ids]
        if len(rows) == len(ids) and all(row.status in ("scored", "failed") for row in rows):
            return rows
        time.sleep(0.2)
    raise AssertionError(f"not all of {len(ids)} submissions were scored in {timeout} s")


def test_kill_9_in_a_burst_then_restart_scores_every_acknowledged_submission_once(
    db_url, tmp_path
) -> None:
    from bleucli.scoring import ScoringRequest
    from bleucli.server.scoring import score

    tokens = set_up(
        db_url,
        tmp_path,
        testset_args=("-m", "bleu", "chrf", "--limit-per-day", "500", "--limit-total", "500"),
    )
    server = start_server(db_url, tmp_path, workers=1)
    task = Task(server, tokens, tmp_path)
    accepted: list[int] = []
    stop = threading.Event()
    sender = threading.Thread(target=burst, args=(task, 60, accepted, stop))
    sender.start()
    deadline = time.monotonic() + 60
    while len(accepted) < 12 and time.monotonic() < deadline:
        time.sleep(0.02)
    server.stop(signal.SIGKILL)  # web process and worker at once, mid-burst
    stop.set()
    sender.join(timeout=60)
    assert len(accepted) >= 12
    rows = {row.id: row for row in all_rows(db_url)}
    assert set(accepted) <= set(rows)  # every 202 was committed before it was answered
    unfinished = [row for row in rows.values() if row.status not in ("scored", "failed")]
    assert unfinished, "the kill came after all the work: no crash was tested"
    restarted = start_server(db_url, tmp_path, workers=1)
    try:
        done = wait_until_done(db_url, list(rows))
    finally:
        restarted.stop()
    references = [Path(REF).read_text(encoding="utf-8").splitlines()]
    expected = [
        json.loads(
            score(
                references,
                ScoringRequest.from_args(["-m", "bleu", "chrf"]),
                Path(path).read_bytes(),
            ).json()
        )
        for path in (HYP, HYP2)
    ]
    from bleucli.server import store
    from bleucli.server.db import connect

    engine = connect(db_url)
    stats = store.stats(engine, [row.id for row in done])
    engine.dispose()
    for row in done:
        assert row.status == "scored", row.error
        assert row.result is not None and row.receipt is not None
        assert row.finished_at is not None and row.lease_until is None
        assert json.loads(row.result) in expected  # a whole, correct result
        assert json.loads(row.receipt)["submission"] == row.id
        assert stats[row.id]["bleu"] and stats[row.id]["chrf"]  # written with the result


def test_two_workers_share_one_postgresql_queue(tmp_path, request) -> None:
    from tests.server.conftest import new_database

    db = new_database("postgresql", tmp_path, request)
    tokens = set_up(
        db, tmp_path, testset_args=("-m", "bleu", "--limit-per-day", "500", "--limit-total", "500")
    )
    server = start_server(db, tmp_path, workers=2)
    task = Task(server, tokens, tmp_path)
    try:
        accepted: list[int] = []
        burst(task, 24, accepted, threading.Event())
        assert len(accepted) == 24
        done = wait_until_done(db, accepted)
    finally:
        server.stop()
    assert all(row.status == "scored" for row in done)
    workers = {row.worker for row in done}
    assert len(workers) == 2, workers  # both took jobs
    assert all(row.attempts == 1 for row in done)  # none was scored twice


def test_sigterm_in_a_burst_then_restart_scores_every_acknowledged_submission_once(
    tmp_path,
) -> None:
    """SIGTERM (what a service manager sends): the job at hand is finished, the rest wait in
    the queue for the next start."""
    db = f"sqlite:///{tmp_path / 'term.db'}"
    tokens = set_up(
        db, tmp_path, testset_args=("-m", "bleu", "--limit-per-day", "500", "--limit-total", "500")
    )
    server = start_server(db, tmp_path, workers=1)
    task = Task(server, tokens, tmp_path)
    accepted: list[int] = []
    stop = threading.Event()
    sender = threading.Thread(target=burst, args=(task, 40, accepted, stop))
    sender.start()
    while len(accepted) < 8:
        time.sleep(0.02)
    server.stop(signal.SIGTERM)
    stop.set()
    sender.join(timeout=60)
    rows = all_rows(db)
    assert not [row for row in rows if row.status == "scoring"]  # nothing left half-done
    restarted = start_server(db, tmp_path, workers=1)
    try:
        done = wait_until_done(db, [row.id for row in rows])
    finally:
        restarted.stop()
    assert set(accepted) <= {row.id for row in done}
    assert all(row.status == "scored" and row.attempts == 1 for row in done)


def test_a_scoring_error_fails_the_submission_and_spares_the_worker(tmp_path, monkeypatch) -> None:
    from bleucli.server import scoring, store, worker
    from bleucli.server.db import connect

    db = f"sqlite:///{tmp_path / 'error.db'}"
    set_up(db, tmp_path, teams=("alpha",), testset_args=("-m", "bleu"))
    engine = connect(db)
    testset = store.testset(engine, "news")
    team = store.identify(engine, "nothing")
    assert team is None
    with engine.connect() as connection:
        from sqlalchemy import select

        from bleucli.server import schema

        team_id = connection.execute(select(schema.teams.c.id)).scalar_one()
    data = Path(HYP).read_bytes()
    first, _ = store.add_submission(engine, testset, team_id, "boom", data, "0" * 64)
    second, _ = store.add_submission(engine, testset, team_id, "fine", data, "0" * 64)

    def explode(*args, **kwargs):
        raise RuntimeError("a bug in scoring")

    monkeypatch.setattr(scoring, "score", explode)
    assert worker.run_job(engine, store.claim(engine, "w"), "w") == "failed"
    monkeypatch.undo()
    assert worker.work(db, once=True) == 1  # the same worker code goes on with the next job
    failed, scored = store.submission(engine, first), store.submission(engine, second)
    assert (
        failed.status == "failed" and "internal error while scoring (RuntimeError)" in failed.error
    )
    assert "a bug in scoring" not in failed.error  # no internals to the participant
    assert scored.status == "scored"
    engine.dispose()


def test_signalling_only_the_web_process_stops_its_workers(tmp_path) -> None:
    """``kill PID`` of ``bleucli server run`` (not of its process group): the workers it
    started stop too (uvicorn re-raised the signal and the process died before it stopped
    them, leaving orphans)."""
    from pathlib import Path as _Path

    db = f"sqlite:///{tmp_path / 'alone.db'}"
    set_up(db, tmp_path, teams=("alpha",), testset_args=("-m", "bleu"))
    server = start_server(db, tmp_path, workers=2)

    def workers() -> list[str]:
        found = []
        for entry in _Path("/proc").iterdir():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "server worker" in command and db in command:
                found.append(command)
        return found

    deadline = time.monotonic() + 30
    while len(workers()) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(workers()) == 2
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(timeout=60)
    deadline = time.monotonic() + 60
    while workers() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert workers() == []


def test_a_submission_that_keeps_killing_workers_fails_after_three_attempts(
    tmp_path, monkeypatch
) -> None:
    from sqlalchemy import update

    from bleucli.server import schema, store
    from bleucli.server.db import connect, writing

    db = f"sqlite:///{tmp_path / 'poison.db'}"
    set_up(db, tmp_path, teams=("alpha",), testset_args=("-m", "bleu"))
    engine = connect(db)
    testset = store.testset(engine, "news")
    team_id = store.team_id(engine, "alpha")
    submission, _ = store.add_submission(
        engine, testset, team_id, "x", Path(HYP).read_bytes(), "0" * 64
    )
    for attempt in (1, 2, 3):
        job = store.claim(engine, "w")
        assert job is not None and job.attempt == attempt
        with writing(engine) as connection:  # the worker died: its lease ran out
            connection.execute(update(schema.submissions).values(lease_until=0.0))
    assert store.claim(engine, "w") is None
    row = store.submission(engine, submission)
    assert row.status == "failed" and "did not finish in 3 attempts" in row.error
    engine.dispose()
