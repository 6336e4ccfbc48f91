"""Blind means blind: before the reveal a participant learns nothing about a blind set finer
than the rounded corpus scores of its leaderboard. Two outputs that differ only in line 1
(the probe of a team testing a guess of one hidden reference line) look the same through
every page and answer it can reach; receipts commit to the references with a key that only
the reveal publishes, so a guessed reference file is never confirmed before it and the
receipt verifies in full after it; a split set ranks on its public part until the deadline
and on the rest after it. In-process, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bleucli.commands.verify import verify
from tests.server.conftest import HYP, HYP2, REF, Local, in_process


def _corpus(hyp: list[str], ref: list[str]) -> tuple[list[float], list[float]]:
    """(rounded, exact) BLEU, chrF and TER of ``hyp`` as the server's set scores them."""
    from bleucli import BLEU, CHRF, TER

    exact = [
        m.corpus_score(hyp, [ref]).score for m in (BLEU(), CHRF(), TER())
    ]  # the metrics' defaults are the set's (-m bleu chrf ter)
    return [round(x, 1) for x in exact], exact


@pytest.fixture(scope="module")
def probe(tmp_path_factory) -> tuple[Path, bytes, bytes]:
    """A 600-line set (the example 20 times) and two outputs that differ only in line 1,
    with the same rounded scores and different exact ones: what the leaderboard shows is the
    same, anything finer would tell them apart."""
    folder = tmp_path_factory.mktemp("probe")
    ref = Path(REF).read_text(encoding="utf-8").splitlines() * 20
    hyp = Path(HYP).read_text(encoding="utf-8").splitlines() * 20
    (folder / "ref.de").write_text("\n".join(ref) + "\n", encoding="utf-8")
    words = hyp[0].split()
    candidates = [
        " ".join(words[:-1]),  # one word fewer: hyp_len moves
        " ".join(words[1:]),
        " ".join([words[1], words[0], *words[2:]]),
        " ".join(words + [words[-1]]),
    ]
    base_rounded, base_exact = _corpus(hyp, ref)
    for line in candidates:
        other = [line, *hyp[1:]]
        rounded, exact = _corpus(other, ref)
        if rounded == base_rounded and exact != base_exact:
            encode = lambda lines: ("\n".join(lines) + "\n").encode("utf-8")  # noqa: E731
            return folder, encode(hyp), encode(other)
    raise AssertionError("no line-1 change keeps the rounded scores: the probe needs another one")


def _reachable(task: Local, team: str, submission: int) -> dict[str, object]:
    """Everything the team can read about its run and the set, by path."""
    client, headers = task.client, task.auth(team)
    out: dict[str, object] = {}
    for path in (
        f"/api/v1/submissions/{submission}", "/api/v1/submissions", "/api/v1/leaderboards/news",
        "/api/v1/testsets", "/api/v1/testsets/news",
    ):  # fmt: skip
        answer = client.get(path, headers=headers)
        assert answer.status_code == 200, (path, answer.text)
        out[path] = answer.json()
    return out


#: Fields that name or date a run, or hash its own file: they differ by construction.
OWN = {"id", "submission", "name", "team", "submitted", "finished", "issued_at",
       "hypothesis_sha256", "signature", "rank", "computed", "computed_epoch", "change"}  # fmt: skip


def _without_own(value):
    if isinstance(value, dict):
        return {k: _without_own(v) for k, v in value.items() if k not in OWN}
    if isinstance(value, list):
        return [_without_own(v) for v in value]
    return value


def test_a_line_one_probe_learns_nothing_finer_than_the_leaderboard(
    db_url, tmp_path, probe
) -> None:
    folder, plain, probed = probe
    with in_process(
        db_url, tmp_path, ("alpha", "beta"), refs=(str(folder / "ref.de"),), limit_per_day=50
    ) as task:
        first = task.scored("alpha", plain, series="main")
        second = task.scored("beta", probed, series="main")
        # the series, their CSV and trend, per-sentence scores, gates, reports and badges:
        # refused with one message, for either run
        for team, run in (("alpha", first["id"]), ("beta", second["id"])):
            for method, path in (
                ("GET", "/api/v1/series/news/main"), ("GET", "/api/v1/series/news/main?format=csv"),
                ("GET", "/testsets/news/series/main"), ("GET", f"/api/v1/submissions/{run}/segments"),
                ("POST", f"/api/v1/submissions/{run}/gate"), ("GET", f"/submissions/{run}/report"),
                ("GET", f"/submissions/{run}/segments.csv"), ("GET", "/badges/news/main.svg"),
            ):  # fmt: skip
                answer = task.client.request(method, path, headers=task.auth(team))
                assert answer.status_code == 403, (path, answer.status_code)
                assert "news is blind until the organisers reveal it" in answer.text
        seen = [
            _reachable(task, team, run["id"]) for team, run in (("alpha", first), ("beta", second))
        ]
        alpha, beta = seen
        # their own runs read the same: rounded scores and signatures only
        assert first["scores"] == second["scores"]
        assert all("verbose_score" not in entry for entry in first["result"])
        mine = "/api/v1/submissions/{}"
        assert _without_own(alpha[mine.format(first["id"])]) == _without_own(
            beta[mine.format(second["id"])]
        )
        # the board ranks both alike: same scores, intervals, rank ranges, cluster
        rows = {
            row["team"]: _without_own(row) for row in alpha["/api/v1/leaderboards/news"]["rows"]
        }
        assert rows["alpha"] == rows["beta"]
        assert alpha["/api/v1/testsets/news"]["versions"][0]["key"] is None  # not revealed
        # the receipts commit to the references without exposing a hash that checks a guess
        for run in (first, second):
            receipt = run["receipt"]
            assert receipt["bleucli_receipt"] == 2 and "references_sha256" not in receipt
            assert receipt["result"] == run["result"]


