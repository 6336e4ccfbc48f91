"""Store what unbabel-comet 2.2.7's ``comet-compare`` and ``comet-mbr`` give on the toy
regression checkpoint, as test fixtures (``tests/data/neural/comet-2.2.7-tools.json``).

    python -m scripts.comet_tool_fixtures --comet-python ../cometvenv/bin/python

* ``comet-compare`` runs as the command itself (``--gpus 0 --to_json``): its segment scores
  (computed in half precision: the command calls ``model.half()``), its paired t-tests and
  its bootstrap win ratios. The tests feed those segment scores to
  :func:`bleucli.stats.paired.comet_compare` and expect the same statistics.
* ``comet-mbr`` moves the model to CUDA (``model.cuda()``), which this machine does not
  have, so the runner calls the command's own two functions (``build_embeddings``,
  ``mbr_decoding``) on CPU in fp32 and takes the argmax as the command does. The tests
  expect ``bleucli mbr -m comet`` to choose the same candidates.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from scripts.comet_fixtures import COMET_THREADS
from tests.neural_toy import ROOT, build, fingerprint

OUTPUT = ROOT / "tests" / "data" / "neural" / "comet-2.2.7-tools.json"

MBR_RUNNER = r"""
import json, os, sys, torch
from pathlib import Path
from comet import load_from_checkpoint
from comet.cli.mbr import build_embeddings, mbr_decoding
spec = json.load(open(sys.argv[1]))
checkpoint = Path(spec["checkpoint"]).resolve()
os.chdir(checkpoint.parents[1])  # the checkpoint names its encoder relative to its folder
model = load_from_checkpoint(str(checkpoint), local_files_only=True)
model.eval()
sources, groups = spec["sources"], spec["candidates"]
flat = [c for group in groups for c in group]
src, mt = build_embeddings(sources, flat, model, 8)
matrix = mbr_decoding(src, mt.reshape(len(sources), len(groups[0]), -1), model)
best = [int(torch.argmax(matrix[i, :])) for i in range(len(sources))]
json.dump({"utilities": matrix.tolist(), "best": best}, open(sys.argv[2], "w"))
"""


def lines(name: str) -> list[str]:
    return (ROOT / "examples" / name).read_text(encoding="utf-8").splitlines()


def mbr_inputs() -> dict[str, list]:
    """Ten sources, four candidates each: two systems' outputs, a second reference and the
    first system's output with its last word dropped."""
    src, hyp, hyp2, ref2 = (lines(n)[:10] for n in ("src.en", "hyp.de", "hyp2.de", "ref2.de"))
    candidates = [[a, b, c, " ".join(a.split()[:-1]) or a] for a, b, c in zip(hyp, hyp2, ref2)]
    return {"sources": src, "candidates": candidates}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--comet-python", required=True)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="comet-tools-"))
    checkpoint = build(work / "toy", "regression")
    env = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PATH": "/usr/bin:/bin",
           "OMP_NUM_THREADS": str(COMET_THREADS)}  # fmt: skip
    bin_dir = Path(args.comet_python).parent
    compare_json = work / "compare.json"
    systems = [str(ROOT / "examples" / n) for n in ("hyp.de", "hyp2.de", "ref2.de")]
    subprocess.run(
        [
            str(bin_dir / "comet-compare"),
            "-s",
            str(ROOT / "examples" / "src.en"),
            "-r",
            str(ROOT / "examples" / "ref.de"),
            "-t",
            *systems,
            "--model",
            str(checkpoint),
            "--gpus",
            "0",
            "--batch_size",
            "8",
            "--quiet",
            "--to_json",
            str(compare_json),
        ],
        check=True,
        env=env,
        cwd=checkpoint.parents[1],
        stdout=subprocess.DEVNULL,
    )  # cwd: the checkpoint names its encoder relative to its folder
    compared = json.loads(compare_json.read_text(encoding="utf-8"))
    name_of = {path: Path(path).name for path in systems}
    compare = {
        "systems": [name_of[t["name"]] for t in compared["translations"]],
        "segment_scores": [t["scores"] for t in compared["translations"]],
        "results": [
            {
                "x": name_of[r["x_name"]],
                "y": name_of[r["y_name"]],
                "bootstrap": r["bootstrap_resampling"],
                "t_statistic": float(r["paired_t-test"]["statistic"]),
                "p_value": float(r["paired_t-test"]["p_value"]),
            }
            for r in compared["statistical_results"]
        ],
        "settings": {"num_splits": 300, "sample_ratio": 0.4, "seed": 1},
    }
    spec = {"checkpoint": str(checkpoint), **mbr_inputs()}
    (work / "mbr.json").write_text(json.dumps(spec), encoding="utf-8")
    (work / "mbr.py").write_text(MBR_RUNNER, encoding="utf-8")
    subprocess.run(
        [args.comet_python, str(work / "mbr.py"), str(work / "mbr.json"), str(work / "mbr-out.json")],
        check=True, env=env,
    )  # fmt: skip
    mbr = json.loads((work / "mbr-out.json").read_text(encoding="utf-8"))
    document = {
        "unbabel-comet": "2.2.7",
        "checkpoint": {"kind": "regression", "fingerprint": fingerprint(checkpoint)},
        "compare": compare,
        "mbr": {**mbr, "batch_size": 8},
    }
    OUTPUT.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
