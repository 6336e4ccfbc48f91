"""A test set whose leaderboard ranks by WMT's AutoRank over its metrics (#52), in-process
on SQLite and PostgreSQL: the order and the numbers are what ``bleucli.autorank`` gives for
the scores the board shows; equal shown AutoRanks tie; the organiser can switch it with
edit-testset; the page says what it ranks by."""

from __future__ import annotations

from pathlib import Path

import pytest

import bleucli
from tests.server.conftest import HYP, HYP2, REF, in_process


@pytest.fixture
def ranked(db_url, tmp_path):
    with in_process(db_url, tmp_path, ("alpha", "beta", "gamma"), visibility="public",
                    limit_per_day=50, rank_by="autorank") as task:  # fmt: skip
        yield task


def test_the_board_ranks_by_autorank_over_the_shown_scores(ranked, tmp_path: Path) -> None:
    third = tmp_path / "third.de"
    third.write_text(Path(REF).read_text(encoding="utf-8").lower(), encoding="utf-8")
    for team, data in (("alpha", HYP2), ("beta", HYP), ("gamma", str(third))):
        ranked.scored(team, data)
    ranked.drain()
    board = ranked.client.get("/api/v1/leaderboards/news").json()
    assert board["ranked_by"] == "AutoRank"
    assert board["autorank"]["recipe"] == "wmt25"
    assert board["autorank"]["metrics"] == ["BLEU", "chrF2", "TER"]
    assert board["autorank"]["signature"].startswith(
        "AutoRank|recipe:wmt25|metrics:BLEU,chrF2,TER|turned:TER|sys:given"
    )
    rows = board["rows"]
    expected = bleucli.autorank({row["team"]: row["scores"] for row in rows})
    assert [row["team"] for row in rows] == [s.name for s in expected.systems]
    assert [row["autorank"] for row in rows] == [round(s.autorank, 1) for s in expected.systems]
    assert [row["rank"] for row in rows] == [1, 2, 3] and rows[0]["cluster"] == ""
    page = ranked.client.get("/testsets/news").text
    assert "<th>AutoRank</th>" in page and "Ranked by WMT's AutoRank (wmt25 recipe" in page
    facts = ranked.client.get("/api/v1/testsets/news").json()
    assert facts["rank_by"] == "autorank"


def test_the_organiser_switches_what_the_board_ranks_by(ranked) -> None:
    from bleucli.commands.server import edit_testset

    ranked.scored("alpha", HYP)
    ranked.scored("beta", HYP)  # the same output: equal AutoRanks are a tie
    board = ranked.client.get("/api/v1/leaderboards/news").json()
    assert [row["rank"] for row in board["rows"]] == [1, 1]
    assert [row["team"] for row in board["rows"]] == ["alpha", "beta"]
    edit_testset(ranked.db, "news", {"rank_by": "first-metric"})
    ranked.drain()
    board = ranked.client.get("/api/v1/leaderboards/news").json()
    assert board["ranked_by"] == "BLEU" and "autorank" not in board
