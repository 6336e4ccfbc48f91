#!/usr/bin/env python3
"""Time bleucli against SacreBLEU, side by side, on the same real (or generated) corpora.

Every measurement runs in a fresh Python process (cold caches, honest peak memory). The two
tools run alternately, pair by pair (which one goes first alternates too), because this
machine's speed drifts by 10-20% within minutes: each pair's ratio compares runs made a
moment apart, and the table reports the medians of the per-pair ratios, for wall time and
for CPU time. The scores each tool reports are compared, and the script exits non-zero if
they differ. bleuscore (a Rust BLEU on PyPI) is timed as a peer for corpus BLEU when it is
installed.

Data: the real WMT22 system outputs in ../shared/data/wmt22 when that folder exists (lines
suffixed with the copy number when the corpus is repeated to reach a size, so that no line
repeats: SacreBLEU caches tokenisations), else a generated corpus.

    python scripts/bench.py                      # 2k, 49k and 200k lines
    python scripts/bench.py --quick              # small corpus, one pair (CI agreement check)
    python scripts/bench.py --files ref.de a.de b.de c.de   # your own test set, 3 systems
    python scripts/bench.py --write scripts/BENCHMARKS.md

Both tools are installed into a fresh virtual environment first (bleucli from this tree as a
wheel, as users install it; ``--venv DIR`` keeps it for the next run); ``--python PATH``
runs what an interpreter already has instead (quick agreement checks).
"""

from __future__ import annotations

import argparse
import glob
import itertools
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = 20261203

#: The interpreter that runs every measured command: a fresh virtual environment holding
#: SacreBLEU 2.6.0 and bleucli installed from this tree (a wheel, not an editable install),
#: and the peers that install; set by main(). Runs start in WORKDIR, not in the source tree
#: (``python -m bleucli`` there would import the tree instead of the installed package).
PYTHON = sys.executable
WORKDIR = ROOT
#: Peer tools installed into the environment when their registries have them.
PEERS = ("bleuscore",)


def make_environment(folder: Path) -> Path:
    """A virtual environment with both tools installed as users install them."""
    import venv

    if not (folder / "bin" / "python").exists():
        venv.create(folder, with_pip=True)
    python = folder / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "sacrebleu==2.6.0", "numpy", str(ROOT)], check=True)
    # the tree as it is now, also into an environment kept from an earlier run
    subprocess.run([*pip, "--force-reinstall", "--no-deps", str(ROOT)], check=True)
    for peer in PEERS:
        if subprocess.run([*pip, peer], capture_output=True).returncode != 0:
            print(f"bench: {peer} could not be installed; its rows are left out", file=sys.stderr)
    return python


# -- corpora ---------------------------------------------------------------------------------

