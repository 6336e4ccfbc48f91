"""A neural test set on the evaluation server: add-testset checks and pins the model,
workers score COMET beside BLEU with the set's sources (the model loaded once per worker),
the leaderboard ranks by COMET's segment scores, receipts carry the neural signature and
``verify`` recomputes it where the model is (``--model DIR``) and says why where it is not.
In-process, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

for module in ("torch", "transformers", "tokenizers", "sentencepiece", "yaml"):
    pytest.importorskip(
        module, reason=f"the neural extra (pip install 'bleucli[neural]'): {module}"
    )

from bleucli.commands.verify import verify  # noqa: E402
from tests.server.conftest import EXAMPLES, HYP, HYP2, REF, Local, in_process  # noqa: E402

SRC = str(EXAMPLES / "src.en")


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    """A toy regression COMET checkpoint's folder (tests/neural_toy.py)."""
    from tests.neural_toy import build

    return build(tmp_path_factory.mktemp("toy-comet"), "regression").parents[1]


@pytest.fixture
def neural(db_url, tmp_path, toy) -> Local:
    with in_process(db_url, tmp_path, ("alpha", "beta"), "-m", "comet", "bleu",
                    "--comet-model", str(toy), source=SRC, visibility="public",
                    limit_per_day=50) as task:  # fmt: skip
        yield task


def _lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def test_workers_score_comet_with_the_sets_sources_and_receipts_verify(
    neural: Local, toy: Path, tmp_path
) -> None:
    from bleucli import COMET
    from bleucli.neural.load import file_hash
    from bleucli.server import store
    from bleucli.server.db import connect

    # the stored request pins the weights: NAME@SHA256 of the checkpoint add-testset loaded
    engine = connect(neural.db)
    version = store.version(engine, store.testset(engine, "news").version_id)
    engine.dispose()
    digest = file_hash(toy / "checkpoints" / "model.ckpt")
    assert version.request.metrics[0].options["model"] == f"{toy}@{digest}"
    alpha = neural.scored("alpha", HYP)
    beta = neural.scored("beta", HYP2)
    expected = {}
    for name, path in (("alpha", HYP), ("beta", HYP2)):
        score = COMET(model=str(toy)).corpus_score(_lines(path), [_lines(REF)], sources=_lines(SRC))
        expected[name] = round(score.score, 4)  # COMET's own four decimals
    for name, run in (("alpha", alpha), ("beta", beta)):
        results = {entry["name"]: entry for entry in run["result"]}
        assert results["COMET"]["score"] == expected[name]
        assert results["COMET"]["signature"].startswith(f"nrefs:1|model:{toy.name}@{digest[:8]}|")
    neural.drain()  # any leaderboard refresh still queued
    board = neural.client.get("/api/v1/leaderboards/news").json()
    assert board["updating"] is False
    ranked = {row["team"]: row for row in board["rows"]}
    assert set(ranked) == {"alpha", "beta"}
    assert board["ranked_by"] == "COMET"
    shown = [row["scores"]["COMET"] for row in board["rows"]]
    assert shown == sorted(shown, reverse=True) == sorted(expected.values(), reverse=True)
    # the receipt verifies with the model's folder; without the source or the model it says why
    path = tmp_path / "receipt.json"
    path.write_text(json.dumps(alpha["receipt"]))
    text, ok = verify(
        str(path), None, None, HYP, (REF,), None, None, source=SRC, models=(str(toy),)
    )
    assert "PASS COMET recomputed" in text and "PASS BLEU recomputed" in text, text
    text, ok = verify(str(path), None, None, HYP, (REF,), None, None)
    assert not ok and "SKIP COMET: give the source sentences (--source FILE)" in text
    assert "PASS BLEU recomputed" in text
    text, ok = verify(str(path), None, None, HYP, (REF,), None, None, source=SRC)
    assert not ok and f"SKIP COMET: the model {toy.name}@{digest[:8]} is not here" in text
    assert f"bleucli models download {toy.name}" in text


def test_add_testset_refuses_a_neural_set_it_could_not_score(db_url, tmp_path, toy) -> None:
    from bleucli.commands.server import init
    from bleucli.errors import BleucliError
    from tests.server.conftest import local_testset

    init(db_url, None)
    with pytest.raises(BleucliError, match="give the test set's --source FILE"):
        local_testset(db_url, "-m", "comet", "--comet-model", str(toy))
    with pytest.raises(BleucliError, match="no COMET checkpoint here"):
        local_testset(db_url, "-m", "comet", "--comet-model", str(tmp_path / "nothing"), source=SRC)


def test_a_gpu_worker_is_refused_where_there_is_none(tmp_path) -> None:
    from tests.server.conftest import bleucli

    db = f"sqlite:///{tmp_path / 'gpu.db'}"
    bleucli("server", "init", "--db", db)
    proc = bleucli("server", "worker", "--db", db, "--once", "--device", "cuda:0", check=False)
    assert proc.returncode == 1, proc.stderr
    assert (
        proc.stderr.strip()
        == "bleucli: error: device 'cuda:0': no CUDA device is available here; use cpu"
    )


