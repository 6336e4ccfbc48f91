"""Store unbabel-comet 2.2.7's scores of the toy checkpoints as test fixtures.

unbabel-comet pins numpy < 2 and transformers < 5, so it lives in a virtualenv of its own:

    python3 -m venv ../cometvenv
    ../cometvenv/bin/pip install torch==2.13.0 'unbabel-comet==2.2.7' 'setuptools<81'
    python -m scripts.comet_fixtures --comet-python ../cometvenv/bin/python

This builds the toy checkpoints with this environment (tests/neural_toy.py), runs
``model.predict`` on them in the other (offline, fp32, CPU) and writes
``tests/data/neural/comet-2.2.7.json``: per checkpoint its fingerprint, the samples'
segment scores, system score, metadata and error spans. The tests build the same
checkpoints and compare bleucli's numbers with these."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.neural_toy import ROOT, build_all, fingerprint

OUTPUT = ROOT / "tests" / "data" / "neural" / "comet-2.2.7.json"
BATCH_SIZE = 8
#: The thread count unbabel-comet runs with (its numbers depend on it, bleucli's do not).
COMET_THREADS = 2

#: What runs inside unbabel-comet's virtualenv: a JSON spec in, JSON predictions out.
RUNNER = r"""
import json, os, sys
from pathlib import Path
from comet import load_from_checkpoint
spec = json.load(open(sys.argv[1]))
out = {}
for kind, path in spec["checkpoints"].items():
    path = Path(path).resolve()
    os.chdir(path.parents[1])  # the checkpoint names its encoder relative to its folder
    model = load_from_checkpoint(str(path), local_files_only=True)
    for case, samples in spec["cases"][kind].items():
        pred = model.predict(samples, batch_size=spec["batch_size"], gpus=0, progress_bar=False)
        entry = {"scores": [float(s) for s in pred.scores], "system_score": float(pred.system_score)}
        meta = pred.get("metadata") or {}
        for key in ("src_scores", "ref_scores", "unified_scores", "mqm_scores"):
            if key in meta:
                entry[key] = [float(x) for x in meta[key]]
        if "error_spans" in meta:
            entry["error_spans"] = meta["error_spans"]
        out.setdefault(kind, {})[case] = entry
json.dump(out, open(sys.argv[2], "w"))
"""


def lines(name: str) -> list[str]:
    return (ROOT / "examples" / name).read_text(encoding="utf-8").splitlines()


def cases() -> dict[str, list[dict[str, str]]]:
    """The inputs every checkpoint is scored on: the shipped example, and hard lines (an
    empty hypothesis, a line past the encoder's 512 positions, markup-like and non-Latin
    text, a literal ``<pad>``)."""
    src, hyp, ref = lines("src.en"), lines("hyp.de"), lines("ref.de")
    example = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(src, hyp, ref)]
    long = " ".join(hyp) * 3
    hard = [
        {"src": src[0], "mt": "", "ref": ref[0]},
        {"src": long, "mt": long, "ref": long},
        {"src": src[1], "mt": hyp[1] + " <pad> </s> <s>", "ref": ref[1]},
        {
            "src": "日本語の文です。",
            "mt": "Ein Satz auf Japanisch – «Ünïcödé» ½ 🙂",
            "ref": "Ein japanischer Satz.",
        },
        {"src": src[2], "mt": "  ".join(hyp[2].split()), "ref": ref[2]},
    ]
    return {"example": example, "hard": hard}


def for_kind(kind: str, samples: list[dict[str, str]]) -> list[dict[str, str]]:
    """What the model class takes: QE models no reference."""
    if kind in ("referenceless", "unified"):
        return [{"src": s["src"], "mt": s["mt"]} for s in samples]
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--comet-python", required=True, help="python of unbabel-comet's venv")
    parser.add_argument("--output", default=str(OUTPUT))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        checkpoints = build_all(folder)
        spec = {
            "batch_size": BATCH_SIZE,
            "checkpoints": {kind: str(path) for kind, path in checkpoints.items()},
            "cases": {
                kind: {name: for_kind(kind, s) for name, s in cases().items()}
                for kind in checkpoints
            },
        }
        (folder / "spec.json").write_text(json.dumps(spec))
        (folder / "runner.py").write_text(RUNNER)
        # unbabel-comet's scores move by ~1e-7 with its thread count (its batches pad to
        # their longest sentence): the fixtures are made with 2, whatever the caller has
        env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
        env.update(HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
                   OMP_NUM_THREADS=str(COMET_THREADS), MKL_NUM_THREADS=str(COMET_THREADS))  # fmt: skip
        subprocess.run(
            [args.comet_python, str(folder / "runner.py"), str(folder / "spec.json"),
             str(folder / "out.json")],
            check=True, env=env, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        predictions = json.loads((folder / "out.json").read_text())
        version = subprocess.run(
            [args.comet_python, "-c", "import importlib.metadata as m; print(m.version('unbabel-comet'))"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        document = {
            "made_by": "python -m scripts.comet_fixtures --comet-python PYTHON",
            "unbabel_comet": version,
            "batch_size": BATCH_SIZE,
            "checkpoints": {
                kind: {"fingerprint": fingerprint(path), "predictions": predictions[kind]}
                for kind, path in checkpoints.items()
            },
        }
    Path(args.output).write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
