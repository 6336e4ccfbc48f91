"""The evaluation server end to end: real ``bleucli server run`` processes on 127.0.0.1,
over SQLite and over PostgreSQL (each test runs on both), driven by ``bleucli submit`` and
``bleucli verify`` as participants run them. Scores and receipts equal the command line's
on the same files; a tampered receipt fails ``bleucli verify``; ``server init`` twice keeps
its key. The routes' answers and refusals are tested in-process (test_routes.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import requests

from tests.server.conftest import HYP, HYP2, REF, Task, bleucli


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def upload(
    task: Task, team: str, path: str, name: str = "run", testset: str = "news"
) -> requests.Response:
    with open(path, "rb") as handle:
        return requests.post(
            task.server.url + "/api/v1/submissions",
            headers=auth(task.tokens[team]),
            data={"testset": testset, "name": name},
            files={"hypothesis": ("hyp.txt", handle.read())},
            timeout=60,
        )


def wait_scored(task: Task, team: str, submission: int, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = requests.get(
            f"{task.server.url}/api/v1/submissions/{submission}",
            headers=auth(task.tokens[team]),
            timeout=30,
        ).json()
        if state["status"] in ("scored", "failed"):
            return state
        time.sleep(0.1)
    raise AssertionError(f"submission {submission} not scored in {timeout} s")


def test_scores_and_receipt_equal_the_command_line(task: Task, tmp_path: Path) -> None:
    answer = upload(task, "alpha", HYP)
    assert answer.status_code == 202 and answer.json()["status"] == "queued"
    state = wait_scored(task, "alpha", answer.json()["id"])
    assert state["status"] == "scored" and state["error"] is None
    cli = json.loads(bleucli(REF, "-i", HYP, "-m", "bleu", "chrf", "ter").stdout)
    assert state["result"] == cli  # the same document, signatures and all
    receipt = state["receipt"]
    assert receipt["bleucli_receipt"] == 1 and receipt["result"] == cli
    assert (
        receipt["hypothesis_sha256"]
        == __import__("hashlib").sha256(Path(HYP).read_bytes()).hexdigest()
    )
    path = tmp_path / "receipt.json"
    path.write_text(json.dumps(receipt))
    good = bleucli("verify", str(path), "--server", task.server.url, "-i", HYP, REF, check=False)
    assert good.returncode == 0, good.stdout + good.stderr
    assert [line.split()[0] for line in good.stdout.splitlines()] == ["PASS"] * 6 + ["verified:"]
    # one changed score: the signature no longer holds
    tampered = json.loads(json.dumps(receipt))
    tampered["result"][0]["score"] += 0.1
    path.write_text(json.dumps(tampered))
    bad = bleucli("verify", str(path), "--server", task.server.url, check=False)
    assert bad.returncode == 1 and bad.stdout.startswith("FAIL signature")
    # the key offline, and the wrong hypothesis
    key = tmp_path / "key.pem"
    key.write_text(requests.get(task.server.url + "/api/v1/key", timeout=30).text)
    path.write_text(json.dumps(receipt))
    wrong = bleucli("verify", str(path), "--key", str(key), "-i", HYP2, REF, check=False)
    assert wrong.returncode == 1
    assert "PASS signature" in wrong.stdout and "FAIL hypothesis" in wrong.stdout


def test_submit_command_waits_and_writes_the_receipt(task: Task, tmp_path: Path) -> None:
    receipt = tmp_path / "r.json"
    proc = bleucli(
        "submit", "--server", task.server.url, "--token-file", task.token_file("alpha"), "-t", "news",
        "-i", HYP, "--wait", "-o", str(receipt),
    )  # fmt: skip
    assert json.loads(proc.stdout) == json.loads(
        bleucli(REF, "-i", HYP, "-m", "bleu", "chrf", "ter").stdout
    )
    assert json.loads(receipt.read_text())["bleucli_receipt"] == 1
    # -f text: the scoring command's text lines (it printed JSON)
    text = bleucli(
        "submit", "--server", task.server.url, "--token-file", task.token_file("alpha"), "-t", "news",
        "-i", HYP, "--wait", "-f", "text",
    ).stdout  # fmt: skip
    assert (
        text.strip()
        == bleucli(REF, "-i", HYP, "-m", "bleu", "chrf", "ter", "-f", "text").stdout.strip()
    )
    refused = bleucli(
        "submit", "--server", task.server.url, "--token-file", task.token_file("alpha"), "-t", "nope",
        "-i", HYP, check=False,
    )  # fmt: skip
    assert refused.returncode == 1
    assert (
        refused.stderr.strip()
        == "bleucli: error: the server refused (404): no test set named 'nope'"
    )


def test_init_is_idempotent_and_the_schema_matches_the_models(db_url) -> None:
    from sqlalchemy import inspect

    from bleucli.server import schema
    from bleucli.server.db import connect

    first = bleucli("server", "init", "--db", db_url).stdout
    again = bleucli("server", "init", "--db", db_url).stdout
    assert "created a signing key" in first and "signing key kept" in again
    engine = connect(db_url)
    found = inspect(engine)
    for table in schema.metadata.sorted_tables:
        columns = {c["name"] for c in found.get_columns(table.name)}
        assert columns == {c.name for c in table.columns}, table.name
    engine.dispose()
