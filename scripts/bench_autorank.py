#!/usr/bin/env python3
"""``bleucli autorank`` on WMT25's published pairs against (a) a plain numpy implementation
of the same formula and (b) reading the files and averaging alone: every run a fresh
process, the three alternating pair by pair, medians of the per-pair ratios.

    python -m scripts.bench_autorank [--data ../shared/data/autorank/wmt25] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The formula written the plain way: read every file, mean of the non-null scores, the
#: robust z per metric, averaged, rescaled (the metrics: WMT25's choice for the pair).
PLAIN = r"""
import glob, json, sys
import numpy as np
folder, pair, metrics, combine = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4] == "1"
scores = {}
for path in sorted(glob.glob(folder + "/*.jsonl")):
    name = path.rsplit("/", 1)[1][:-6]
    sums = {m: [0.0, 0] for m in metrics}
    found = False
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            if item["language_pair"] != pair:
                continue
            found = True
            for m in metrics:
                values = [v for v in item["metric_scores"][m] if v is not None]
                sums[m][0] += sum(values)
                sums[m][1] += len(values)
    if found:
        scores[name] = [sums[m][0] / sums[m][1] for m in metrics]
names = sorted(scores)
x = np.array([scores[n] for n in names]).T
if combine:
    z = (x - np.median(x, axis=1, keepdims=True)) / np.maximum(
        1e-12, np.percentile(x, 100, axis=1, keepdims=True) - np.percentile(x, 25, axis=1, keepdims=True))
    zbar = z.mean(axis=0)
    rank = 1 + (zbar.max() - zbar) / (zbar.max() - zbar.min()) * (len(names) - 1)
    print(json.dumps(dict(zip(names, rank.tolist()))))
else:
    print(json.dumps(dict(zip(names, x.T.tolist()))))
"""


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(ROOT.parent / "shared/data/autorank/wmt25"))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from bleucli.autoranking.wmt import default_metrics, read_score_files

    folder = str(Path(args.data) / "automatic_scores")
    pairs = read_score_files([folder])
    rows = []
    for pair in sorted(pairs):
        first = next(iter(pairs[pair].values()))
        metrics = ",".join(default_metrics("wmt25", pair, list(first.scores[0])))
        bleucli = [sys.executable, "-m", "bleucli", "autorank", "--wmt-scores", folder, "-l",
                   pair, "-f", "json"]  # fmt: skip
        plain = [sys.executable, "-c", PLAIN, folder, pair, metrics, "1"]
        reading = [sys.executable, "-c", PLAIN, folder, pair, metrics, "0"]
        times: dict[str, list[float]] = {"bleucli": [], "numpy": [], "read": []}
        for _ in range(args.repeats):
            times["bleucli"].append(timed(bleucli))
            times["numpy"].append(timed(plain))
            times["read"].append(timed(reading))
        ratio_numpy = statistics.median(b / n for b, n in zip(times["bleucli"], times["numpy"]))
        ratio_read = statistics.median(b / r for b, r in zip(times["bleucli"], times["read"]))
        rows.append((pair, len(pairs[pair]), times, ratio_numpy, ratio_read))
    print("| pair | systems | bleucli | plain numpy | read and average | bleucli / numpy | "
          "bleucli / read |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    for pair, n, times, ratio_numpy, ratio_read in rows:
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"| {pair} | {n} | {med['bleucli']:.2f} s | {med['numpy']:.2f} s | "
              f"{med['read']:.2f} s | {ratio_numpy:.2f}x | {ratio_read:.2f}x |")  # fmt: skip
    overall = statistics.median(r[3] for r in rows)
    print(f"\nmedian over pairs, bleucli / plain numpy: {overall:.2f}x")


if __name__ == "__main__":
    main()
