"""--segment-scores: external segment metrics (COMET, human scores, ...) in every mode, read
from plain, TSV, JSON and JSONL files, with one-line errors naming file and line."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bleucli.metrics.base import Metric, Number, Score
from bleucli.metrics.segment import SegmentScores, read_scores
from bleucli.stats.paired import run_paired
from tests.conftest import EXAMPLES, run_cli

REF = str(EXAMPLES / "ref.de")
HYP = str(EXAMPLES / "hyp.de")
LINES = (EXAMPLES / "hyp.de").read_text(encoding="utf-8").splitlines()


class WordCount(Metric):
    """A metric whose segment scores are known: the hypothesis' word count, averaged."""

    name = "WC"
    integer_stats = False

    def preprocess(self, sentence: str) -> str:
        return sentence

    def reference_info(self, references: list[str]) -> None:
        return None

    def sentence_stats(self, hypothesis: str, ref_info) -> list[Number]:
        return [float(len(hypothesis.split())), 1]

    @property
    def stats_length(self) -> int:
        return 2

    def score_from_values(self, values: Sequence[Number]) -> Score:
        return Score("WC", float(values[0] / values[1]) if values[1] else 0.0)

    def signature_fields(self) -> dict:
        return {}


@settings(max_examples=15, deadline=None)
@given(
    test=st.sampled_from(["bs", "ar"]),
    systems=st.lists(
        st.lists(st.sampled_from(["a", "b c", "d e f", "", "g h i j"]), min_size=6, max_size=6),
        min_size=2,
        max_size=3,
    ),
)
def test_paired_tests_on_external_scores_equal_a_metric_with_those_scores(test, systems) -> None:
    """The paired tests on scores read from outside equal the same tests run on a metric
    that computes those very segment scores itself."""
    refs = [["x"] * 6]
    known = WordCount(references=refs)
    external = SegmentScores("WC")
    for hyps in systems:
        external.bind(hyps, [float(len(h.split())) for h in hyps])
    pairs = [(f"s{k}", hyps) for k, hyps in enumerate(systems)]
    expected, _ = run_paired(test, {"wc": known}, pairs, 50)
    got, _ = run_paired(test, {"wc": external}, pairs, 50)
    assert [(r.score, r.p_value, r.mean, r.ci) for r in got["WC"]] == [
        (r.score, r.p_value, r.mean, r.ci) for r in expected["WC"]
    ]


def _scores(n: int, offset: float = 0.0) -> list[str]:
    return [f"{(i * 37 % 100) / 100 + offset:.2f}" for i in range(n)]


def test_corpus_score_is_the_mean_with_hash_signature(write) -> None:
    values = _scores(len(LINES))
    path = write("a.comet", values)
    result = run_cli([REF, "-i", HYP, "--segment-scores", f"COMET={path}", "-m", "bleu"])
    assert result.exit_code == 0, result.stderr
    records = {r["name"]: r for r in json.loads(result.stdout)}
    mean = sum(float(v) for v in values) / len(values)
    assert records["COMET"]["score"] == round(mean, 4)  # at least 4 decimals by default
    assert records["COMET"]["agg"] == "mean" and len(records["COMET"]["scores"]) == 8
    changed = write("b.comet", values[:-1] + ["0.99"])
    other = json.loads(run_cli([REF, "-i", HYP, "--segment-scores", f"COMET={changed}"]).stdout)
    assert {r["name"]: r for r in other}["COMET"]["scores"] != records["COMET"]["scores"]
    same = json.loads(run_cli([REF, "-i", HYP, "--segment-scores", f"COMET={path}"]).stdout)
    assert {r["name"]: r for r in same}["COMET"]["signature"] == records["COMET"]["signature"]


@pytest.mark.parametrize("kind", ["tsv", "json", "json-objects", "jsonl", "scores-key"])
def test_file_layouts(write, kind) -> None:
    values = [float(v) for v in _scores(len(LINES))]
    if kind == "tsv":
        spec = write("s.tsv", ["id\tCOMET"] + [f"{i}\t{v}" for i, v in enumerate(values)])
        spec += ":COMET"
    elif kind == "json":
        spec = write("s.json", json.dumps(values))
    elif kind == "json-objects":
        spec = write("s.json", json.dumps([{"comet": v} for v in values])) + ":comet"
    elif kind == "scores-key":
        spec = write("s.json", json.dumps({"scores": values, "system_score": 0.5}))
    else:
        spec = write("s.jsonl", [json.dumps({"score": v}) for v in values])
    assert read_scores(spec) == values


