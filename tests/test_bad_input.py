"""The bad-input corpus: every hostile or broken input ends in the right exit code and one
``bleucli: error:`` line on stderr, never a traceback; the gate never passes by mistake."""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLES, run_cli

HYP, REF, REF2 = (str(EXAMPLES / n) for n in ("hyp.de", "ref.de", "ref2.de"))


def assert_error(result, code: int, *fragments: str) -> None:
    """Exit ``code``, exactly one stderr line that is a bleucli error, no traceback."""
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip("\n").splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("bleucli: error: "), lines[0]
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def results(tmp_path: Path):
    """A bleucli result file of BLEU/chrF2/TER for the shipped example, and a writer."""
    scored = run_cli([REF, "-i", REF2, "-m", "bleu", "chrf", "ter", "-w", "4"])
    assert scored.exit_code == 0
    records = json.loads(scored.stdout)
    path = tmp_path / "r.json"
    path.write_text(scored.stdout, encoding="utf-8")

    def write(name: str, data) -> str:
        target = tmp_path / name
        target.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
        return str(target)

    return str(path), records, write


def gate(current: str, baseline: str, *args: str):
    return run_cli(["gate", current, "--baseline", baseline, *args])


# -- the gate never passes by mistake ---------------------------------------------------------


@pytest.mark.parametrize("name", ["bleu", "BLEU", "Bleu"])
def test_min_score_names_match_case_insensitively(results, name) -> None:
    path, records, _ = results
    assert records[0]["name"] == "BLEU" and records[0]["score"] < 95
    result = gate(path, path, "--min-score", f"{name}=95")
    assert result.exit_code == 3 and "FAIL BLEU" in result.stdout


def test_family_name_matches_the_one_variant(results) -> None:
    path, _, _ = results
    result = gate(path, path, "--min-score", "chrF=95")
    assert result.exit_code == 3 and "FAIL chrF2" in result.stdout


@pytest.mark.parametrize("option", ["--min-score", "--tolerance-for"])
def test_unknown_metric_names_are_usage_errors(results, option) -> None:
    path, _, _ = results
    assert_error(gate(path, path, option, "BLUE=95"), 2, "'BLUE'", "known: BLEU, TER, chrF2")


@pytest.mark.parametrize(
    "args",
    [
        ["--tolerance", "nan"],
        ["--tolerance", "inf"],
        ["--tolerance", "-1"],
        ["--tolerance-for", "BLEU=nan"],
        ["--min-score", "BLEU=inf"],
        ["--min-score", "BLEU"],
        ["--min-score", "=3"],
        ["--min-score", "BLEU=x"],
        ["--alpha", "nan", "--baseline-output", HYP, "-i", HYP, REF],
    ],
)
def test_unusable_thresholds_are_usage_errors(results, args, tmp_path) -> None:
    path, records, write = results
    worse = write("worse.json", [{**r, "score": r["score"] - 40} for r in records])
    assert_error(gate(worse, path, *args), 2)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "abc", None, [1], {"a": 1}, True])
def test_unusable_scores_are_data_errors(results, value) -> None:
    path, records, write = results
    bad = write("bad.json", json.dumps([{**records[0], "score": value}, *records[1:]]))
    assert_error(gate(bad, path), 1, "bad.json: item 1", "'score'")
    assert_error(gate(path, bad), 1, "bad.json: item 1")


@pytest.mark.parametrize("value", [["BLEU"], 3, None, ""])
def test_unusable_names_are_data_errors(results, value) -> None:
    path, records, write = results
    bad = write("bad.json", [{**records[0], "name": value}])
    assert_error(gate(bad, path), 1, "'name' should be a non-empty string")


def test_the_same_metric_twice_in_one_file(results) -> None:
    path, records, write = results
    twice = write("twice.json", [records[0], records[0]])
    assert_error(gate(twice, path), 1, "BLEU appears twice")


def test_a_drop_is_never_hidden_by_nan(results) -> None:
    path, records, write = results
    worse = write("worse.json", [{**r, "score": r["score"] - 40} for r in records])
    assert gate(worse, path, "--tolerance", "1").exit_code == 3


@pytest.mark.parametrize("target", ["missing/dir/report.xml", "."])
def test_reports_into_missing_folders_or_onto_folders(results, tmp_path, target) -> None:
    path, _, _ = results
    destination = str(tmp_path / target)
    assert_error(
        gate(path, path, "--junit", destination),
        1,
        "report.xml" if "/" in target else "is a directory",
    )
    assert_error(run_cli(["gate", path, "--baseline", destination, "--update-baseline"]), 1)


