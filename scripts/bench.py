#!/usr/bin/env python3
"""Time bleucli against SacreBLEU, side by side, on the same generated (or given) corpora.

Every measurement runs in a fresh Python process (cold caches, honest peak memory), both
tools in the same run on the same files; the scores each reports are compared and the
script exits non-zero if they differ. Prints a Markdown table of medians and ratios
(SacreBLEU time / bleucli time: above 1 means bleucli is faster).

    python scripts/bench.py                      # 2k, 20k and 200k lines
    python scripts/bench.py --quick              # small corpus, one repeat (CI agreement check)
    python scripts/bench.py --files ref.de a.de b.de c.de   # your own test set, 3 systems
    python scripts/bench.py --write scripts/BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import compileall
import itertools
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = 20261203

# -- corpora ---------------------------------------------------------------------------------

_SYLLABLES = ["ka", "to", "ri", "mu", "sen", "la", "dor", "vi", "ne", "po", "tra", "gel",
              "os", "an", "er", "in", "ul", "be", "sha", "qu"]


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    """``size`` distinct pseudo-words of 1-4 syllables (20^4 combinations, plenty)."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.choice([1, 2, 2, 3, 3, 4]))))
    return sorted(words)


def make_corpus(lines: int, systems: int = 3, seed: int = SEED) -> tuple[list[str], list[list[str]]]:
    """References from a Zipf word model; each system perturbs them differently."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng, 20000)
    weights = list(itertools.accumulate(1 / (rank + 1) ** 1.1 for rank in range(len(vocab))))
    refs = []
    for _ in range(lines):
        n = max(1, int(rng.gauss(22, 9)))
        words = rng.choices(vocab, cum_weights=weights, k=n)
        words[0] = words[0].capitalize()
        if n > 6 and rng.random() < 0.4:
            words.insert(rng.randrange(2, n - 2), ",")
        if rng.random() < 0.15:
            words.insert(rng.randrange(0, len(words)), str(rng.randrange(1, 2030)))
        refs.append(" ".join(words) + rng.choice([".", ".", ".", "?", "!"]))
    outputs = []
    for s in range(systems):
        noise = 0.15 + 0.08 * s
        hyps = []
        for ref in refs:
            words = ref.split()
            out = []
            for word in words:
                roll = rng.random()
                if roll < noise / 3:
                    continue
                if roll < 2 * noise / 3:
                    out.append(rng.choices(vocab, cum_weights=weights)[0])
                else:
                    out.append(word)
                if rng.random() < noise / 4:
                    out.append(rng.choices(vocab, cum_weights=weights)[0])
            if len(out) > 3 and rng.random() < noise:
                i = rng.randrange(len(out) - 1)
                out[i], out[i + 1] = out[i + 1], out[i]
            hyps.append(" ".join(out))
        outputs.append(hyps)
    return refs, outputs


def given_corpus(files: list[str]) -> dict[int, dict[str, Path]]:
    """``--files REF SYS0 SYS1 SYS2``: the user's own test set, keyed by its line count."""
    paths = {"ref": Path(files[0]), **{f"sys{k}": Path(f) for k, f in enumerate(files[1:])}}
    counts = {len(p.read_text(encoding="utf-8").splitlines()) for p in paths.values()}
    if len(counts) != 1:
        raise SystemExit(f"bench: --files must have the same number of lines, got {counts}")
    return {counts.pop(): paths}


def truncated(paths: dict[str, Path], lines: int, folder: Path) -> dict[str, Path]:
    """The first ``lines`` lines of every file of a corpus (for the slow paired test)."""
    out = {}
    for name, path in paths.items():
        out[name] = folder / f"{name}.first{lines}.txt"
        kept = path.read_text(encoding="utf-8").splitlines()[:lines]
        out[name].write_text("\n".join(kept) + "\n", encoding="utf-8")
    return out


def write_corpus(folder: Path, lines: int) -> dict[str, Path]:
    refs, systems = make_corpus(lines)
    paths = {"ref": folder / f"ref.{lines}.txt"}
    paths["ref"].write_text("\n".join(refs) + "\n", encoding="utf-8")
    for k, hyps in enumerate(systems):
        paths[f"sys{k}"] = folder / f"sys{k}.{lines}.txt"
        paths[f"sys{k}"].write_text("\n".join(hyps) + "\n", encoding="utf-8")
    return paths


# -- measurements ----------------------------------------------------------------------------

