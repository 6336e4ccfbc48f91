"""The server under attack, with real ``bleucli server run`` processes on 127.0.0.1 (bounded
loops): one team's gates cannot stall everyone, a body is not read before its sender is
known, workers never outlive their parent (``kill -9`` included), a busy port is one line,
an upload retried after a lost answer is stored once, the database and its backups are its
owner's alone, a blind receipt verifies in full only after the reveal, and a page on another
origin of the same site cannot act for a signed-in team (in Chromium)."""

from __future__ import annotations

import functools
import json
import os
import signal
import socket
import statistics
import threading
import time
from pathlib import Path

import pytest
import requests

from tests.browser import launch, needs_chromium
from tests.server.conftest import (
    HYP,
    HYP2,
    REF,
    Task,
    bleucli,
    free_port,
    serving,
    set_up,
    start_server,
)


def _workers(db: str) -> list[int]:
    """Pids of the worker processes serving ``db``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "server worker" in command and db in command:
            found.append(int(entry.name))
    return found


def _wait(condition, timeout: float, what: str) -> float:
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < timeout, what
        time.sleep(0.05)
    return time.monotonic() - start


@pytest.mark.serial  # a wall-clock bound
def test_workers_exit_within_5_s_of_a_kill_9_of_their_parent(db_url, tmp_path) -> None:
    set_up(db_url, tmp_path, teams=("alpha",), testset_args=("-m", "bleu"))
    server = start_server(db_url, tmp_path, workers=2)
    try:
        _wait(lambda: len(_workers(db_url)) == 2, 30, "the workers did not start")
        server.process.send_signal(signal.SIGKILL)  # the web process alone, no clean-up
        server.process.wait(timeout=30)
        gone = _wait(lambda: not _workers(db_url), 5, "workers outlived their parent")
        assert gone < 5
        again = start_server(db_url, tmp_path, workers=2)
        try:
            _wait(lambda: len(_workers(db_url)) >= 2, 30, "the workers did not start again")
            time.sleep(0.5)
            assert len(_workers(db_url)) == 2  # a restart finds none left over
        finally:
            again.stop()
    finally:
        server.stop(signal.SIGKILL)


def test_a_busy_port_is_one_line_and_no_url(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'busy.db'}"
    bleucli("server", "init", "--db", db)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = bleucli(
            "server", "run", "--db", db, "--port", str(port), "--workers", "1", check=False
        )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"bleucli: error: cannot listen on 127.0.0.1:{port}: Address already in use (another "
        "server on that port? choose one with --port)"
    ]
    assert "http://" not in proc.stdout + proc.stderr.split("error:")[0]
    assert not _workers(db)


def _headers_then_wait(port: int, request: bytes, timeout: float = 5.0) -> bytes:
    """Send a request's head and a first kilobyte of a body that claims 19 MB; the answer
    the server gives without the rest."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(request + b"x" * 1024)
        conn.settimeout(timeout)
        answer = b""
        try:
            while b"\r\n\r\n" not in answer:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except TimeoutError:
            pass
        return answer


@pytest.mark.serial  # a wall-clock bound
def test_anonymous_uploads_are_refused_before_their_body_is_read(tmp_path) -> None:
    with serving(tmp_path, teams=("alpha",), testset_args=("-m", "bleu")) as task:
        port = int(task.server.url.rsplit(":", 1)[1])
        size = 19_000_000
        form = "application/x-www-form-urlencoded"
        for path, kind, status in (
            ("/submit", "multipart/form-data; boundary=b", b"401"),
            ("/api/v1/submissions", "application/json", b"401"),
            # the buttons of signed-in pages: the session first (30 of these at once had
            # grown the web process from 180 MB to 947 MB)
            ("/signout", form, b"401"),
            ("/submissions/1/primary", form, b"401"),
            # the sign-in form has no session to check: a few fields, refused by length
            ("/signin", form, b"413"),
        ):
            head = (
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: {kind}\r\n"
                f"Content-Length: {size}\r\n\r\n"
            ).encode()  # fmt: skip
            started = time.monotonic()
            answer = _headers_then_wait(port, head)
            assert answer.startswith(b"HTTP/1.1 " + status), (path, answer[:200])
            assert time.monotonic() - started < 4  # not after a read timeout on 19 MB


