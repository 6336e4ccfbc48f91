"""``bleucli autorank``: WMT25's published AutoRank tables recomputed to the printed digit
from the published segment scores (two pairs shipped in tests/data; all four of
../shared/data/autorank when it is there), through the command line and the Python API;
the recipes against a plain numpy oracle on random data; WMT24's recipe on made system
scores; outputs scored here; systems added to a published pair; rank ranges reproducible
for a seed and any thread count; one-line refusals."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bleucli
from tests.conftest import EXAMPLES, ROOT, run_cli, run_subprocess

LOCAL = ROOT / "tests" / "data" / "autorank" / "wmt25"
SHARED = ROOT.parent / "shared" / "data" / "autorank" / "wmt25"
REF, HYP, HYP2, REF2 = (str(EXAMPLES / n) for n in ("ref.de", "hyp.de", "hyp2.de", "ref2.de"))


def published(folder: Path) -> dict:
    return json.loads((folder / "published_tables.json").read_text(encoding="utf-8"))["pairs"]


def cases() -> list:
    found = [pytest.param(LOCAL, pair, id=f"tests-{pair}") for pair in published(LOCAL)]
    if SHARED.is_dir():
        found += [pytest.param(SHARED, pair, id=f"shared-{pair}") for pair in published(SHARED)]
    return found


def assert_as_printed(document: dict, spec: dict) -> None:
    """Every published row: AutoRank and each metric's system score at the printed digits
    (rows matched by file stem: display names differ from file names)."""
    rows = {row["system"]: row for row in document["systems"]}
    assert [m["name"] for m in document["metrics"]] == spec["metrics"]
    assert len(rows) == len(spec["rows"])
    for expected in spec["rows"]:
        got = rows[expected["file"]]
        assert round(got["autorank"], spec["decimals"]["AutoRank"]) == expected["autorank"], (
            expected["system"]
        )
        for metric, value in expected["scores"].items():
            assert round(got["scores"][metric], spec["decimals"][metric]) == value, (
                expected["system"],
                metric,
            )


@pytest.mark.parametrize(("folder", "pair"), cases())
def test_published_tables_through_the_command_line(folder: Path, pair: str) -> None:
    result = run_cli(
        ["autorank", "--wmt-scores", str(folder / "automatic_scores"), "-l", pair, "-f", "json"]
    )
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert_as_printed(document, published(folder)[pair])
    assert document["signature"].startswith(f"AutoRank|recipe:wmt25|pair:{pair}|metrics:")


@pytest.mark.parametrize(("folder", "pair"), cases())
def test_published_tables_through_the_python_api(folder: Path, pair: str) -> None:
    result = bleucli.autorank(wmt_scores=str(folder / "automatic_scores"), pair=pair)
    document = {
        "metrics": [{"name": m.name} for m in result.metrics],
        "systems": [{"system": s.name, "autorank": s.autorank, "scores": s.scores}
                    for s in result.systems],
    }  # fmt: skip
    assert_as_printed(document, published(folder)[pair])


def test_the_traps_change_the_numbers() -> None:
    """What the recipe's details are worth: nulls counted as 0, CometKiwi-XL kept for a pair
    without references, or MetricX turned again each break the published table."""
    scores = str(LOCAL / "automatic_scores")
    spec = published(LOCAL)["en-kn_IN"]
    printed = {row["file"]: row["autorank"] for row in spec["rows"]}

    def mismatches(result) -> int:
        return sum(round(s.autorank, 1) != printed[s.name] for s in result.systems)

    assert mismatches(bleucli.autorank(wmt_scores=scores, pair="en-kn_IN")) == 0
    every = ["CometKiwi-XL", *spec["metrics"]]
    assert mismatches(bleucli.autorank(wmt_scores=scores, pair="en-kn_IN", metrics=every)) > 0
    turned = bleucli.autorank(wmt_scores=scores, pair="en-kn_IN",
                              lower_is_better=["MetricX-24-Hybrid-XL"])  # fmt: skip
    assert mismatches(turned) > 0
    # EuroLLM-9B has 3 null GEMBA-ESA-CMDA scores: the mean leaves them out
    result = bleucli.autorank(wmt_scores=scores, pair="en-kn_IN")
    euro = next(s for s in result.systems if s.name == "EuroLLM-9B")
    row = next(r for r in spec["rows"] if r["file"] == "EuroLLM-9B")
    assert round(euro.scores["GEMBA-ESA-CMDA"], 1) == row["scores"]["GEMBA-ESA-CMDA"]


# -- the recipes against a plain oracle -------------------------------------------------------


def wmt25_zbar(x: np.ndarray) -> list[float]:
    """The published formula's averaged z, one metric and one system at a time."""
    zbar = []
    for s in range(x.shape[1]):
        zs = []
        for m in range(x.shape[0]):
            column = x[m]
            spread = max(1e-12, np.percentile(column, 100) - np.percentile(column, 25))
            zs.append((column[s] - np.median(column)) / spread)
        zbar.append(sum(zs) / len(zs))
    return zbar


