"""Real ``bleucli server run`` processes through what takes workers down: PostgreSQL stopped
for ten seconds while five teams submit once a second (the web answers 503 with Retry-After,
never 500; the workers wait and go on; every acknowledged run is scored once, with no
restart by hand), and a worker killed with ``kill -9`` (reaped and replaced). Loopback
only, bounded loops."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest
import requests

from tests.server.conftest import HYP, HYP2, PostgresCluster, set_up, start_server


def worker_pids(db: str) -> set[int]:
    """Pids of the live (not defunct) worker processes serving ``db``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if "server worker" in command and db in command and state != "Z":
            found.add(int(entry.name))
    return found


def defunct(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False  # gone: reaped


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def test_a_postgresql_outage_under_load_loses_nothing_and_needs_no_restart(tmp_path) -> None:
    import psycopg

    cluster = PostgresCluster()
    cluster.start()
    teams = ("t1", "t2", "t3", "t4", "t5")
    server = None
    try:
        with psycopg.connect(cluster.url + "/postgres", autocommit=True) as connection:
            connection.execute('CREATE DATABASE "outage"')
        db = cluster.url + "/outage"
        tokens = set_up(db, tmp_path, teams=teams,
                        testset_args=("-m", "bleu", "chrf", "--limit-per-day", "500",
                                      "--limit-total", "500"))  # fmt: skip
        server = start_server(db, tmp_path, workers=2)
        wait_for(lambda: len(worker_pids(db)) == 2, 30, "two workers")
        before = worker_pids(db)
        statuses: list[int] = []
        accepted: list[int] = []
        lock = threading.Lock()
        stop = threading.Event()
        moments: list = []
        began = time.monotonic()

        def submit_every_second(team: str) -> None:
            k = 0
            while not stop.is_set():
                key = str(uuid.uuid4())
                data = Path(HYP if k % 2 else HYP2).read_bytes()
                deadline = time.monotonic() + 90
                while time.monotonic() < deadline:  # what bleucli submit does: retry 503s
                    try:
                        answer = requests.post(
                            server.url + "/api/v1/submissions",
                            headers={"Authorization": f"Bearer {tokens[team]}", "Idempotency-Key": key},
                            data={"testset": "news", "name": f"{team} {k}"},
                            files={"hypothesis": ("h.txt", data)}, timeout=30,
                        )  # fmt: skip
                    except requests.RequestException:
                        time.sleep(0.5)
                        continue
                    with lock:
                        statuses.append(answer.status_code)
                        moments.append((time.monotonic() - began, answer.status_code))
                    if answer.status_code == 503:
                        time.sleep(float(answer.headers.get("retry-after", "1")))
                        continue
                    if answer.status_code == 202:
                        with lock:
                            accepted.append(answer.json()["id"])
                    break
                k += 1
                stop.wait(1.0)

        senders = [threading.Thread(target=submit_every_second, args=(t,)) for t in teams]
        for sender in senders:
            sender.start()
        time.sleep(5)
        cluster.stop("fast")  # the database goes away under load ...
        time.sleep(10)
        cluster.start()  # ... and comes back; nobody restarts the server
        time.sleep(8)
        stop.set()
        for sender in senders:
            sender.join(timeout=120)
        assert 500 not in statuses, sorted(set(statuses))
        assert 503 in statuses  # uploads met the outage, and were told to come back
        assert set(statuses) <= {202, 503}
        # before the outage, and after it the uploads it held back and the next ones
        assert len(accepted) == len(set(accepted)) >= 5 * 8
        restarted = max(moment for moment, status in moments if status == 503)
        assert sum(1 for moment, status in moments if status == 202 and moment > restarted) >= 10
        deadline = time.monotonic() + 180
        while True:
            health = requests.get(server.url + "/api/v1/health", timeout=10).json()
            if not health["queue"]["queued"] and not health["queue"]["scoring"]:
                break
            assert time.monotonic() < deadline, health
            time.sleep(0.5)
        assert health["status"] == "ok" and health["workers"]["alive"] == 2
        assert worker_pids(db) == before  # the same workers: none died of the outage
        with psycopg.connect(db) as connection:
            rows = connection.execute(
                "SELECT id, status, attempts FROM submissions ORDER BY id"
            ).fetchall()
        by_id = {row[0]: row for row in rows}
        assert set(accepted) <= set(by_id)
        assert len(rows) == len(accepted)  # each acknowledged upload stored once
        assert all(by_id[i][1] == "scored" for i in accepted), [r for r in rows if r[1] != "scored"]
        log = server.log.read_text()
        assert "Traceback" not in log and "starting another" not in log  # no worker died
        assert "the database is not answering" in log and "the database is back" in log
    finally:
        if server is not None:
            server.stop()
        cluster.remove()


def test_a_worker_killed_with_kill_9_is_reaped_and_replaced(tmp_path) -> None:
    import os
    import signal

    db = f"sqlite:///{tmp_path / 'task.db'}"
    tokens = set_up(db, tmp_path, teams=("alpha",), testset_args=("-m", "bleu"))
    server = start_server(db, tmp_path, workers=2)
    try:
        wait_for(lambda: len(worker_pids(db)) == 2, 30, "two workers")
        victim = min(worker_pids(db))
        os.kill(victim, signal.SIGKILL)
        wait_for(lambda: victim not in worker_pids(db) and len(worker_pids(db)) == 2, 15,
                 "a replacement worker")  # fmt: skip
        assert not defunct(victim)  # reaped, not left a zombie
        assert "ended (killed by signal 9); starting another" in server.log.read_text()
        wait_for(
            lambda: requests.get(server.url + "/api/v1/health", timeout=5).json()["workers"]["alive"] == 2,
            15, "the health endpoint to count two workers",
        )  # fmt: skip
        answer = requests.post(
            server.url + "/api/v1/submissions",
            headers={"Authorization": f"Bearer {tokens['alpha']}"},
            data={"testset": "news", "name": "after"}, files={"hypothesis": ("h", Path(HYP).read_bytes())},
            timeout=10,
        )  # fmt: skip
        assert answer.status_code == 202
        run = answer.json()["id"]
        wait_for(
            lambda: requests.get(f"{server.url}/api/v1/submissions/{run}", timeout=5,
                                 headers={"Authorization": f"Bearer {tokens['alpha']}"}).json()["status"] == "scored",
            30, "the run scored by the workers",
        )  # fmt: skip
    finally:
        server.stop()
    assert not worker_pids(db)  # and server run stopped them all


pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
