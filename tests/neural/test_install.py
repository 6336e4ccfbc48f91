"""`pip install 'bleucli[neural]'` in a fresh virtual environment installs beside numpy 2
and transformers 5 (unbabel-comet 2.2.7 pins numpy < 2 and transformers < 5) and scores a
checkpoint. Minutes of installing: run once per CI run (the native engine's pass)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.neural_toy import ROOT


@pytest.mark.slow  # a pip install into a fresh virtualenv
def test_the_extra_installs_beside_numpy_2_and_scores(toys, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", BLEUCLI_CACHE=str(tmp_path / "cache"))
    # the machine's CPU build of torch first (a bare range would fetch a CUDA build)
    for args in (["torch==2.13.0"], [f"{ROOT}[neural]"]):
        done = subprocess.run([python, "-m", "pip", "install", "-q", *args], env=env,
                              capture_output=True, text=True, timeout=1800)  # fmt: skip
        if done.returncode != 0 and "Could not find a version" in done.stderr:
            pytest.skip(f"the package registry cannot provide {args[0]}")
        assert done.returncode == 0, done.stderr[-2000:]
    versions = subprocess.run(
        [python, "-c", "import json, numpy, transformers; print(json.dumps([numpy.__version__, transformers.__version__]))"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    numpy_version, transformers_version = json.loads(versions.stdout)
    assert int(numpy_version.split(".")[0]) >= 2 and int(transformers_version.split(".")[0]) >= 5
    examples = ROOT / "examples"
    scored = subprocess.run(
        [str(venv / "bin" / "bleucli"), str(examples / "ref.de"), "-i", str(examples / "hyp.de"),
         "--source", str(examples / "src.en"), "-m", "comet", "--comet-model", str(toys["regression"].parents[1]), "-b"],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    float(scored.stdout)