def wmt25_oracle(x: np.ndarray) -> list[float]:
    zbar = wmt25_zbar(x)
    top, bottom = max(zbar), min(zbar)
    if top == bottom:
        return [1.0] * len(zbar)
    return [1 + (top - z) / (top - bottom) * (len(zbar) - 1) for z in zbar]


scores_strategy = st.integers(2, 9).flatmap(
    lambda n: st.lists(
        st.lists(st.floats(-100, 100, allow_nan=False), min_size=n, max_size=n),
        min_size=1,
        max_size=5,
    )
)


@given(scores_strategy)
def test_wmt25_recipe_equals_the_formula(rows) -> None:
    from bleucli.autoranking.recipes import RECIPES

    x = np.array(rows)
    got = RECIPES["wmt25"].combine(x)
    assert np.allclose(got, wmt25_oracle(x), rtol=0, atol=1e-6)
    if np.ptp(wmt25_zbar(x)) > 1e-9:
        assert got.min() == pytest.approx(1.0) and got.max() == pytest.approx(x.shape[1])


def test_wmt24_recipe_on_made_system_scores(tmp_path: Path) -> None:
    """WMT24: each metric on a scale from 1 (best) to N + 1 (worst), averaged; MetricX-23
    is an error rate (lower is better), CometKiwi higher is better."""
    lines = [
        "A\tMetricX-23-XL\t2.0", "A\tCometKiwi-DA-XL\t0.80",
        "B\tMetricX-23-XL\t4.0", "B\tCometKiwi-DA-XL\t0.70",
        "C\tMetricX-23-XL\t6.0", "C\tCometKiwi-DA-XL\t0.75",
    ]  # fmt: skip
    path = tmp_path / "scores.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_cli(["autorank", "--system-scores", str(path), "--recipe", "wmt24", "-f", "json"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    got = {row["system"]: row["autorank"] for row in document["systems"]}
    # MetricX: A best (1), C worst (1 + 3 = 4), B halfway (2.5); CometKiwi: A 1, B 4, C 2.5
    assert got == pytest.approx({"A": 1.0, "B": 3.25, "C": 3.25})
    assert document["metrics"][0] == {"name": "MetricX-23-XL", "higher_is_better": False,
                                      "turned": True, "origin": "system-scores"}  # fmt: skip
    assert document["signature"].startswith("AutoRank|recipe:wmt24|metrics:MetricX-23-XL,")


# -- outputs scored here ------------------------------------------------------------------------


