"""Time ``bleucli meta-eval``'s statistics against mt-metrics-eval (MTME) on the same vectors.

    python scripts/bench_metaeval.py --mtme-src PATH [--data DIR] [--pairs 3] [--out FILE]

PATH is a directory holding MTME's ``mt_metrics_eval`` package (a checkout of
github.com/google-research/mt-metrics-eval; its ``stats``, ``tau_optimization`` and ``pce``
modules are used, with scipy). DIR is an MTME test-set directory (default: the WMT22 DA
data in tests/data/metaeval/wmt22); the pair is ru-en with ``wmt-z`` and four metrics
(bleucli's BLEU, chrF and -TER, and the directory's LenRatio).

The vectors are prepared once (bleucli's sentence scores, saved to a scratch file); every
timing then runs in a fresh process that loads them and times only the statistics, bleucli
and MTME alternating pair by pair. Rows report medians of the per-pair ratios.

Rows:
* ``acc-t``: segment-level pairwise accuracy with tie calibration, item-grouped, every
  threshold (``sample_rate=1.0``), for the four metrics.
* ``statistics``: every deterministic statistic of the default set, four metrics.
* ``significance``: the full significance matrix (every pair of the four metrics under
  every statistic: PERM-BOTH, acc-t's pairs test) with 1,000 draws. MTME needs hours for
  it, so its time is measured with 0 and ``--mtme-draws`` draws (default 10) and
  extrapolated linearly to 1,000 (each draw repeats the same work); the table says so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIGNIFICANCE_STATS = (
    "sys-pearson", "sys-spearman", "sys-kendall", "sys-accuracy",
    "seg-pearson-none", "seg-pearson-item", "seg-pearson-sys",
    "seg-kendall-none", "seg-kendall-item", "seg-kendall-sys", "seg-acc-t-item",
)  # fmt: skip


def prepare(data_dir: str, path: Path) -> None:
    """bleucli's table for ru-en (four metrics), saved as lists with None for unrated."""
    from bleucli.commands.meta_eval import MetaEvalRequest, load

    prepared = load(MetaEvalRequest(mtme=data_dir, pair="ru-en", human_name="wmt-z"))
    data = prepared.data

    def listed(values):
        return [None if v != v else float(v) for v in values]

    document = {
        "systems": data.systems,
        "gold_seg": listed(data.human_seg.ravel()),
        "gold_sys": listed(data.system_gold()),
        "metrics": {
            name: {"seg": listed(m.seg.ravel()), "sys": listed(m.sys)}
            for name, m in data.metrics.items()
        },
    }
    path.write_text(json.dumps(document))


# -- one timing, in a fresh process ----------------------------------------------------------


def time_bleucli(row: str, vectors: dict, draws: int) -> float:
    import numpy as np

    from bleucli.metaeval import ties
    from bleucli.metaeval.evaluate import evaluate
    from bleucli.metaeval.groups import grouping
    from bleucli.metaeval.significance import TestSettings
    from bleucli.metaeval.table import MetaEvalData, MetricScores

    n_sys = len(vectors["systems"])

    def matrix(values):
        return np.array([np.nan if v is None else v for v in values], dtype=float).reshape(
            n_sys, -1
        )

    gold = matrix(vectors["gold_seg"])
    metrics = {
        name: MetricScores(name, matrix(m["seg"]), np.array(m["sys"], dtype=float))
        for name, m in vectors["metrics"].items()
    }
    start = time.perf_counter()
    if row == "acc-t":
        groups = grouping(~np.isnan(gold), "item")
        for scores in metrics.values():
            ties.calibrate(groups, groups.take(gold), groups.take(scores.seg))
    else:
        data = MetaEvalData(vectors["systems"], gold.shape[1], "wmt-z", "", gold,
                            np.array(vectors["gold_sys"], dtype=float), metrics)  # fmt: skip
        evaluate(data, SIGNIFICANCE_STATS, TestSettings(resamples=draws))
    return time.perf_counter() - start


