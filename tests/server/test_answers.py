"""What every answer is: a 4xx with one message for bad input (never a 500), the security
headers on every answer (a 500 included), ``Cache-Control: no-store`` wherever a receipt or a
team's own data appears, CSV that a spreadsheet cannot run, badges a README can show, and the
pages a participant uses. In-process, SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import re

from tests.server.conftest import HYP, HYP2, Local, in_process

SECURITY = (
    "content-security-policy",
    "x-content-type-options",
    "x-frame-options",
    "referrer-policy",
)


def test_bad_input_is_a_4xx_never_a_500(local: Local) -> None:
    from bleucli.commands.server import admin_token

    admin = {"Authorization": f"Bearer {admin_token(local.db).splitlines()[-1]}"}
    local.scored("alpha", series="main")
    cases = [
        (local.client.get("/api/v1/submissions/99999999999999999999999", headers=local.auth("alpha")),
         404, "no submission 99999999999999999999999"),
        (local.client.get("/api/v1/jobs/1e5", headers=local.auth("alpha")), 404, "no job 1e5"),
        (local.client.post("/api/v1/submissions", headers={**local.auth("alpha"), "Content-Type": "application/json"},
                           content=b'{"testset": "news", "name": "x", "hypothesis": "\\ud800"}'),
         422, "the hypothesis is not valid Unicode: character 1 is a lone surrogate ('\\ud800')"),
        (local.client.post("/api/v1/submissions", headers={**local.auth("alpha"), "Content-Type": "application/json"},
                           content=b"[" * 100_000), 400, "malformed JSON: nested too deeply"),
        (local.client.get("/api/v1/series/news/main?team=Nobody", headers=admin), 404, "no team named 'Nobody'"),
        (local.client.get("/submissions/99999999999999999999999", headers=local.auth("alpha")), 404, "no submission"),
        (local.client.post("/api/v1/submissions/1/gate", headers={**local.auth("alpha"), "Content-Type": "application/json"},
                           content=b"[" * 10_000), 400, "nested too deeply"),
        # a gate's options are a few fields: a larger body is refused before it is read
        (local.client.post("/api/v1/submissions/1/gate", headers={**local.auth("alpha"), "Content-Type": "application/json"},
                           content=b"[" * 100_000), 413, "larger than the server's limit of 16384 bytes"),
    ]  # fmt: skip
    for answer, status, message in cases:
        assert answer.status_code == status, (message, answer.status_code, answer.text[:300])
        text = (
            answer.json()["error"]
            if answer.headers["content-type"] == "application/json"
            else answer.text
        )
        assert message in text, text[:300]
        assert all(header in answer.headers for header in SECURITY)


def test_a_500_carries_the_security_headers_and_no_traceback(local: Local, monkeypatch) -> None:
    from bleucli.server import store

    def broken(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(store, "testsets", broken)
    for path in ("/api/v1/testsets", "/"):
        answer = local.client.get(path)
        assert answer.status_code == 500
        assert "internal error; the organisers can find it in the server's log" in answer.text
        assert "secret internals" not in answer.text and "Traceback" not in answer.text
        assert all(header in answer.headers for header in SECURITY)
        assert answer.headers["cache-control"] == "no-store"


def test_receipts_and_a_teams_pages_are_never_cached(local: Local) -> None:
    run = local.scored("alpha")["id"]
    local.sign_in("alpha")
    for path in (f"/api/v1/submissions/{run}", "/api/v1/submissions", f"/submissions/{run}",
                 f"/submissions/{run}/receipt.json", "/", "/signin", "/testsets/news"):  # fmt: skip
        answer = local.client.get(path, headers=local.auth("alpha"))
        assert answer.status_code == 200, path
        assert answer.headers["cache-control"] == "no-store", path
    receipt = local.client.get(f"/submissions/{run}/receipt.json")
    assert receipt.headers["content-disposition"] == f'attachment; filename="receipt-{run}.json"'
    assert receipt.json()["submission"] == run
    assert local.client.get("/api/v1/leaderboards/news").headers["cache-control"] == "no-cache"


def test_csv_cells_cannot_be_formulas(local: Local) -> None:
    evil = {"label": ['note==HYPERLINK("http://evil.example","x")', "cmd=@SUM(1+1)", "neg=-3"]}
    local.scored("alpha", series="main", name="+run", **evil)
    text = local.client.get("/api/v1/series/news/main?format=csv", headers=local.auth("alpha")).text
    row = next(csv.DictReader(io.StringIO(text)))
    assert row["name"] == "'+run"
    assert row["label:note"] == '\'=HYPERLINK("http://evil.example","x")'
    assert row["label:cmd"] == "'@SUM(1+1)" and row["label:neg"] == "'-3"
    assert float(row["BLEU"]) == 59.9  # numbers stay numbers
    segments = local.client.get("/submissions/1/segments.csv", headers=local.auth("alpha"))
    rows = list(csv.reader(io.StringIO(segments.text)))
    assert rows[0] == ["line", "BLEU", "chrF2", "TER"] and len(rows) == 31
    assert segments.headers["content-disposition"] == 'attachment; filename="segments-1.csv"'


def test_badges_of_public_sets_need_no_token(db_url, tmp_path) -> None:
    with in_process(db_url, tmp_path, ("alpha",), visibility="public") as task:
        task.scored("alpha", series="main")
        badge = task.client.get("/badges/news/main.svg?team=alpha")
        assert badge.status_code == 200 and "BLEU 59.9" in badge.text
        assert task.client.get("/badges/news/main.svg?team=nobody").status_code == 404
        assert task.client.get("/badges/news/main.svg").status_code == 404


def test_no_badge_of_a_blind_set_before_its_reveal(blind: Local) -> None:
    from bleucli.commands.server import reveal

    blind.scored("alpha", series="main")
    refused = blind.client.get("/badges/news/main.svg?team=alpha")
    assert (
        refused.status_code == 403
        and "news is blind until the organisers reveal it" in refused.text
    )
    reveal(blind.db, "news", force=True)
    assert blind.client.get("/badges/news/main.svg?team=alpha").status_code == 200


def test_the_pages_a_participant_uses(local: Local) -> None:
    first = local.scored("alpha", series="main", label=["commit=a1"])["id"]
    local.scored("alpha", HYP2, series="main")
    local.sign_in("alpha")
    page = local.client.get(f"/submissions/{first}").text
    assert f'href="/submissions/{first}/receipt.json"' in page
    assert f'action="/submissions/{first}/primary"' in page
    assert f'href="/submissions/{first}/segments.csv"' in page
    assert "counted by the leaderboard" in page and "(version 1)" in page
    board = local.client.get("/testsets/news").text
    assert re.search(r">39\.7 ± \d+\.\d<", board)  # the primary (the latest) with its 95% interval
    assert "Ranks runs scored on version 1" in board
    submit = local.client.get("/submit").text
    assert '<option value="news">' in submit
    trend = local.client.get("/testsets/news/series/main").text
    assert f'text-anchor="middle">{first}</text>' in trend  # run ids along the x axis


def test_a_signature_change_says_what_changed(local: Local) -> None:
    from bleucli.server.trend import signature_change
    from tests.server.conftest import local_testset

    assert (
        signature_change("nrefs:1|tok:13a|version:x", "nrefs:1|tok:intl|version:x")
        == "tok:13a → tok:intl"
    )
    local.scored("alpha", series="main")
    local_testset(local.db, "-tok", "intl")
    local.scored("alpha", series="main")
    trend = local.client.get("/testsets/news/series/main", headers=local.auth("alpha")).text
    assert "new signature from run 3: tok:13a → tok:intl" in trend
    baseline = local.client.get("/api/v1/series/news/main", headers=local.auth("alpha")).json()
    assert len(baseline["runs"]) == 2


def test_only_the_current_baseline_is_marked(local: Local) -> None:
    ids = [local.scored("alpha", path, series="main")["id"] for path in (HYP, HYP, HYP)]
    for run in ids:
        job = local.client.post(f"/api/v1/submissions/{run}/gate", headers=local.auth("alpha"),
                                json={"promote": True, "paired_bs_n": 50})  # fmt: skip
        assert job.status_code == 202
        local.drain()
    page = local.client.get("/testsets/news/series/main", headers=local.auth("alpha")).text
    assert page.count("(baseline)") == 1 and f"{ids[-1]}</a> (baseline)" in page