def test_outputs_scored_here_equal_their_segment_scores_fed_in(tmp_path: Path) -> None:
    """-m chrf ter over -i outputs gives what the same segment scores give as external
    scores (chrF and TER enter as the mean of their segment scores, as WMT25's chrF++)."""
    from bleucli.batch import sentence_scores

    refs = [Path(REF).read_text(encoding="utf-8").splitlines()]
    systems = {"A": HYP, "B": HYP2, "C": REF2}
    own = run_cli(["autorank", REF, "-i", *(f"{k}={v}" for k, v in systems.items()), "-m", "chrf", "ter",
                   "-cw", "2", "-f", "json"])  # fmt: skip
    assert own.exit_code == 0, own.stderr
    fed = []
    for metric, options, label in (("chrf", {"word_order": 2}, "chrF2++"), ("ter", {}, "TER")):
        files = []
        for name, path in systems.items():
            lines = Path(path).read_text(encoding="utf-8").splitlines()
            scores = sentence_scores(metric, lines, refs, **options)
            target = tmp_path / f"{label}.{name}.txt"
            target.write_text("".join(f"{float(v)!r}\n" for v in scores), encoding="utf-8")
            files.append(str(target))
        fed += ["--segment-scores", f"{label}={','.join(files)}"]
    external = run_cli(["autorank", "-i", *(f"{k}={v}" for k, v in systems.items()), *fed,
                        "-f", "json"])  # fmt: skip
    assert external.exit_code == 0, external.stderr
    a, b = json.loads(own.stdout), json.loads(external.stdout)
    assert [(s["system"], s["autorank"], s["scores"]) for s in a["systems"]] == [
        (s["system"], s["autorank"], s["scores"]) for s in b["systems"]
    ]
    assert a["metrics"][0]["signature"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:2")
    assert b["metrics"][1] == {"name": "TER", "higher_is_better": False, "turned": True,
                               "origin": "segment-scores"}  # fmt: skip


# -- a new system among published ones ------------------------------------------------------


@pytest.fixture
def chrf_pair(tmp_path: Path) -> dict:
    """A WMT-layout pair scored by chrF++ alone (as WMT25's en-bho_IN): three systems' segment
    scores computed by bleucli, in documents of 10 lines."""
    from bleucli.batch import sentence_scores

    refs = [Path(REF).read_text(encoding="utf-8").splitlines()]
    folder = tmp_path / "automatic_scores"
    folder.mkdir()
    for name, path in (("A", HYP), ("B", HYP2), ("C", REF2)):
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        scores = sentence_scores("chrf", lines, refs, word_order=2).tolist()
        with gzip.open(folder / f"{name}.jsonl.gz", "wt", encoding="utf-8") as handle:
            for start in range(0, len(scores), 10):
                handle.write(json.dumps({
                    "language_pair": "en-bho_IN", "domain": "news",
                    "document_id": f"doc{start // 10}",
                    "metric_scores": {"chrF++": scores[start : start + 10],
                                      "GEMBA-ESA-CMDA": [50.0] * len(scores[start : start + 10])},
                }) + "\n")  # fmt: skip
    new = tmp_path / "new.de"
    new.write_text(
        "".join(line.lower() + "\n" for line in Path(HYP).read_text(encoding="utf-8").splitlines()),
        encoding="utf-8",
    )
    return {"folder": str(folder), "new": str(new), "refs": refs}


def test_an_added_system_is_scored_and_placed_and_the_others_move(chrf_pair) -> None:
    from bleucli.batch import sentence_scores

    base = ["autorank", "--wmt-scores", chrf_pair["folder"], "-l", "en-bho_IN", "-f", "json"]
    alone = json.loads(run_cli(base).stdout)
    assert [m["name"] for m in alone["metrics"]] == ["chrF++"]  # the recipe's choice here
    result = run_cli([*base[:1], REF, *base[1:], "--add", f"New={chrf_pair['new']}"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    rows = {row["system"]: row for row in document["systems"]}
    lines = Path(chrf_pair["new"]).read_text(encoding="utf-8").splitlines()
    expected = sentence_scores("chrf", lines, chrf_pair["refs"], word_order=2).mean()
    assert rows["New"]["scores"]["chrF++"] == pytest.approx(expected, abs=1e-12)
    assert rows["New"]["added"] is True and "moved" not in rows["New"]
    before = {row["system"]: row["autorank"] for row in alone["systems"]}
    for name in ("A", "B", "C"):
        assert rows[name]["autorank_without_added"] == pytest.approx(before[name])
        assert rows[name]["moved"] == pytest.approx(rows[name]["autorank"] - before[name])
    assert any(abs(rows[name]["moved"]) > 0 for name in ("A", "B", "C"))
    text = run_cli([*base[:1], REF, *base[1:-2], "--add", f"New={chrf_pair['new']}"]).stdout
    assert (
        "New (added)" in text and "Without added (moved)" in text and "AutoRank is relative" in text
    )


def test_an_added_system_needs_the_scores_bleucli_cannot_compute(chrf_pair, tmp_path) -> None:
    base = ["autorank", REF, "--wmt-scores", chrf_pair["folder"], "-l", "en-bho_IN",
            "-m", "chrF++", "GEMBA-ESA-CMDA", "--add", f"New={chrf_pair['new']}"]  # fmt: skip
    refused = run_cli(base)
    assert refused.exit_code == 1 and refused.stdout == ""
    assert "bleucli cannot compute GEMBA-ESA-CMDA: give the added systems' segment scores with " \
        "--segment-scores GEMBA-ESA-CMDA=FILE" in refused.stderr  # fmt: skip
    judge = tmp_path / "judge.txt"
    judge.write_text("60\n" * 30, encoding="utf-8")
    given_scores = run_cli([*base, "--segment-scores", f"GEMBA-ESA-CMDA={judge}", "-f", "json"])
    assert given_scores.exit_code == 0, given_scores.stderr
    rows = {r["system"]: r for r in json.loads(given_scores.stdout)["systems"]}
    assert rows["New"]["scores"]["GEMBA-ESA-CMDA"] == 60.0 and rows["New"]["added"] is True
    assert [m["name"] for m in json.loads(given_scores.stdout)["metrics"]] == [
        "chrF++", "GEMBA-ESA-CMDA"
    ]  # fmt: skip


# -- rank ranges ------------------------------------------------------------------------------


def test_rank_ranges_are_reproducible_for_a_seed_and_any_thread_count() -> None:
    # the default resamples: enough for Holm-corrected clusters (40 x 496 pairs)
    base = ["autorank", "--wmt-scores", str(LOCAL / "automatic_scores"), "-l", "en-sr_Cyrl_RS",
            "-ci", "-f", "json"]  # fmt: skip
    one = run_cli([*base, "-j", "1"])
    four = run_cli([*base, "-j", "4"])
    assert one.exit_code == 0, one.stderr
    assert one.stdout == four.stdout
    document = json.loads(one.stdout)
    assert document["resamples"] == 20000 and document["seed"] == "12345"
    assert "|bs:20000|unit:doc|seed:12345|" in document["signature"]
    for row in document["systems"]:
        low, high = row["rank_range"]
        assert 1 <= low <= high <= len(document["systems"])
    clusters = [row["cluster"] for row in document["systems"]]
    assert clusters == sorted(clusters) and clusters[0] == 1
    assert clusters[-1] > 1  # the worst systems are told apart from the best


def test_another_seed_draws_other_resamples(monkeypatch) -> None:
    base = ["autorank", "--wmt-scores", str(LOCAL / "automatic_scores"), "-l", "en-kn_IN",
            "-ci", "-cin", "300", "-f", "json"]  # fmt: skip
    first = json.loads(run_cli(base).stdout)
    monkeypatch.setenv("BLEUCLI_SEED", "7")
    second = json.loads(run_cli(base).stdout)
    assert second["seed"] == "7" and "seed:7" in second["signature"]
    assert [r["autorank"] for r in first["systems"]] == [r["autorank"] for r in second["systems"]]
    assert [r["rank_range"] for r in first["systems"]] != [
        r["rank_range"] for r in second["systems"]
    ]


def test_both_engines_give_the_same_table() -> None:
    """Outputs scored here by chrF: the pure-Python and the compiled engine give the same
    bytes (fresh processes)."""
    args = ["autorank", REF, "-i", f"A={HYP}", f"B={HYP2}", f"C={REF2}", "-m", "chrf", "ter",
            "-ci", "-cin", "200", "-f", "json"]  # fmt: skip
    native = run_subprocess(args, env={"BLEUCLI_PUREPYTHON": "0"})
    pure = run_subprocess(args, env={"BLEUCLI_PUREPYTHON": "1"})
    assert native.returncode == 0, native.stderr
    assert native.stdout == pure.stdout


# -- formats ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex", "tsv", "html"])
def test_tables_carry_the_signatures_in_their_format(fmt: str) -> None:
    result = run_cli(["autorank", "--wmt-scores", str(LOCAL / "automatic_scores"), "-l",
                      "en-sr_Cyrl_RS", "-ci", "-cin", "200", "-f", fmt])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "AutoRank" in out and "recipe:wmt25" in out
    lines = out.splitlines()
    first = next(k for k, line in enumerate(lines) if "Shy" in line)
    assert "1.0" in lines[first] and "0.687" in lines[first]  # printed as WMT prints them
    if fmt == "latex":
        assert "\\begin{tabular}" in out and "\\texttt{AutoRank|\\allowbreak{}recipe:wmt25" in out
    if fmt == "markdown":
        assert "| System" in out and "`AutoRank|recipe:wmt25" in out
    if fmt == "html":
        assert out.startswith("<!DOCTYPE html>") and "<table>" in out and "<h2>AutoRank" in out


# -- refusals ---------------------------------------------------------------------------------


def refusal(args: list[str], code: int, *needles: str) -> None:
    result = run_cli(["autorank", *args])
    assert result.exit_code == code, (result.exit_code, result.stderr)
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def test_bad_input_is_one_line_each(tmp_path: Path) -> None:
    scores = str(LOCAL / "automatic_scores")
    refusal(["--wmt-scores", str(tmp_path / "nowhere")], 1, "nowhere: no such file or folder")
    refusal(
        ["--wmt-scores", scores, "-l", "en-de_DE"],
        1,
        "-l en-de_DE: not in the score files; pairs there: en-kn_IN, en-sr_Cyrl_RS",
    )
    refusal(["--wmt-scores", scores], 1, "choose one with -l (en-kn_IN, en-sr_Cyrl_RS)")
    refusal(
        ["--wmt-scores", scores, "-l", "en-kn_IN", "-m", "BLEU"],
        1,
        "metric BLEU is not in the data for en-kn_IN; metrics there: CometKiwi-XL,",
    )
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "A.jsonl").write_text(
        '{"language_pair": "x-y", "document_id": "d", "metric_scores": {"M": [1, 2]}}\n{oops\n',
        encoding="utf-8",
    )
    refusal(["--wmt-scores", str(bad)], 1, f"{bad / 'A.jsonl'}:2: not JSON")
    short = tmp_path / "short"
    short.mkdir()
    line = {"language_pair": "x-y", "document_id": "d1", "metric_scores": {"M": [1.0, 2.0]}}
    (short / "A.jsonl").write_text(
        json.dumps(line) + "\n" + json.dumps({**line, "document_id": "d2"}) + "\n", encoding="utf-8"
    )  # noqa: E501
    (short / "B.jsonl").write_text(
        json.dumps({**line, "metric_scores": {"M": [1.0]}})
        + "\n"
        + json.dumps({**line, "document_id": "d2"})
        + "\n",
        encoding="utf-8",
    )  # noqa: E501
    refusal(["--wmt-scores", str(short)], 1, "system B has 1 segments in document d1")
    (short / "B.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    refusal(["--wmt-scores", str(short)], 1, "system B has 1 documents of x-y", "lacks d2")
    (short / "B.jsonl").write_text(
        "\n".join(json.dumps({**line, "document_id": d, "metric_scores": {"M": [None, None]}})
                  for d in ("d1", "d2")) + "\n", encoding="utf-8")  # fmt: skip
    refusal(["--wmt-scores", str(short)], 1, "metric M: every segment score of B is null")
    (short / "B.jsonl").write_text(
        json.dumps({**line, "metric_scores": {"M": [1.0, float("nan")]}}) + "\n", encoding="utf-8"
    )
    refusal(["--wmt-scores", str(short)], 1, "B.jsonl:1: M: nan is not a finite number")
    judge = tmp_path / "judge.txt"
    judge.write_text("1\n" * 30, encoding="utf-8")
    refusal(
        [REF, "-i", f"A={HYP}", "-m", "chrf", "--segment-scores", f"J={judge}"],
        2,
        "--segment-scores J: not among the metrics to combine (-m chrf)",
    )
    refusal([REF, "-i", f"A={HYP}", f"B={HYP2}"], 2, "name the metrics to combine")
    refusal([], 2, "give the scores to combine")
    refusal(["--wmt-scores", scores, "-l", "en-kn_IN", "-i", f"A={HYP}"], 2, "--add NAME=FILE")
    refusal([REF, "--add", f"A={HYP}", "-i", f"B={HYP2}"], 2, "--add places outputs among")
    refusal(
        ["--wmt-scores", scores, "-l", "en-kn_IN", "--lower-is-better", "BLEU"],
        1,
        "--lower-is-better bleu: no such metric",
    )
    tsv = tmp_path / "s.tsv"
    tsv.write_text("A\tM\t1\nB\tM\tabc\n", encoding="utf-8")
    refusal(["--system-scores", str(tsv)], 1, f"{tsv}:2: score 'abc' is not a number")
    tsv.write_text("A\tM\t1\nB\tM\t2\n", encoding="utf-8")
    refusal(["--system-scores", str(tsv), "-ci"], 1, "M has system scores only")


def test_the_api_validates_its_input() -> None:
    from bleucli.errors import UsageError

    with pytest.raises(UsageError, match="has no TER score"):
        bleucli.autorank({"A": {"chrF": 1.0, "TER": 2.0}, "B": {"chrF": 2.0}})
    with pytest.raises(UsageError, match="must be numbers"):
        bleucli.autorank({"A": {"chrF": "x"}, "B": {"chrF": 2.0}})
    with pytest.raises(UsageError, match="not both"):
        bleucli.autorank({"A": {"chrF": 1.0}}, wmt_scores="x")


def test_help_lists_autorank() -> None:
    assert "bleucli autorank --wmt-scores DIR -l PAIR" in run_cli(["--help"]).stdout
    assert os.environ.get("BLEUCLI_SEED") is None


# -- everywhere numbers are compared ------------------------------------------------------------


def test_report_orders_by_autorank_over_its_columns(tmp_path: Path) -> None:
    files = []
    for name, path in (("A", HYP), ("B", HYP2), ("C", REF2)):
        result = run_cli([REF, "-i", path, "-m", "bleu", "chrf", "ter"])
        target = tmp_path / f"{name}.json"
        target.write_text(result.stdout, encoding="utf-8")
        files.append(f"{name}={target}")
    reported = run_cli(["report", *reversed(files), "--autorank", "wmt25", "-f", "json"])
    assert reported.exit_code == 0, reported.stderr
    document = json.loads(reported.stdout)
    scores = {
        row["system"]: {s["metric"]: s["score"] for s in row["scores"]}
        for row in document["systems"]
    }
    expected = bleucli.autorank(scores)
    assert [(r["system"], r["autorank"]) for r in document["systems"]] == [
        (s.name, s.autorank) for s in expected.systems
    ]
    assert document["autorank"].startswith(
        "AutoRank|recipe:wmt25|metrics:BLEU,chrF2,TER|turned:TER|sys:given"
    )
    plain = json.loads(run_cli(["report", *files, "-f", "json"]).stdout)
    assert "autorank" not in plain and "autorank" not in plain["systems"][0]
    text = run_cli(["report", *files, "--autorank", "wmt25"]).stdout
    assert text.splitlines()[1].split("│")[2].strip() == "AutoRank"


def test_analyze_adds_an_autorank_table() -> None:
    args = ["analyze", REF, "-i", HYP, HYP2, REF2, "-m", "bleu", "chrf", "ter", "-f", "json"]
    plain = json.loads(run_cli(args).stdout)
    ranked = run_cli([*args, "--autorank", "wmt24"])
    assert ranked.exit_code == 0, ranked.stderr
    tables = {t["key"]: t for t in json.loads(ranked.stdout)["tables"]}
    assert "autorank" in tables and "autorank" not in {t["key"] for t in plain["tables"]}
    rows = tables["autorank"]["rows"]
    overview = {row[0]: row[2:5] for row in tables["overview"]["rows"]}
    expected = bleucli.autorank(
        {name: dict(zip(("BLEU", "chrF2", "TER"), values)) for name, values in overview.items()},
        recipe="wmt24",
    )
    assert [(r[0], r[1]) for r in rows] == [(s.name, s.autorank) for s in expected.systems]


def test_the_docs_show_what_the_command_prints() -> None:
    page = (ROOT / "docs" / "autorank.md").read_text(encoding="utf-8")
    shown = page.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    result = run_cli(["autorank", "--wmt-scores", str(LOCAL / "automatic_scores"), "-l",
                      "en-sr_Cyrl_RS", "-f", "markdown"])  # fmt: skip
    printed = result.stdout.splitlines()
    for line in shown:
        assert line in printed, line
