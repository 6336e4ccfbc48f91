"""bleucli's COMET classes against unbabel-comet 2.2.7 on the same checkpoints: segment
scores to 1e-6 (in fp32 on CPU they come out equal), the system score (the mean), the
per-input scores and xCOMET's error spans (text, severity, offsets, confidence)."""

from __future__ import annotations

import pytest

from scripts.comet_fixtures import cases, for_kind

TOLERANCE = 1e-6


def predict(path, kind: str, samples: list[dict[str, str]], batch_size: int = 8):
    from bleucli.neural.load import load

    model = load(str(path.parents[1])).model
    columns = {key: [s[key] for s in samples] for key in samples[0]}
    return model.predict(columns, batch_size=batch_size)


@pytest.mark.parametrize("case", ["example", "hard"])
@pytest.mark.parametrize("kind", ["regression", "referenceless", "unified", "xcomet"])
def test_scores_equal_unbabel_comet(checked_toys, reference, kind: str, case: str) -> None:
    expected = reference["checkpoints"][kind]["predictions"][case]
    got = predict(checked_toys[kind], kind, for_kind(kind, cases()[case]))
    assert len(got.scores) == len(expected["scores"])
    for ours, theirs in zip(got.scores, expected["scores"]):
        assert abs(ours - theirs) <= TOLERANCE, (kind, case, ours, theirs)
    assert abs(got.system_score - expected["system_score"]) <= TOLERANCE
    for key in ("src_scores", "ref_scores", "unified_scores", "mqm_scores"):
        if key in expected:
            assert got.metadata[key] == pytest.approx(expected[key], abs=TOLERANCE), key


def test_error_spans_equal_unbabel_comet(checked_toys, reference) -> None:
    expected = reference["checkpoints"]["xcomet"]["predictions"]
    total = 0
    for case in ("example", "hard"):
        got = predict(checked_toys["xcomet"], "xcomet", cases()[case])
        assert got.spans is not None
        for ours, theirs in zip(got.spans, expected[case]["error_spans"], strict=True):
            assert [(s["text"], s["severity"], s["start"], s["end"]) for s in ours] == [
                (s["text"], s["severity"], s["start"], s["end"]) for s in theirs
            ]
            for a, b in zip(ours, theirs):
                assert abs(a["confidence"] - b["confidence"]) <= TOLERANCE
            total += len(theirs)
    assert total > 5  # the toy is drawn so that it tags errors: the comparison means something


def test_every_sample_scored_in_input_order(checked_toys) -> None:
    """Samples are sorted by length for batching and put back: scoring a reversed list
    gives the reversed scores."""
    samples = cases()["example"]
    forward = predict(checked_toys["regression"], "regression", samples).scores
    backward = predict(checked_toys["regression"], "regression", samples[::-1]).scores
    assert backward[::-1] == pytest.approx(forward, abs=TOLERANCE)
    assert len(set(forward)) > 20
