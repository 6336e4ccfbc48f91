"""Neural metrics: the toy checkpoints of every COMET class (tests/neural_toy.py), built once
per session; the whole folder skips with its reason where the neural extra is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

for module in ("torch", "transformers", "tokenizers", "sentencepiece", "yaml", "huggingface_hub"):
    pytest.importorskip(
        module, reason=f"the neural extra (pip install 'bleucli[neural]'): {module}"
    )

from tests.neural_toy import ROOT, build_all, build_metricx, fingerprint  # noqa: E402

FIXTURES = ROOT / "tests" / "data" / "neural" / "comet-2.2.7.json"


@pytest.fixture(scope="session")
def toys(tmp_path_factory) -> dict[str, Path]:
    """kind -> the toy checkpoint's model.ckpt (regression, referenceless, unified, xcomet)."""
    return build_all(tmp_path_factory.mktemp("toy-comet"))


@pytest.fixture(scope="session")
def reference() -> dict:
    """unbabel-comet 2.2.7's predictions on the toys (scripts/comet_fixtures.py)."""
    return json.loads(FIXTURES.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def checked_toys(toys, reference) -> dict[str, Path]:
    """The toys, each proven to be the checkpoint its fixture was computed on."""
    for kind, path in toys.items():
        stored = reference["checkpoints"][kind]["fingerprint"]
        assert fingerprint(path) == stored, (
            f"the toy {kind} checkpoint built here differs from the one the fixtures were "
            f"made from (sentencepiece/tokenizers versions?): rerun scripts/comet_fixtures.py"
        )
    return toys


@pytest.fixture(scope="session")
def metricx(tmp_path_factory) -> Path:
    """A toy MetricX-24 folder (mT5 layout, local SentencePiece, random weights)."""
    return build_metricx(tmp_path_factory.mktemp("metricx") / "metricx-toy")
