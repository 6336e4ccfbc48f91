"""One signature, one number: bitwise-equal scores run to run and for any thread count on
CPU; batch size moves scores by far less than 1e-6 (so it is not in the signature)."""

from __future__ import annotations

import subprocess
import sys

import torch

from scripts.comet_fixtures import cases

PROGRAM = """
import json, sys, torch
torch.set_num_threads(int(sys.argv[2]))
from bleucli.neural.load import load
from scripts.comet_fixtures import cases
samples = cases()["example"] + cases()["hard"]
columns = {k: [s[k] for s in samples] for k in samples[0]}
print(json.dumps([x.hex() for x in load(sys.argv[1]).model.predict(columns, 8).scores]))
"""


def test_bitwise_equal_across_runs_and_thread_counts(toys) -> None:
    from tests.neural_toy import ROOT

    outputs = set()
    for threads in (1, 2, 1, 2):
        result = subprocess.run(
            [sys.executable, "-c", PROGRAM, str(toys["xcomet"].parents[1]), str(threads)],
            capture_output=True, text=True, cwd=ROOT, check=True,
        )  # fmt: skip
        outputs.add(result.stdout)
    assert len(outputs) == 1


def test_batch_size_moves_scores_by_less_than_1e_6(toys) -> None:
    from bleucli.neural.load import load

    samples = cases()["example"] + cases()["hard"]
    columns = {k: [s[k] for s in samples] for k in samples[0]}
    for kind in ("regression", "unified"):
        model = load(str(toys[kind].parents[1])).model
        runs = [model.predict(columns, size).scores for size in (1, 8, 32)]
        worst = max(abs(a - b) for run in runs[1:] for a, b in zip(runs[0], run))
        assert worst < 1e-6, (kind, worst)
    assert torch.get_num_threads() >= 1
