"""``bleucli meta-eval -m comet cometkiwi metricx24``: the neural metrics' segment and
system scores computed by meta-eval itself give the same tables as the same segment scores
fed in through ``--segment-scores``; error rates (MetricX) are negated like TER."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bleucli.batch import sentence_scores
from tests.conftest import run_cli
from tests.neural_toy import ROOT

MTME = ROOT / "examples" / "meta-eval" / "wmt22-ru-en"
STATS = ["--stat", "sys-pearson", "sys-accuracy", "seg-pearson-item", "seg-kendall-none",
         "-k", "100", "--seed", "3", "-f", "json"]  # fmt: skip


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _rows(document: dict, metric: str) -> dict[str, object]:
    """Each statistic's value and rank for one metric (the name left out)."""
    found = {}
    for table in document["statistics"]:
        for row in table["rows"]:
            if row["metric"] == metric:
                found[table["statistic"]] = {k: v for k, v in row.items() if k != "metric"}
    return found


@pytest.mark.slow  # three models over 5 systems x 300 segments, twice (~200 CPU-seconds)
def test_neural_metrics_equal_their_segment_scores_fed_in(checked_toys, metricx, tmp_path) -> None:
    comet = str(checked_toys["regression"].parents[1])
    kiwi = str(checked_toys["referenceless"].parents[1])
    src = _lines(MTME / "sources" / "ru-en.txt")
    ref = _lines(MTME / "references" / "ru-en.refA.txt")
    outputs = MTME / "system-outputs" / "ru-en"
    systems = sorted(p.stem for p in outputs.glob("*.txt"))
    fed = []
    for label, metric, options, refs, sign in (
        ("COMETfed", "comet", {"model": comet}, [ref], 1.0),
        ("KIWIfed", "cometkiwi", {"model": kiwi}, [], 1.0),
        ("MXfed", "metricx24", {"model": str(metricx)}, [ref], -1.0),
    ):
        blocks = []
        for system in systems:
            hyps = _lines(outputs / f"{system}.txt")
            scores = sentence_scores(metric, hyps, refs, sources=src, **options)
            blocks += [f"{system}\t{sign * float(v)!r}\n" for v in scores]
        path = tmp_path / f"{label}.seg.score"
        path.write_text("".join(blocks), encoding="utf-8")
        fed += ["--segment-scores", f"{label}={path}"]
    result = run_cli(["meta-eval", "--mtme", str(MTME), "-l", "ru-en", "-m", "comet",
                      "cometkiwi", "metricx24", "--comet-model", comet, "--cometkiwi-model",
                      kiwi, "--metricx24-model", str(metricx), *fed, *STATS])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert {"COMET", "CometKiwi", "-MetricX-24"} <= set(document["metrics"])
    for own, given in (("COMET", "COMETfed"), ("CometKiwi", "KIWIfed"), ("-MetricX-24", "MXfed")):
        computed, expected = _rows(document, own), _rows(document, given)
        assert computed and computed.keys() == expected.keys()
        for statistic in computed:
            a, b = computed[statistic], expected[statistic]
            assert np.isclose(a["value"], b["value"], rtol=0, atol=1e-12), (own, statistic)
    signatures = document["metrics"]
    assert "model:regression@" in signatures["COMET"]
    assert signatures["-MetricX-24"].startswith("nrefs:1|model:metricx-toy@")


def test_neural_metric_without_source_is_one_line(checked_toys, tmp_path) -> None:
    plain = tmp_path / "human.tsv"
    plain.write_text("a\t1\t0.5\nb\t1\t0.1\n", encoding="utf-8")
    (tmp_path / "a.de").write_text("x\n", encoding="utf-8")
    (tmp_path / "b.de").write_text("y\n", encoding="utf-8")
    (tmp_path / "ref.de").write_text("z\n", encoding="utf-8")
    result = run_cli(["meta-eval", str(tmp_path / "ref.de"), "-i", str(tmp_path / "a.de"),
                      str(tmp_path / "b.de"), "--human", str(plain), "-m", "comet",
                      "--comet-model", str(checked_toys["regression"].parents[1])])  # fmt: skip
    assert result.exit_code != 0
    assert "needs the source sentences" in result.stderr
    assert "Traceback" not in result.stderr
    short = tmp_path / "src.en"
    short.write_text("", encoding="utf-8")
    result = run_cli(["meta-eval", str(tmp_path / "ref.de"), "-i", str(tmp_path / "a.de"),
                      str(tmp_path / "b.de"), "--human", str(plain), "-m", "comet",
                      "--source", str(short)])  # fmt: skip
    assert result.exit_code == 1 and f"{short}: 0 lines" in result.stderr
