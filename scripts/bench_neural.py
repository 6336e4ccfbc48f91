#!/usr/bin/env python3
"""Time bleucli's COMET against unbabel-comet 2.2.7 on the same checkpoint.

A random-weight regression checkpoint of XLM-R large's size (24 layers, hidden 1024;
tests/neural_toy.py, LARGE) stands in for wmt22-comet-da: encoding dominates as it does with
the real model (at toy sizes, importing torch would decide the ratios). Every run is a
fresh process; the two tools alternate pair by pair and the table gives the median of the
per-pair ratios (unbabel-comet's time / bleucli's). Scenarios:

* one system, cold: neither tool has anything cached;
* 8 systems, cold: one process each scores 8 systems on one test set (unbabel-comet's
  ``predict`` per system, as its own ``comet-score -t A B ...`` does);
* a new system on a cached test set: bleucli's embedding cache holds the sources and
  references from an earlier run (a CI job scoring each commit);
* MBR (``--mbr``): ``bleucli mbr -m comet`` against comet-mbr's own functions
  (``build_embeddings``, ``mbr_decoding``) on CPU in fp32 (the command itself calls
  ``model.cuda()``), 8 candidates per source.

    python -m scripts.bench_neural --comet-python ../cometvenv/bin/python
    python -m scripts.bench_neural --comet-python ../cometvenv/bin/python --segments 60 --pairs 3
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
from collections.abc import Callable
from pathlib import Path

from tests.neural_toy import LARGE, ROOT, build

COMET_RUNNER = r"""
import json, sys
from comet import load_from_checkpoint
spec = json.load(open(sys.argv[1]))
model = load_from_checkpoint(spec["checkpoint"], local_files_only=True)
out = []
for mt in spec["systems"]:
    samples = [{"src": s, "mt": m, "ref": r} for s, m, r in zip(spec["src"], mt, spec["ref"])]
    out.append(model.predict(samples, batch_size=16, gpus=0, progress_bar=False).system_score)
print(json.dumps(out))
"""


MBR_RUNNER = r"""
import json, sys, torch
from comet import load_from_checkpoint
from comet.cli.mbr import build_embeddings, mbr_decoding
spec = json.load(open(sys.argv[1]))
model = load_from_checkpoint(spec["checkpoint"], local_files_only=True)
model.eval()
flat = [c for group in spec["candidates"] for c in group]
src, mt = build_embeddings(spec["sources"], flat, model, 16)
matrix = mbr_decoding(src, mt.reshape(len(spec["sources"]), len(spec["candidates"][0]), -1), model)
print(json.dumps([int(torch.argmax(matrix[i, :])) for i in range(len(spec["sources"]))]))
"""


def corpus(segments: int) -> tuple[list[str], list[str], list[list[str]]]:
    """Sources, references and 8 systems: the shipped example repeated with a number."""

    def lines(name: str) -> list[str]:
        return (ROOT / "examples" / name).read_text(encoding="utf-8").splitlines()

    src, ref = lines("src.en"), lines("ref.de")
    outputs = [lines("hyp.de"), lines("hyp2.de"), lines("ref2.de")]
    take = lambda texts, k: [f"{texts[i % len(texts)]} ({i // len(texts)})" for i in range(k)]  # noqa: E731
    systems = []
    for n in range(8):
        base = outputs[n % 3]
        systems.append([f"{line} v{n}" if n >= 3 else line for line in take(base, segments)])
    return take(src, segments), take(ref, segments), systems


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start


def alternating(
    pairs: int, commands: dict[str, list[str]], env_for: Callable[[int], dict[str, str]]
) -> list[dict[str, float]]:
    """Per pair, each command's time in a fresh process, the order reversed every other
    pair; ``env_for(pair)`` is the pair's environment (made first: a fresh cache...)."""
    out = []
    for pair in range(pairs):
        env = env_for(pair)
        order = list(commands.items())
        if pair % 2:
            order.reverse()
        out.append({name: timed(command, env) for name, command in order})
    return out


