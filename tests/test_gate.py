"""``bleucli gate`` as CI runs it: real processes in a plain temporary folder."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_subprocess

HYP, REF, REF2 = (str(EXAMPLES / n) for n in ("hyp.de", "ref.de", "ref2.de"))


def score(folder: Path, name: str, *args: str) -> Path:
    proc = run_subprocess([*args, "-m", "bleu", "chrf", "ter", "-w", "4"], cwd=folder)
    assert proc.returncode == 0, proc.stderr
    path = folder / name
    path.write_bytes(proc.stdout)
    return path


@pytest.fixture
def baseline(tmp_path: Path) -> Path:
    current = score(tmp_path, "first.json", REF, "-i", HYP)
    proc = run_subprocess(
        ["gate", str(current), "--baseline", "baseline.json", "--update-baseline"], cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "baseline.json"


def gate(folder: Path, current: Path, *args: str, env=None):
    return run_subprocess(
        ["gate", str(current), "--baseline", "baseline.json", *args], cwd=folder, env=env
    )


def test_pass_on_identical_scores(tmp_path, baseline) -> None:
    proc = gate(tmp_path, score(tmp_path, "now.json", REF, "-i", HYP))
    assert proc.returncode == 0
    out = proc.stdout.decode().splitlines()
    # each metric: its signature and its drop, two checks of their own
    assert [line.split(":")[0] for line in out[:-1]] == [
        f"PASS {metric} {check}"
        for metric in ("BLEU", "chrF2", "TER")
        for check in ("signature", "drop")
    ]
    assert out[-1] == "gate passed: 6 passed, 0 failed"


def test_fail_by_tolerance_with_per_metric_override(tmp_path, baseline) -> None:
    worse = tmp_path / "worse.de"
    worse.write_text(
        Path(HYP).read_text(encoding="utf-8").replace("Der ", "Die "), encoding="utf-8"
    )
    current = score(tmp_path, "now.json", REF, "-i", str(worse))
    strict = gate(tmp_path, current, "--tolerance", "0.1")
    assert strict.returncode == 3
    assert "FAIL BLEU" in strict.stdout.decode() and "worse by" in strict.stdout.decode()
    lenient = gate(tmp_path, current, "--tolerance", "5")
    assert lenient.returncode == 0
    mixed = gate(tmp_path, current, "--tolerance", "5", "--tolerance-for", "TER=0.1")
    assert mixed.returncode == 3 and "FAIL TER" in mixed.stdout.decode()
    assert "PASS BLEU" in mixed.stdout.decode()


def test_fail_by_min_score(tmp_path, baseline) -> None:
    current = score(tmp_path, "now.json", REF, "-i", HYP)
    assert gate(tmp_path, current, "--min-score", "BLEU=99").returncode == 3
    assert gate(tmp_path, current, "--min-score", "BLEU=10").returncode == 0
    over = gate(tmp_path, current, "--min-score", "TER=5")  # TER: a maximum
    assert over.returncode == 3 and "maximum is 5" in over.stdout.decode()


def test_fail_by_signature_mismatch_even_when_scores_improve(tmp_path, baseline) -> None:
    current = score(tmp_path, "now.json", REF, REF2, "-i", HYP)  # two references: better BLEU
    proc = gate(tmp_path, current, "--tolerance", "100")
    assert proc.returncode == 3
    assert "signature differs: nrefs:1 -> nrefs:2" in proc.stdout.decode()


def test_missing_result_fails(tmp_path, baseline) -> None:
    proc = run_subprocess([REF, "-i", HYP, "-m", "bleu"], cwd=tmp_path)
    (tmp_path / "bleu.json").write_bytes(proc.stdout)
    result = gate(tmp_path, tmp_path / "bleu.json")
    assert result.returncode == 3 and "FAIL chrF2" in result.stdout.decode()


def test_update_baseline_replaces_the_file(tmp_path, baseline) -> None:
    current = score(tmp_path, "now.json", REF, REF2, "-i", HYP)
    assert gate(tmp_path, current).returncode == 3
    assert gate(tmp_path, current, "--update-baseline").returncode == 0
    assert gate(tmp_path, current).returncode == 0
    assert json.loads(baseline.read_text())[0]["nrefs"] == "2"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_json_junit_and_github_annotations(tmp_path, baseline) -> None:
    current = score(tmp_path, "now.json", REF, REF2, "-i", HYP)
    proc = gate(
        tmp_path, current, "-f", "json", "--junit", "report.xml", env={"GITHUB_ACTIONS": "true"}
    )
    assert proc.returncode == 3
    report = json.loads(proc.stdout)  # stdout is one JSON document, on GitHub Actions too
    assert report["passed"] is False
    assert {(c["check"], c["reason"]) for c in report["checks"]} == {("signature", "signature")}
    assert "::error title=bleucli gate: BLEU signature::signature" in proc.stderr.decode()
    root = ET.parse(tmp_path / "report.xml").getroot()
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "3" and suite.get("failures") == "3"
    assert len(suite.findall("testcase/failure")) == 3
    names = [case.get("name") for case in suite.findall("testcase")]
    assert names == ["BLEU signature", "chrF2 signature", "TER signature"]


def test_bad_input_exits_1(tmp_path) -> None:
    (tmp_path / "bad.json").write_text("{broken")
    proc = run_subprocess(["gate", "bad.json", "--baseline", "bad.json"], cwd=tmp_path)
    assert proc.returncode == 1 and b"not a bleucli JSON result" in proc.stderr
    usage = run_subprocess(["gate", "x.json"], cwd=tmp_path)  # --baseline is required
    assert usage.returncode == 2


# -- the statistical gate ----------------------------------------------------------------------


def _variant(folder: Path, name: str, change) -> Path:
    lines = Path(HYP).read_text(encoding="utf-8").splitlines()
    path = folder / name
    path.write_text("\n".join(change(lines)) + "\n", encoding="utf-8")
    return path


def _stat_gate(
    folder: Path, baseline_json: Path, current_json: Path, base_txt: str, now_txt: str, *args: str
):
    return run_subprocess(
        [
            "gate",
            str(current_json),
            "--baseline",
            str(baseline_json),
            "--baseline-output",
            base_txt,
            "-i",
            now_txt,
            *args,
        ],
        cwd=folder,
    )


def test_statistical_gate_passes_a_drop_that_is_noise(tmp_path) -> None:
    base = score(tmp_path, "base.json", REF, "-i", HYP)
    # one sentence of 30 loses a word: a real but tiny drop
    slightly = _variant(
        tmp_path, "slightly.de", lambda lines: [lines[0].rsplit(" ", 1)[0]] + lines[1:]
    )
    now = score(tmp_path, "now.json", REF, "-i", str(slightly))
    plain = run_subprocess(["gate", str(now), "--baseline", str(base)], cwd=tmp_path)
    assert plain.returncode == 3  # any drop fails without the statistical gate
    proc = _stat_gate(tmp_path, base, now, HYP, str(slightly), REF)
    text = proc.stdout.decode()
    assert proc.returncode == 0, text + proc.stderr.decode()
    assert "not significant: p = " in text and "gate passed" in text


def test_statistical_gate_fails_a_significant_drop(tmp_path) -> None:
    base = score(tmp_path, "base.json", REF, "-i", HYP)
    broken = _variant(
        tmp_path, "broken.de", lambda lines: [" ".join(reversed(line.split())) for line in lines]
    )
    now = score(tmp_path, "now.json", REF, "-i", str(broken))
    proc = _stat_gate(tmp_path, base, now, HYP, str(broken), REF, "-f", "json")
    assert proc.returncode == 3
    checks = {c["metric"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["BLEU"]["status"] == "fail" and checks["BLEU"]["reason"] == "drop"
    assert "significant: p = 0.0010 <= 0.05" in checks["BLEU"]["detail"]


def test_statistical_gate_takes_references_from_the_signature_test_set(tmp_path) -> None:
    base = score(tmp_path, "base.json", "-t", "sample", "-l", "en-de", "-i", HYP)
    slightly = _variant(
        tmp_path, "slightly.de", lambda lines: [lines[0].rsplit(" ", 1)[0]] + lines[1:]
    )
    now = score(tmp_path, "now.json", "-t", "sample", "-l", "en-de", "-i", str(slightly))
    proc = _stat_gate(tmp_path, base, now, HYP, str(slightly))
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    assert "not significant" in proc.stdout.decode()


def test_statistical_gate_refuses_files_that_do_not_match_the_results(tmp_path) -> None:
    base = score(tmp_path, "base.json", REF, "-i", HYP)
    broken = _variant(tmp_path, "broken.de", lambda lines: ["x"] * len(lines))
    now = score(tmp_path, "now.json", REF, "-i", str(broken))
    wrong = _stat_gate(tmp_path, base, now, HYP, HYP, REF)  # not the current output
    assert wrong.returncode == 1
    assert b"is it the right file?" in wrong.stderr and b"Traceback" not in wrong.stderr
    half = run_subprocess(["gate", str(now), "--baseline", str(base), "-i", HYP], cwd=tmp_path)
    assert half.returncode == 1 and b"needs both --baseline-output and -i" in half.stderr
    no_refs = _stat_gate(tmp_path, base, now, HYP, str(broken))
    assert (
        no_refs.returncode == 1 and b"give the reference files after CURRENT.json" in no_refs.stderr
    )
    short = tmp_path / "short.de"
    short.write_text(
        "".join(Path(HYP).read_text(encoding="utf-8").splitlines(True)[:3]), encoding="utf-8"
    )
    mismatch = _stat_gate(tmp_path, base, now, HYP, str(short), REF)
    assert mismatch.returncode == 1
    assert b"short.de: 3 lines, but the references have 30" in mismatch.stderr


def test_every_check_is_its_own_verdict(tmp_path, baseline) -> None:
    """A drop and a missed floor of one metric are two FAIL lines and two JUnit failures;
    a kept floor is a PASS line of its own."""
    worse = _variant(
        tmp_path, "worse.de", lambda lines: [line.replace("Der ", "Die ") for line in lines]
    )
    current = score(tmp_path, "now.json", REF, "-i", str(worse))
    proc = gate(
        tmp_path, current, "--tolerance", "0.1", "--min-score", "BLEU=99", "--min-score",
        "chrF2=1", "--junit", "report.xml",
    )  # fmt: skip
    lines = proc.stdout.decode().splitlines()
    verdicts = {line.split(":")[0] for line in lines[:-1]}
    assert proc.returncode == 3
    assert {"FAIL BLEU drop", "FAIL BLEU min-score", "PASS chrF2 min-score"} <= verdicts
    assert "PASS BLEU signature" in verdicts
    failed = sum(line.startswith("FAIL") for line in lines)
    assert lines[-1] == f"gate failed: {len(lines) - 1 - failed} passed, {failed} failed"
    suite = ET.parse(tmp_path / "report.xml").getroot().find("testsuite")
    assert suite is not None and int(suite.get("failures")) == failed
    failing = {
        case.get("name") for case in suite.findall("testcase") if case.find("failure") is not None
    }
    assert {"BLEU drop", "BLEU min-score"} <= failing


def test_a_statistical_pass_of_the_drop_never_passes_a_missed_floor(tmp_path) -> None:
    """The issue's case: a drop that is noise passes as not significant, but the current
    score is under --min-score, and that check fails on its own (exit 3)."""
    base = score(tmp_path, "base.json", REF, "-i", HYP)
    slightly = _variant(
        tmp_path, "slightly.de", lambda lines: [lines[0].rsplit(" ", 1)[0]] + lines[1:]
    )
    now = score(tmp_path, "now.json", REF, "-i", str(slightly))
    current_bleu = next(r["score"] for r in json.loads(now.read_text()) if r["name"] == "BLEU")
    floor = f"BLEU={current_bleu + 1}"
    proc = _stat_gate(
        tmp_path, base, now, HYP, str(slightly), REF, "--tolerance", "0.1",
        "--min-score", floor, "-f", "json",
    )  # fmt: skip
    assert proc.returncode == 3, proc.stdout.decode() + proc.stderr.decode()
    checks = {(c["metric"], c["check"]): c for c in json.loads(proc.stdout)["checks"]}
    assert checks["BLEU", "drop"]["status"] == "pass"
    assert checks["BLEU", "drop"]["reason"] == "not-significant"
    assert checks["BLEU", "min-score"]["status"] == "fail"
    assert "minimum is" in checks["BLEU", "min-score"]["detail"]
    kept = _stat_gate(tmp_path, base, now, HYP, str(slightly), REF, "--min-score", "BLEU=1")
    assert kept.returncode == 0, kept.stdout.decode()


def test_under_github_actions_the_gate_writes_the_step_summary(tmp_path, baseline) -> None:
    """``bleucli gate`` appends its table to ``$GITHUB_STEP_SUMMARY`` as ``submit --gate``
    does (it wrote none)."""
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    proc = gate(tmp_path, score(tmp_path, "now.json", REF, "-i", REF2), env=env)
    assert proc.returncode == 3
    text = summary.read_text()
    assert text.startswith("earlier step\n### bleucli gate: failed\n")
    assert "| verdict | check | baseline | current | detail |" in text
    assert "| FAIL | BLEU drop |" in text
    quiet = tmp_path / "quiet.md"
    plain = {**os.environ, "GITHUB_STEP_SUMMARY": str(quiet)}
    plain.pop("GITHUB_ACTIONS", None)
    gate(tmp_path, score(tmp_path, "again.json", REF, "-i", REF2), env=plain)
    assert not quiet.exists()  # only under GitHub Actions
