"""An organiser's life cycle: a deadline moved without a new version, a new version that
re-scores every team's primary (nobody vanishes from the leaderboard), the deadline that
freezes submissions and primaries, a reveal that waits for it, add-testset refusing what no
submission could be scored with, failures the server caused never charged to a team, the
line cap, and the moment a run counts on the leaderboard. In-process, SQLite and
PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from bleucli.errors import ConfigError, UsageError
from tests.server.conftest import HYP, HYP2, REF, Local, bleucli, in_process, local_testset


def board(task: Local) -> dict:
    """The leaderboard once the workers have done everything queued."""
    task.drain()
    answer = task.client.get("/api/v1/leaderboards/news").json()
    if answer["updating"]:
        task.drain()
        answer = task.client.get("/api/v1/leaderboards/news").json()
    assert not answer["updating"]
    return answer


def past() -> datetime:
    return datetime.now(timezone.utc) - timedelta(minutes=1)


def test_a_deadline_moves_without_a_new_version(local: Local) -> None:
    from bleucli.commands.server import edit_testset

    local.scored("alpha")
    before = board(local)
    later = datetime.now(timezone.utc) + timedelta(days=7)
    message = edit_testset(local.db, "news", {"closes_at": later, "limit_per_day": 9})
    assert "closes" in message and "limit-per-day 9" in message
    after = board(local)
    assert after["version"] == before["version"] == 1
    assert after["rows"] == before["rows"]  # nobody left the board
    facts = local.client.get("/api/v1/testsets/news").json()
    assert (
        facts["closes"].startswith(later.strftime("%Y-%m-%dT%H:%M"))
        and facts["limits"]["per_day"] == 9
    )
    # the same references and options again: settings only, the version stays
    assert "unchanged (still version 1)" in local_testset(local.db, closes_at=later)
    with pytest.raises(UsageError, match="changes nothing"):
        edit_testset(local.db, "news", {"closes_at": None})


def test_a_new_version_rescores_every_primary_and_nobody_vanishes(local: Local) -> None:
    local.add_team("gamma")
    marked = local.scored("alpha")["id"]
    local.scored("alpha", HYP2)  # alpha's latest, but it marked the first
    assert (
        local.client.post(
            f"/api/v1/submissions/{marked}/primary", headers=local.auth("alpha")
        ).status_code
        == 200
    )
    local.scored("beta", HYP2)
    assert [row["submission"] for row in board(local)["rows"]] == [marked, 3]
    message = local_testset(local.db, "-tok", "intl")  # a new tokeniser: version 2
    assert "version 2" in message and "re-scored" in message
    first = local.client.get("/api/v1/leaderboards/news").json()
    # until every team is re-scored, the board keeps version 1's ranking, marked as such
    # (it used to empty, then refill team by team)
    assert first["previous_version"] and first["pending_version"] == 2
    assert first["version"] == 1 and first["updating"]
    assert [row["submission"] for row in first["rows"]] == [marked, 3]
    assert {(w["team"], w["state"]) for w in first["waiting"]} == {
        ("alpha", "being re-scored"),
        ("beta", "being re-scored"),
    }
    page = local.client.get("/testsets/news").text
    assert "Not on this version" in page and "being re-scored" in page
    assert "Version 2 of the references and options is being scored" in page
    # beta submits on the new version meanwhile; gamma never submitted
    local.scored("beta")
    now = board(local)
    assert now["waiting"] == [] and now["version"] == 2
    rows = {row["team"]: row for row in now["rows"]}
    assert set(rows) == {"alpha", "beta"}
    alpha_run = local.client.get(
        f"/api/v1/submissions/{rows['alpha']['submission']}", headers=local.auth("alpha")
    ).json()
    assert alpha_run["rescore_of"] == marked and alpha_run["primary"] and alpha_run["version"] == 2
    assert "tok:intl" in now["signatures"]["BLEU"]
    beta_run = local.client.get(
        f"/api/v1/submissions/{rows['beta']['submission']}", headers=local.auth("beta")
    ).json()
    assert beta_run["rescore_of"] is None  # its own run on version 2 beats its re-scored copy
    # re-scoring copies are never charged: alpha has its whole limit of 50 minus 2
    mine = local.client.get("/api/v1/submissions", headers=local.auth("alpha")).json()
    assert len(mine) == 3 and sum(run["rescore_of"] is None for run in mine) == 2
    # a run of the old version cannot be made primary on the new one
    refused = local.client.post(
        f"/api/v1/submissions/{marked}/primary", headers=local.auth("alpha")
    )
    assert refused.status_code == 409 and "earlier version" in refused.json()["error"]


def test_a_rescoring_that_fails_is_shown_not_hidden(local: Local, tmp_path: Path) -> None:
    local.scored("alpha")
    shorter = tmp_path / "short.de"
    shorter.write_text("".join(line + "\n" for line in Path(REF).read_text().splitlines()[:20]))
    local_testset(local.db, refs=(str(shorter),))
    now = board(local)
    assert now["rows"] == []
    assert now["waiting"] == [
        {
            "team": "alpha",
            "state": "re-scoring failed",
            "error": "the hypothesis has 30 lines, but the test set has 20: one line per segment, "
            "in the test set's order",
        }
    ]


def test_after_the_deadline_submissions_and_primaries_are_frozen(local: Local) -> None:
    from bleucli.commands.server import edit_testset

    run = local.scored("alpha")["id"]
    local.scored("alpha", HYP2)
    moment = past()
    edit_testset(local.db, "news", {"closes_at": moment})
    late = local.upload("alpha")
    stamp = moment.isoformat(timespec="seconds").replace("+00:00", "Z")
    assert (
        late.status_code == 403
        and late.json()["error"] == f"news closed for submissions at {stamp}"
    )
    frozen = local.client.post(f"/api/v1/submissions/{run}/primary", headers=local.auth("alpha"))
    assert frozen.status_code == 403
    assert frozen.json()["error"] == f"news closed at {stamp}: primaries are frozen since then"
    local.sign_in("alpha")
    assert "Make this run" not in local.client.get(f"/submissions/{run}").text
    assert "No test set takes submissions now" in local.client.get("/submit").text


def test_reveal_waits_for_the_deadline(blind: Local, tmp_path: Path) -> None:
    from bleucli.commands.server import reveal
    from bleucli.server import store
    from bleucli.server.db import connect

    blind.scored("alpha")
    with pytest.raises(
        ConfigError, match="still open for submissions .has no deadline.: reveal it after"
    ):
        reveal(blind.db, "news", force=False)
    message = reveal(blind.db, "news", force=True)
    assert "revealed (closed since" in message
    engine = connect(blind.db)
    found = store.testset(engine, "news")
    assert found.revealed and found.closed
    assert blind.upload("alpha").status_code == 403  # a revealed set takes no submissions
    # a new version of a revealed set is blind again, with a new key
    local_testset(blind.db, "-tok", "intl")
    found = store.testset(engine, "news")
    engine.dispose()
    assert not found.revealed and found.blind
    versions = blind.client.get("/api/v1/testsets/news").json()["versions"]
    assert [v["key"] for v in versions] == [None, None]


def test_reveal_asks_first(blind: Local) -> None:
    from bleucli.commands.server import edit_testset

    edit_testset(blind.db, "news", {"closes_at": past()})
    unasked = bleucli("server", "reveal", "--db", blind.db, "news", check=False)
    assert unasked.returncode == 2
    assert "reveal cannot be undone: confirm in a terminal, or add --yes" in unasked.stderr
    done = bleucli("server", "reveal", "--db", blind.db, "news", "--yes", check=False)
    assert done.returncode == 0 and "revealed" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("-m", "comet"),
            "-m comet: neural metrics read the source sentences: give the test set's --source FILE",
        ),
        (("-m", "cometx"), "unknown metric 'cometx'"),
        (("-tok", "nonsense"), "unknown tokenizer 'nonsense'"),
        (("-m", "bleu", "-f", "json"), "-f: not a metric option"),
    ],
)
def test_add_testset_refuses_options_no_submission_could_be_scored_with(
    tmp_path, args, message
) -> None:
    db = f"sqlite:///{tmp_path / 'refuse.db'}"
    bleucli("server", "init", "--db", db)
    proc = bleucli(
        "server", "add-testset", "--db", db, "news", "-l", "en-de", "--ref", REF, *args, check=False
    )
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    from bleucli.server import store
    from bleucli.server.db import connect

    engine = connect(db)
    assert store.testsets(engine) == []
    engine.dispose()


def test_failures_the_server_causes_are_never_charged(db_url, tmp_path, monkeypatch) -> None:
    from bleucli.server import scoring

    with in_process(db_url, tmp_path, ("alpha",), visibility="public", limit_total=1) as task:

        def broken(*args, **kwargs):
            raise RuntimeError("a bug in the server")

        monkeypatch.setattr(scoring, "score", broken)
        assert task.upload("alpha").status_code == 202
        task.drain()
        failed = task.client.get("/api/v1/submissions/1", headers=task.auth("alpha")).json()
        assert failed["status"] == "failed" and "internal error" in failed["error"]
        monkeypatch.undo()
        again = task.upload("alpha")  # the limit of 1 is still whole
        assert again.status_code == 202, again.text
        task.drain()
        refused = task.upload("alpha")
        assert refused.status_code == 429 and "the limit in total" in refused.json()["error"]


def test_a_line_over_the_cap_is_refused_before_any_worker(local: Local) -> None:
    """The default cap is a fixed number: one computed from the references (it was 20x
    the longest line) told every team the length of the longest hidden line."""
    from bleucli.commands.server import edit_testset
    from bleucli.server.store.models import DEFAULT_LINE_CHARS

    lines = Path(HYP).read_text(encoding="utf-8").splitlines()
    longest = max(len(line) for line in Path(REF).read_text(encoding="utf-8").splitlines())
    cap = DEFAULT_LINE_CHARS
    assert cap % longest  # not a multiple of the longest reference line
    long_line = ("wort " * cap)[: cap + 1]
    data = "\n".join([lines[0], long_line, *lines[2:]]) + "\n"
    answer = local.upload("alpha", data.encode())
    assert answer.status_code == 422
    assert answer.json()["error"] == (
        f"line 2: {cap + 1:,} characters, over this test set's limit of {cap:,} per line"
    )
    assert local.drain() == 0  # nothing reached the queue
    edit_testset(local.db, "news", {"max_line_chars": cap + 1})
    assert local.upload("alpha", data.encode()).status_code == 202


def test_a_run_counts_on_the_leaderboard_only_once_it_is_there(local: Local, monkeypatch) -> None:
    from bleucli.server import store, worker
    from bleucli.server.db import connect

    monkeypatch.setattr(worker, "BOARD_LAG_SECONDS", 1e9)  # re-rank only when the queue empties
    first, second = (local.upload(team).json()["id"] for team in ("alpha", "beta"))
    engine = connect(local.db)
    job = store.claim(engine, "w")
    assert worker.run_job(engine, job, "w") == "scored"  # one of two: the queue is not empty
    engine.dispose()
    state = local.client.get(f"/api/v1/submissions/{first}", headers=local.auth("alpha")).json()
    assert state["status"] == "scored" and state["leaderboard"] == "updating"
    local.sign_in("alpha")
    assert (
        "the leaderboard is being updated to count it"
        in local.client.get(f"/submissions/{first}").text
    )
    assert local.client.get("/api/v1/leaderboards/news").json()["updating"]
    local.drain()
    state = local.client.get(f"/api/v1/submissions/{first}", headers=local.auth("alpha")).json()
    assert state["leaderboard"] == "counted"
    assert {row["submission"] for row in board(local)["rows"]} == {first, second}
    assert "counted by the leaderboard" in local.client.get(f"/submissions/{first}").text
