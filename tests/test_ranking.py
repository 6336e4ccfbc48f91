"""--rank: every number against a brute-force computation (plain loops) on small generated
cases: Holm-corrected p-values, bootstrap rank ranges, significance clusters, and the
all-pairs p-values against the paired bootstrap test that matches SacreBLEU's."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bleucli
from bleucli.metrics.segment import SegmentScores
from bleucli.stats.bootstrap import draw_resamples
from bleucli.stats.paired import estimate_ci, paired_bootstrap
from bleucli.stats.ranking import ALPHA, clusters, holm, rank_systems
from tests.conftest import EXAMPLES, run_cli


def holm_brute_force(p_values: list[float]) -> list[float]:
    """The smallest level at which Holm's step-down procedure rejects each hypothesis:
    try every candidate level, run the procedure, keep the first level that rejects."""
    m = len(p_values)
    levels = sorted({min(1.0, (m - k) * p) for p in p_values for k in range(m)} | {1.0})
    adjusted = []
    for i in range(m):
        for level in levels:
            order = sorted(range(m), key=lambda j: p_values[j])
            rejected = set()
            for k, j in enumerate(order):
                if p_values[j] * (m - k) <= level:
                    rejected.add(j)
                else:
                    break
            if i in rejected:
                adjusted.append(level)
                break
        else:
            adjusted.append(1.0)
    return adjusted


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.floats(0.0, 1.0) | st.sampled_from([0.001, 0.01, 0.05, 0.5]), min_size=1, max_size=10
    )
)
def test_holm_equals_the_step_down_procedure(p_values) -> None:
    got = holm(p_values)
    expected = holm_brute_force(p_values)
    assert got == pytest.approx(expected, abs=1e-12)


def test_holm_worked_example() -> None:
    # m = 4: 0.01 * 4 = 0.04, 0.02 * 3 = 0.06, 0.03 * 2 = 0.06, 0.5 * 1 = 0.5
    assert holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])


def clusters_brute_force(order: list[str], better) -> list[int]:
    boundaries = [
        r
        for r in range(len(order) - 1)
        if all(better(order[r], order[q]) for q in range(r + 1, len(order)))
    ]
    return [1 + sum(1 for b in boundaries if b < position) for position in range(len(order))]


@given(st.integers(1, 7), st.data())
def test_clusters_follow_the_definition(n, data) -> None:
    names = [f"s{k}" for k in range(n)]
    relation = {(a, b): data.draw(st.booleans()) for a in names for b in names if a != b}
    better = relation.__getitem__ if n > 1 else (lambda a, b: False)
    assert clusters(names, lambda a, b: better((a, b))) == clusters_brute_force(
        names, lambda a, b: better((a, b))
    )


def test_clusters_worked_example() -> None:
    # a beats everyone; b beats c but not d; c beats d: {a} {b c} ... b does not beat d,
    # so no boundary below b; c beats d: boundary below c
    wins = {("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("c", "d")}
    assert clusters(["a", "b", "c", "d"], lambda x, y: (x, y) in wins) == [1, 2, 2, 3]


def _segment_metric(scores: list[list[float]]):
    systems = [[f"line {i}" for i in range(len(scores[0]))] for _ in scores]
    metric = SegmentScores("HUMAN")
    for hyps, values in zip(systems, scores):
        metric.bind(hyps, values)
    return metric, systems


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_rank_systems_against_brute_force(data) -> None:
    n_systems = data.draw(st.integers(2, 5))
    n_lines = data.draw(st.integers(2, 25))
    n_samples = data.draw(st.integers(40, 120))
    grid = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]) | st.floats(0, 1, width=32)
    scores = [
        data.draw(st.lists(grid, min_size=n_lines, max_size=n_lines)) for _ in range(n_systems)
    ]
    higher = data.draw(st.booleans())
    metric, systems = _segment_metric(scores)
    rows = [metric.per_sentence_stats(hyps, None) for hyps in systems]
    names = [f"sys{k}" for k in range(n_systems)]
    ranking = rank_systems(metric, rows, names, "bs", n_samples, 12345, higher)

    # brute force: resample by loops, score each resample, rank by counting
    indices = draw_resamples(n_lines, n_samples, 12345).indices
    import numpy as np

    resampled = []
    for system_rows in rows:
        stats = np.array(system_rows, dtype="float32")
        per_sample = []
        for drawn in indices:
            total = np.float32(0), np.float32(0)
            for i in drawn:  # float32 sums in draw order, as SacreBLEU sums them
                total = total[0] + stats[i][0], total[1] + stats[i][1]
            per_sample.append(metric.score_from_values(list(total)).score)
        resampled.append(per_sample)
    by_name = {s.name: s for s in ranking.systems}
    drop = n_samples // 40
    for k, name in enumerate(names):
        ranks = []
        for s in range(n_samples):
            mine = resampled[k][s]
            ranks.append(
                1
                + sum(
                    1
                    for j in range(n_systems)
                    if (resampled[j][s] > mine if higher else resampled[j][s] < mine)
                )
            )
        ranks.sort()
        assert (by_name[name].rank_low, by_name[name].rank_high) == (
            ranks[drop],
            ranks[n_samples - 1 - drop],
        )
        mean, ci = estimate_ci(np.array(resampled[k]))
        assert by_name[name].mean == pytest.approx(float(mean), rel=1e-6)
        assert by_name[name].ci == pytest.approx(float(ci), rel=1e-6, abs=1e-9)
    # every pair: the paired bootstrap test (SacreBLEU's p-value), then Holm
    pairs = [(i, j) for i in range(n_systems) for j in range(i + 1, n_systems)]
    raw = [paired_bootstrap(metric, rows[i], rows[j], n_samples, 12345).p_value for i, j in pairs]
    corrected = holm_brute_force(raw)
    for (i, j), p, adjusted in zip(pairs, raw, corrected):
        key = tuple(sorted((names[i], names[j])))
        assert ranking.p_values[key] == pytest.approx(p)
        assert ranking.corrected[key] == pytest.approx(adjusted)
    # order by score, ties in input order; clusters from the corrected tests
    totals = [sum(values) / len(values) for values in scores]
    expected_order = sorted(
        range(n_systems), key=lambda k: (-totals[k] if higher else totals[k], k)
    )
    assert [s.name for s in ranking.systems] == [names[k] for k in expected_order]

    def better(a: str, b: str) -> bool:
        sa, sb = by_name[a].score, by_name[b].score
        key = tuple(sorted((a, b)))
        return (sa > sb if higher else sa < sb) and corrected[
            pairs.index((names.index(key[0]), names.index(key[1])))
        ] < ALPHA

    order = [s.name for s in ranking.systems]
    assert [s.cluster for s in ranking.systems] == clusters_brute_force(order, better)
    assert [s.position for s in ranking.systems] == list(range(1, n_systems + 1))


def test_cli_rank_json_text_and_signature(write, monkeypatch) -> None:
    monkeypatch.setenv("BLEUCLI_SEED", "7")
    ref = str(EXAMPLES / "ref.de")
    hyp = str(EXAMPLES / "hyp.de")
    lines = (EXAMPLES / "hyp.de").read_text(encoding="utf-8").splitlines()
    worse = write("worse.de", [" ".join(line.split()[::-1]) for line in lines])
    args = [ref, "-i", hyp, worse, ref, "-m", "bleu", "ter", "--rank", "-pbsn", "200"]
    result = run_cli([*args, "-f", "json"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["test"] == "bs" and document["samples"] == 200
    assert document["correction"] == "holm"
    bleu = document["metrics"]["BLEU"]
    assert "bs:200" in bleu["signature"] and "seed:7" in bleu["signature"]
    assert "corr:holm" in bleu["signature"]
    assert [s["system"] for s in bleu["systems"]] == [ref, hyp, worse]  # the reference wins
    assert document["metrics"]["TER"]["higher_is_better"] is False
    assert [s["system"] for s in document["metrics"]["TER"]["systems"]][0] == ref
    assert len(bleu["pairs"]) == 3
    # the same seed gives the same table; the API gives the same numbers
    assert run_cli([*args, "-f", "json"]).stdout == result.stdout
    for fmt in ("text", "markdown", "latex", "html", "tsv"):
        rendered = run_cli([*args, "-f", fmt])
        assert rendered.exit_code == 0, rendered.stderr
        text = re.sub(r"<[^>]+>", "", rendered.stdout)  # HTML: header words in spans
        assert "corr:holm" in text and "Rank range" in text


def test_rank_errors() -> None:
    ref, hyp = str(EXAMPLES / "ref.de"), str(EXAMPLES / "hyp.de")
    one = run_cli([ref, "-i", hyp, "--rank"])
    assert one.exit_code == 1 and "several systems" in one.stderr
    both = run_cli([ref, "-i", hyp, ref, "--rank", "-pbs", "-par"])
    assert both.exit_code == 1 and "choose one" in both.stderr


def test_rank_with_approximate_randomisation_uses_that_test() -> None:
    from bleucli.stats.paired import paired_randomization

    metric, systems = _segment_metric(
        [[0.1, 0.9, 0.4, 0.3], [0.2, 0.8, 0.9, 0.9], [0.0, 0.1, 0.2, 0.3]]
    )
    rows = [metric.per_sentence_stats(h, None) for h in systems]
    ranking = rank_systems(metric, rows, ["a", "b", "c"], "ar", 100, 3)
    assert ranking.p_values["a", "b"] == pytest.approx(
        paired_randomization(metric, rows[0], rows[1], 100, 3).p_value
    )
    assert bleucli.BLEU().higher_is_better and not bleucli.TER().higher_is_better


def test_report_and_gate_read_the_ranking_json(tmp_path) -> None:
    ref = str(EXAMPLES / "ref.de")
    args = [
        ref,
        "-i",
        f"a:{EXAMPLES / 'hyp.de'}",
        f"b:{EXAMPLES / 'hyp2.de'}",
        "--rank",
        "-m",
        "bleu",
        "-pbsn",
        "60",
        "-f",
        "json",
    ]
    path = tmp_path / "rank.json"
    path.write_text(run_cli(args).stdout, encoding="utf-8")
    report = run_cli(["report", str(path), "-f", "tsv"])
    assert report.exit_code == 0, report.stderr
    assert any(line.split("\t")[0].strip() == "rank: a" for line in report.stdout.splitlines())
    gate = run_cli(["gate", str(path), "--baseline", str(path)])
    assert gate.exit_code == 0 and "a: BLEU" in gate.stdout


def test_modes_that_cannot_combine_are_refused() -> None:
    ref, hyp = str(EXAMPLES / "ref.de"), str(EXAMPLES / "hyp.de")
    result = run_cli([ref, "-i", hyp, ref, "--rank", "-sl"])
    assert result.exit_code == 1 and "separate modes" in result.stderr
    result = run_cli([ref, "-i", hyp, ref, "--docids", str(EXAMPLES / "docids.txt"), "-pbs"])
    assert result.exit_code == 1 and "separate modes" in result.stderr
