#!/usr/bin/env python3
"""Time bleucli's batch scoring (bleucli.batch, ``bleucli mbr``) against the tools people use
for it: a SacreBLEU ``sentence_score`` loop and fastchrf's pairwise chrF, on real WMT22
sentences.

Every measurement runs in a fresh process of the same virtual environment as scripts/bench.py
(both tools installed as wheels); the tools alternate pair by pair and each ratio is the
median of the per-pair ratios. Rows report pairs (or cells) per second; SacreBLEU's loop is
timed on a slice of the data and its rate extrapolated (it would take minutes on all of it).
The scores are compared on that slice and the script fails if any differs.

    python scripts/bench_batch.py                 # all rows
    python scripts/bench_batch.py --quick         # small slices, one pair: an agreement check
    python scripts/bench_batch.py --write scripts/BENCHMARKS-batch.md
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the environment, fresh-process runs and the machine line)

REAL_DATA = bench.REAL_DATA

_SNIPPET = r"""
import json, sys, time, tracemalloc
import numpy  # both tools use it; its import is not what is timed
tool, task, metric, path, limit = sys.argv[1:6]
limit = int(limit)
data = json.load(open(path, encoding="utf-8"))
options = {"bleu": {"effective_order": True}, "chrf": {}, "ter": {}}[metric]
# the clock runs over each tool's own call only, not over what makes its input or output
# a flat list of scores to compare
if tool == "sacrebleu":
    import sacrebleu
    scorer = {"bleu": sacrebleu.BLEU, "chrf": sacrebleu.CHRF, "ter": sacrebleu.TER}[metric](**options)
    if task in ("aligned", "rewards"):
        pairs = list(zip(data["hyps"], data["refs"]))[:limit]
    else:
        pairs = [(h, r) for g in data["groups"] for h in g for r in g][:limit]
    start = time.perf_counter()
    scores = [scorer.sentence_score(h, [r]).score for h, r in pairs]
    elapsed = time.perf_counter() - start
    count = len(scores)
elif tool == "fastchrf":
    import fastchrf
    start = time.perf_counter()
    matrix = fastchrf.pairwise_chrf(data["groups"], data["groups"])
    elapsed = time.perf_counter() - start
    scores = [x for g in matrix for row in g for x in row][:limit]
    count = sum(len(g) ** 2 for g in data["groups"])
else:
    from bleucli import batch
    batch.scorer(metric, dict(options))  # the metric class and tokeniser loaded, as for SacreBLEU
    if task == "memory":  # traced allocations cost time: only in the memory row
        tracemalloc.start()
    if task == "rewards":  # a GRPO reward function, called once per batch of completions
        from bleucli.rewards import reward

        function = reward(metric, **options)
        hyps, refs, size = data["hyps"], data["refs"], data["batch"]
        start = time.perf_counter()
        rewards = []
        for k in range(0, len(hyps), size):
            rewards += function(hyps[k : k + size], references=refs[k : k + size])
        elapsed = time.perf_counter() - start
        sign = -1.0 if metric == "ter" else 1.0  # TER's reward is negated
        scores = [sign * value for value in rewards[:limit]]
        count = len(rewards)
    else:
        start = time.perf_counter()
        if task == "aligned":
            result = batch.sentence_scores(metric, data["hyps"], [data["refs"]], **options)
        else:
            result = batch.pairwise(metric, data["groups"], data["groups"], **options)
        elapsed = time.perf_counter() - start
        scores = result.ravel()[:limit].tolist()
        count = result.size
