"""The server's routes as participants meet them, through the in-process tier (the ASGI app
and a worker run in this process; SQLite and PostgreSQL): leaderboard clusters equal
``--rank``'s; a team's primary choice; every refusal gets its status and one message; limits
and windows answer when they reset; names are shown escaped; no reference line reaches a
participant of a blind set; a private set exists only for its team. The real ``bleucli
server run`` processes are in test_server.py, test_durability.py, test_attacks.py,
test_series.py (``bleucli submit --gate``) and the browser tests."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.server.conftest import HYP, HYP2, REF, Local, bleucli, in_process, local_testset

REFERENCE_LINES = [
    line
    for line in (EXAMPLES / "ref.de").read_text(encoding="utf-8").splitlines()
    if len(line) > 25
]


@pytest.fixture
def served(db_url, tmp_path) -> Iterator[Local]:
    """A public set with BLEU, chrF and TER, teams alpha and beta."""
    with in_process(db_url, tmp_path, ("alpha", "beta"), visibility="public") as task:
        yield task


def current_board(task: Local) -> dict:
    """The leaderboard once the worker has done everything queued (it re-ranks after each
    change)."""
    task.drain()
    board = task.client.get("/api/v1/leaderboards/news").json()
    assert not board["updating"], board
    return board


def post_json(task: Local, team: str, body: object):
    return task.client.post("/api/v1/submissions", json=body, headers=task.auth(team))


def test_leaderboard_clusters_equal_rank(served: Local, tmp_path: Path) -> None:
    lines = Path(HYP).read_text(encoding="utf-8").splitlines()
    third = tmp_path / "third.de"
    third.write_text(
        "\n".join(" ".join(line.split()[:-2]) for line in lines) + "\n", encoding="utf-8"
    )
    served.add_team("gamma")  # a team without a run is not on the board
    served.scored("alpha", HYP)
    served.scored("beta", HYP2)
    served.add_team("delta")
    served.scored("delta", str(third))
    board = current_board(served)
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


def test_primary_choice_and_contrastive_runs(served: Local) -> None:
    first = served.scored("alpha", HYP, name="good")["id"]
    second = served.scored("alpha", HYP2, name="worse")["id"]
    board = current_board(served)
    assert [row["submission"] for row in board["rows"]] == [second]  # the latest by default
    chosen = served.client.post(
        f"/api/v1/submissions/{first}/primary", headers=served.auth("alpha")
    )
    assert chosen.status_code == 200
    board = current_board(served)
    assert [row["submission"] for row in board["rows"]] == [first]
    mine = served.client.get("/api/v1/submissions?testset=news", headers=served.auth("alpha"))
    assert [row["id"] for row in mine.json()] == [second, first]  # newest first, both runs
    theirs = served.client.get("/api/v1/submissions?testset=news", headers=served.auth("beta"))
    assert theirs.json() == []


def test_every_refusal_has_its_status_and_one_message(served: Local) -> None:
    client, alpha = served.client, served.auth("alpha")
    ok = served.upload("alpha", HYP).json()["id"]
    json_body = {**alpha, "Content-Type": "application/json"}
    cases = [
        (
            client.post("/api/v1/submissions", json={}, headers={"Authorization": "Bearer wrong"}),
            401,
            "that token is not valid",
        ),
        (client.get(f"/api/v1/submissions/{ok}", headers=served.auth("beta")), 404, f"no submission {ok}"),
        (post_json(served, "alpha", {"testset": "news", "name": "x", "hypothesis": "one\ntwo\n"}),
         422, "has 2 lines, but the test set has 30"),
        (post_json(served, "alpha", {"testset": "news", "name": "x", "hypothesis": ""}), 422, "empty"),
        (served.upload("alpha", b"\xff\xfe bad\n" * 30, name="x"), 422, "line 1: invalid utf-8"),
        (client.post("/api/v1/submissions", content=b"{not json", headers=json_body), 400, "malformed JSON"),
        (
            client.post(
                "/api/v1/submissions", content=b"--x\r\nbroken",
                headers={**alpha, "Content-Type": "multipart/form-data; boundary=zz"},
            ),
            400,
            "malformed multipart body",
        ),
        (client.post("/api/v1/submissions", content=b"x" * 300_000, headers=json_body), 413,
         "larger than the server's limit"),
        (post_json(served, "alpha", {"testset": "nope", "name": "x", "hypothesis": "a"}), 404,
         "no test set named 'nope'"),
    ]  # fmt: skip
    served.sign_in("alpha")  # a signed-in session, posting the form without its CSRF token
    cases.append(
        (
            client.post("/submit", data={"testset": "news"}, files={"hypothesis": ("h", b"x")}),
            403,
            "CSRF token",
        )
    )
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


def test_the_session_cookie_is_http_only_and_same_site_strict(served: Local) -> None:
    form = served.client.get("/signin").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form).group(1)
    answer = served.client.post(
        "/signin", data={"token": served.tokens["alpha"], "csrf": csrf}, follow_redirects=False
    )
    assert answer.status_code == 303
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")


def test_limits_and_windows_answer_when_they_reset(db_url, tmp_path) -> None:
    with in_process(db_url, tmp_path, ("alpha", "beta"), "-m", "bleu", limit_per_day=2,
                    limit_failures_per_day=2) as task:  # fmt: skip
        assert task.upload("alpha", HYP).status_code == 202
        assert task.upload("alpha", HYP).status_code == 202
        third = task.upload("alpha", HYP)
        assert third.status_code == 429 and "the daily limit; it resets at" in third.json()["error"]
        assert int(third.headers["retry-after"]) > 0
        assert task.upload("beta", HYP).status_code == 202  # per team
        for _ in range(2):
            assert (
                post_json(task, "beta", {"testset": "news", "hypothesis": "x"}).status_code == 422
            )
        capped = post_json(task, "beta", {"testset": "news", "hypothesis": "x"})
        assert capped.status_code == 429 and "refused files today" in capped.json()["error"]
        bleucli("server", "add-testset", "--db", db_url, "news", "-l", "en-de", "--ref", REF,
                "--closes", "2020-01-01T00:00Z")  # fmt: skip
        closed = task.upload("beta", HYP)
        assert (
            closed.status_code == 403
            and "closed for submissions at 2020-01-01T00:00:00Z" in closed.json()["error"]
        )


def test_names_are_escaped_everywhere(served: Local) -> None:
    evil = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'"
    served.add_team(evil)
    submission = served.scored(evil, HYP, name=evil)["id"]
    anonymous = served.client.get("/testsets/news")
    assert anonymous.status_code == 200
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in anonymous.text
    served.sign_in(evil)
    for path in ("/", "/testsets/news", f"/submissions/{submission}"):
        page = served.client.get(path)
        assert page.status_code == 200 and "signed in as" in page.text
        assert "<script>alert" not in page.text and "<img src=x" not in page.text
        assert "default-src 'none'" in page.headers["content-security-policy"]


def crawl(task: Local, team: str) -> dict[str, str]:
    """Every page and API answer a participant (token and session) can reach."""
    task.sign_in(team)
    seen: dict[str, str] = {}
    queue = ["/", "/signin", "/submit", "/api/v1/testsets", "/api/v1/key", "/api/v1/leaderboards/news",
             "/api/v1/submissions?testset=news"]  # fmt: skip
    while queue:
        path = queue.pop()
        if path in seen or not path.startswith("/"):
            continue
        page = task.client.get(path, headers=task.auth(team))
        seen[path] = page.text
        queue += re.findall(r'href="(/[^"]*)"', page.text)
        if path.startswith("/api/v1/submissions?"):
            for row in page.json():
                queue += [f"/api/v1/submissions/{row['id']}", f"/api/v1/submissions/{row['id']}/segments",
                          f"/submissions/{row['id']}", f"/submissions/{row['id']}/report"]  # fmt: skip
    return seen


def test_no_reference_line_reaches_a_participant_of_a_blind_set(blind: Local) -> None:
    task = blind
    submission = task.scored("alpha", HYP)["id"]
    failed = post_json(task, "alpha", {"testset": "news", "hypothesis": "x\n" * 29 + "y"})
    assert failed.status_code == 202
    task.drain()
    pages = crawl(task, "alpha")
    assert len(pages) >= 8
    assert f"/submissions/{submission}" in pages
    for path, text in pages.items():
        for line in REFERENCE_LINES:
            assert line not in text, (path, line)
    segments = task.client.get(
        f"/api/v1/submissions/{submission}/segments", headers=task.auth("alpha")
    )
    assert segments.status_code == 403 and "blind" in segments.json()["error"]
    # after the reveal the owner sees per-sentence scores and the report
    bleucli("server", "reveal", "--db", task.db, "news", "--force", "--yes")
    segments = task.client.get(
        f"/api/v1/submissions/{submission}/segments", headers=task.auth("alpha")
    )
    assert segments.status_code == 200 and len(segments.json()["segments"]["BLEU"]) == 30
    report = task.client.get(f"/submissions/{submission}/report")
    assert report.status_code == 200 and "A worker is making the report" in report.text
    task.drain()  # a worker makes the report; the page says so meanwhile
    report = task.client.get(f"/submissions/{submission}/report")
    assert report.status_code == 200 and "bleucli analysis" in report.text


def test_private_sets_exist_only_for_their_team(db_url, tmp_path) -> None:
    with in_process(db_url, tmp_path, ("alpha", "beta"), visibility="public") as task:
        local_testset(task.db, "-m", "bleu", name="inhouse", visibility="private", owner="alpha")
        client, alpha, beta = task.client, task.auth("alpha"), task.auth("beta")
        data = Path(HYP).read_bytes()
        mine = client.post("/api/v1/submissions", headers=alpha,
                           data={"testset": "inhouse", "series": "main"}, files={"hypothesis": ("h", data)})  # fmt: skip
        assert mine.status_code == 202
        theirs = client.post("/api/v1/submissions", headers=beta,
                             data={"testset": "inhouse"}, files={"hypothesis": ("h", data)})  # fmt: skip
        assert theirs.status_code == 404 and theirs.json()["error"] == "no test set named 'inhouse'"

        def names(headers: dict) -> list[str]:
            return [t["name"] for t in client.get("/api/v1/testsets", headers=headers).json()]

        assert "inhouse" in names(alpha) and "inhouse" not in names(beta)
        assert "inhouse" not in names({})
        for path in ("/api/v1/leaderboards/inhouse", "/testsets/inhouse", "/api/v1/series/inhouse/main",
                     "/testsets/inhouse/series/main", "/badges/inhouse/main.svg"):  # fmt: skip
            for headers in (beta, {}):
                answer = client.get(path, headers=headers)
                assert answer.status_code in (401, 404), (path, answer.status_code)
                assert (
                    "inhouse" not in answer.text.replace("'inhouse'", "")
                    or answer.status_code == 404
                )
        assert "inhouse" not in client.get("/", headers=beta).text
        # the owner sees everything, per-sentence scores included (no reveal needed)
        task.drain()
        submission = mine.json()["id"]
        assert (
            client.get(f"/api/v1/submissions/{submission}", headers=alpha).json()["status"]
            == "scored"
        )
        segments = client.get(f"/api/v1/submissions/{submission}/segments", headers=alpha)
        assert segments.status_code == 200 and len(segments.json()["segments"]["BLEU"]) == 30
