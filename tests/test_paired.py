"""Paired significance tests: SacreBLEU's p-values, means and intervals for the same seed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.significance import PairedTest

import bleucli
from bleucli.formats import paired_table
from bleucli.stats.paired import PairedResult, run_paired
from tests.conftest import EXAMPLES, run_cli, sentences

HYP, REF, REF2 = (str(EXAMPLES / n) for n in ("hyp.de", "ref.de", "ref2.de"))


def lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def both(test: str, systems, refs, n_samples: int, monkeypatch):
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    theirs_metrics = {
        "BLEU": sacrebleu.BLEU(references=refs),
        "CHRF": sacrebleu.CHRF(references=refs),
        "TER": sacrebleu.TER(references=refs),
    }
    _, theirs = PairedTest(systems, theirs_metrics, None, test_type=test, n_samples=n_samples)()
    ours_metrics = {
        "bleu": bleucli.BLEU(references=refs),
        "chrf": bleucli.CHRF(references=refs),
        "ter": bleucli.TER(references=refs),
    }
    ours, signatures = run_paired(test, ours_metrics, systems, n_samples)
    return ours, theirs, signatures


def assert_same(ours, theirs) -> None:
    for name in ours:
        for mine, their in zip(ours[name], theirs[name]):
            assert mine.score == pytest.approx(their.score, abs=1e-9)
            assert mine.p_value == their.p_value
            if their.mean is not None:
                assert (mine.mean, mine.ci) == pytest.approx((their.mean, their.ci), abs=1e-9)


@settings(max_examples=8)
@given(data=st.data())
def test_generated_systems_match_sacrebleu(data, monkeypatch_session) -> None:
    n = data.draw(st.integers(3, 25))
    refs = [data.draw(st.lists(sentences, min_size=n, max_size=n))]
    systems = [(f"s{k}", data.draw(st.lists(sentences, min_size=n, max_size=n))) for k in range(3)]
    for test, samples in (("bs", 200), ("ar", 300)):
        ours, theirs, _ = both(test, systems, refs, samples, monkeypatch_session)
        assert_same(ours, theirs)


def test_example_systems_and_signature(monkeypatch) -> None:
    refs = [lines(REF), lines(REF2)]
    systems = [("base", lines(HYP)), ("ref", lines(REF)), ("other", lines(REF2))]
    ours, theirs, signatures = both("bs", systems, refs, 1000, monkeypatch)
    assert_same(ours, theirs)
    assert "|bs:1000|seed:12345|" in str(signatures["BLEU"])
    ours, theirs, signatures = both("ar", systems, refs, 2000, monkeypatch)
    assert_same(ours, theirs)
    assert "|ar:2000|seed:12345|" in str(signatures["TER"])


def test_cli_paired_bs_text_and_json(write) -> None:
    other = write("other.de", lines(REF2))
    text = run_cli([REF, "-i", HYP, other, "-m", "bleu", "ter", "--paired-bs", "-f", "text"])
    assert text.exit_code == 0, text.stderr
    assert (
        "Baseline: " in text.stdout
        and "(p = " in text.stdout
        and "BLEU (μ ± 95% CI)" in text.stdout
    )
    record = json.loads(
        run_cli(
            [
                REF,
                "-i",
                HYP,
                other,
                "--paired-ar",
                "-parn",
                "500",
                "-f",
                "json",
                "--json-layout",
                "bleucli",
            ]
        ).stdout
    )
    assert record["test"] == "ar" and record["samples"] == 500
    assert record["systems"][0]["BLEU"]["p_value"] is None
    assert 0 < record["systems"][1]["BLEU"]["p_value"] <= 1


def test_cli_paired_json_is_sacrebleus_layout(write) -> None:
    """-f json prints SacreBLEU's list in full precision, identical to SacreBLEU's output
    for BLEU (where SacreBLEU can write it; it crashes on chrF/TER float32 means)."""
    import subprocess
    import sys

    other = write("other.de", lines(REF2))
    ours = json.loads(run_cli([REF, "-i", HYP, other, "--paired-bs", "-f", "json"]).stdout)
    theirs = subprocess.run(
        [sys.executable, "-m", "sacrebleu", REF, "-i", HYP, other, "--paired-bs", "-f", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, "SACREBLEU_SEED": "12345"},
    )
    assert theirs.returncode == 0, theirs.stderr
    assert ours == json.loads(theirs.stdout)
    three = json.loads(
        run_cli(
            [
                REF,
                "-i",
                HYP,
                other,
                "-m",
                "bleu",
                "chrf",
                "ter",
                "--paired-ar",
                "-parn",
                "100",
                "-f",
                "json",
            ]
        ).stdout
    )
    assert [row["system"] for row in three] == [f"Baseline: {HYP}", other]
    assert set(three[1]) == {"system", "BLEU", "chrF2", "TER"}
    assert isinstance(three[1]["TER"]["p_value"], float) and three[1]["TER"]["mean"] is None


def test_cli_paired_needs_two_systems() -> None:
    result = run_cli([REF, "-i", HYP, "--paired-bs"])
    assert result.exit_code == 1 and "need several systems" in result.stderr


def test_table_renderers() -> None:
    results = {"BLEU": [PairedResult(30.0, None, 29.9, 1.2), PairedResult(31.5, 0.01, 31.4, 1.1)]}
    signatures = {"BLEU": "nrefs:1|bs:1000|seed:12345"}
    markdown = paired_table(["a.txt", "b.txt"], results, signatures, "markdown", 1, "bs", 1000)
    assert markdown.splitlines()[:4] == [  # names left, numbers right; display names (a, b)
        "| System      |               BLEU (μ ± 95% CI) |",
        "|:------------|--------------------------------:|",
        "| Baseline: a |               30.0 (29.9 ± 1.2) |",
        "| b           | 31.5 (31.4 ± 1.1) (p = 0.0100)* |",
    ]
    assert "- a: `a.txt`" in markdown and "- b: `b.txt`" in markdown  # the files, once
    latex = paired_table(["a.txt", "b.txt"], results, signatures, "latex", 1, "bs", 1000)
    assert "\\toprule" in latex and "\\bottomrule" in latex and "{lr}" in latex
    assert "Metric signatures:\\\\" in latex and "\\texttt{" in latex
    tsv = paired_table(["a.txt", "b.txt"], results, signatures, "tsv", 2, "bs", 1000)
    assert tsv.splitlines()[2].split("\t")[-1].strip() == "31.50 (31.40 ± 1.10) (p = 0.0100)*"


@pytest.mark.parametrize("test", ["--paired-bs", "--paired-ar"])
def test_paired_jobs_do_not_change_results(write, monkeypatch, test) -> None:
    other, third = write("o.de", lines(REF2)), write("t.de", lines(REF))
    args = [
        REF,
        "-i",
        HYP,
        other,
        third,
        "-m",
        "bleu",
        "chrf",
        "ter",
        test,
        "-pbsn",
        "300",
        "-parn",
        "300",
        "-f",
        "json",
        "-w",
        "4",
    ]
    serial = run_cli([*args, "-j", "1"]).stdout
    assert run_cli([*args, "-j", "3"]).stdout == serial  # parallel statistics only
    monkeypatch.setattr("bleucli.stats.paired.PARALLEL_TESTS_WORK", 0)
    assert run_cli([*args, "-j", "3"]).stdout == serial  # parallel tests too
    assert run_cli([*args, "-j", "0"]).stdout == serial  # automatic, as SacreBLEU's -j 0


def test_automatic_jobs_follow_sacrebleu(monkeypatch) -> None:
    from bleucli.commands.paired import automatic_jobs

    monkeypatch.setattr("os.cpu_count", lambda: 8)
    assert automatic_jobs(3) == 3 and automatic_jobs(6) == 4
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert automatic_jobs(3) == 1


def test_systems_can_be_named(write) -> None:
    other = write("o.de", lines(REF2))
    out = run_cli(
        [REF, "-i", f"mine:{HYP}", f"theirs:{other}", "--paired-ar", "-parn", "100", "-f", "json"]
    ).stdout
    assert [s["system"] for s in json.loads(out)] == ["Baseline: mine", "theirs"]