peak = tracemalloc.get_traced_memory()[1] if tracemalloc.is_tracing() else 0
print(json.dumps({"seconds": elapsed, "count": count, "scores": scores, "peak": peak}))
"""


def run(tool: str, task: str, metric: str, path: Path, limit: int) -> dict:
    proc = subprocess.run(
        [str(bench.PYTHON), "-c", _SNIPPET, tool, task, metric, str(path), str(limit)],
        capture_output=True,
        text=True,
        cwd=bench.WORKDIR,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{tool} {task} {metric} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def data_sets(folder: Path, quick: bool) -> dict[str, Path]:
    """Aligned pairs (every system output line with its first reference, all pairs) and
    32 groups of 32 system outputs (the samples of MBR), as JSON files."""
    hyps, refs, outputs = [], [], []
    for pair in sorted(p for p in REAL_DATA.iterdir() if p.is_dir()):
        ref = sorted(pair.glob("ref.*"))[0].read_text(encoding="utf-8").splitlines()
        for system in sorted(pair.glob("sys.*")):
            lines = system.read_text(encoding="utf-8").splitlines()
            hyps += lines
            refs += ref
            outputs += lines
    if quick:
        hyps, refs = hyps[:600], refs[:600]
    size = 8 if quick else 32
    groups = [outputs[k * size * 7 : (k * 7 + 1) * size] for k in range(size)]
    paths = {
        "aligned": folder / "aligned.json",
        "rewards": folder / "rewards.json",
        "pairwise": folder / "pairwise.json",
        "big": folder / "big.json",
    }
    paths["aligned"].write_text(json.dumps({"hyps": hyps, "refs": refs}), encoding="utf-8")
    # RL rewards: 8 completions a prompt (the systems' outputs of a line, in turn), the
    # reference once per completion as a dataset gives it (equal strings), batches of 256
    by_ref: dict[str, list[str]] = {}
    for hyp, ref in zip(hyps, refs):
        by_ref.setdefault(ref, []).append(hyp)
    completions = [outs[k % len(outs)] for outs in by_ref.values() for k in range(8)]
    references = [ref for ref in by_ref for _ in range(8)]
    paths["rewards"].write_text(
        json.dumps({"hyps": completions, "refs": references, "batch": 256}), encoding="utf-8"
    )
    paths["pairwise"].write_text(json.dumps({"groups": groups}), encoding="utf-8")
    big = outputs[: 128 if quick else 1024]
    paths["big"].write_text(json.dumps({"groups": [big]}), encoding="utf-8")
    return paths


class Rows:
    def __init__(self) -> None:
        self.rows: list[str] = []
        self.failures: list[str] = []

    def add(
        self, task: str, count: int, reference: str, theirs: float, ours: float, ratio: float
    ) -> None:
        self.rows.append(
            f"| {task} | {count:,} | {reference} | {theirs:,.0f} | {ours:,.0f} | {ratio:.1f}x |"
        )
        print(
            f"  {task:<46} {reference:<18} {theirs:>11,.0f}/s  bleucli {ours:>11,.0f}/s  "
            f"x{ratio:.1f}",
            file=sys.stderr,
        )

    def agree(
        self, what: str, theirs: list[float], ours: list[float], tolerance: float = 0.0
    ) -> None:
        n = min(len(theirs), len(ours))
        bad = [k for k in range(n) if abs(theirs[k] - ours[k]) > tolerance]
        if bad or n == 0:
            self.failures.append(f"{what}: {len(bad)} of {n} scores differ")


def rate(result: dict, limit: int | None = None) -> float:
    count = min(result["count"], limit) if limit else result["count"]
    return count / result["seconds"]


def compare(
    rows: Rows,
    label: str,
    task: str,
    metric: str,
    path: Path,
    reference: str,
    limit: int,
    repeats: int,
    tolerance: float = 0.0,
) -> None:
    """``reference`` (sacrebleu or fastchrf) and bleucli alternately, ratio of rates."""
    ratios, theirs_rates, our_rates = [], [], []
    for k in range(repeats):
        order = ("theirs", "ours") if k % 2 == 0 else ("ours", "theirs")
        got = {}
        for side in order:
            tool = reference if side == "theirs" else "bleucli"
            got[side] = run(tool, task, metric, path, limit)
        theirs_rate = rate(got["theirs"], limit if reference == "sacrebleu" else None)
        ours_rate = rate(got["ours"])
        theirs_rates.append(theirs_rate)
        our_rates.append(ours_rate)
        ratios.append(ours_rate / theirs_rate)
    rows.agree(
        f"{label} {metric} vs {reference}",
        got["theirs"]["scores"],
        got["ours"]["scores"],
        tolerance,
    )
    rows.add(
        f"{label}, {metric}",
        got["ours"]["count"],
        reference,
        statistics.median(theirs_rates),
        statistics.median(our_rates),
        statistics.median(ratios),
    )


def mbr_seconds(folder: Path, repeats: int, quick: bool) -> tuple[float, int]:
    """Wall time of ``bleucli mbr`` over four line-aligned outputs of one language pair."""
    pair = REAL_DATA / "en-de"
    files = [str(p) for p in sorted(pair.glob("sys.*"))] + [str(sorted(pair.glob("ref.*"))[-1])]
    if quick:
        small = []
        for k, name in enumerate(files):
            path = folder / f"mbr{k}.txt"
            path.write_text(
                "\n".join(Path(name).read_text(encoding="utf-8").splitlines()[:200]) + "\n",
                encoding="utf-8",
            )
            small.append(str(path))
        files = small
    lines = len(Path(files[0]).read_text(encoding="utf-8").splitlines())
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(
            [str(bench.PYTHON), "-m", "bleucli", "mbr", "-q", "-i", *files],
            cwd=bench.WORKDIR,
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times), lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement")
    parser.add_argument("--quick", action="store_true", help="small slices, one run")
    parser.add_argument("--venv", metavar="DIR", help="environment to build and keep")
    parser.add_argument("--python", metavar="PATH", help="use this interpreter's packages")
    parser.add_argument("--write", metavar="FILE", help="also write the report to FILE")
    args = parser.parse_args()
    if not REAL_DATA.is_dir():
        raise SystemExit(f"bench_batch: the WMT22 data ({REAL_DATA}) is needed")
    repeats = 1 if args.quick else args.repeats
    rows = Rows()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bench.PEERS = ("fastchrf==0.2.1",)
        bench.PYTHON = (
            Path(args.python)
            if args.python
            else bench.make_environment(Path(args.venv) if args.venv else folder / "venv")
        )
        bench.WORKDIR = folder
        described = bench.machine()
        paths = data_sets(folder, args.quick)
        loop = 300 if args.quick else 3000
        for metric in ("bleu", "chrf", "ter"):
            compare(
                rows,
                "aligned pairs",
                "aligned",
                metric,
                paths["aligned"],
                "sacrebleu",
                loop if metric != "ter" else loop // 3,
                repeats,
            )
        for metric in ("bleu", "chrf", "ter"):
            compare(
                rows,
                "rewards, 8 completions a prompt, batches of 256",
                "rewards",
                metric,
                paths["rewards"],
                "sacrebleu",
                loop if metric != "ter" else loop // 3,
                repeats,
            )
        label = "pairwise, 32 groups of 32x32"
        compare(
            rows,
            label,
            "pairwise",
            "chrf",
            paths["pairwise"],
            "fastchrf",
            10**9,
            repeats,
            tolerance=1e-9,
        )
        for metric in ("bleu", "ter"):
            compare(
                rows,
                label,
                "pairwise",
                metric,
                paths["pairwise"],
                "sacrebleu",
                loop if metric != "ter" else loop // 3,
                repeats,
            )
        big = run("bleucli", "memory", "chrf", paths["big"], 10)  # traced: memory only
        big_seconds = statistics.median(
            run("bleucli", "pairwise", "chrf", paths["big"], 10)["seconds"] for _ in range(repeats)
        )
        mbr, mbr_lines = mbr_seconds(folder, repeats, args.quick)
    side = int(big["count"] ** 0.5)
    report = [
        f"Machine: {described}",
        f"Date: {time.strftime('%Y-%m-%d')}; {repeats} alternating pair(s) per row; rates in "
        f"pairs (cells) per second, default threads (all CPUs) for bleucli and fastchrf; "
        f"SacreBLEU's loop timed on the first {loop:,} pairs ({loop // 3:,} for TER); each "
        f"tool's call timed alone (not the conversion of its result for the agreement check); "
        f"data: real WMT22 outputs.",
        "",
        "| task | pairs | reference tool | reference pairs/s | bleucli pairs/s | ratio |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
        *rows.rows,
        "",
        f"`bleucli mbr` over 4 systems x {mbr_lines:,} lines (chrF, a fresh process, start-up "
        f"included): {mbr:.2f} s.",
        f"Pairwise chrF of 1 x {side} x {side}: {big_seconds:.2f} s, peak memory of the call "
        f"{big['peak'] / 2**20:.0f} MiB (the matrix alone: {big['count'] * 8 / 2**20:.0f} MiB).",
    ]
    if rows.failures:
        report += ["", "**Score disagreements:**", *[f"- {f}" for f in rows.failures]]
    text = "\n".join(report)
    print(text)
    if args.write:
        Path(args.write).write_text(
            "# Batch scoring benchmarks\n\nGenerated by `python "
            f"scripts/bench_batch.py --write {args.write}`.\n\n{text}\n",
            encoding="utf-8",
        )
    return 1 if rows.failures else 0


if __name__ == "__main__":
    sys.exit(main())
