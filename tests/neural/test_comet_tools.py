"""unbabel-comet's own tools on the toy regression checkpoint (fixtures from
scripts/comet_tool_fixtures.py): ``comet-compare``'s t-tests and bootstrap win ratios
recomputed by :func:`bleucli.stats.cometcompare.comet_compare` from the tool's segment scores,
and ``comet-mbr``'s choices made by ``bleucli mbr -m comet``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bleucli.stats.cometcompare import comet_compare, paired_t_test
from scripts.comet_tool_fixtures import OUTPUT, lines, mbr_inputs
from tests.conftest import run_cli
from tests.neural_toy import fingerprint


@pytest.fixture(scope="module")
def tools(checked_toys) -> dict:
    document = json.loads(OUTPUT.read_text(encoding="utf-8"))
    assert document["checkpoint"]["fingerprint"] == fingerprint(checked_toys["regression"]), (
        "the toy checkpoint differs from the fixtures': rerun scripts/comet_tool_fixtures.py"
    )
    return document


def test_comet_compare_statistics_from_its_segment_scores(tools) -> None:
    compare = tools["compare"]
    settings = compare["settings"]
    ours = comet_compare(compare["segment_scores"], compare["systems"], settings["num_splits"],
                         settings["sample_ratio"], settings["seed"])  # fmt: skip
    assert [(r.x, r.y) for r in ours] == [(r["x"], r["y"]) for r in compare["results"]]
    for mine, theirs in zip(ours, compare["results"]):
        # SciPy computes comet-compare's t on float32 scores in float32 arithmetic; bleucli
        # in float64 (docs/neural.md): the 7th digit may differ
        assert mine.p_value == pytest.approx(theirs["p_value"], rel=1e-6)
        assert mine.t_statistic == pytest.approx(theirs["t_statistic"], rel=1e-6)
        boot = theirs["bootstrap"]
        assert (mine.ties, mine.x_wins, mine.y_wins) == (
            boot["ties (%)"],
            boot["x_wins (%)"],
            boot["y_wins (%)"],
        )
        assert (mine.x_mean, mine.y_mean) == (boot["x-mean"], boot["y-mean"])


def test_comet_compare_segment_scores_are_half_precision(checked_toys, tools) -> None:
    """comet-compare runs the model in fp16 (``model.half()``); bleucli's fp32 scores of
    the same checkpoint differ from it by that rounding, documented in docs/neural.md."""
    import bleucli

    compare = tools["compare"]
    metric = bleucli.COMET(model=str(checked_toys["regression"].parents[1]))
    src, ref = lines("src.en"), lines("ref.de")
    gaps = []
    for name, theirs in zip(compare["systems"], compare["segment_scores"]):
        metric.corpus_score(lines(name), [ref], sources=src)
        gaps.append(np.max(np.abs(np.array(metric.last_prediction.scores) - np.array(theirs))))
    assert 0 < max(gaps) < 5e-3


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3)), min_size=2, max_size=300),
    st.sampled_from(["two-sided", "less", "greater"]),
)
def test_paired_t_test_equals_scipy_in_float64(pairs, alternative) -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    x, y = [a for a, _ in pairs], [b for _, b in pairs]
    t, p = paired_t_test(x, y, alternative)
    with np.errstate(all="ignore"):
        expected = scipy_stats.ttest_rel(np.array(x), np.array(y), alternative=alternative)
    if not np.isfinite(expected.statistic) or np.std(np.subtract(x, y)) < 1e-9:
        return  # a (near-)constant difference: SciPy's nan/inf conventions, checked below
    assert t == pytest.approx(float(expected.statistic), rel=1e-9)
    assert p == pytest.approx(float(expected.pvalue), rel=1e-9, abs=1e-300)


def test_paired_t_test_edge_cases() -> None:
    assert (
        paired_t_test([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])[1] != paired_t_test([1, 2, 3], [0, 1, 2])[1]
    )
    t, p = paired_t_test([1.0, 2.0, 3.0], [0.0, 1.0, 2.0])  # a constant difference
    assert t == float("inf") and p == 0.0
    with pytest.raises(Exception, match="alternative"):
        paired_t_test([1, 2], [2, 3], "bigger")


def test_bleucli_mbr_chooses_as_comet_mbr(checked_toys, tools, tmp_path) -> None:
    from bleucli.batch import mbr

    inputs = mbr_inputs()
    model = str(checked_toys["regression"].parents[1])
    result = mbr(inputs["candidates"], "comet", sources=inputs["sources"], model=model)
    assert result.best == tools["mbr"]["best"]
    assert np.allclose(np.array(result.utilities, dtype=float), tools["mbr"]["utilities"],
                       rtol=0, atol=2e-6)  # fmt: skip
    # the command line: one file per candidate position, as bleucli mbr takes them
    files = []
    for k in range(4):
        path = tmp_path / f"cand{k}.de"
        path.write_text(
            "".join(group[k] + "\n" for group in inputs["candidates"]), encoding="utf-8"
        )
        files.append(str(path))
    source = tmp_path / "src.en"
    source.write_text("".join(s + "\n" for s in inputs["sources"]), encoding="utf-8")
    out = run_cli(["mbr", "-i", *files, "--source", str(source), "-m", "comet", "--comet-model",
                   model, "-f", "json"])  # fmt: skip
    assert out.exit_code == 0, out.stderr
    choices = json.loads(out.stdout)["choices"]
    assert [c["candidate"] - 1 for c in choices] == tools["mbr"]["best"]
