"""The evaluation server as organisers and participants use it: real ``bleucli server run``
processes on 127.0.0.1, over SQLite and over PostgreSQL (each test runs on both).

Scores and receipts equal the command line's on the same files; leaderboard clusters
equal ``--rank``'s; a tampered receipt fails ``bleucli verify``; every refusal gets its
status and one clear message; names are shown escaped; no reference line reaches a
participant of a blind set."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import requests

from tests.conftest import EXAMPLES
from tests.server.conftest import HYP, HYP2, REF, Task, bleucli

REFERENCE_LINES = [
    line
    for line in (EXAMPLES / "ref.de").read_text(encoding="utf-8").splitlines()
    if len(line) > 25
]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def post_json(task: Task, team: str, body: object, **kwargs) -> requests.Response:
    return requests.post(
        task.server.url + "/api/v1/submissions",
        json=body,
        headers=auth(task.tokens[team]),
        timeout=60,
        **kwargs,
    )


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


def current_board(task: Task, timeout: float = 60) -> dict:
    """The leaderboard once it counts every change (a worker re-ranks after each)."""
    deadline = time.monotonic() + timeout
    while True:
        board = requests.get(task.server.url + "/api/v1/leaderboards/news", timeout=30).json()
        if not board["updating"]:
            return board
        assert time.monotonic() < deadline, "the leaderboard was not updated"
        time.sleep(0.1)


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


def test_leaderboard_clusters_equal_rank(task: Task, tmp_path: Path) -> None:
    lines = Path(HYP).read_text(encoding="utf-8").splitlines()
    third = tmp_path / "third.de"
    third.write_text(
        "\n".join(" ".join(line.split()[:-2]) for line in lines) + "\n", encoding="utf-8"
    )
    bleucli("server", "add-team", "--db", task.server.db, "gamma")
    files = {"alpha": HYP, "beta": HYP2}
    ids = {}
    for team, path in files.items():
        ids[team] = upload(task, team, path).json()["id"]
        wait_scored(task, team, ids[team])
    token = (
        bleucli("server", "add-team", "--db", task.server.db, "delta")
        .stdout.strip()
        .splitlines()[-1]
    )
    task.tokens["delta"] = token
    ids["delta"] = upload(task, "delta", str(third)).json()["id"]
    wait_scored(task, "delta", ids["delta"])
    board = current_board(task)
    ranked = json.loads(
        bleucli(
            REF, "-i", HYP, HYP2, str(third), "--rank", "-m", "bleu", "chrf", "ter", "-f", "json"
        ).stdout
    )
    by_file = {s["system"]: s for s in ranked["metrics"]["BLEU"]["systems"]}
    team_file = {"alpha": HYP, "beta": HYP2, "delta": str(third)}
    assert [row["team"] for row in board["rows"]] == [
        team for team, path in sorted(team_file.items(), key=lambda kv: -by_file[kv[1]]["score"])
    ]
    for row in board["rows"]:
        expected = by_file[team_file[row["team"]]]
        assert row["cluster"] == expected["cluster"]
        low, high = expected["rank_range"]
        assert row["rank_range"] == (str(low) if low == high else f"{low}-{high}")
    assert board["signatures"]["BLEU"].startswith("nrefs:1|")


def test_primary_choice_and_contrastive_runs(task: Task) -> None:
    first = upload(task, "alpha", HYP, name="good").json()["id"]
    wait_scored(task, "alpha", first)
    second = upload(task, "alpha", HYP2, name="worse").json()["id"]
    wait_scored(task, "alpha", second)
    board = current_board(task)
    assert [row["submission"] for row in board["rows"]] == [second]  # the latest by default
    chosen = requests.post(
        f"{task.server.url}/api/v1/submissions/{first}/primary",
        headers=auth(task.tokens["alpha"]),
        timeout=30,
    )
    assert chosen.status_code == 200
    board = current_board(task)
    assert [row["submission"] for row in board["rows"]] == [first]
    mine = requests.get(
        task.server.url + "/api/v1/submissions?testset=news",
        headers=auth(task.tokens["alpha"]),
        timeout=30,
    ).json()
    assert [row["id"] for row in mine] == [second, first]  # newest first, both runs
    assert (
        requests.get(
            task.server.url + "/api/v1/submissions?testset=news",
            headers=auth(task.tokens["beta"]),
            timeout=30,
        ).json()
        == []
    )


def test_every_refusal_has_its_status_and_one_message(task: Task) -> None:
    url = task.server.url
    ok = upload(task, "alpha", HYP).json()["id"]
    cases = [
        (
            requests.post(url + "/api/v1/submissions", json={}, headers=auth("wrong"), timeout=30),
            401,
            "that token is not valid",
        ),
        (
            requests.get(
                f"{url}/api/v1/submissions/{ok}", headers=auth(task.tokens["beta"]), timeout=30
            ),
            404,
            f"no submission {ok}",
        ),
        (
            post_json(task, "alpha", {"testset": "news", "name": "x", "hypothesis": "one\ntwo\n"}),
            422,
            "has 2 lines, but the test set has 30",
        ),
        (
            post_json(task, "alpha", {"testset": "news", "name": "x", "hypothesis": ""}),
            422,
            "empty",
        ),
        (upload_bytes(task, "alpha", b"\xff\xfe bad\n" * 30), 422, "line 1: invalid utf-8"),
        (
            requests.post(
                url + "/api/v1/submissions",
                data=b"{not json",
                headers={**auth(task.tokens["alpha"]), "Content-Type": "application/json"},
                timeout=30,
            ),
            400,
            "malformed JSON",
        ),
        (
            requests.post(
                url + "/api/v1/submissions",
                data=b"--x\r\nbroken",
                headers={
                    **auth(task.tokens["alpha"]),
                    "Content-Type": "multipart/form-data; boundary=zz",
                },
                timeout=30,
            ),
            400,
            "malformed multipart body",
        ),
        (
            requests.post(
                url + "/api/v1/submissions",
                data=b"x" * 300_000,
                headers={**auth(task.tokens["alpha"]), "Content-Type": "application/json"},
                timeout=30,
            ),
            413,
            "larger than the server's limit",
        ),
        (
            post_json(task, "alpha", {"testset": "nope", "name": "x", "hypothesis": "a"}),
            404,
            "no test set named 'nope'",
        ),
        (
            requests.post(
                url + "/submit",
                data={"testset": "news"},
                files={"hypothesis": ("h", b"x")},
                cookies=signed_in(task, "alpha"),
                timeout=30,
            ),
            403,
            "CSRF token",
        ),
    ]
    for response, status, message in cases:
        assert response.status_code == status, (status, response.text)
        text = (
            response.json()["error"]
            if response.headers["content-type"].startswith("application/json")
            else response.text
        )
        assert message in text, (status, text)
        assert "Traceback" not in response.text
        assert response.headers["x-content-type-options"] == "nosniff"


def upload_bytes(task: Task, team: str, data: bytes) -> requests.Response:
    return requests.post(
        task.server.url + "/api/v1/submissions", headers=auth(task.tokens[team]),
        data={"testset": "news", "name": "x"}, files={"hypothesis": ("h.txt", data)}, timeout=60,
    )  # fmt: skip


def signed_in(task: Task, team: str) -> dict[str, str]:
    """The cookies of a session signed in through the sign-in form (with its CSRF token)."""
    session = requests.Session()
    form = session.get(task.server.url + "/signin", timeout=30).text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)
    answer = session.post(
        task.server.url + "/signin",
        data={"token": task.tokens[team], "csrf": csrf},
        allow_redirects=False,
        timeout=30,
    )
    assert answer.status_code == 303
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    return dict(session.cookies)


def test_limits_and_windows_answer_when_they_reset(db_url, tmp_path) -> None:
    from tests.server.conftest import set_up, start_server

    tokens = set_up(
        db_url,
        tmp_path,
        testset_args=("-m", "bleu", "--limit-per-day", "2", "--limit-failures-per-day", "2"),
    )
    server = start_server(db_url, tmp_path, workers=0)
    try:
        task = Task(server, tokens, tmp_path)
        assert upload(task, "alpha", HYP).status_code == 202
        assert upload(task, "alpha", HYP).status_code == 202
        third = upload(task, "alpha", HYP)
        assert third.status_code == 429 and "the daily limit; it resets at" in third.json()["error"]
        assert int(third.headers["retry-after"]) > 0
        assert upload(task, "beta", HYP).status_code == 202  # per team
        for _ in range(2):
            assert (
                post_json(task, "beta", {"testset": "news", "hypothesis": "x"}).status_code == 422
            )
        capped = post_json(task, "beta", {"testset": "news", "hypothesis": "x"})
        assert capped.status_code == 429 and "refused files today" in capped.json()["error"]
        bleucli(
            "server",
            "add-testset",
            "--db",
            db_url,
            "news",
            "-l",
            "en-de",
            "--ref",
            REF,
            "--closes",
            "2020-01-01T00:00Z",
        )
        closed = upload(task, "beta", HYP)
        assert (
            closed.status_code == 403
            and "closed for submissions at 2020-01-01T00:00:00Z" in closed.json()["error"]
        )
    finally:
        server.stop()


def test_names_are_escaped_everywhere(task: Task) -> None:
    evil = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'"
    token = (
        bleucli("server", "add-team", "--db", task.server.db, evil).stdout.strip().splitlines()[-1]
    )
    task.tokens[evil] = token
    submission = upload(task, evil, HYP, name=evil).json()["id"]
    wait_scored(task, evil, submission)
    cookies = signed_in(task, evil)
    for path in ("/", "/testsets/news", f"/submissions/{submission}"):
        page = requests.get(task.server.url + path, cookies=cookies, timeout=30)
        assert page.status_code == 200
        assert "<script>alert" not in page.text and "<img src=x" not in page.text
        assert "default-src 'none'" in page.headers["content-security-policy"]
    assert (
        "&lt;script&gt;alert(1)&lt;/script&gt;"
        in requests.get(task.server.url + "/testsets/news", timeout=30).text
    )


def crawl(task: Task, team: str) -> dict[str, str]:
    """Every page and API answer a participant (token and session) can reach."""
    url = task.server.url
    cookies = signed_in(task, team)
    seen: dict[str, str] = {}
    queue = ["/", "/signin", "/submit", "/api/v1/testsets", "/api/v1/key", "/api/v1/leaderboards/news",
             "/api/v1/submissions?testset=news"]  # fmt: skip
    while queue:
        path = queue.pop()
        if path in seen or not path.startswith("/"):
            continue
        page = requests.get(
            url + path, cookies=cookies, headers=auth(task.tokens[team]), timeout=30
        )
        seen[path] = page.text
        queue += re.findall(r'href="(/[^"]*)"', page.text)
        if path.startswith("/api/v1/submissions?"):
            for row in page.json():
                queue += [f"/api/v1/submissions/{row['id']}", f"/api/v1/submissions/{row['id']}/segments",
                          f"/submissions/{row['id']}", f"/submissions/{row['id']}/report"]  # fmt: skip
    return seen


def test_no_reference_line_reaches_a_participant_of_a_blind_set(blind_task: Task) -> None:
    task = blind_task
    submission = upload(task, "alpha", HYP).json()["id"]
    wait_scored(task, "alpha", submission)
    failed = post_json(task, "alpha", {"testset": "news", "hypothesis": "x\n" * 29 + "y"})
    assert failed.status_code == 202
    wait_scored(task, "alpha", failed.json()["id"])
    pages = crawl(task, "alpha")
    assert len(pages) >= 8
    assert f"/submissions/{submission}" in pages
    for path, text in pages.items():
        for line in REFERENCE_LINES:
            assert line not in text, (path, line)
    segments = requests.get(
        f"{task.server.url}/api/v1/submissions/{submission}/segments",
        headers=auth(task.tokens["alpha"]),
        timeout=30,
    )
    assert segments.status_code == 403 and "blind" in segments.json()["error"]
    # after the reveal the owner sees per-sentence scores and the report
    bleucli("server", "reveal", "--db", task.server.db, "news", "--force", "--yes")
    segments = requests.get(
        f"{task.server.url}/api/v1/submissions/{submission}/segments",
        headers=auth(task.tokens["alpha"]),
        timeout=30,
    )
    assert segments.status_code == 200 and len(segments.json()["segments"]["BLEU"]) == 30
    cookies = signed_in(task, "alpha")
    deadline = time.monotonic() + 120
    while True:  # a worker makes the report; the page says so meanwhile
        report = requests.get(
            f"{task.server.url}/submissions/{submission}/report", cookies=cookies, timeout=60
        )
        assert report.status_code == 200
        if "bleucli analysis" in report.text:
            break
        assert "A worker is making the report" in report.text
        assert time.monotonic() < deadline
        time.sleep(0.3)


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
