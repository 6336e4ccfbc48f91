"""A metric plugin on the evaluation server: a test set scored with the example plugin
(character error rate, lower is better) as its first metric scores submissions exactly as
the library does, ranks them by it (lowest first, the label and interval its own), and a
badge shows it; an add-testset naming a plugin's flags is checked by its declarations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.plugins import install_example
from tests.server.conftest import HYP, HYP2, REF, in_process


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    import bleucli.metrics as registry

    monkeypatch.syspath_prepend(str(install_example(tmp_path / "site")))
    monkeypatch.setattr(registry, "_PLUGINS", None)
    yield
    sys.modules.pop("bleucli_cer", None)


def lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def test_a_test_set_ranked_by_a_plugin_metric(plugin, db_url, tmp_path) -> None:
    from bleucli import ScoringRequest, score

    args = ("-m", "cer", "bleu", "--cer-spaces", "drop")
    with in_process(db_url, tmp_path, ("alpha", "beta"), *args, visibility="public") as task:
        worse = task.scored("alpha", HYP2, series="main")
        better = task.scored("beta", HYP)
        task.drain()
        board = task.client.get("/api/v1/leaderboards/news").json()
        badge = task.client.get("/badges/news/main.svg?team=alpha")
    request = ScoringRequest.from_args(args)
    for state, path in ((worse, HYP2), (better, HYP)):
        assert state["scores"] == score(request, lines(path), [lines(REF)]).scores
    assert board["ranked_by"] == "CER"
    assert [row["team"] for row in board["rows"]] == ["beta", "alpha"]  # lower CER first
    assert set(board["rows"][0]["ci"]) == {"CER"}
    assert board["signatures"]["CER"].startswith("nrefs:1|lc:no|spaces:drop|")
    assert badge.status_code == 200 and f"CER {worse['scores']['CER']}" in badge.text


def test_a_plugins_option_is_checked_when_the_set_is_added(plugin, db_url, tmp_path) -> None:
    from bleucli.commands.server import init
    from bleucli.errors import UsageError
    from tests.server.conftest import local_testset

    init(db_url, None)
    with pytest.raises(UsageError, match="--cer-spaces must be one of keep, drop"):
        local_testset(db_url, "-m", "cer", "--cer-spaces", "both")