def test_update_baseline_keeps_usual_permissions(results, tmp_path) -> None:
    path, _, _ = results
    fresh = tmp_path / "fresh.json"
    umask = os.umask(0o022)
    try:
        assert run_cli(["gate", path, "--baseline", str(fresh), "--update-baseline"]).exit_code == 0
    finally:
        os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
    fresh.chmod(0o664)
    assert run_cli(["gate", path, "--baseline", str(fresh), "--update-baseline"]).exit_code == 0
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o664


# -- merge trusts nothing ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def pristine_shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp_path = tmp_path_factory.mktemp("shards")
    lines_hyp = Path(HYP).read_text(encoding="utf-8").splitlines()
    lines_ref = Path(REF).read_text(encoding="utf-8").splitlines()
    paths = []
    for part, (start, end) in enumerate([(0, 15), (15, 30)]):
        hyp, ref = tmp_path / f"h{part}", tmp_path / f"r{part}"
        hyp.write_text("\n".join(lines_hyp[start:end]) + "\n", encoding="utf-8")
        ref.write_text("\n".join(lines_ref[start:end]) + "\n", encoding="utf-8")
        out = run_cli(["stats", str(ref), "-i", str(hyp), "-m", "bleu", "chrf", "ter"])
        assert out.exit_code == 0, out.stderr
        shard = tmp_path / f"s{part}.json"
        shard.write_text(out.stdout, encoding="utf-8")
        paths.append(shard)
    return paths


@pytest.fixture
def shards(pristine_shards: list[Path], tmp_path: Path) -> list[Path]:
    """Two shards (halves of the example corpus) that a test may damage."""
    copies = []
    for path in pristine_shards:
        copy = tmp_path / path.name
        copy.write_text(path.read_text())
        copies.append(copy)
    return copies


def test_merged_shards_equal_the_whole(shards) -> None:
    merged = run_cli(["merge", *map(str, shards), "-f", "text", "-w", "6"])
    whole = run_cli([REF, "-i", HYP, "-m", "bleu", "chrf", "ter", "-f", "text", "-w", "6"])
    assert merged.exit_code == 0 and merged.stdout == whole.stdout.replace(HYP, "merged")


def test_the_same_shard_twice_is_refused(shards, tmp_path) -> None:
    copy = tmp_path / "copy.json"
    copy.write_text(shards[0].read_text())
    assert_error(run_cli(["merge", str(shards[0]), str(copy)]), 1, "the same data as")


def _edit(path: Path, change) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["metrics"][0]["values"].__setitem__(0, -5), "statistics are counts"),
        (lambda d: d["metrics"][0]["values"].__setitem__(2, "7"), "not a number"),
        (lambda d: d["metrics"][0]["values"].__setitem__(2, float("nan")), "statistics are counts"),
        (lambda d: d["metrics"][0]["values"].__setitem__(2, 2.5), "whole numbers"),
        (lambda d: d["metrics"][0]["values"].pop(), "9 values, but this configuration has 10"),
        (lambda d: d["metrics"][0]["values"].__setitem__(2, 10**9), "more matches than n-grams"),
        (lambda d: d["metrics"][1]["values"].__setitem__(2, 10**9), "matches of"),
        (lambda d: d["metrics"][0].pop("nrefs"), "missing 'nrefs'"),
        (lambda d: d["metrics"][0].__setitem__("nrefs", 0), "'nrefs' should be a whole number"),
        (lambda d: d["metrics"][0].__setitem__("options", {"colour": 1}), "are not valid for bleu"),
        (lambda d: d["metrics"][0].__setitem__("metric", "meteor"), "unknown metric 'meteor'"),
        (lambda d: d.pop("data"), "'data' should hold"),
        (lambda d: d.__setitem__("metrics", []), "non-empty list"),
        (lambda d: d.__setitem__("format_version", 1), "format version 1"),
    ],
)
def test_broken_shards_are_refused(shards, change, message) -> None:
    _edit(shards[1], change)
    assert_error(run_cli(["merge", *map(str, shards)]), 1, "s1.json", message)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "score",
                    "signature",
                    "system",
                    "BLEU",
                    "systems",
                    "signatures",
                    "samples",
                    "metrics",
                    "format",
                    "values",
                    "p_value",
                    "scores",
                    "metric",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=60)
