"""A database made before revision 0004 (test set versions that stored the scoring command's
arguments) upgrades in place: each version gets the scoring request those arguments meant,
and the upgraded server scores, ranks and reports exactly as before. The old database is
made by today's code taken back to revision 0003 (the column dropped, the arguments written
as the old code wrote them), on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.server.conftest import HYP, in_process

#: What add-testset stored before 0004: the metric options, exactly as typed.
OLD_ARGS = [
    "-m",
    "bleu",
    "chrf",
    "ter",
    "-tok",
    "intl",
    "-lc",
    "-cw",
    "2",
    "--chrf-word-order",
    "2",
]


def _alembic(url: str, action: str, revision: str) -> None:
    from alembic import command
    from alembic.config import Config

    import bleucli.server.db as db

    config = Config()
    config.set_main_option(
        "script_location", os.path.join(os.path.dirname(db.__file__), "migrations")
    )
    engine = db.connect(url)
    try:
        with db.writing(engine) as connection:
            config.attributes["connection"] = connection
            getattr(command, action)(config, revision)
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    ("pair", "args", "pinned"),
    [
        ("en-de", OLD_ARGS, {}),
        # before 0004 the pair never reached BLEU: a Chinese target was scored with 13a, and
        # keeps it, named, so its numbers do not move
        ("en-zh", ["-m", "bleu", "chrf"], {"tokenize": "13a"}),
    ],
)
def test_a_0003_database_upgrades_and_serves_the_same_results(
    db_url, tmp_path, pair, args, pinned
) -> None:
    from dataclasses import replace

    from bleucli.scoring import MetricRequest, ScoringRequest
    from bleucli.server import store
    from bleucli.server.db import connect, migrate

    with in_process(db_url, tmp_path, ("alpha",), *args, visibility="public", pair=pair) as task:
        old = replace(ScoringRequest.from_args(args), language_pair=None)
        engine = connect(db_url)
        with engine.begin() as connection:  # scored as the old code scored: no pair
            connection.execute(text("UPDATE testset_versions SET request = :r"), {"r": old.dumps()})
        engine.dispose()
        before = task.scored("alpha", HYP)
    scored = ScoringRequest.from_args(args)
    expected_request = replace(
        scored,
        language_pair=pair,
        metrics=tuple(
            MetricRequest(m.name, {**m.options, **pinned}) if m.name == "bleu" else m
            for m in scored.metrics
        ),
    )

    # back to the old schema, the version as the old code stored it
    _alembic(db_url, "downgrade", "0003")
    engine = connect(db_url)
    with engine.begin() as connection:
        columns = list(
            connection.execute(text("SELECT * FROM testset_versions WHERE 1 = 0")).keys()
        )
        assert "request" not in columns
        connection.execute(text("UPDATE testset_versions SET args = :a"), {"a": json.dumps(args)})
    assert migrate(engine) == "0006"
    testset = store.testset(engine, "news")
    assert testset is not None and testset.version_id is not None
    version = store.version(engine, testset.version_id)
    assert version.request == expected_request
    engine.dispose()

    # served again: the old submission reads the same, a new one scores the same
    from starlette.testclient import TestClient

    from bleucli.server.app import create_app
    from bleucli.server.worker import work

    app = create_app(db_url, max_upload=200_000)
    with TestClient(app, base_url="http://testserver") as client:
        headers = {"Authorization": f"Bearer {task.tokens['alpha']}"}
        again = client.get(f"/api/v1/submissions/{before['id']}", headers=headers).json()
        assert again["scores"] == before["scores"]
        answer = client.post(
            "/api/v1/submissions",
            headers=headers,
            data={"testset": "news", "name": "after"},
            files={"hypothesis": ("h.txt", Path(HYP).read_bytes())},
        )
        assert answer.status_code == 202, answer.text
        work(db_url, once=True)
        after = client.get(f"/api/v1/submissions/{answer.json()['id']}", headers=headers).json()
        assert after["status"] == "scored"
        assert after["scores"] == before["scores"]
        board = client.get("/api/v1/leaderboards/news").json()
        assert len(board["rows"]) >= 1
    app.state.engine.dispose()


@pytest.mark.parametrize("args", [["-m", "bleu"], ["-m", "chrf", "ter", "--ter-case-sensitive"]])
def test_the_upgrade_reads_arguments_with_the_metrics_declarations(args) -> None:
    from bleucli.scoring import ScoringRequest

    request = ScoringRequest.from_args(args)
    assert [m.name for m in request.metrics] == [a for a in args[1:] if not a.startswith("-")]
    assert ScoringRequest.from_json(json.loads(request.dumps())) == request


def test_a_new_version_scores_with_its_pairs_tokeniser(db_url, tmp_path) -> None:
    """Since 0004 the test set's pair reaches BLEU as ``-l`` does: a Chinese target is
    tokenised as Chinese, and the signature says so."""
    with in_process(db_url, tmp_path, ("alpha",), "-m", "bleu", visibility="public",
                    pair="en-zh") as task:  # fmt: skip
        state = task.scored("alpha", HYP)
    assert state["result"]["tok"] == "zh", state["result"]