@pytest.mark.serial  # a wall-clock bound
def test_gates_at_the_cap_do_not_stall_anyone(db_url, tmp_path) -> None:
    """Five teams gate at once with 20,000 resamples each (the cap raised to allow it); an
    anonymous reader meanwhile is answered at once (the web process only enqueues: before,
    each gate ran its bootstrap inside the web process and readers waited for it)."""
    teams = tuple(f"team{k}" for k in range(5))
    tokens = set_up(
        db_url, tmp_path, teams=teams,
        testset_args=("-m", "bleu", "chrf", "--visibility", "public", "--max-resamples", "20000",
                      "--limit-per-day", "50"),
    )  # fmt: skip
    server = start_server(db_url, tmp_path, workers=1)
    try:
        task = Task(server, tokens, tmp_path)
        runs = {}
        for team in teams:
            for path in (HYP, HYP2):
                proc = bleucli("submit", "--server", server.url, "--token-file", task.token_file(team),
                               "-t", "news", "-i", path, "--series", "main", "--wait")  # fmt: skip
                assert proc.returncode == 0
            mine = requests.get(server.url + "/api/v1/submissions",
                                headers={"Authorization": f"Bearer {tokens[team]}"}, timeout=30).json()  # fmt: skip
            runs[team] = mine[0]["id"]
        latencies: list[float] = []
        done = threading.Event()

        def read() -> None:
            while not done.is_set() and len(latencies) < 400:
                started = time.monotonic()
                answer = requests.get(server.url + "/api/v1/testsets", timeout=60)
                latencies.append(time.monotonic() - started)
                assert answer.status_code == 200
                time.sleep(0.02)

        reader = threading.Thread(target=read)
        reader.start()
        jobs = []
        for team in teams:
            answer = requests.post(
                f"{server.url}/api/v1/submissions/{runs[team]}/gate",
                headers={"Authorization": f"Bearer {tokens[team]}"},
                json={"paired_bs_n": 20000, "tolerance": 0.1}, timeout=60,
            )  # fmt: skip
            assert answer.status_code == 202
            jobs.append((team, answer.json()["url"]))
        for team, url in jobs:  # every gate is done by the worker
            deadline = time.monotonic() + 300
            while True:
                state = requests.get(server.url + url, headers={"Authorization": f"Bearer {tokens[team]}"},
                                     timeout=60).json()  # fmt: skip
                if state["status"] == "done":
                    break
                assert state["status"] in ("queued", "running") and time.monotonic() < deadline
                time.sleep(0.2)
        done.set()
        reader.join()
        assert len(latencies) >= 20
        ordered = sorted(latencies)
        p95 = ordered[int(0.95 * (len(ordered) - 1))]
        assert p95 < 0.5 and max(latencies) < 2.0, (
            p95,
            max(latencies),
            statistics.median(latencies),
        )
    finally:
        server.stop()


class _DroppingProxy:
    """An HTTP proxy on 127.0.0.1 that forwards each request to the server, and for the
    first upload drops the connection after the server answered: the submission is stored,
    its 202 never arrives."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.dropped = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(client,), daemon=True).start()

    def _one(self, client: socket.socket) -> None:
        with client:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = client.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(body) < length:
                body += client.recv(65536)
            head = (
                b"\r\n".join(
                    line
                    for line in head.split(b"\r\n")
                    if not line.lower().startswith(b"connection:")
                )
                + b"\r\nConnection: close"
            )
            with socket.create_connection(("127.0.0.1", self.upstream)) as server:
                server.sendall(head + b"\r\n\r\n" + body)
                answer = b""
                while chunk := server.recv(65536):
                    answer += chunk
            if head.startswith(b"POST /api/v1/submissions ") and not self.dropped:
                self.dropped += 1
                return  # stored, answered, and the answer lost on the way
            client.sendall(answer)

    def close(self) -> None:
        self.listener.close()


def test_a_retried_upload_whose_answer_was_lost_is_stored_once(tmp_path) -> None:
    with serving(tmp_path, teams=("alpha",), testset_args=("-m", "bleu")) as task:
        proxy = _DroppingProxy(int(task.server.url.rsplit(":", 1)[1]))
        try:
            proc = bleucli("submit", "--server", f"http://127.0.0.1:{proxy.port}", "--token-file",
                           task.token_file("alpha"), "-t", "news", "-i", HYP, check=False)  # fmt: skip
        finally:
            proxy.close()
        assert proxy.dropped == 1
        assert proc.returncode == 0, proc.stderr
        answer = json.loads(proc.stdout)
        assert answer["replayed"] is True
        mine = requests.get(task.server.url + "/api/v1/submissions",
                            headers={"Authorization": f"Bearer {task.tokens['alpha']}"}, timeout=30).json()  # fmt: skip
        assert [run["id"] for run in mine] == [answer["id"]]


def test_the_database_and_its_backups_are_the_owners_alone(tmp_path) -> None:
    db_path = tmp_path / "task.db"
    with serving(tmp_path, teams=("alpha",), testset_args=("-m", "bleu")) as task:
        requests.post(task.server.url + "/api/v1/submissions",
                      headers={"Authorization": f"Bearer {task.tokens['alpha']}"},
                      data={"testset": "news"}, files={"hypothesis": ("h", Path(HYP).read_bytes())},
                      timeout=30)  # fmt: skip
        files = [db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")]
        assert all(path.exists() for path in files)
        for path in files:
            assert path.stat().st_mode & 0o777 == 0o600, (path, oct(path.stat().st_mode))
        backup = tmp_path / "copy.db"
        bleucli("server", "backup", "--db", task.server.db, str(backup))
        assert backup.stat().st_mode & 0o777 == 0o600
    # a database made readable by others (an older bleucli, a copy) is narrowed when opened
    os.chmod(backup, 0o644)
    bleucli("server", "init", "--db", str(backup))
    assert backup.stat().st_mode & 0o777 == 0o600


def test_verify_checks_a_blind_receipt_in_full_only_after_the_reveal(tmp_path) -> None:
    with serving(tmp_path, teams=("alpha",), testset_args=("-m", "bleu", "chrf")) as task:
        receipt = tmp_path / "receipt.json"
        bleucli("submit", "--server", task.server.url, "--token-file", task.token_file("alpha"),
                "-t", "news", "-i", HYP, "--wait", "-o", str(receipt))  # fmt: skip
        alone = bleucli("verify", str(receipt), "--server", task.server.url, check=False)
        assert alone.returncode == 1
        assert (
            alone.stdout.splitlines()[-1]
            == "incomplete: not checked: hypothesis, references, scores"
        )
        before = bleucli(
            "verify", str(receipt), "--server", task.server.url, "-i", HYP, REF, check=False
        )
        assert (
            before.returncode == 1
            and "SKIP references: committed with a keyed hash" in before.stdout
        )
        partial = bleucli("verify", str(receipt), "--server", task.server.url, "-i", HYP, REF, "--partial",
                          check=False)  # fmt: skip
        assert partial.returncode == 0
        bleucli("server", "reveal", "--db", task.server.db, "news", "--force", "--yes")
        after = bleucli(
            "verify", str(receipt), "--server", task.server.url, "-i", HYP, REF, check=False
        )
        assert after.returncode == 0, after.stdout
        assert [line.split()[0] for line in after.stdout.splitlines()] == ["PASS"] * 5 + [
            "verified:"
        ]


ATTACKER_PAGE = """<!DOCTYPE html><html><body>
<form id="f" method="post" action="{target}/submissions/{run}/primary"><input name="csrf" value="x"></form>
<form id="s" method="post" action="{target}/signin"><input name="token" value="{token}"></form>
<script>
fetch("{target}/api/v1/submissions", {{method: "POST", credentials: "include", mode: "no-cors",
  headers: {{"Content-Type": "application/json"}}, body: JSON.stringify({{testset: "news", name: "planted",
  hypothesis: {hypothesis}}})}}).finally(() => {{ document.title = "fetched"; }});