def time_mtme(row: str, vectors: dict, draws: int) -> float:
    import numpy as np
    import scipy.stats
    from mt_metrics_eval import stats  # type: ignore[import-not-found]

    n_sys = len(vectors["systems"])
    seg = {
        n: stats.Correlation(n_sys, vectors["gold_seg"], m["seg"])
        for n, m in vectors["metrics"].items()
    }
    sys_level = {
        n: stats.Correlation(n_sys, vectors["gold_sys"], m["sys"])
        for n, m in vectors["metrics"].items()
    }
    psd = stats.PermutationSigDiffParams(block_size=1000)
    start = time.perf_counter()
    if row == "acc-t":
        for corr in seg.values():
            corr.KendallWithTiesOpt(average_by="item", variant="acc23", sample_rate=1.0)
        return time.perf_counter() - start

    def accuracy(gold, metric):
        agree, pairs = stats.Agreement(gold, metric)
        return agree / pairs, pairs

    tasks = [
        (sys_level, scipy.stats.pearsonr, "none", {}), (sys_level, scipy.stats.spearmanr, "none", {}),
        (sys_level, scipy.stats.kendalltau, "none", {}), (sys_level, accuracy, "none", {}),
    ] + [
        (seg, fcn, by, {}) for fcn in (scipy.stats.pearsonr, scipy.stats.kendalltau)
        for by in ("none", "item", "sys")
    ]  # fmt: skip
    np.random.seed(1)
    for corrs, fcn, by, args in tasks:  # MTME's CompareMetrics, one statistic at a time
        wrapper = stats.AverageCorrelation(fcn, n_sys, by, True)
        values = {m: wrapper(c.gold_scores, c.metric_scores)[0] for m, c in corrs.items()}
        order = sorted(values, key=lambda m: (-values[m], m))
        for i in range(len(order)):
            for j in range(i + 1, len(order)):
                if draws:
                    stats.PermutationSigDiff(
                        corrs[order[j]], corrs[order[i]], fcn, by, draws, psd, **args
                    )
    values = {
        m: stats.KendallWithTiesOpt(c.gold_scores, c.metric_scores, "acc23", n_sys, "item", 1.0)[0]
        for m, c in seg.items()
    }
    order = sorted(values, key=lambda m: (-values[m], m))
    for i in range(len(order)):
        for j in range(i + 1, len(order)):
            if draws:
                stats.PairwisePermutationSigDiff(
                    seg[order[j]], seg[order[i]], "acc23", "item", draws, psd, sample_rate=1.0
                )
    return time.perf_counter() - start


def one(tool: str, row: str, vectors_path: str, draws: int) -> None:
    vectors = json.loads(Path(vectors_path).read_text())
    timer = time_bleucli if tool == "bleucli" else time_mtme
    print(json.dumps({"seconds": timer(row, vectors, draws)}))


# -- the driver ---------------------------------------------------------------------------------


def _run(tool: str, row: str, vectors: Path, draws: int, mtme_src: str) -> float:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([mtme_src, str(ROOT)]),
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")  # fmt: skip
    out = subprocess.run(
        [sys.executable, __file__, "--one", tool, row, str(vectors), str(draws)],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    return float(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mtme-src", required=True, help="directory holding mt_metrics_eval/")
    parser.add_argument("--data", default=str(ROOT / "tests" / "data" / "metaeval" / "wmt22"))
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--mtme-draws", type=int, default=10)
    parser.add_argument("--out", default=None, help="also write the Markdown table here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        vectors = Path(scratch) / "vectors.json"
        prepare(args.data, vectors)
        rows = []
        for row in ("acc-t", "statistics", "significance"):
            ratios, ours, theirs = [], [], []
            for k in range(args.pairs):
                order = ("bleucli", "mtme") if k % 2 == 0 else ("mtme", "bleucli")
                got = {}
                for tool in order:
                    if tool == "bleucli":
                        draws = 1000 if row == "significance" else 0
                        got[tool] = _run(tool, row, vectors, draws, args.mtme_src)
                    elif row == "significance":
                        base = _run(tool, row, vectors, 0, args.mtme_src)
                        some = _run(tool, row, vectors, args.mtme_draws, args.mtme_src)
                        got[tool] = base + (some - base) / args.mtme_draws * 1000
                    else:
                        got[tool] = _run(tool, row, vectors, 0, args.mtme_src)
                ours.append(got["bleucli"])
                theirs.append(got["mtme"])
                ratios.append(got["mtme"] / got["bleucli"])
                print(
                    f"{row}: bleucli {got['bleucli']:.2f} s, MTME {got['mtme']:.2f} s", flush=True
                )
            rows.append(
                (row, statistics.median(ours), statistics.median(theirs), statistics.median(ratios))
            )
    lines = [
        "| row | bleucli | MTME | speed-up (median of pairs) |",
        "|---|---|---|---|",
        *(f"| {r} | {a:.2f} s | {b:.2f} s | {x:.0f}x |" for r, a, b, x in rows),
    ]
    table = "\n".join(lines)
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one(*sys.argv[2:5], int(sys.argv[5]))
    else:
        main()
