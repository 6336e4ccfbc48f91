"""Neural segment scores in the statistical gate and in ``analyze``: the gate's p-value is
``--paired-bs``'s on the same two systems (the same segment scores, seeds and draws), and
analyze's buckets and bands are means and counts of the model's segment scores."""

from __future__ import annotations

import json
import re

import numpy as np

from bleucli.batch import sentence_scores
from tests.conftest import run_cli
from tests.neural_toy import ROOT

SRC, HYP, HYP2, REF = (
    str(ROOT / "examples" / n) for n in ("src.en", "hyp.de", "hyp2.de", "ref.de")
)


def lines(path: str) -> list[str]:
    return open(path, encoding="utf-8").read().splitlines()


def test_statistical_gate_on_comet_equals_paired_bootstrap(checked_toys, tmp_path) -> None:
    model = str(checked_toys["regression"].parents[1])
    common = ["--source", SRC, "-m", "comet", "--comet-model", model]
    for name, hyp in (("base", HYP2), ("current", HYP)):
        result = run_cli([REF, "-i", hyp, *common, "-f", "json", "-w", "4"])
        assert result.exit_code == 0, result.stderr
        (tmp_path / f"{name}.json").write_text(result.stdout, encoding="utf-8")
    gate = ["gate", str(tmp_path / "current.json"), "--baseline", str(tmp_path / "base.json"),
            "--baseline-output", HYP2, "--output", HYP, "--refs", REF]  # fmt: skip
    result = run_cli([*gate, "--source", SRC, "--comet-model", model])
    assert result.exit_code in (0, 3), result.stderr
    gate_p = re.search(r"p = ([0-9.]+)", result.stdout).group(1)
    paired = run_cli([REF, "-i", HYP2, HYP, *common, "--paired-bs", "-f", "text", "-w", "4"])
    assert paired.exit_code == 0, paired.stderr
    assert re.search(r"\(p = ([0-9.]+)\)", paired.stdout).group(1) == gate_p
    missing = run_cli(gate)
    assert missing.exit_code == 2
    assert "COMET reads the source sentences: give --source FILE" in missing.stderr


def test_analyze_buckets_and_bands_from_comet_segment_scores(checked_toys) -> None:
    model = str(checked_toys["regression"].parents[1])
    result = run_cli(["analyze", REF, "-i", HYP, HYP2, "-s", SRC, "-m", "comet",
                      "--comet-model", model, "--example-metric", "comet", "-f", "json"])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    tables = {t["key"]: t for t in json.loads(result.stdout)["tables"]}
    scores = [sentence_scores("comet", lines(h), [lines(REF)], sources=lines(SRC), model=model)
              for h in (HYP, HYP2)]  # fmt: skip
    from bleucli.analysis.compute import word_splitter

    split = word_splitter({}, None)[0]  # the BLEU tokeniser's words, as the buckets count
    words = [len(split(line)) for line in lines(REF)]
    for row in tables["ref-length"]["rows"]:
        chosen = [i for i, n in enumerate(words) if (n < 10) == (row[0] == "<10")]
        assert row[1] == len(chosen)
        assert np.allclose(row[2:], [np.mean(s[chosen]) for s in scores], rtol=0, atol=1e-12)
    bands = next(t for k, t in tables.items() if k.startswith("bands"))
    assert [sum(r[k] for r in bands["rows"]) for k in (1, 2)] == [30, 30]
    low, top = min(map(min, scores)), max(map(max, scores))
    assert bands["note"] == f"ten bands from {low:.3g} to {top:.3g}; the last includes {top:.3g}"


def _rank_rows(stdout: str, metric: str) -> tuple[list[tuple], list]:
    """``--rank -f json`` of one metric: (system, rank range, cluster) rows and the pairs'
    p-values."""
    table = json.loads(stdout)["metrics"][metric]
    rows = [(r["system"], tuple(r["rank_range"]), r["cluster"]) for r in table["systems"]]
    return rows, [(p["systems"], p["p_value"]) for p in table["pairs"]]


def test_rank_clusters_equal_the_stored_segment_scores(checked_toys, metricx, tmp_path) -> None:
    """``--rank`` with a neural metric clusters exactly as the same segment scores given
    through ``--segment-scores`` do (same seed and draws); MetricX, an error score, ranks
    as its negation does."""
    comet = str(checked_toys["regression"].parents[1])
    systems = [HYP, HYP2, str(ROOT / "examples" / "ref2.de")]
    for metric, option, model, sign in (("comet", "--comet-model", comet, 1.0),
                                        ("metricx24", "--metricx24-model", str(metricx), -1.0)):  # fmt: skip
        files = []
        for k, path in enumerate(systems):
            values = sentence_scores(metric, lines(path), [lines(REF)], sources=lines(SRC),
                                     model=model)  # fmt: skip
            target = tmp_path / f"{metric}{k}.txt"
            target.write_text("".join(f"{sign * float(v)!r}\n" for v in values), encoding="utf-8")
            files.append(str(target))
        own = run_cli([REF, "-i", *systems, "--source", SRC, "-m", metric, option, model,
                       "--rank", "-pbsn", "300", "-f", "json"])  # fmt: skip
        fed = run_cli([REF, "-i", *systems, "-m", "bleu", "--segment-scores",
                       "FED=" + ",".join(files), "--rank", "-pbsn", "300", "-f", "json"])  # fmt: skip
        assert own.exit_code == 0, own.stderr
        assert fed.exit_code == 0, fed.stderr
        name = "COMET" if metric == "comet" else "MetricX-24"
        assert _rank_rows(own.stdout, name) == _rank_rows(fed.stdout, "FED")