@given(document=json_values)
def test_any_json_is_an_answer_or_one_line_error(tmp_path_factory, document) -> None:
    folder = tmp_path_factory.mktemp("json")
    path = folder / "x.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    for args in (
        ["report", str(path)],
        ["gate", str(path), "--baseline", str(path)],
        ["merge", str(path)],
    ):
        result = run_cli(args)
        assert result.exit_code in (0, 1, 2, 3), (args, result.stderr)
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
        if result.exit_code:
            assert result.stderr.startswith("bleucli: error: ") or result.stderr.startswith(
                "Usage:"
            ), result.stderr


@settings(max_examples=60)
@given(
    index=st.integers(0, 2),
    key=st.sampled_from(["values", "nrefs", "sentences", "options", "metric", "signature"]),
    value=json_values,
)
def test_any_damaged_shard_is_one_line_error(pristine_shards, index, key, value) -> None:
    shards = pristine_shards
    document = json.loads(shards[0].read_text())
    entry = document["metrics"][index]
    if entry.get(key) == value:
        return
    original = entry.get(key)
    entry[key] = value
    bad = shards[0].with_name("damaged.json")
    bad.write_text(json.dumps(document))
    result = run_cli(["merge", str(bad), str(shards[1])])
    if result.exit_code == 0:  # only harmless changes pass (e.g. another signature text)
        # other statistics of the right shape that could be real (TER's [0, 0]: no edits,
        # no reference words) cannot be told from damage by any merge
        plausible = (
            key == "values"
            and isinstance(value, list)
            and isinstance(original, list)
            and len(value) == len(original)
            and all(type(v) in (int, float) and v >= 0 for v in value)
        )
        assert key == "signature" or (key == "options" and value == {}) or plausible
        return
    assert_error(result, 1)


# -- options ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-w", "-1"], "-w/--width must be between 0 and 30"),
        (["-w", "9999999999"], "-w/--width must be between 0 and 30"),
        (["-m", "chrf", "-cc", "100000000"], "-cc/--chrf-char-order must be between 0 and 100"),
        (["-m", "chrf", "-cw", "-2"], "-cw/--chrf-word-order must be between 0 and 100"),
        (
            ["--from-signature", "chrF2|nrefs:1|nc:100000000"],
            "--from-signature: nc:100000000 (-cc/--chrf-char-order) must be between 0 and 100",
        ),
        # a signature's value is reported as its field (the user typed no option), and without
        # the "reproducing a signature" notice before the error
        (
            [
                "--from-signature",
                "BLEU|nrefs:1|bs:-5|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0",
            ],
            "--from-signature: bs:-5 (-cin/--confidence-n) must be between 1 and 100000",
        ),
        (
            [
                "--from-signature",
                "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:500|space:no|version:2.0.0",
            ],
            "--from-signature: nw:500 (-cw/--chrf-word-order) must be between",
        ),
        (
            ["--from-signature", "chrF5000|nrefs:1|nc:6|version:2.4.0"],
            "--from-signature: chrF5000 (--chrf-beta) must be between 0 and 1000",
        ),
        (
            ["--from-signature", "BLEU|nrefs:1|smooth:floor[-1]|version:2.0.0"],
            "--from-signature: smooth:floor[-1] (-sv/--smooth-value) must be >= 0",
        ),
        (["-nr", "1000000000"], "-nr/--num-refs must be between 1 and 1000"),
        (["-ci", "-cin", "30000000"], "-cin/--confidence-n must be between 1 and 100000"),
        (["-pbsn", "0"], "-pbsn/--paired-bs-n must be between 1 and 100000"),
        (["-j", "-3"], "-j/--jobs must be between 0"),
        (["-sv", "nan", "-s", "floor"], "-sv/--smooth-value must be a finite number"),
        (["--from-signature", "BLEU|nrefs:1|smooth:exp-."], "'.' is not a number"),
        (["--from-signature", "BLEU|nrefs:1|bs:abc"], "bs:abc is not a number"),
        (["-e", "klingon"], "unknown encoding 'klingon'"),
        (["-tok", "nope"], "unknown tokenizer 'nope'"),
        (["-l", "ende"], "is not a language pair SRC-TRG"),
    ],
)
def test_option_values_out_of_range_are_usage_errors(args, message) -> None:
    assert_error(run_cli([REF, "-i", HYP, *args]), 2, message)


