"""The benchmark's own score-agreement check, on its small corpus (timings are not asserted)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_bench_quick_run_agrees_with_sacrebleu() -> None:
    proc = subprocess.run(
        [sys.executable, "scripts/bench.py", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| BLEU corpus score (API) | 500 |" in proc.stdout
    assert "| CLI `--paired-bs`, 3 systems x 3 metrics | 500 |" in proc.stdout
    assert "Score disagreements" not in proc.stdout
    assert "| `--version` |" in proc.stdout  # the import-time rows


def test_generated_corpus_is_deterministic() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from bench import make_corpus
    finally:
        sys.path.pop(0)
    first, second = make_corpus(50), make_corpus(50)
    assert first == second
    refs, systems = first
    assert len(refs) == 50 and len(systems) == 3 and all(len(s) == 50 for s in systems)
    assert systems[0] != refs


def test_bench_takes_given_files() -> None:
    """--files times the user's own test set; the paired test uses its first --ter-lines."""
    files = [str(ROOT / "examples" / n) for n in ("ref.de", "hyp.de", "ref2.de", "src.en")]
    proc = subprocess.run(
        [
            sys.executable,
            "scripts/bench.py",
            "--files",
            *files,
            "--repeats",
            "1",
            "--ter-lines",
            "20",
            "--python",
            sys.executable,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| BLEU corpus score (API) | 30 |" in proc.stdout
    assert "| TER corpus score (API) | 20 |" in proc.stdout
    assert "| CLI `--paired-bs`, 3 systems x 3 metrics | 20 |" in proc.stdout
    assert "Peak RSS, CLI BLEU on 30 lines" in proc.stdout
    assert "Score disagreements" not in proc.stdout