def mbr_ratio(args, work: Path, checkpoint: Path, env: dict[str, str], src: list[str],
              systems: list[list[str]], distinct: int) -> float:  # fmt: skip
    """Median of comet-mbr's time / bleucli mbr's, fresh processes, alternating; 8
    candidates per source, ``distinct`` of them different (sampling repeats candidates)."""
    positions = [systems[j % distinct] for j in range(len(systems))]
    for j, lines in enumerate(positions):
        (work / f"cand{j}.txt").write_text("\n".join(lines) + "\n")
    candidates = [[system[i] for system in positions] for i in range(len(src))]
    spec = work / "mbr.json"
    spec.write_text(json.dumps({"checkpoint": str(checkpoint), "sources": src,
                                "candidates": candidates}))  # fmt: skip
    (work / "mbr_runner.py").write_text(MBR_RUNNER)
    theirs = [args.comet_python, str(work / "mbr_runner.py"), str(spec)]
    ours = [sys.executable, "-m", "bleucli", "mbr", "-i",
            *(str(work / f"cand{n}.txt") for n in range(len(systems))), "--source",
            str(work / "src.txt"), "-m", "comet", "--comet-model", str(checkpoint.parents[1]),
            "-f", "json", "-q"]  # fmt: skip

    def fresh_cache(pair: int) -> dict[str, str]:
        return {**env, "BLEUCLI_CACHE": tempfile.mkdtemp(prefix="bench-neural-cache-")}

    runs = alternating(args.pairs, {"comet": theirs, "bleucli": ours}, fresh_cache)
    for times in runs:
        print(f"MBR ({distinct} distinct): comet-mbr {times['comet']:.1f} s, bleucli "
              f"{times['bleucli']:.1f} s", file=sys.stderr)  # fmt: skip
    return statistics.median(t["comet"] / t["bleucli"] for t in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--comet-python", required=True)
    parser.add_argument("--segments", type=int, default=30)
    parser.add_argument("--pairs", type=int, default=1)
    parser.add_argument("--folder", help="keep the checkpoint here (built once)")
    parser.add_argument("--mbr", action="store_true", help="time MBR only (against comet-mbr)")
    args = parser.parse_args()
    folder = Path(args.folder or tempfile.mkdtemp(prefix="bench-neural-"))
    checkpoint = folder / "regression" / "checkpoints" / "model.ckpt"
    if not checkpoint.exists():
        build(folder, "regression", dims=LARGE)
    src, ref, systems = corpus(args.segments)
    work = Path(tempfile.mkdtemp(prefix="bench-neural-run-"))
    (work / "src.txt").write_text("\n".join(src) + "\n")
    (work / "ref.txt").write_text("\n".join(ref) + "\n")
    for n, lines in enumerate(systems):
        (work / f"sys{n}.txt").write_text("\n".join(lines) + "\n")
    base_env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}

    def comet(n_systems: int) -> list[str]:
        spec = work / f"spec{n_systems}.json"
        spec.write_text(json.dumps({"checkpoint": str(checkpoint), "src": src, "ref": ref,
                                    "systems": systems[:n_systems]}))  # fmt: skip
        (work / "runner.py").write_text(COMET_RUNNER)
        return [args.comet_python, str(work / "runner.py"), str(spec)]

    def ours(n_systems: int) -> list[str]:
        return [sys.executable, "-m", "bleucli", str(work / "ref.txt"), "-i",
                *(str(work / f"sys{n}.txt") for n in range(n_systems)), "--source",
                str(work / "src.txt"), "-m", "comet", "--comet-model", str(folder / "regression"), "-q"]  # fmt: skip

    rows = []
    if args.mbr:
        for distinct in (8, 4):
            label = f"MBR, 8 candidates per source, {distinct} distinct"
            ratio = mbr_ratio(args, work, checkpoint, base_env, src, systems, distinct)
            rows.append((label, ratio, args.pairs))
    scenarios = () if args.mbr else (("one system, cold", 1, False), ("8 systems, cold", 8, False),
                                     ("a new system, test set cached", 1, True))  # fmt: skip
    for label, n_systems, warm in scenarios:

        def prepared(pair: int, n_systems: int = n_systems, warm: bool = warm) -> dict[str, str]:
            env = {**base_env, "BLEUCLI_CACHE": tempfile.mkdtemp(prefix="bench-neural-cache-")}
            if warm:  # an earlier run on the same test set, another system
                earlier = [
                    str(work / "sys1.txt") if arg.endswith("sys0.txt") else arg for arg in ours(1)
                ]
                subprocess.run(earlier, check=True, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
            return env

        runs = alternating(args.pairs, {"comet": comet(n_systems), "bleucli": ours(n_systems)},
                           prepared)  # fmt: skip
        ratios = [t["comet"] / t["bleucli"] for t in runs]
        for t in runs:
            print(f"{label}: unbabel-comet {t['comet']:.1f} s, bleucli {t['bleucli']:.1f} s",
                  file=sys.stderr)  # fmt: skip
        rows.append((label, statistics.median(ratios), len(ratios)))
    print(
        f"\n{args.segments} segments, XLM-R large size (24 layers, 1024 wide), CPU, "
        f"{os.cpu_count()} cores\n"
    )
    print("| scenario | unbabel-comet time / bleucli time (median) | pairs |")
    print("|---|---|---|")
    for label, ratio, n in rows:
        print(f"| {label} | {ratio:.2f}x | {n} |")


if __name__ == "__main__":
    main()