_SYLLABLES = [
    "ka",
    "to",
    "ri",
    "mu",
    "sen",
    "la",
    "dor",
    "vi",
    "ne",
    "po",
    "tra",
    "gel",
    "os",
    "an",
    "er",
    "in",
    "ul",
    "be",
    "sha",
    "qu",
]


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    """``size`` distinct pseudo-words of 1-4 syllables (20^4 combinations, plenty)."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.choice([1, 2, 2, 3, 3, 4]))))
    return sorted(words)


def make_corpus(
    lines: int, systems: int = 3, seed: int = SEED
) -> tuple[list[str], list[list[str]]]:
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


REAL_DATA = ROOT.parent / "shared" / "data" / "wmt22"


def real_lines() -> tuple[list[str], list[list[str]]]:
    """References and three systems of every WMT22 pair, concatenated in a fixed order."""
    refs: list[str] = []
    systems: list[list[str]] = [[], [], []]
    for pair in sorted(p.name for p in REAL_DATA.iterdir() if p.is_dir()):
        folder = REAL_DATA / pair
        outputs = sorted(glob.glob(str(folder / "sys.*")))[:3]
        reference = sorted(glob.glob(str(folder / "ref.*")))[0]
        if len(outputs) < 3:
            continue
        refs += Path(reference).read_text(encoding="utf-8").splitlines()
        for k, output in enumerate(outputs):
            systems[k] += Path(output).read_text(encoding="utf-8").splitlines()
    return refs, systems


def write_real_corpus(folder: Path, lines: int) -> dict[str, Path]:
    """``lines`` lines of real data; copy k of the data gets " k" appended to every line."""
    refs, systems = real_lines()

    def take(stream: list[str]) -> list[str]:
        out: list[str] = []
        copy = 0
        while len(out) < lines:
            out += [f"{line} {copy}" if copy else line for line in stream]
            copy += 1
        return out[:lines]

    paths = {"ref": folder / f"real-ref.{lines}.txt"}
    paths["ref"].write_text("\n".join(take(refs)) + "\n", encoding="utf-8")
    for k, hyps in enumerate(systems):
        paths[f"sys{k}"] = folder / f"real-sys{k}.{lines}.txt"
        paths[f"sys{k}"].write_text("\n".join(take(hyps)) + "\n", encoding="utf-8")
    return paths


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
# the metric class is resolved before timing: SacreBLEU imports every metric with the
# package, bleucli imports one on first use; both are timed from construction on
name = {"bleu": "BLEU", "bleu-none": "BLEU", "chrf": "CHRF", "chrf++": "CHRF", "ter": "TER",
        "sentence-bleu": "BLEU"}[metric]
cls = getattr(module, name, None)
start, cpu = time.perf_counter(), time.process_time()
if tool == "bleuscore":  # its API: per-sentence reference lists; 13a, no smoothing
    score = 100 * module.compute([[r] for r in refs], hyps, 4, False)["bleu"]
elif metric == "sentence-bleu":  # the loop evaluation scripts write
    scorer = cls(effective_order=True)
    score = sum(scorer.sentence_score(h, [r]).score for h, r in zip(hyps, refs))
else:
    kwargs = {"bleu-none": {"smooth_method": "none"}, "chrf++": {"word_order": 2}}
    score = cls(**kwargs.get(metric, {})).corpus_score(hyps, [refs]).score
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": elapsed, "cpu": cpu, "score": score, "rss_kb": rss}))
"""


def run_api(tool: str, metric: str, paths: dict[str, Path], limit: int, pure: bool = False) -> dict:
    """One API measurement in a fresh process; ``pure`` forces bleucli's pure-Python engine."""
    env = {**os.environ, "BLEUCLI_PUREPYTHON": "1"} if pure else None
    out = subprocess.run(
        [
            PYTHON,
            "-c",
            _API_SNIPPET,
            tool,
            metric,
            str(paths["ref"]),
            str(paths["sys0"]),
            str(limit),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=WORKDIR,
        env=env,
    )
    return json.loads(out.stdout)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_command(argv: list[str]) -> tuple[float, float, str]:
    """Wall time, CPU time (of the child and its workers) and standard output of a command."""
    start, cpu = time.perf_counter(), _children_cpu()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=WORKDIR)
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"command failed: {' '.join(argv)}\n{proc.stderr}")
    return elapsed, cpu, proc.stdout


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
    proc = subprocess.run(
        [PYTHON, "-c", _RSS_SNIPPET, tool, *args], capture_output=True, text=True, cwd=WORKDIR
    )
    return int(proc.stderr.strip().splitlines()[-1])


def tool_command(tool: str) -> list[str]:
    return [str(PYTHON), "-m", tool]


def import_ms(tool: str, args: list[str]) -> float:
    """Milliseconds ``python -X importtime`` counts for the modules a command imports after
    the interpreter's own start-up (everything after ``site``, but runpy, which ``-m``
    needs for either tool). Median of five runs."""
    totals = []
    for _ in range(5):
        proc = subprocess.run(
            [PYTHON, "-X", "importtime", "-m", tool, *args],
            capture_output=True,
            text=True,
            cwd=WORKDIR,
        )
        total, after_site = 0, False
        for line in proc.stderr.splitlines():
            if not line.startswith("import time:") or "|" not in line:
                continue
            _, cumulative, name = line.split("|")
            if name.startswith("  ") or not cumulative.strip().isdigit():
                continue  # nested: counted in its parent's cumulative time
            if after_site and name.strip() != "runpy":
                total += int(cumulative)
            after_site = after_site or name.strip() == "site"
        totals.append(total / 1000)
    return statistics.median(totals)


