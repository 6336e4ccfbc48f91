#!/usr/bin/env python3
"""Time ``bleucli meta-eval`` of a new COMET checkpoint on WMT22 ru-en (10 systems x 2,016
segments, tests/data/metaeval/wmt22) with the embedding cache warm, against the same
meta-evaluation fed the same COMET segment scores through ``--segment-scores`` (the
statistics alone). The checkpoint has the real model's width (hidden 1024: the head is
wmt22-comet-da's size) and one encoder layer, so warming the cache takes minutes, not
hours; with the cache warm the encoder does not run, so its depth does not matter.

    python -m scripts.bench_neural_metaeval --pairs 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts.bench_neural import alternating
from tests.neural_toy import ROOT, build

MTME = ROOT / "tests" / "data" / "metaeval" / "wmt22"
WIDE = {"hidden": 1024, "layers": 1, "heads": 16, "ffn": 4096}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--folder", help="keep the checkpoint and the cache here")
    args = parser.parse_args()
    folder = Path(args.folder or tempfile.mkdtemp(prefix="bench-neural-metaeval-"))
    model = folder / "regression"
    if not (model / "checkpoints" / "model.ckpt").exists():
        build(folder, "regression", dims=WIDE)
    env = {**os.environ, "BLEUCLI_CACHE": str(folder / "cache"), "HF_HUB_OFFLINE": "1"}
    scores = folder / "COMET.seg.score"
    if not scores.exists():  # warm the cache, and keep the segment scores
        start = time.perf_counter()
        code = (
            "import sys; from bleucli.batch import sentence_scores; from pathlib import Path\n"
            f"root = Path({str(MTME)!r}); model = {str(model)!r}\n"
            "read = lambda p: p.read_text(encoding='utf-8').splitlines()\n"
            "src = read(root / 'sources' / 'ru-en.txt'); ref = read(root / 'references' / 'ru-en.refA.txt')\n"
            "out = []\n"
            "for path in sorted((root / 'system-outputs' / 'ru-en').glob('*.txt')):\n"
            "    if path.stem == 'refA': continue\n"
            "    for v in sentence_scores('comet', read(path), [ref], sources=src, model=model):\n"
            "        out.append(f'{path.stem}\\t{float(v)!r}\\n')\n"
            f"Path({str(scores)!r}).write_text(''.join(out))\n"
        )
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        print(f"cache warmed in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    common = [sys.executable, "-m", "bleucli", "meta-eval", "--mtme", str(MTME), "-l", "ru-en",
              "--human-name", "wmt-z",
              "-q", "-f", "json"]  # fmt: skip
    with_model = [*common, "-m", "bleu", "chrf", "ter", "comet", "--comet-model", str(model)]
    fed = [*common, "-m", "bleu", "chrf", "ter", "--segment-scores", f"COMET={scores}"]
    runs = alternating(args.pairs, {"model": with_model, "fed": fed}, lambda pair: env)
    for times in runs:
        print(f"meta-eval with the model {times['model']:.1f} s, fed the scores "
              f"{times['fed']:.1f} s", file=sys.stderr)  # fmt: skip
    ratios = [t["model"] / t["fed"] for t in runs]
    print("\n| row | with the model (cache warm) / fed the scores (median) | pairs |")
    print("|---|---|---|")
    print(f"| meta-eval ru-en, -m bleu chrf ter comet, defaults | {statistics.median(ratios):.2f}x "
          f"| {args.pairs} |")  # fmt: skip


if __name__ == "__main__":
    main()
