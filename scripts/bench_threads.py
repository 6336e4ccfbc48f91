#!/usr/bin/env python3
"""How many threads a neural run should use, and how they should wait, on an idle machine
and on one where other jobs run (a shared CI runner): COMET on a checkpoint of XLM-R
large's size (tests/neural_toy.py, LARGE), every run a fresh ``bleucli`` process with the
embedding cache off, the settings alternating run by run; medians.

Settings: bleucli's default; ``OMP_NUM_THREADS=1``; all cores with threads that spin while
they wait for work (OpenMP's ``OMP_WAIT_POLICY=ACTIVE``) and with threads that sleep
(``PASSIVE``). The load: ``--busy N`` processes spinning on the CPU beside each run.

    python -m scripts.bench_threads --segments 100 --repeats 3
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

from tests.neural_toy import LARGE, ROOT, build

SETTINGS: dict[str, dict[str, str]] = {
    "default": {},
    "1 thread": {"OMP_NUM_THREADS": "1"},
    "all cores, spinning": {"OMP_WAIT_POLICY": "ACTIVE"},
    "all cores, sleeping": {"OMP_WAIT_POLICY": "PASSIVE"},
}


def lines(name: str, n: int) -> list[str]:
    text = (ROOT / "examples" / name).read_text(encoding="utf-8").splitlines()
    return [f"{text[k % len(text)]} ({k})" for k in range(n)]  # distinct lines


def busy(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--segments", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--busy", type=int, default=2, help="spinning processes for the load")
    parser.add_argument("--folder", help="keep the checkpoint here (built once)")
    args = parser.parse_args()
    folder = Path(args.folder or tempfile.mkdtemp(prefix="bleucli-threads-"))
    model = folder / "regression"
    if not (model / "checkpoints" / "model.ckpt").exists():
        build(folder, "regression", dims=LARGE)
    work = Path(tempfile.mkdtemp(prefix="bleucli-threads-run-"))
    for name, target in (("src.en", "src"), ("ref.de", "ref"), ("hyp.de", "hyp")):
        (work / target).write_text("\n".join(lines(name, args.segments)) + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "bleucli", "ref", "-i", "hyp", "--source", "src", "-m",
               "comet", "--comet-model", str(model), "-b", "-q"]  # fmt: skip
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "BLEUCLI_"))}
    base.update(BLEUCLI_NEURAL_CACHE="0", PYTHONPATH=str(ROOT))
    cores = len(os.sched_getaffinity(0))
    rows = []
    for load in (0, args.busy):
        times: dict[str, list[float]] = {name: [] for name in SETTINGS}
        spinners = busy(load)
        try:
            for _ in range(args.repeats):
                for name, extra in SETTINGS.items():
                    started = time.perf_counter()
                    subprocess.run(command, cwd=work, env={**base, **extra}, check=True,
                                   capture_output=True)  # fmt: skip
                    times[name].append(time.perf_counter() - started)
        finally:
            for process in spinners:
                process.kill()
                process.wait()
        best = min(statistics.median(t) for t in times.values())
        for name, measured in times.items():
            median = statistics.median(measured)
            rows.append((f"{'idle' if not load else f'{load} busy processes'}", name,
                         f"{median:.1f} s", f"{median / best:.2f}x the best"))  # fmt: skip
    print(
        f"COMET, {args.segments} segments, XLM-R-large-sized checkpoint, {cores} cores, "
        f"median of {args.repeats} fresh processes per setting\n"
    )
    print("| machine | setting | time | against the best |\n| --- | --- | ---: | ---: |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