def test_confidence_paired_sentence_level_and_tables(write) -> None:
    a = write("a.txt", _scores(len(LINES)))
    b = write("b.txt", _scores(len(LINES), 0.01))
    other = write("other.de", [line.replace("der", "die") for line in LINES])
    ci = run_cli([REF, "-i", HYP, "--segment-scores", f"Q={a}", "-ci", "-f", "text"])
    assert ci.exit_code == 0 and "Q|nrefs:1|bs:1000|seed:12345|agg:mean" in ci.stdout
    paired = run_cli(
        [REF, "-i", HYP, other, "--segment-scores", f"Q={a},{b}", "-pbs", "-f", "json"]
    )
    assert paired.exit_code == 0, paired.stderr
    rows = json.loads(paired.stdout)
    assert rows[1]["Q"]["p_value"] is not None and "BLEU" in rows[1]
    sentences = run_cli([REF, "-i", HYP, "--segment-scores", f"Q={a}", "-sl", "-f", "tsv"])
    assert sentences.exit_code == 0
    body = [line for line in sentences.stdout.splitlines() if not line.startswith("#")]
    assert body[0].split("\t") == ["line", "system", "BLEU", "Q"] or "Q" in body[0]
    column = body[0].split("\t").index("Q")
    assert [float(row.split("\t")[column]) for row in body[1:]] == pytest.approx(
        [float(v) for v in _scores(len(LINES))], abs=1e-4
    )
    for fmt in ("text", "markdown", "latex", "html", "tsv"):
        table = run_cli([REF, "-i", HYP, other, "--segment-scores", f"Q={a},{b}", "-f", fmt])
        assert table.exit_code == 0 and "agg:mean" in table.stdout


def test_report_and_gate_read_segment_results(write, tmp_path) -> None:
    a = write("a.txt", _scores(len(LINES)))
    b = write("b.txt", _scores(len(LINES), 0.05))
    base = tmp_path / "base.json"
    new = tmp_path / "new.json"
    base.write_text(run_cli([REF, "-i", HYP, "--segment-scores", f"COMET={a}"]).stdout)
    new.write_text(run_cli([REF, "-i", HYP, "--segment-scores", f"COMET={b}"]).stdout)
    gate = run_cli(["gate", str(new), "--baseline", str(base), "--min-score", "comet=0.3"])
    assert gate.exit_code == 0, gate.stdout + gate.stderr
    worse = run_cli(["gate", str(base), "--baseline", str(new)])
    assert worse.exit_code == 3 and "COMET" in worse.stdout
    report = run_cli(["report", str(base), str(new), "-f", "markdown"])
    assert report.exit_code == 0 and "COMET" in report.stdout


@pytest.mark.parametrize(
    "content, message",
    [
        (["0.5"] * 3, "3 segment scores but the system has"),
        (["0.5", "abc"] + ["0.5"] * 28, ":2: 'abc' is not a number"),
        (["nan"] + ["0.5"] * 29, ":1: 'nan' is not a finite number"),
        (["0.5"] * 29 + ["inf"], ":30: 'inf' is not a finite number"),
        ([], "empty file"),
    ],
)
def test_bad_score_files_are_one_line_errors(write, content, message) -> None:
    path = write("bad.txt", content)
    result = run_cli([REF, "-i", HYP, "--segment-scores", f"COMET={path}"])
    assert result.exit_code == 1
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "value, message, code",
    [
        ("COMET", "expected NAME=FILE", 2),
        ("bleu={a}", "cannot name a metric", 2),
        ("a|b={a}", "cannot name a metric", 2),
        ("COMET={a},{a}", "2 file(s) for 1 system(s)", 2),
        ("COMET={a}.tsv:nope", "no such file", 1),
    ],
)
def test_bad_options(write, value, message, code) -> None:
    a = write("a.txt", _scores(len(LINES)))
    result = run_cli([REF, "-i", HYP, "--segment-scores", value.format(a=a)])
    assert result.exit_code == code and message in result.stderr, result.stderr


def test_missing_tsv_column_and_json_field(write) -> None:
    tsv = write("s.tsv", ["a\tb", *["1\t2"] * len(LINES)])
    result = run_cli([REF, "-i", HYP, "--segment-scores", f"X={tsv}:c"])
    assert result.exit_code == 1 and "no column 'c'; columns: a, b" in result.stderr
    result = run_cli([REF, "-i", HYP, "--segment-scores", f"X={tsv}"])
    assert result.exit_code == 1 and "2 columns" in result.stderr
    js = write("s.json", json.dumps([{"x": 1}] * len(LINES)))
    result = run_cli([REF, "-i", HYP, "--segment-scores", f"X={js}"])
    assert result.exit_code == 1 and "item 1: no field 'score'" in result.stderr


def test_bleu_chrf_ter_results_unchanged_by_segment_metrics(write) -> None:
    a = write("a.txt", _scores(len(LINES)))
    plain = json.loads(run_cli([REF, "-i", HYP, "-m", "bleu", "chrf", "ter", "-w", "4"]).stdout)
    mixed = json.loads(
        run_cli(
            [REF, "-i", HYP, "-m", "bleu", "chrf", "ter", "-w", "4", "--segment-scores", f"C={a}"]
        ).stdout
    )
    assert [r for r in mixed if r["name"] != "C"] == plain