@pytest.mark.parametrize(
    "args",
    [
        ["-sl"],
        ["--rank", "-i", REF2],
        ["-pbs", "-i", REF2],
        ["--docids", str(EXAMPLES / "docids.txt")],
        ["-ci"],
        ["-b"],
    ],
)
def test_stats_refuses_options_that_are_not_a_shard(args) -> None:
    """`bleucli stats` writes a JSON shard for `bleucli merge`: options that would print
    something else (sentence lines before the JSON, a ranking) are refused up front."""
    result = run_cli(["stats", REF, "-i", HYP, *args])
    assert_error(result, 2, "bleucli stats writes one JSON shard", "cannot be combined")
    assert result.stdout == ""


def test_stats_takes_a_signatures_bootstrap_field() -> None:
    """A signature with bs: turns on resampling for scores, not a mode stats refuses."""
    signature = "BLEU|nrefs:1|bs:100|case:mixed|eff:no|tok:13a|smooth:exp"
    result = run_cli(["stats", REF, "-i", HYP, "--from-signature", signature])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["format"] == "bleucli-stats"


def test_invalid_subset_regex(tmp_path) -> None:
    result = run_cli(["-t", "sample", "-l", "en-de", "--subset", "(", "-i", HYP])
    assert_error(result, 2, "--subset '(' is not a valid regular expression")


@pytest.mark.parametrize("seed", ["-1", "abc", "1.5"])
def test_invalid_seed(monkeypatch, seed) -> None:
    monkeypatch.setenv("BLEUCLI_SEED", seed)
    assert_error(run_cli([REF, "-i", HYP, "-ci", "-cin", "10"]), 2, "BLEUCLI_SEED")


def test_jobs_beyond_the_cpus_are_capped(caplog) -> None:
    capped = run_cli([REF, "-i", HYP, "--jobs", "100000", "-f", "text"])
    plain = run_cli([REF, "-i", HYP, "-f", "text"])
    assert capped.exit_code == 0 and capped.stdout == plain.stdout
    assert f"using {os.cpu_count()} worker processes" in capped.stderr


@pytest.mark.parametrize(
    "content",
    [
        lambda ok: ok[:15],  # truncated
        lambda ok: b"not gzip at all\n",  # fake
        lambda ok: ok[:12] + b"\xff\xff\xff" + ok[15:],  # corrupt
    ],
)
@pytest.mark.parametrize("side", ["hyp", "ref"])
def test_damaged_gzip_inputs(tmp_path, content, side) -> None:
    import gzip

    good = gzip.compress(b"ein kleiner Hund\nzwei\n")
    bad = tmp_path / "bad.gz"
    bad.write_bytes(content(good))
    plain = tmp_path / "plain.txt"
    plain.write_text("ein kleiner Hund\nzwei\n", encoding="utf-8")
    args = [str(plain), "-i", str(bad)] if side == "hyp" else [str(bad), "-i", str(plain)]
    for extra in ([], ["-m", "bleu", "chrf"], ["-sl"]):
        assert_error(run_cli([*args, *extra]), 1, "bad.gz")


@settings(max_examples=40)
@given(
    option=st.sampled_from(["-w", "-cc", "-cw", "--chrf-beta", "-nr", "-cin", "-j"]),
    value=st.integers(-(10**12), 10**12) | st.sampled_from([0, 1, 2, 101, 1001, 100001]),
)
def test_any_numeric_option_is_a_score_or_usage_error(option, value) -> None:
    extra = ["-ci"] if option == "-cin" else []
    if option == "-cin" and 0 < value <= 100_000:
        value = min(value, 20)  # keep the resampling itself short
    result = run_cli([REF, "-i", HYP, "-m", "chrf", option, str(value), *extra])
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    if result.exit_code:
        assert result.exit_code in (1, 2), result.stderr
        assert_error(result, result.exit_code)


# -- the API ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["BLEU", "CHRF", "TER"])
def test_api_refuses_sentences_without_any_reference(name) -> None:
    import bleucli

    metric = getattr(bleucli, name)()
    with pytest.raises(bleucli.InputError, match="sentence 1 has no reference"):
        metric.corpus_score(["a b", "c d"], [["a b", None], ["a", None]])
    assert math.isfinite(metric.corpus_score(["a b", "c d"], [["a b", None], ["a", "c"]]).score)
