"""What broke when the server was attacked again (#49), in-process on SQLite and PostgreSQL:
a database that goes away (503 and Retry-After, workers that wait, a health endpoint), a
stored request that no longer loads (the run fails, uncharged; the worker goes on), runs
queued across a version change, deadlines that would reopen revealed or split sets, text
no database stores, names that read alike, the queue's listing, CSV cells, fair turns
between gates and submissions, one refresh for many readers of a stale board, ranks as
the rounded scores show them, coarse times, and the daily budget of worker time."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

from tests.server.conftest import HYP, HYP2, REF, Local, in_process, local_testset


def _engine(task: Local):
    from bleucli.server.db import connect

    return connect(task.db)


def _run(task: Local, team: str, submission: int) -> dict:
    return task.client.get(f"/api/v1/submissions/{submission}", headers=task.auth(team)).json()


# -- the database going away -----------------------------------------------------------------


def test_the_web_answers_503_with_retry_after_while_the_database_is_away(
    local: Local, monkeypatch, caplog
) -> None:
    from sqlalchemy.exc import OperationalError

    from bleucli.server import store

    def away(*args, **kwargs):
        raise OperationalError("SELECT 1", {}, Exception("connection refused"))

    monkeypatch.setattr(store, "testsets", away)
    monkeypatch.setattr(store, "health", away)
    for path in ("/api/v1/testsets", "/", "/api/v1/health"):
        answer = local.client.get(path)
        assert answer.status_code == 503, (path, answer.text[:200])
        assert answer.headers["retry-after"] == "5"
        assert "not answering" in answer.text and "Traceback" not in answer.text
    assert "Traceback" not in caplog.text  # one warning line, not a logged bug


def test_health_counts_live_workers_and_the_oldest_queued_run(local: Local) -> None:
    from bleucli.server import store

    facts = local.client.get("/api/v1/health").json()
    assert facts["status"] == "ok" and facts["database"] == "ok"
    assert facts["workers"] == {"alive": 0, "busy": 0}
    assert facts["queue"]["queued"] == 0 and facts["queue"]["oldest_queued_seconds"] is None
    assert local.upload("alpha").status_code == 202
    time.sleep(1.1)
    facts = local.client.get("/api/v1/health").json()
    assert facts["status"] == "degraded"  # a run waits and no worker is alive
    assert facts["queue"]["queued"] == 1 and facts["queue"]["oldest_queued_seconds"] >= 1
    engine = _engine(local)
    store.heartbeat(engine, "host:1", time.time(), None)
    store.heartbeat(engine, "host:2", time.time(), "score:1")
    facts = local.client.get("/api/v1/health").json()
    assert facts["status"] == "ok" and facts["workers"] == {"alive": 2, "busy": 1}
    store.forget_worker(engine, "host:1")
    engine.dispose()
    assert local.client.get("/api/v1/health").json()["workers"]["alive"] == 1


def test_a_worker_waits_out_a_database_outage_and_scores_what_was_queued(
    local: Local, monkeypatch
) -> None:
    from sqlalchemy.exc import OperationalError

    from bleucli.server import store, worker

    ids = [local.upload(team).json()["id"] for team in ("alpha", "beta")]
    real_claim, real_finish = store.claim, store.finish
    failures = {"claim": 3, "finish": 2}

    def flaky(name, real):
        def call(*args, **kwargs):
            if failures[name]:
                failures[name] -= 1
                raise OperationalError("UPDATE", {}, Exception("server closed the connection"))
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(store, "claim", flaky("claim", real_claim))
    monkeypatch.setattr(store, "finish", flaky("finish", real_finish))
    monkeypatch.setattr(worker, "BACKOFF", (0.01,))
    assert local.drain() >= 2  # the worker did not exit on the first error
    assert failures == {"claim": 0, "finish": 0}
    for team, run in zip(("alpha", "beta"), ids):
        assert _run(local, team, run)["status"] == "scored"


def test_a_request_that_no_longer_loads_fails_the_run_uncharged_and_the_worker_goes_on(
    local: Local,
) -> None:
    from sqlalchemy import text

    from bleucli.server import store

    engine = _engine(local)
    request = json.loads(store.version(engine, 1).request_text)
    request["metrics"].append({"name": "uninstalled-plugin", "options": {}})
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE testset_versions SET request = :r"), {"r": json.dumps(request)}
        )
    engine.dispose()
    ids = [local.upload(team).json()["id"] for team in ("alpha", "alpha", "beta")]
    assert local.drain() >= 3  # all three taken: the first did not take the worker down
    for team, run in zip(("alpha", "alpha", "beta"), ids):
        state = _run(local, team, run)
        assert state["status"] == "failed"
        assert "scoring options no longer load" in state["error"]
        assert "uninstalled-plugin" in state["error"]
    assert local.client.get("/testsets/news").status_code == 200  # the pages still show it
    engine = _engine(local)
    rows = store.submissions(engine, None, None)
    engine.dispose()
    assert not any(row.charged for row in rows)  # the server's fault: not charged


# -- version changes -----------------------------------------------------------------------------


def test_runs_queued_or_scoring_across_a_new_version_end_on_it(local: Local) -> None:
    from bleucli.server import store, worker

    local.scored("alpha")  # on version 1
    local.scored("beta")
    queued = local.upload("alpha", HYP2).json()["id"]  # accepted on version 1, still queued
    scoring = local.upload("beta", HYP2).json()["id"]
    engine = _engine(local)
    held = [store.claim(engine, "w", jobs_first=False) for _ in range(2)]
    job = next(j for j in held if j.id == scoring)  # beta's run is being scored ...
    for other in held:
        if other is not job:
            store.release(engine, other, "w")
    assert "version 2" in local_testset(local.db, "-tok", "intl")  # ... when version 2 comes
    assert worker.run_job(engine, job, "w") == "requeued"  # put back, not stored on version 1
    engine.dispose()
    local.drain()
    for team, run in (("alpha", queued), ("beta", scoring)):
        state = _run(local, team, run)
        assert state["status"] == "scored" and state["version"] == 2, state
        assert "tok:intl" in json.dumps(state["result"])
        assert state["leaderboard"] == "counted"
    # it can be made primary (it was a 409 when such a run stayed on version 1)
    answer = local.client.post(f"/api/v1/submissions/{queued}/primary", headers=local.auth("alpha"))
    assert answer.status_code == 200, answer.text
    local.drain()
    board = local.client.get("/api/v1/leaderboards/news").json()
    assert board["version"] == 2 and not board.get("previous_version")
    assert {row["submission"] for row in board["rows"]} >= {queued, scoring}


def test_a_deadline_cannot_reopen_a_revealed_set(db_url, tmp_path) -> None:
    from bleucli.commands.server import edit_testset, reveal
    from bleucli.errors import ConfigError
    from bleucli.server.store import now

    later = now() + timedelta(days=7)
    with in_process(db_url, tmp_path, ("alpha",), limit_per_day=50) as task:
        reveal(task.db, "news", force=True)
        with pytest.raises(ConfigError, match="cannot reopen: it was revealed"):
            edit_testset(task.db, "news", {"closes_at": later})
        with pytest.raises(ConfigError, match="cannot reopen"):
            local_testset(task.db, limit_per_day=50, closes_at=later)  # the same version
        assert task.upload("alpha").status_code == 403  # still closed
        edit_testset(task.db, "news", {"closes_at": now() - timedelta(hours=1)})  # earlier: fine
        # a new version is the way to reopen
        assert "version 2" in local_testset(task.db, "-tok", "intl", closes_at=later)
        assert task.upload("alpha").status_code == 202


def test_a_deadline_cannot_reopen_a_split_set_past_its_deadline(db_url, tmp_path) -> None:
    from bleucli.commands.server import edit_testset
    from bleucli.errors import ConfigError
    from bleucli.server.store import now

    with in_process(db_url, tmp_path, ("alpha",), public_fraction=0.5, limit_per_day=50) as task:
        edit_testset(task.db, "news", {"closes_at": now() + timedelta(days=1)})  # open: fine
        edit_testset(task.db, "news", {"closes_at": now() - timedelta(minutes=1)})
        with pytest.raises(ConfigError, match="split and teams have seen its rest-part scores"):
            edit_testset(task.db, "news", {"closes_at": now() + timedelta(days=7)})


# -- text, names, listings --------------------------------------------------------------------------


def test_text_no_database_stores_is_a_4xx_with_its_reason(local: Local, caplog) -> None:
    auth = {**local.auth("alpha"), "Content-Type": "application/json"}
    hypothesis = Path(HYP).read_text(encoding="utf-8")
    cases = []
    for field, value in (("testset", "news\ud800"), ("name", "x\ud800"), ("series", "\ud800"),
                         ("name", "a\x00b"), ("testset", "ne\x00ws"), ("series", "s\x00"),
                         ("name", "\x1b[2Jx")):  # fmt: skip
        body = {"testset": "news", "name": "run", "hypothesis": hypothesis, field: value}
        raw = json.dumps(body).encode()  # ensure_ascii: the surrogate travels as \\ud800
        cases.append(
            (local.client.post("/api/v1/submissions", headers=auth, content=raw), 400, field)
        )
    body = {"testset": "news", "name": "run", "hypothesis": hypothesis, "labels": {"k": "v\ud800"}}
    cases.append((local.client.post("/api/v1/submissions", headers=auth,
                                    content=json.dumps(body).encode()), 400, "label"))  # fmt: skip
    cases.append((local.upload("alpha", name="a\x00b"), 400, "name"))  # multipart
    for path in ("/api/v1/leaderboards/a%00b", "/testsets/a%00b", "/api/v1/series/news/%01"):
        cases.append((local.client.get(path, headers=local.auth("alpha")), 404, "address"))
    # a surrogate's bytes (not UTF-8) read as replacement characters: a name that is not there
    cases.append((local.client.get("/api/v1/testsets/%ED%A0%80"), 404, "no test set"))
    cases.append((local.client.get("/api/v1/submissions?testset=a%00b", headers=local.auth("alpha")),
                  400, "query parameter"))  # fmt: skip
    for answer, status, what in cases:
        assert answer.status_code == status, (what, answer.status_code, answer.text[:200])
        assert what in answer.text and "Traceback" not in answer.text
    assert "Traceback" not in caplog.text
    assert local.drain() == 0  # none of them was stored


def test_team_names_that_read_like_another_are_refused(local: Local) -> None:
    from bleucli.errors import ConfigError
    from tests.server.conftest import bleucli

    for name in ("alpha ", "alpha\u00a0", "\u0430lpha", "al\u200bpha", "ALPHA", "alp\u202eha",
                 "\u0430\u217c\u0440ha"):  # fmt: skip
        with pytest.raises(ConfigError):
            local.add_team(name)
    from bleucli.commands.server import add_team
    from bleucli.server import store

    assert add_team(local.db, "  gamma\u00a0  team ").startswith("team gamma team created")
    engine = _engine(local)
    assert "gamma team" in {team.name for team in store.teams(engine)}
    engine.dispose()
    proc = bleucli("server", "add-team", "--db", local.db, "b\u0435ta", check=False)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "reads like the existing team 'beta'" in proc.stderr


def test_server_queue_shows_names_escaped_under_a_header_for_each_column(local: Local) -> None:
    from bleucli.commands.server import queue
    from bleucli.server import schema, store

    engine = _engine(local)
    store.add_submission(engine, store.testset(engine, "news"), 1, "x", b"a\n", "0" * 64)
    with engine.begin() as connection:  # a name stored before names were checked
        connection.execute(schema.submissions.update().values(name="evil\x1b[2J\x07name"))
    engine.dispose()
    listing = queue(local.db, "text")
    assert "\x1b" not in listing and "\x07" not in listing
    assert "evil\\x1b[2J\\x07name" in listing
    header, rule, row = listing.splitlines()[:3]
    assert header.split() == ["kind", "id", "test", "set", "team", "name", "status", "attempts",
                              "worker", "lease", "created", "error"]  # fmt: skip
    assert len(rule.split()) == 11


def test_csv_cells_that_a_spreadsheet_reads_as_formulas_are_neutralised() -> None:
    from bleucli.server.present import csv_cell

    for text in ("=1+1", " =1+1", "\n=HYPERLINK(x)", "\t=1", "\r+1", "  @SUM(A1)", " -2"):
        assert csv_cell(text) == "'" + text
    for text in ("plain", "a=b", " x", "3.5"):
        assert csv_cell(text) == text
    assert csv_cell(-2.5) == -2.5


def test_the_trend_page_offers_a_badge_address_that_works_anonymously(local: Local) -> None:
    local.scored("alpha", series="main")
    local.sign_in("alpha")
    page = local.client.get("/testsets/news/series/main").text
    import re

    address = re.search(r"Badge: <code>([^<]+)</code>", page).group(1)
    assert address == "/badges/news/main.svg?team=alpha"
    local.client.cookies.clear()
    answer = local.client.get(address)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("image/svg")


# -- work -----------------------------------------------------------------------------------------------


def test_gates_and_submissions_take_turns(local: Local, monkeypatch) -> None:
    from bleucli.server import worker

    first = local.scored("alpha", series="main")["id"]
    local.drain()
    for _ in range(3):
        answer = local.client.post(
            f"/api/v1/submissions/{first}/gate", headers=local.auth("alpha"), json={}
        )
        assert answer.status_code == 202
    for team in ("beta", "beta"):
        assert local.upload(team).status_code == 202
    taken = []
    real = worker.run_job

    def record(engine, job, name):
        taken.append(job.kind)
        return real(engine, job, name)

    monkeypatch.setattr(worker, "run_job", record)
    local.drain()
    # a gate, a run, a gate, a run, ... (jobs used to go first, all of them)
    assert taken[:4] == ["gate", "score", "gate", "score"], taken


def test_many_readers_of_a_stale_board_queue_one_refresh(local: Local) -> None:
    from sqlalchemy import func, select

    from bleucli.server import leaderboard, schema, store

    local.scored("alpha")
    engine = _engine(local)
    testset = store.testset(engine, "news")
    with engine.begin() as connection:  # the board is stale: the set changed since
        connection.execute(schema.testsets.update().values(changes=testset.changes + 1))
    testset = store.testset(engine, "news")
    barrier = threading.Barrier(40)

    def read() -> None:
        barrier.wait()
        leaderboard.current(engine, testset)

    threads = [threading.Thread(target=read) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with engine.connect() as connection:
        queued = connection.execute(
            select(func.count()).where(
                schema.jobs.c.kind == "leaderboard", schema.jobs.c.status == "queued"
            )
        ).scalar_one()
    engine.dispose()
    assert queued == 1


def test_a_teams_daily_worker_time_is_bounded(db_url, tmp_path) -> None:
    from sqlalchemy import text

    with in_process(db_url, tmp_path, ("alpha", "beta"), limit_per_day=50,
                    limit_scoring_seconds_per_day=60) as task:  # fmt: skip
        task.scored("alpha")
        engine = _engine(task)
        with engine.begin() as connection:  # alpha's runs took a minute of worker time
            connection.execute(text("UPDATE submissions SET scoring_seconds = 61"))
        engine.dispose()
        refused = task.upload("alpha")
        assert refused.status_code == 429 and refused.headers["retry-after"]
        assert "took 61 s of worker time today (limit 60 s)" in refused.json()["error"]
        assert task.upload("beta").status_code == 202  # per team


# -- what the board and the runs show ------------------------------------------------------------------


def test_equal_shown_scores_are_a_tie_ordered_by_name_not_by_hidden_digits(
    db_url, tmp_path
) -> None:
    """Runs that differ in one word all read 60 at -w 0: one rank, one cluster, listed by
    team name -- the board used to order them by the digits it did not show."""
    from bleucli import BLEU

    lines = Path(HYP).read_text(encoding="utf-8").splitlines()
    refs = [Path(REF).read_text(encoding="utf-8").splitlines()]

    def variant(line: int | None) -> list[str]:
        out = list(lines)
        if line is not None:
            out[line] = " ".join(["Zzz", *out[line].split()[1:]])
        return out

    runs = {"zulu": variant(None), "alpha": variant(6), "mike": variant(1)}
    scores = {team: BLEU().corpus_score(text, refs).score for team, text in runs.items()}
    assert scores["zulu"] > scores["alpha"] > scores["mike"]  # the hidden order
    assert len({round(v) for v in scores.values()}) == 1  # one shown number
    with in_process(db_url, tmp_path, tuple(runs), "-m", "bleu", "-w", "0",
                    visibility="blind", limit_per_day=50) as task:  # fmt: skip
        for team, text in runs.items():
            task.scored(team, "\n".join(text).encode() + b"\n")
        task.drain()
        board = task.client.get("/api/v1/leaderboards/news").json()
    rows = board["rows"]
    assert [row["team"] for row in rows] == ["alpha", "mike", "zulu"]  # by name
    assert {row["rank"] for row in rows} == {1} and len({row["cluster"] for row in rows}) == 1
    assert len({row["rank_range"] for row in rows}) == 1
    assert {row["scores"]["BLEU"] for row in rows} == {round(scores["zulu"])}
    assert board["decimals"] == {"BLEU": 0}


def test_tied_as_shown_merges_ranks_ranges_and_clusters() -> None:
    from bleucli.stats.ranking import RankedSystem, Ranking, tied_as_shown

    systems = [
        RankedSystem("a", 36.5289, 0, 0.4, 1, 2, cluster=1, position=1),
        RankedSystem("b", 36.5253, 0, 0.4, 1, 3, cluster=2, position=2),
        RankedSystem("c", 36.31, 0, 0.4, 2, 3, cluster=2, position=3),
        RankedSystem("d", 30.0, 0, 0.4, 4, 4, cluster=3, position=4),
    ]
    ranking = tied_as_shown(
        Ranking("BLEU", True, systems), 1, {"a": "z", "b": "y", "c": "c", "d": "d"}
    )
    got = [(s.name, s.position, s.rank_low, s.rank_high, s.cluster) for s in ranking.systems]
    # a and b read 36.5: tied at 1, listed by their tie-break key (b's "y" before a's "z"),
    # their clusters merge (a's cluster 1 and b's cluster 2, which holds c too)
    assert got == [("b", 1, 1, 3, 1), ("a", 1, 1, 3, 1), ("c", 3, 2, 3, 1), ("d", 4, 4, 4, 2)]
    lower = tied_as_shown(
        Ranking("TER", False, [RankedSystem("x", 20.04, 0, 0, 1, 1, 1, 1),
                               RankedSystem("y", 19.96, 0, 0, 1, 1, 1, 2)]), 1
    )  # fmt: skip
    assert [(s.name, s.position) for s in lower.systems] == [("x", 1), ("y", 1)]


def test_blind_sets_show_teams_times_to_the_minute(blind: Local) -> None:
    state = blind.scored("alpha")
    for key in ("submitted", "finished"):
        assert state[key].endswith(":00Z"), state[key]
    listed = blind.client.get("/api/v1/submissions", headers=blind.auth("alpha")).json()
    assert listed[0]["submitted"].endswith(":00Z")
