"""COMET where bleucli compares candidates: pairwise utilities (each text encoded once, the
head over the pairs) equal to scoring every pair, MBR choices, and TRL reward functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.comet_fixtures import cases


def groups():
    example = cases()["example"]
    sources = [s["src"] for s in example[:6]]
    candidates = [
        [example[i]["mt"], example[i]["ref"], example[(i + 1) % 30]["mt"]] for i in range(6)
    ]
    return sources, candidates


@pytest.mark.parametrize("kind", ["regression", "xcomet"])
def test_pairwise_equals_scoring_every_pair(toys, kind: str) -> None:
    from bleucli.batch import pairwise
    from bleucli.neural.load import load

    sources, candidates = groups()
    metric = "comet" if kind == "regression" else "xcomet"
    model_path = str(toys[kind].parents[1])
    matrices = pairwise(metric, candidates, candidates, sources=sources, model=model_path)
    assert matrices.shape == (6, 3, 3)
    model = load(model_path).model
    for b, group in enumerate(candidates):
        pairs = {
            "src": [sources[b]] * 9,
            "mt": [h for h in group for _ in group],
            "ref": [r for _ in group for r in group],
        }
        expected = model.predict(pairs, 4).scores
        assert matrices[b].ravel().tolist() == pytest.approx(expected, abs=1e-6)


def test_mbr_with_comet_picks_the_best_expected_utility(toys) -> None:
    from bleucli.batch import mbr, pairwise

    sources, candidates = groups()
    model_path = str(toys["regression"].parents[1])
    result = mbr(candidates, "comet", sources=sources, model=model_path)
    matrices = pairwise("comet", candidates, candidates, sources=sources, model=model_path)
    for b, matrix in enumerate(matrices):
        utilities = [(matrix[i].sum() - matrix[i, i]) / 2 for i in range(3)]
        assert result.best[b] == max(range(3), key=lambda i: (utilities[i], -i))
    assert "COMET" in result.signature and "model:regression@" in result.signature


def test_reward_function_reads_sources_and_loads_the_model_once(toys) -> None:
    from bleucli.neural import load as loader
    from bleucli.rewards import reward

    model_path = str(toys["regression"].parents[1])
    example = cases()["example"][:8]
    score = reward("comet", model=model_path, references="ref", sources="src", batch_size=4)
    loads = len(loader._LOADED)
    first = score(
        [s["mt"] for s in example], ref=[s["ref"] for s in example], src=[s["src"] for s in example]
    )
    again = score(
        [s["mt"] for s in example], ref=[s["ref"] for s in example], src=[s["src"] for s in example]
    )
    assert first == again and len(first) == 8
    assert len(loader._LOADED) <= loads + 1
    with pytest.raises(Exception, match="needs the source sentences: no 'src' column"):
        score(["x"], ref=["y"])


def test_mbr_command_with_comet(toys) -> None:
    import json

    from bleucli.batch import mbr
    from tests.conftest import EXAMPLES, run_cli

    files = [str(EXAMPLES / n) for n in ("hyp.de", "hyp2.de", "ref2.de")]
    model_path = str(toys["regression"].parents[1])
    result = run_cli(["mbr", "-i", *files, "--source", str(EXAMPLES / "src.en"), "-m", "comet",
                      "--comet-model", model_path, "-f", "json"])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    lines = [Path(f).read_text(encoding="utf-8").splitlines() for f in files]
    sources = (EXAMPLES / "src.en").read_text(encoding="utf-8").splitlines()
    expected = mbr([list(c) for c in zip(*lines)], "comet", sources=sources, model=model_path)
    assert [c["candidate"] - 1 for c in document["choices"]] == expected.best
    missing = run_cli(["mbr", "-i", *files, "-m", "comet", "--comet-model", model_path])
    assert missing.exit_code == 1 and "needs the source sentences" in missing.stderr
