"""The outputs that must stay byte-identical across refactors (#43): scoring JSON and text,
tables, paired tests, rankings, sentence scores, intervals, reports and meta-eval tables, on
the shipped examples (always) and on WMT22 en-de from ../shared (when it is there). Stored
once by ``python tests/golden_cases.py`` from the code of 2026-12-06 (before the refactor);
an output changed on purpose is stored again by name (``python tests/golden_cases.py
table-markdown``), its diff read first."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EX = "examples"
WMT = "../shared/data/wmt22/en-de"
GOLDEN = ROOT / "tests" / "data" / "golden"

#: name -> argv (paths relative to the repository root); the WMT22 ones need ../shared.
CASES: dict[str, list[str]] = {
    "json-three": [f"{EX}/ref.de", "-i", f"{EX}/hyp.de", "-m", "bleu", "chrf", "ter"],
    "text-three": [f"{EX}/ref.de", "-i", f"{EX}/hyp.de", "-m", "bleu", "chrf", "ter", "-f", "text"],
    "text-options": [
        f"{EX}/ref.de",
        f"{EX}/ref2.de",
        "-i",
        f"{EX}/hyp.de",
        "-m",
        "bleu",
        "chrf",
        "ter",
        "-tok",
        "intl",
        "-lc",
        "-cw",
        "2",
        "--chrf-beta",
        "3",
        "--ter-normalized",
        "--ter-case-sensitive",
        "-f",
        "text",
        "-w",
        "3",
    ],
    "short": [
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        "-m",
        "bleu",
        "chrf",
        "-s",
        "floor",
        "-sv",
        "0.2",
        "-sh",
        "-f",
        "text",
    ],
    "score-only": [f"{EX}/ref.de", "-i", f"{EX}/hyp.de", "-b", "-w", "4"],
    "table-markdown": [
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        f"{EX}/hyp2.de",
        "-m",
        "bleu",
        "chrf",
        "ter",
        "-f",
        "markdown",
    ],
    "table-text": [
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        f"{EX}/hyp2.de",
        "-m",
        "bleu",
        "chrf",
        "-f",
        "text",
    ],
    "table-json": [
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        f"{EX}/hyp2.de",
        "-m",
        "bleu",
        "chrf",
        "ter",
    ],
    "paired-bs": [
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        f"{EX}/hyp2.de",
        "--paired-bs",
        "-m",
        "bleu",
        "chrf",
        "-f",
        "text",
    ],
    "paired-ar-json": [
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        f"{EX}/hyp2.de",
        "--paired-ar",
        "-parn",
        "500",
        "-m",
        "bleu",
        "ter",
    ],
    "rank-latex": [
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        f"{EX}/hyp2.de",
        f"{EX}/ref2.de",
        "--rank",
        "-m",
        "bleu",
        "chrf",
        "-f",
        "latex",
    ],
    "rank-json": [
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        f"{EX}/hyp2.de",
        f"{EX}/ref2.de",
        "--rank",
        "-f",
        "json",
    ],
    "sentences-tsv": [
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        "-sl",
        "-m",
        "bleu",
        "chrf",
        "-f",
        "tsv",
    ],
    "sentences-text": [f"{EX}/ref.de", "-i", f"{EX}/hyp.de", "-sl", "-m", "ter"],
    "confidence": [f"{EX}/ref.de", "-i", f"{EX}/hyp.de", "-ci", "-m", "bleu", "chrf", "ter"],
    "confidence-text": [f"{EX}/ref.de", "-i", f"{EX}/hyp.de", "-ci", "-cin", "200", "-f", "text"],
    "from-signature": [
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        "--from-signature",
        "BLEU|nrefs:1|case:lc|eff:no|tok:intl|smooth:exp|version:2.0.0",
        "-f",
        "text",
    ],
    "sample-testset": ["-t", "sample", "-l", "en-de", "-i", f"{EX}/hyp.de", "-m", "bleu", "chrf"],
    "docids": [
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        "--docids",
        f"{EX}/docids.txt",
        "-d",
        "-f",
        "text",
    ],
    "stats": ["stats", f"{EX}/ref.de", "-i", f"{EX}/hyp.de", "-m", "bleu", "chrf", "ter"],
    "analyze-json": [
        "analyze",
        f"{EX}/ref.de",
        "-i",
        f"{EX}/hyp.de",
        f"{EX}/hyp2.de",
        "-f",
        "json",
    ],
    "meta-eval": [
        "meta-eval",
        "--mtme",
        f"{EX}/meta-eval/wmt22-ru-en",
        "-l",
        "ru-en",
        "--stat",
        "sys-pearson",
        "seg-kendall-item",
        "seg-acc-t-item",
        "-k",
        "100",
        "-f",
        "json",
    ],
    "wmt22-json": [f"{WMT}/ref.A.de", "-i", f"{WMT}/sys.Online-A.de", "-m", "bleu", "chrf", "ter"],
    "wmt22-text": [
        f"{WMT}/ref.A.de",
        f"{WMT}/ref.B.de",
        "-i",
        f"{WMT}/sys.Online-A.de",
        "-m",
        "bleu",
        "chrf",
        "ter",
        "-f",
        "text",
    ],
    "wmt22-table": [
        f"{WMT}/ref.A.de",
        "-i",
        f"{WMT}/sys.Online-A.de",
        f"{WMT}/sys.Lan-Bridge.de",
        f"{WMT}/sys.JDExploreAcademy.de",
        "-m",
        "bleu",
        "chrf",
        "ter",
        "-f",
        "markdown",
    ],
    "wmt22-paired": [
        f"{WMT}/ref.A.de",
        "-i",
        f"{WMT}/sys.Online-A.de",
        f"{WMT}/sys.Lan-Bridge.de",
        "--paired-bs",
        "-m",
        "bleu",
        "chrf",
        "-f",
        "text",
    ],
    "wmt22-rank": [
        f"{WMT}/ref.A.de",
        "-i",
        f"{WMT}/sys.Online-A.de",
        f"{WMT}/sys.Lan-Bridge.de",
        f"{WMT}/sys.JDExploreAcademy.de",
        "--rank",
        "-m",
        "bleu",
        "ter",
        "-f",
        "json",
    ],
    "wmt22-sentences": [
        f"{WMT}/ref.A.de",
        "-i",
        f"{WMT}/sys.Online-A.de",
        "-sl",
        "-m",
        "bleu",
        "chrf",
        "-f",
        "json",
    ],
    "wmt22-chrfpp-intl": [
        f"{WMT}/ref.A.de",
        "-i",
        f"{WMT}/sys.Online-A.de",
        "-m",
        "bleu",
        "chrf",
        "-cw",
        "2",
        "-tok",
        "intl",
        "-ci",
        "-cin",
        "300",
    ],
}


def run(argv: list[str]) -> bytes:
    """``bleucli ARGV`` in a fresh process from the repository root: its stdout."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("BLEUCLI_")}
    env.update(PYTHONPATH=str(ROOT), BLEUCLI_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "bleucli", *argv], capture_output=True, cwd=ROOT,
                          env=env, timeout=600)  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"{argv}: exit {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return proc.stdout


if __name__ == "__main__":
    import sys

    GOLDEN.mkdir(parents=True, exist_ok=True)
    chosen = sys.argv[1:] or list(CASES)  # names: store these again (a change on purpose)
    for name, argv in CASES.items():
        if name not in chosen:
            continue
        if any(WMT in arg for arg in argv) and not (ROOT / WMT).exists():
            print(f"skipped {name}: no {WMT}")
            continue
        (GOLDEN / f"{name}.out").write_bytes(run(argv))
        print(f"wrote {name}")
