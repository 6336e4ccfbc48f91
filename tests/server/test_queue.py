"""No request computes for long: gates and reports are queued for the workers (the web
process reads and enqueues), resample counts are capped by the organiser, every request
that makes work is limited per team (429 with Retry-After), and an upload's
Idempotency-Key makes a retry safe. In-process, SQLite and PostgreSQL (the latency under
load: tests/server/test_processes.py; the benchmark: scripts/bench_server.py)."""

from __future__ import annotations

from tests.server.conftest import HYP, HYP2, Local


def _series_runs(task: Local) -> list[int]:
    ids = [task.scored("alpha", path, series="main")["id"] for path in (HYP, HYP2)]
    return ids


def test_a_gate_is_queued_and_done_by_a_worker(local: Local) -> None:
    first, second = _series_runs(local)
    answer = local.client.post(
        f"/api/v1/submissions/{second}/gate", headers=local.auth("alpha"),
        json={"tolerance": 0.5, "paired_bs_n": 200},
    )  # fmt: skip
    assert answer.status_code == 202
    job = answer.json()
    assert job["status"] == "queued" and answer.headers["location"] == job["url"]
    state = local.client.get(job["url"], headers=local.auth("alpha")).json()
    assert state["status"] == "queued" and state["result"] is None
    runs = local.client.get("/api/v1/series/news/main", headers=local.auth("alpha")).json()["runs"]
    assert runs[-1]["gate"] is None  # nothing was computed in the request
    local.drain()
    state = local.client.get(job["url"], headers=local.auth("alpha")).json()
    assert state["status"] == "done" and state["kind"] == "gate"
    verdict = state["result"]
    assert verdict["baseline"] == first and verdict["passed"] is False
    assert any("significant: p = " in check["detail"] for check in verdict["checks"])
    # another team's job does not exist for it
    assert local.client.get(job["url"], headers=local.auth("beta")).status_code == 404


def test_resamples_are_capped_by_the_organiser(local: Local) -> None:
    from bleucli.commands.server import edit_testset

    _, second = _series_runs(local)
    gate = f"/api/v1/submissions/{second}/gate"
    answer = local.client.post(gate, headers=local.auth("alpha"), json={"paired_bs_n": 20000})
    assert answer.status_code == 422
    assert answer.json()["error"] == (
        "paired_bs_n 20000 is above this test set's cap of 1000 resamples (the organisers set it "
        "with --max-resamples)"
    )
    for bad in ({"paired_bs_n": 0}, {"paired_bs_n": "many"}, {"alpha": 2}, {"tolerance": "x"},
                {"min_score": "BLEU=1"}, {"against": 3}):  # fmt: skip
        assert local.client.post(gate, headers=local.auth("alpha"), json=bad).status_code == 422, (
            bad
        )
    edit_testset(local.db, "news", {"max_resamples": 20000})
    assert (
        local.client.post(
            gate, headers=local.auth("alpha"), json={"paired_bs_n": 20000}
        ).status_code
        == 202
    )


def test_work_requests_are_limited_per_team(local: Local, monkeypatch) -> None:
    from bleucli.server.store import queue

    _, second = _series_runs(local)
    gate = f"/api/v1/submissions/{second}/gate"
    for _ in range(queue.MAX_PENDING_JOBS):
        assert (
            local.client.post(
                gate, headers=local.auth("alpha"), json={"paired_bs_n": 10}
            ).status_code
            == 202
        )
    busy = local.client.post(gate, headers=local.auth("alpha"), json={"paired_bs_n": 10})
    assert busy.status_code == 429 and busy.headers["retry-after"] == "5"
    assert "jobs are waiting for a worker" in busy.json()["error"]
    local.drain()
    monkeypatch.setitem(queue.WORK_PER_HOUR, "gate", 4)  # 3 made, one more allowed
    assert (
        local.client.post(gate, headers=local.auth("alpha"), json={"paired_bs_n": 10}).status_code
        == 202
    )
    hourly = local.client.post(gate, headers=local.auth("alpha"), json={"paired_bs_n": 10})
    assert (
        hourly.status_code == 429 and "4 gate requests in the last hour" in hourly.json()["error"]
    )
    assert 3000 < int(hourly.headers["retry-after"]) <= 3601
    monkeypatch.setitem(queue.WORK_PER_HOUR, "primary", 1)
    primary = f"/api/v1/submissions/{second}/primary"
    assert local.client.post(primary, headers=local.auth("alpha")).status_code == 200
    again = local.client.post(primary, headers=local.auth("alpha"))
    assert again.status_code == 429 and "primary requests" in again.json()["error"]
    # the limits are each team's own
    local.scored("beta", series="main")
    assert local.client.get("/api/v1/submissions", headers=local.auth("beta")).status_code == 200


def test_a_report_is_made_by_a_worker(local: Local) -> None:
    run = local.scored("alpha")["id"]
    local.sign_in("alpha")
    waiting = local.client.get(f"/submissions/{run}/report")
    assert waiting.status_code == 200 and "A worker is making the report" in waiting.text
    assert '<meta http-equiv="refresh" content="2">' in waiting.text
    assert local.client.get(f"/submissions/{run}/report").status_code == 200  # no second job
    assert local.drain() == 1
    report = local.client.get(f"/submissions/{run}/report")
    assert "bleucli analysis" in report.text
    assert f'<a href="/submissions/{run}">← submission {run}</a>' in report.text
    assert "pip install" not in report.text


def test_an_idempotency_key_makes_a_retry_safe(local: Local) -> None:
    key = {"Idempotency-Key": "3f1c9c52-upload-1"}
    first = local.upload("alpha", headers=key)
    again = local.upload("alpha", headers=key)
    assert first.status_code == again.status_code == 202
    assert again.json()["id"] == first.json()["id"] and again.json()["replayed"] is True
    assert again.headers["idempotent-replayed"] == "true" and first.json()["replayed"] is False
    other = local.upload("alpha", HYP2, headers=key)
    assert other.status_code == 422 and "was used for another upload" in other.json()["error"]
    assert local.upload("beta", headers=key).json()["id"] != first.json()["id"]  # per team
    assert len(local.client.get("/api/v1/submissions", headers=local.auth("alpha")).json()) == 1
    bad = local.upload("alpha", headers={"Idempotency-Key": "x" * 201})
    assert bad.status_code == 400


def test_the_queue_command_lists_waiting_and_failed_work(local: Local, monkeypatch) -> None:
    import json

    from bleucli.commands.server import queue
    from bleucli.server import scoring

    monkeypatch.setattr(scoring, "score", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("x")))
    local.upload("alpha", name="broken")
    local.drain()
    monkeypatch.undo()
    local.upload("beta", name="waiting")
    listing = queue(local.db, "text")
    assert "waiting" in listing and "queued" in listing and "beta" in listing
    assert "broken" in listing and "failed" in listing and "internal error while scoring" in listing
    rows = json.loads(queue(local.db, "json"))
    assert [(row["name"], row["status"]) for row in rows] == [
        ("waiting", "queued"),
        ("broken", "failed"),
    ]
    local.drain()
    assert "waiting" not in queue(local.db, "text")