</script></body></html>"""


@needs_chromium
def test_a_page_on_another_origin_cannot_act_for_a_signed_in_team(tmp_path) -> None:
    """Team A signed in; a page on another port of 127.0.0.1 (same site, another origin)
    posts A's primary form, plants a submission with fetch() and signs A into team B: all
    refused, nothing changed."""
    import http.server

    with serving(tmp_path, teams=("alpha", "beta"), testset_args=("-m", "bleu", "--visibility", "public",
                                                                   "--limit-per-day", "50")) as task:  # fmt: skip
        headers = {"Authorization": f"Bearer {task.tokens['alpha']}"}
        ids = []
        for path in (HYP, HYP2):
            ids.append(requests.post(task.server.url + "/api/v1/submissions", headers=headers,
                                     data={"testset": "news"}, files={"hypothesis": ("h", Path(path).read_bytes())},
                                     timeout=30).json()["id"])  # fmt: skip
        page = ATTACKER_PAGE.format(
            target=task.server.url, run=ids[0], token=task.tokens["beta"],
            hypothesis=json.dumps(Path(HYP).read_text()),
        )  # fmt: skip
        (tmp_path / "attack.html").write_text(page)
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
        attacker = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
        threading.Thread(target=attacker.serve_forever, daemon=True).start()
        evil = f"http://127.0.0.1:{attacker.server_address[1]}/attack.html"
        try:
            for driver in launch():
                browser = driver.new_page()
                browser.goto(task.server.url + "/signin")
                browser.fill("#token", task.tokens["alpha"])
                with browser.expect_navigation():
                    browser.click("button")
                assert "signed in as alpha" in browser.inner_text("header")
                browser.goto(evil)
                browser.wait_for_function("document.title === 'fetched'", timeout=30000)
                with browser.expect_navigation():
                    browser.evaluate("document.getElementById('f').submit()")
                assert "403" in browser.title() or "Not done" in browser.inner_text("main")
                browser.goto(evil)
                with browser.expect_navigation():
                    browser.evaluate("document.getElementById('s').submit()")
                assert "forms posted from another" in browser.inner_text("main")
                browser.goto(task.server.url + "/")
                assert "signed in as alpha" in browser.inner_text("header")  # not beta
        finally:
            attacker.shutdown()
        mine = requests.get(
            task.server.url + "/api/v1/submissions", headers=headers, timeout=30
        ).json()
        assert len(mine) == 2 and not any(run["primary"] for run in mine)
        assert all(run["name"] != "planted" for run in mine)
