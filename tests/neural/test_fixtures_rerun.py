"""The stored unbabel-comet numbers are what unbabel-comet 2.2.7 gives: where its virtualenv
exists (``../cometvenv``, or ``BLEUCLI_COMET_PYTHON``), the fixture script runs again and
must reproduce tests/data/neural/comet-2.2.7.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.neural.conftest import FIXTURES
from tests.neural_toy import ROOT

COMET_PYTHON = Path(
    os.environ.get("BLEUCLI_COMET_PYTHON", ROOT.parent / "cometvenv" / "bin" / "python")
)


@pytest.mark.skipif(
    not COMET_PYTHON.exists(), reason=f"no unbabel-comet virtualenv at {COMET_PYTHON}"
)
def test_the_fixture_script_reproduces_the_stored_numbers(tmp_path) -> None:
    output = tmp_path / "again.json"
    subprocess.run(
        [sys.executable, "-m", "scripts.comet_fixtures", "--comet-python", str(COMET_PYTHON), "--output", str(output)],
        cwd=ROOT, check=True, capture_output=True, timeout=900,
    )  # fmt: skip
    assert json.loads(output.read_text()) == json.loads(FIXTURES.read_text())