@pytest.fixture
def blind_neural(db_url, tmp_path, toy) -> Local:
    with in_process(db_url, tmp_path, ("alpha", "beta", "gamma"), "-m", "comet", "bleu",
                    "--comet-model", str(toy), source=SRC, limit_per_day=50) as task:  # fmt: skip
        yield task


def _encoded_rows(monkeypatch) -> list[int]:
    """Rows the COMET encoder runs on, call by call."""
    from bleucli.neural.models import SentenceEmbeddingModel

    rows: list[int] = []
    original = SentenceEmbeddingModel._encode_ids

    def counting(self, sequences, length=None):
        rows.append(len(sequences))
        return original(self, sequences, length)

    monkeypatch.setattr(SentenceEmbeddingModel, "_encode_ids", counting)
    return rows


def test_a_blind_runs_work_does_not_depend_on_what_it_shares_with_the_references(
    blind_neural: Local, monkeypatch
) -> None:
    """The timing probe: a run whose lines equal the hidden references, one with half of
    them equal, one with none, and one equal to another team's run each encode every one
    of their lines (the shared cache used to skip the lines it held: 0.5 s with all lines
    equal, 11 s with none, and a team counted its exact matches by polling its status)."""
    references = _lines(REF)
    hypotheses = _lines(HYP)
    blind_neural.scored("gamma", HYP)  # the set's sources and references are encoded now
    rows = _encoded_rows(monkeypatch)
    probes = {
        "all equal": references,
        "half equal": [r if k % 2 else h for k, (r, h) in enumerate(zip(references, hypotheses))],
        "another team's": hypotheses,
    }
    encoded = {}
    for team, (what, lines) in zip(("alpha", "beta", "alpha"), probes.items()):
        rows.clear()
        blind_neural.scored(team, ("\n".join(lines) + "\n").encode())
        encoded[what] = sum(rows)
    for what, lines in probes.items():
        assert encoded[what] == len(set(lines)), (what, encoded)


def test_a_comet_board_shows_four_decimals_and_ties_as_ties(blind_neural: Local) -> None:
    runs = {"alpha": HYP, "beta": HYP2, "gamma": REF}
    expected = {}
    for team, path in runs.items():
        state = blind_neural.scored(team, path)
        comet = next(e for e in state["result"] if e["name"] == "COMET")
        expected[team] = comet["score"]
        assert comet["score"] == round(comet["score"], 4) and comet["score"] != round(
            comet["score"], 1
        )
        receipt = next(e for e in state["receipt"]["result"] if e["name"] == "COMET")
        assert receipt["score"] == comet["score"]
    blind_neural.drain()
    board = blind_neural.client.get("/api/v1/leaderboards/news").json()
    assert board["ranked_by"] == "COMET" and board["decimals"]["COMET"] == 4
    shown = {row["team"]: row["scores"]["COMET"] for row in board["rows"]}
    assert shown == expected
    order = [row["team"] for row in board["rows"]]
    assert order == sorted(shown, key=lambda t: (-shown[t], t))
    page = blind_neural.client.get("/testsets/news").text
    for value in shown.values():
        assert f"{value:.4f}" in page
    assert "-0.0" not in page  # the run equal to the references (BLEU 100) shows no -0.0


def test_neural_work_is_bounded_in_tokens_and_time(db_url, tmp_path, toy, monkeypatch) -> None:
    import time as clock

    from bleucli.neural.models import SentenceEmbeddingModel

    released = []
    monkeypatch.setattr("bleucli.neural.runtime.release_memory", lambda: released.append(1))
    with in_process(db_url, tmp_path, ("alpha",), "-m", "comet", "bleu", "--comet-model",
                    str(toy), source=SRC, limit_per_day=50, max_neural_tokens=200,
                    max_scoring_seconds=1) as task:  # fmt: skip
        long_lines = ["wort " * 60] * len(_lines(REF))
        answer = task.upload("alpha", ("\n".join(long_lines) + "\n").encode())
        task.drain()
        state = task.client.get(
            f"/api/v1/submissions/{answer.json()['id']}", headers=task.auth("alpha")
        ).json()
        assert state["status"] == "failed"
        assert "COMET tokens, over this test set's limit of 200 per run" in state["error"]
        # within the tokens, but slower than the set allows (an encoder made slow)
        from bleucli.commands.server import edit_testset

        edit_testset(task.db, "news", {"max_neural_tokens": 100_000})
        original = SentenceEmbeddingModel._encode_ids

        def slow(self, sequences, length=None):
            clock.sleep(0.3)
            return original(self, sequences, length)

        monkeypatch.setattr(SentenceEmbeddingModel, "_encode_ids", slow)
        answer = task.upload("alpha", HYP2)
        task.drain()
        state = task.client.get(
            f"/api/v1/submissions/{answer.json()['id']}", headers=task.auth("alpha")
        ).json()
        assert state["status"] == "failed", state
        assert "took longer than the 1 s a run may take" in state["error"]
        assert released  # memory given back after neural runs
        monkeypatch.setattr(SentenceEmbeddingModel, "_encode_ids", original)
        assert task.scored("alpha", HYP)["status"] == "scored"  # the worker went on
