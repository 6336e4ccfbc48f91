"""A file that starts with a byte-order mark is scored as SacreBLEU scores it -- the mark is
part of the first line -- with a warning that names ``-e utf-8-sig``, which drops it. It was
dropped silently, and the numbers differed from SacreBLEU's (BLEU 59.943 vs 59.427)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT, run_cli

sacrebleu = pytest.importorskip("sacrebleu")

REF, HYP, HYP2 = (str(EXAMPLES / n) for n in ("ref.de", "hyp.de", "hyp2.de"))
BOM = "\ufeff"


@pytest.fixture
def marked(tmp_path: Path) -> str:
    path = tmp_path / "bom.de"
    path.write_bytes(BOM.encode() + Path(HYP).read_bytes())
    return str(path)


def oracle(hypotheses: list[str]) -> dict[str, float]:
    refs = [Path(REF).read_text(encoding="utf-8").splitlines()]
    return {
        "BLEU": sacrebleu.corpus_bleu(hypotheses, refs).score,
        "chrF2": sacrebleu.corpus_chrf(hypotheses, refs).score,
        "TER": sacrebleu.corpus_ter(hypotheses, refs).score,
    }


def scores(output: str) -> dict[str, float]:
    return {entry["name"]: entry["score"] for entry in json.loads(output)}


@pytest.mark.parametrize("extra", [[], [HYP2]], ids=["one system", "two systems"])
def test_the_mark_is_scored_as_sacrebleu_scores_it_with_a_warning(marked, extra) -> None:
    lines = Path(marked).read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith(BOM)
    expected = oracle(lines)
    result = run_cli([REF, "-i", marked, *extra, "-m", "bleu", "chrf", "ter", "-w", "6"])
    assert result.exit_code == 0, result.stderr
    if extra:  # a table of systems: the first column is the marked file's
        table = json.loads(result.stdout)
        got = {k: float(v) for k, v in table[0].items() if k != "system"}
    else:
        got = scores(result.stdout)
    assert got == {k: round(v, 6) for k, v in expected.items()}
    assert got["BLEU"] != round(oracle(Path(HYP).read_text().splitlines())["BLEU"], 6)
    warnings = [line for line in result.stderr.splitlines() if "byte-order mark" in line]
    assert len(warnings) == 1 and "-e utf-8-sig" in warnings[0] and marked in warnings[0]


def test_utf_8_sig_drops_the_mark(marked) -> None:
    dropped = run_cli([REF, "-i", marked, "-e", "utf-8-sig", "-m", "bleu", "chrf", "-w", "6"])
    plain = run_cli([REF, "-i", HYP, "-m", "bleu", "chrf", "-w", "6"])
    assert dropped.exit_code == 0 and "byte-order mark" not in dropped.stderr
    assert scores(dropped.stdout) == scores(plain.stdout)


def test_the_sacrebleu_layer_agrees_with_sacrebleu(marked) -> None:
    """``python -m sacrebleu`` under ``install_as_sacrebleu()`` and SacreBLEU itself print
    the same scores for the marked file."""
    args = [REF, "-i", marked, "-m", "bleu", "chrf", "-w", "6", "-b"]
    code = (
        "import sys, bleucli; bleucli.install_as_sacrebleu(); import runpy; "
        f"sys.argv = ['sacrebleu', *{args!r}]; runpy.run_module('sacrebleu', run_name='__main__')"
    )
    ours = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    theirs = subprocess.run(
        [sys.executable, "-m", "sacrebleu", *args], capture_output=True, text=True, cwd=ROOT
    )
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr + theirs.stderr
    assert json.loads(ours.stdout) == json.loads(theirs.stdout)