def paired_runs(repeats: int, theirs, ours) -> dict:
    """Run both measurements ``repeats`` times, alternately and each pair in alternating
    order; return median times and the medians of the per-pair ratios (wall and CPU), with
    the last outputs. Each measurement returns (wall, cpu, output)."""
    walls: tuple[list[float], list[float]] = ([], [])
    cpus: tuple[list[float], list[float]] = ([], [])
    wall_ratios, cpu_ratios, outputs = [], [], [None, None]
    for k in range(repeats):
        order = (0, 1) if k % 2 == 0 else (1, 0)
        got = {}
        for side in order:
            got[side] = (theirs, ours)[side]()
        for side in (0, 1):
            walls[side].append(got[side][0])
            cpus[side].append(got[side][1])
            outputs[side] = got[side][2]
        wall_ratios.append(got[0][0] / got[1][0])
        cpu_ratios.append(got[0][1] / max(got[1][1], 1e-9))
    return {
        "theirs": statistics.median(walls[0]),
        "ours": statistics.median(walls[1]),
        "wall_ratio": statistics.median(wall_ratios),
        "cpu_ratio": statistics.median(cpu_ratios),
        "outputs": outputs,
    }


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, float, float, float]] = []
        self.failures: list[str] = []
        #: Peak RSS (KiB) of the last API BLEU run per tool at the largest size.
        self.api_rss: dict[str, int] = {}

    def add(self, task: str, size: str, result: dict) -> None:
        row = (
            task,
            size,
            result["theirs"],
            result["ours"],
            result["wall_ratio"],
            result["cpu_ratio"],
        )
        self.rows.append(row)
        print(
            f"  {task:<38} {size:>7}  reference {row[2]:8.3f}s  tool {row[3]:8.3f}s  "
            f"wall x{row[4]:5.2f}  cpu x{row[5]:5.2f}",
            file=sys.stderr,
        )

    def agree(self, what: str, a: object, b: object, tolerance: float = 1e-9) -> None:
        same = abs(a - b) <= tolerance if isinstance(a, float) else a == b  # type: ignore
        if not same:
            self.failures.append(f"{what}: sacrebleu {a!r} != bleucli {b!r}")

    def markdown(self) -> str:
        lines = [
            "| task | lines | SacreBLEU wall (s) | bleucli wall (s) | ratio, wall | "
            "ratio, CPU | bleucli s / 1k lines |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for task, size, theirs, ours, wall, cpu in self.rows:
            per_k = f"{ours / (int(size) / 1000):.4f}" if size.isdigit() else "-"
            lines.append(
                f"| {task} | {size} | {theirs:.3f} | {ours:.3f} | "
                f"{wall:.2f}x | {cpu:.2f}x | {per_k} |"
            )
        return "\n".join(lines)


def compare_cli(
    table: Table,
    task: str,
    size: str,
    args: list[str],
    repeats: int,
    check: bool = True,
    comparable=lambda out: out,
) -> None:
    """Time the same command line with both tools; their outputs (the ``comparable`` part)
    must agree."""

    def timed(tool: str):
        return lambda: run_command(tool_command(tool) + args)

    result = paired_runs(repeats, timed("sacrebleu"), timed("bleucli"))
    if check:
        table.agree(
            f"{task} {size}", comparable(result["outputs"][0]), comparable(result["outputs"][1])
        )
    table.add(task, size, result)


def table_lines(output: str) -> list[str]:
    """The score table of ``-f text`` multi-system output (the legends differ by design)."""
    return [line for line in output.splitlines() if line and line[0] in "╒╞├╘│"]


def bench(corpora: dict[int, dict[str, Path]], repeats: int, ter_limit: int, folder: Path) -> Table:
    table = Table()
    sizes = sorted(corpora)
    compare_cli(table, "start-up (`--help`)", "-", ["--help"], repeats, check=False)
    compare_cli(table, "start-up (`--version`)", "-", ["--version"], repeats, check=False)
    names = {
        "bleu": "BLEU corpus score (API)",
        "chrf": "chrF corpus score (API)",
        "chrf++": "chrF++ corpus score (API)",
        "ter": "TER corpus score (API)",
        "sentence-bleu": "sentence BLEU, one call per line (API)",
    }
    for n, paths in corpora.items():
        for metric in names:
            limit = min(n, ter_limit) if metric == "ter" else n
            if metric == "ter" and limit < n and n != min(sizes):
                continue  # TER only on the sizes it was asked for

            def api(
                tool: str,
                metric: str = metric,
                limit: int = limit,
                paths=paths,
                pure: bool = False,
                largest: bool = n == max(sizes),
            ):
                def measure():
                    r = run_api(tool, metric, paths, limit, pure)
                    if largest and metric == "bleu":
                        table.api_rss[tool + (" (pure)" if pure else "")] = r["rss_kb"]
                    return r["seconds"], r["cpu"], r["score"]

                return measure

            result = paired_runs(repeats, api("sacrebleu"), api("bleucli"))
            table.agree(f"{metric} API {limit}", *result["outputs"])
            table.add(names[metric], str(limit), result)
            if metric == "bleu" and native_built():
                pure = paired_runs(repeats, api("sacrebleu"), api("bleucli", pure=True))
                table.agree(f"pure-Python BLEU API {limit}", *pure["outputs"])
                table.add("BLEU corpus score (API), pure-Python engine", str(limit), pure)
            if metric == "bleu" and has_bleuscore():
                peer = paired_runs(repeats, api("sacrebleu", "bleu-none"), api("bleuscore"))
                table.agree(f"bleuscore BLEU {limit}", *peer["outputs"], tolerance=1e-6)
                table.add("BLEU corpus score (API), bleuscore as the tool", str(limit), peer)
        files = [str(paths["ref"]), "-i", str(paths["sys0"])]
        compare_cli(
            table, "CLI end-to-end, one system, BLEU", str(n), files + ["-b", "-w", "6"], repeats
        )
        compare_cli(
            table, "CLI `--sentence-level` BLEU", str(n), files + ["-sl", "-b", "-w", "4"], repeats
        )
    # The paired test includes TER, so it runs on at most --ter-lines lines, once.
    n = min(sizes[0], ter_limit)
    paths = corpora[n] if n in corpora else truncated(corpora[sizes[0]], n, folder)
    paired = [
        str(paths["ref"]),
        "-i",
        str(paths["sys0"]),
        str(paths["sys1"]),
        str(paths["sys2"]),
        "-m",
        "bleu",
        "chrf",
        "ter",
        "--paired-bs",
        "-f",
        "text",
    ]
    # text: SacreBLEU 2.6 cannot write float32 chrF/TER means as JSON
    two_metrics = [arg for arg in paired if arg != "ter"]
    compare_cli(
        table,
        "CLI `--paired-bs`, 3 systems x BLEU+chrF",
        str(n),
        two_metrics,
        repeats,
        comparable=table_lines,
    )
    compare_cli(
        table,
        "CLI `--paired-bs`, 3 systems x 3 metrics",
        str(n),
        paired,
        repeats,
        comparable=table_lines,
    )
    compare_cli(
        table,
        "CLI `--paired-bs`, 3 x 3, `-j 2` (both)",
        str(n),
        paired + ["-j", "2"],
        repeats,
        comparable=table_lines,
    )
    smallest = corpora[min(sizes)]
    plain = [str(smallest["ref"]), "-i", str(smallest["sys0"]), "-b"]
    table.imports = {  # type: ignore[attr-defined]
        command: (import_ms("sacrebleu", args), import_ms("bleucli", args))
        for command, args in (
            ("`--version`", ["--version"]),
            (f"`REF -i HYP -b`, {min(sizes)} lines", plain),
        )
    }
    largest = corpora[max(sizes)]
    cli = [str(largest["ref"]), "-i", str(largest["sys0"]), "-b"]
    table.memory = (
        max(sizes),
        peak_rss("sacrebleu", cli),  # type: ignore[attr-defined]
        peak_rss("bleucli", cli),
    )
    return table


def native_built() -> bool:
    """Whether bleucli's compiled core is built (then the pure-Python engine is timed too)."""
    proc = subprocess.run(
        [PYTHON, "-c", "import bleucli._native"], cwd=WORKDIR, capture_output=True
    )
    return proc.returncode == 0


def has_bleuscore() -> bool:
    return (
        subprocess.run(
            [PYTHON, "-c", "import bleuscore"], cwd=WORKDIR, capture_output=True
        ).returncode
        == 0
    )


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = [
        run_command(tool_command(tool) + ["--version"])[2].strip().split(" ", 1)[-1]
        for tool in ("sacrebleu", "bleucli")
    ]  # the code that is timed
    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, SacreBLEU {versions[0]}, "
        f"bleucli {versions[1]}"
    )