_API_SNIPPET = r"""
import json, resource, sys, time
tool, metric, ref_path, hyp_path, limit = sys.argv[1:6]
limit = int(limit)
refs = open(ref_path, encoding="utf-8").read().splitlines()[:limit]
hyps = open(hyp_path, encoding="utf-8").read().splitlines()[:limit]
module = __import__(tool)
cls = {"bleu": module.BLEU, "chrf": module.CHRF, "ter": module.TER}[metric]
start = time.perf_counter()
score = cls().corpus_score(hyps, [refs]).score
elapsed = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": elapsed, "score": score, "rss_kb": rss}))
"""


def run_api(tool: str, metric: str, paths: dict[str, Path], limit: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _API_SNIPPET, tool, metric, str(paths["ref"]),
                          str(paths["sys0"]), str(limit)], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return json.loads(out.stdout)


def run_command(argv: list[str]) -> tuple[float, str]:
    """Wall time and standard output of a command in a child process."""
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"command failed: {' '.join(argv)}\n{proc.stderr}")
    return elapsed, proc.stdout


_RSS_SNIPPET = r"""
import resource, runpy, sys
tool = sys.argv[1]
sys.argv = [tool] + sys.argv[2:]
try:
    runpy.run_module(tool, run_name="__main__")
except SystemExit:
    pass
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def peak_rss(tool: str, args: list[str]) -> int:
    """Peak resident memory (KiB) of one CLI run, measured inside that process."""
    proc = subprocess.run([sys.executable, "-c", _RSS_SNIPPET, tool, *args],
                          capture_output=True, text=True, cwd=ROOT)
    return int(proc.stderr.strip().splitlines()[-1])


def tool_command(tool: str) -> list[str]:
    return [sys.executable, "-m", tool]


def median_of(repeats: int, measure) -> tuple[float, object]:
    times, last = [], None
    for _ in range(repeats):
        seconds, last = measure()
        times.append(seconds)
    return statistics.median(times), last


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, float]] = []
        self.failures: list[str] = []

    def add(self, task: str, size: str, theirs: float, ours: float) -> None:
        self.rows.append((task, size, theirs, ours))
        print(f"  {task:<38} {size:>7}  sacrebleu {theirs:8.3f}s  bleucli {ours:8.3f}s  "
              f"x{theirs / ours:5.2f}", file=sys.stderr)

    def agree(self, what: str, a: object, b: object, tolerance: float = 1e-9) -> None:
        same = abs(a - b) <= tolerance if isinstance(a, float) else a == b  # type: ignore
        if not same:
            self.failures.append(f"{what}: sacrebleu {a!r} != bleucli {b!r}")

    def markdown(self) -> str:
        lines = ["| task | lines | SacreBLEU (s) | bleucli (s) | ratio | bleucli s / 1k lines |",
                 "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for task, size, theirs, ours in self.rows:
            per_k = f"{ours / (int(size) / 1000):.4f}" if size.isdigit() else "-"
            lines.append(f"| {task} | {size} | {theirs:.3f} | {ours:.3f} | "
                         f"{theirs / ours:.2f}x | {per_k} |")
        return "\n".join(lines)


def compare_cli(table: Table, task: str, size: str, args: list[str], repeats: int,
                check: bool = True, comparable=lambda out: out) -> None:
    """Time the same command line with both tools; their outputs (the ``comparable`` part)
    must agree."""
    def timed(tool: str):
        return lambda: run_command(tool_command(tool) + args)

    theirs, out_a = median_of(repeats, timed("sacrebleu"))
    ours, out_b = median_of(repeats, timed("bleucli"))
    if check:
        table.agree(f"{task} {size}", comparable(out_a), comparable(out_b))
    table.add(task, size, theirs, ours)


def table_lines(output: str) -> list[str]:
    """The score table of ``-f text`` multi-system output (the legends differ by design)."""
    return [line for line in output.splitlines() if line and line[0] in "╒╞├╘│"]


def bench(corpora: dict[int, dict[str, Path]], repeats: int, ter_limit: int,
          folder: Path) -> Table:
    table = Table()
    sizes = sorted(corpora)
    compare_cli(table, "start-up (`--help`)", "-", ["--help"], repeats, check=False)
    for n, paths in corpora.items():
        for metric in ("bleu", "chrf", "ter"):
            limit = min(n, ter_limit) if metric == "ter" else n
            if metric == "ter" and limit < n and n != min(sizes):
                continue  # TER only on the sizes it was asked for
            a = [run_api("sacrebleu", metric, paths, limit) for _ in range(repeats)]
            b = [run_api("bleucli", metric, paths, limit) for _ in range(repeats)]
            table.agree(f"{metric} API {limit}", a[0]["score"], b[0]["score"])
            table.add(f"{metric.upper() if metric != 'chrf' else 'chrF'} corpus score (API)",
                      str(limit), statistics.median(r["seconds"] for r in a),
                      statistics.median(r["seconds"] for r in b))
        files = [str(paths["ref"]), "-i", str(paths["sys0"])]
        compare_cli(table, "CLI end-to-end, one system, BLEU", str(n),
                    files + ["-b", "-w", "6"], repeats)
        compare_cli(table, "CLI `--sentence-level` BLEU", str(n),
                    files + ["-sl", "-b", "-w", "4"], repeats)
    # The paired test includes TER, so it runs on at most --ter-lines lines, once.
    n = min(sizes[0], ter_limit)
    paths = corpora[n] if n in corpora else truncated(corpora[sizes[0]], n, folder)
    paired = [str(paths["ref"]), "-i", str(paths["sys0"]), str(paths["sys1"]),
              str(paths["sys2"]), "-m", "bleu", "chrf", "ter", "--paired-bs", "-f", "text"]
    # text: SacreBLEU 2.6 cannot write float32 chrF/TER means as JSON
    compare_cli(table, "CLI `--paired-bs`, 3 systems x 3 metrics", str(n), paired,
                repeats, comparable=table_lines)
    compare_cli(table, "CLI `--paired-bs`, 3 x 3, `-j 2` (both)", str(n),
                paired + ["-j", "2"], repeats, comparable=table_lines)
    largest = corpora[max(sizes)]
    cli = [str(largest["ref"]), "-i", str(largest["sys0"]), "-b"]
    table.memory = (max(sizes), peak_rss("sacrebleu", cli),  # type: ignore[attr-defined]
                    peak_rss("bleucli", cli))
    return table


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = [run_command(tool_command(tool) + ["--version"])[1].split()[-1]
                for tool in ("sacrebleu", "bleucli")]  # the code that is timed
    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, SacreBLEU {versions[0]}, "
            f"bleucli {versions[1]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,20000,200000",
                        help="corpus sizes in lines (comma-separated)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement")
    parser.add_argument("--ter-lines", type=int, default=2000,
                        help="TER is slow in SacreBLEU: score at most this many lines")
    parser.add_argument("--quick", action="store_true", help="500 lines, one run")
    parser.add_argument("--files", nargs=4, metavar=("REF", "SYS0", "SYS1", "SYS2"),
                        help="time these files (one reference, three systems) instead of "
                             "generated corpora")
    parser.add_argument("--write", metavar="FILE", help="also write the report to FILE")
    args = parser.parse_args()
    sizes = [500] if args.quick else [int(s) for s in args.sizes.split(",")]
    repeats = 1 if args.quick else args.repeats
    # Both tools run from bytecode, as installed packages do (a machine with
    # PYTHONDONTWRITEBYTECODE would otherwise recompile the working tree on every run).
    compileall.compile_dir(str(ROOT / "bleucli"), quiet=1)
    described = machine()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpora = given_corpus(args.files) if args.files else \
            {n: write_corpus(folder, n) for n in sizes}
        table = bench(corpora, repeats, args.ter_lines, folder)
    n, rss_a, rss_b = table.memory  # type: ignore[attr-defined]
    report = [
        f"Machine: {described}",
        f"Date: {time.strftime('%Y-%m-%d')}; medians of {repeats} run(s); "
        f"ratio = SacreBLEU time / bleucli time.",
        "",
        table.markdown(),
        "",
        f"Peak RSS, CLI BLEU on {n} lines: SacreBLEU {rss_a / 1024:.0f} MiB, "
        f"bleucli {rss_b / 1024:.0f} MiB ({rss_b / rss_a:.2f}x).",
    ]
    if table.failures:
        report += ["", "**Score disagreements:**", *[f"- {f}" for f in table.failures]]
    text = "\n".join(report)
    print(text)
    if args.write:
        Path(args.write).write_text("# Benchmarks\n\nGenerated by `python scripts/bench.py "
                                    f"--write {args.write}`.\n\n{text}\n", encoding="utf-8")
    return 1 if table.failures else 0


if __name__ == "__main__":
    sys.exit(main())
