"""``bleucli report``: a systems x test sets x metrics table from result files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import EXAMPLES, run_cli

HYP, REF, REF2 = (str(EXAMPLES / n) for n in ("hyp.de", "ref.de", "ref2.de"))


def result_file(write, name: str, args: list[str]) -> str:
    out = run_cli([*args, "-m", "bleu", "chrf"])
    assert out.exit_code == 0, out.stderr
    return write(name, out.stdout)


def test_report_table_formats(write, cache_dir) -> None:
    base = result_file(write, "base.json", [REF, "-i", HYP])
    alt = result_file(write, "alt.json", [REF, "-i", REF2])
    sample = result_file(write, "s.json", ["-t", "sample", "-l", "en-de", "-i", HYP])
    text = run_cli(["report", base, f"other:{alt}", "-f", "markdown"]).stdout.splitlines()
    scores = {r["name"]: r["score"] for r in json.loads(Path(alt).read_text())}
    assert text[0].split("|")[1:4] == [" System   ", "   BLEU ", "   chrF2 "]  # numbers right
    assert text[3].split("|")[1].strip() == "other"
    assert f"{scores['BLEU']:.1f}" in text[3]
    both = run_cli(["report", base, sample, "-f", "json"])
    data = json.loads(both.stdout)
    assert [s["system"] for s in data["systems"]] == ["base", "s"]
    assert {
        "test": "sample/en-de",
        "metric": "BLEU",
        "score": json.loads(Path(sample).read_text())[0]["score"],
    } in data["systems"][1]["scores"]
    latex = run_cli(["report", base, sample, "-f", "latex"]).stdout
    assert "\\toprule" in latex and "Metric signatures:\\\\" in latex
    assert "not comparable" not in latex


def test_report_flags_mixed_signatures_and_bad_files(write) -> None:
    a = result_file(write, "a.json", [REF, "-i", HYP])
    b_out = run_cli([REF, "-i", REF2, "-m", "bleu", "chrf", "-lc"]).stdout
    b = write("b.json", b_out)
    mixed = run_cli(["report", a, b])
    assert "BLEU mixes different signatures" in mixed.stderr  # a warning, not table text
    assert "Not comparable: BLEU" in mixed.stdout
    bad = write("bad.json", "{nope")
    result = run_cli(["report", bad])
    assert result.exit_code == 1 and "not a bleucli JSON result" in result.stderr
    assert run_cli(["report"]).exit_code == 2