#: the benchmarks other scripts keep, named at the top of the written report
OTHER_BENCHMARKS = (
    "Batch sentence scoring (MBR decoding, RL rewards), resegmentation, the evaluation "
    "server and meta-evaluation have their own: [BENCHMARKS-batch.md](BENCHMARKS-batch.md) "
    "(`scripts/bench_batch.py`), [BENCHMARKS-resegment.md](BENCHMARKS-resegment.md) "
    "(`scripts/bench_resegment.py`), [BENCHMARKS-server.md](BENCHMARKS-server.md) "
    "(`scripts/bench_server.py`) and [BENCHMARKS-metaeval.md](BENCHMARKS-metaeval.md) "
    "(`scripts/bench_metaeval.py`)."
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="2000,49000,200000", help="corpus sizes in lines (comma-separated)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement")
    parser.add_argument(
        "--ter-lines",
        type=int,
        default=2000,
        help="TER is slow in SacreBLEU: score at most this many lines",
    )
    parser.add_argument("--quick", action="store_true", help="500 lines, one run")
    parser.add_argument(
        "--files",
        nargs=4,
        metavar=("REF", "SYS0", "SYS1", "SYS2"),
        help="time these files (one reference, three systems) instead of generated corpora",
    )
    parser.add_argument("--write", metavar="FILE", help="also write the report to FILE")
    parser.add_argument(
        "--generated",
        action="store_true",
        help="use the generated corpus even where the real data exists",
    )
    parser.add_argument(
        "--venv",
        metavar="DIR",
        help="virtual environment to install both tools into and keep (default: a temporary one)",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="run the tools already installed for this interpreter instead "
        "(agreement checks; timings are quoted from --venv runs)",
    )
    args = parser.parse_args()
    sizes = [500] if args.quick else [int(s) for s in args.sizes.split(",")]
    repeats = 1 if args.quick else args.repeats
    global PYTHON, WORKDIR
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        PYTHON = (
            Path(args.python)
            if args.python
            else make_environment(Path(args.venv) if args.venv else folder / "venv")
        )
        WORKDIR = folder
        described = machine()
        real = REAL_DATA.is_dir() and not (args.generated or args.quick)
        writer = write_real_corpus if real else write_corpus
        corpora = given_corpus(args.files) if args.files else {n: writer(folder, n) for n in sizes}
        table = bench(corpora, repeats, args.ter_lines, folder)
    n, rss_a, rss_b = table.memory  # type: ignore[attr-defined]
    report = [
        f"Machine: {described}",
        f"Date: {time.strftime('%Y-%m-%d')}; {repeats} alternating pair(s) per row; "
        f"ratio = median over pairs of SacreBLEU time / tool time; data: "
        f"{'given files' if args.files else 'real WMT22 outputs' if real else 'generated'}.",
        "",
        table.markdown(),
        "",
        f"Peak RSS, CLI BLEU on {n} lines: SacreBLEU {rss_a / 1024:.0f} MiB, "
        f"bleucli {rss_b / 1024:.0f} MiB ({rss_b / rss_a:.2f}x).",
    ]
    if "sacrebleu" in table.api_rss:
        theirs = table.api_rss["sacrebleu"]
        report.append(
            f"Peak RSS, API BLEU on {n} lines (input lists included): SacreBLEU "
            f"{theirs / 1024:.0f} MiB, "
            + ", ".join(
                f"{tool} {kb / 1024:.0f} MiB ({kb / theirs:.2f}x)"
                for tool, kb in table.api_rss.items()
                if tool != "sacrebleu"
            )
            + "."
        )
    imports = getattr(table, "imports", {})
    if imports:
        report += [
            "",
            "Import time (`python -X importtime`, ms of the modules a command loads "
            "after the interpreter's start-up; median of 5 runs):",
            "",
            "| command | SacreBLEU (ms) | bleucli (ms) |",
            "| --- | ---: | ---: |",
        ]
        report += [
            f"| {command} | {theirs:.1f} | {ours:.1f} |"
            for command, (theirs, ours) in imports.items()
        ]
    if table.failures:
        report += ["", "**Score disagreements:**", *[f"- {f}" for f in table.failures]]
    text = "\n".join(report)
    print(text)
    if args.write:
        Path(args.write).write_text(
            "# Benchmarks\n\nGenerated by `python scripts/bench.py "
            f"--write {args.write}`. {OTHER_BENCHMARKS}\n\n{text}\n",
            encoding="utf-8",
        )
    return 1 if table.failures else 0


if __name__ == "__main__":
    sys.exit(main())