def test_a_guessed_reference_is_not_confirmed_before_the_reveal(blind: Local, tmp_path) -> None:
    from bleucli.commands.server import reveal

    run = blind.scored("alpha")
    path = tmp_path / "receipt.json"
    path.write_text(json.dumps(run["receipt"]))
    # the right guess: the references and every score stay unchecked before the reveal
    text, ok = verify(str(path), None, None, HYP, (REF,), None, None)
    assert not ok
    assert "SKIP references: committed with a keyed hash until the organisers reveal news" in text
    assert "SKIP scores" in text and "PASS" + " references" not in text
    assert text.splitlines()[-1].startswith("incomplete: not checked:")
    assert [line for line in text.splitlines() if not line.startswith("SKIP")] == [
        text.splitlines()[0] if text.startswith("PASS") else text.splitlines()[1],
        text.splitlines()[-1],
    ]  # the hypothesis' hash is the one check made
    assert "PASS hypothesis" in text
    import hashlib

    plain = hashlib.sha256(Path(REF).read_bytes()).hexdigest()
    assert plain not in json.dumps(run["receipt"])
    # after the reveal the key is published and the receipt verifies in full
    reveal(blind.db, "news", force=True)
    facts = blind.client.get("/api/v1/testsets/news").json()
    key = facts["versions"][0]["key"]
    assert key and facts["revealed"]
    text, ok = verify(str(path), None, None, HYP, (REF,), None, None, key)
    assert "PASS references: keyed hash (HMAC-SHA256) of 1 file(s) match" in text
    assert "PASS BLEU recomputed" in text and "SKIP signature" in text
    text, ok = verify(str(path), None, None, HYP, (HYP2,), None, None, key)  # a wrong guess
    assert not ok and "FAIL references: keyed hash (HMAC-SHA256) of 1 file(s) differ" in text


def test_a_split_set_ranks_its_public_part_until_the_deadline(db_url, tmp_path) -> None:
    from datetime import datetime, timedelta, timezone

    from bleucli.commands.server import reveal
    from bleucli.server import store
    from bleucli.server.blind import public_lines, rest_lines
    from bleucli.server.db import connect

    with in_process(
        db_url, tmp_path, ("alpha", "beta"), public_fraction=0.4, limit_per_day=50
    ) as task:
        first = task.scored("alpha")
        task.scored("beta", HYP2)
        board = task.client.get("/api/v1/leaderboards/news").json()
        assert first["part"] == "public" and list(first["parts"]) == ["public"]
        assert board["part"] == "public"
        receipt = first["receipt"]
        assert receipt["lines"] == {"part": "public", "fraction": 0.4}
        assert receipt["result"] == first["result"]
        # the deadline passes: the rest is scored and ranked, the public part beside it
        past = datetime.now(timezone.utc) - timedelta(minutes=1)
        engine = connect(task.db)
        store.edit_testset(engine, "news", {"closes_at": past})  # no re-ranking of its own
        engine.dispose()
        assert task.client.get("/api/v1/leaderboards/news").json()["updating"]
        task.drain()
        board = task.client.get("/api/v1/leaderboards/news").json()
        assert board["part"] == "rest" and not board["updating"]
        assert all("public_scores" in row for row in board["rows"])
        after = task.client.get(
            f"/api/v1/submissions/{first['id']}", headers=task.auth("alpha")
        ).json()
        assert after["part"] == "rest" and set(after["parts"]) == {"public", "rest"}
        # after the reveal the published key rebuilds the parts: their scores are the
        # scoring command's on those lines alone
        reveal(task.db, "news", force=False)  # closed already: no --force needed
        key = task.client.get("/api/v1/testsets/news").json()["versions"][0]["key"]
        ref = Path(REF).read_text(encoding="utf-8").splitlines()
        hyp = Path(HYP).read_text(encoding="utf-8").splitlines()
        public, rest = public_lines(key, 30, 0.4), rest_lines(key, 30, 0.4)
        assert len(public) == 12 and sorted(public + rest) == list(range(30))
        for part, lines in (("public", public), ("rest", rest)):
            rounded, _ = _corpus([hyp[k] for k in lines], [ref[k] for k in lines])
            assert list(after["parts"][part].values()) == rounded, part
        path = tmp_path / "receipt.json"
        path.write_text(json.dumps(receipt))
        text, ok = verify(str(path), None, None, HYP, (REF,), None, None, key)
        assert "PASS BLEU recomputed" in text and "(the public part's lines)" in text
        assert "FAIL" not in text
