"""SacreBLEU 2.6.0's own test suite, run against ``bleucli.install_as_sacrebleu()``.

The tests come from SacreBLEU's source distribution on PyPI, fetched at test time into a
cache beside the repository (never committed) and skipped, with the reason, when PyPI is
unreachable. The tests that download WMT data from the internet are deselected (they need
hosts this machine cannot reach); all others must pass under bleucli.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

VERSION = "2.6.0"
CACHE = ROOT / ".test-cache"
#: Tests that fetch WMT test sets from the internet (11 in SacreBLEU 2.6.0).
NEEDS_NETWORK = [
    "test/test_api.py::test_api_get_source",
    "test/test_api.py::test_api_get_reference",
    "test/test_dataset.py",
]


def sacrebleu_sdist() -> Path:
    """SacreBLEU's unpacked source distribution (downloaded once)."""
    folder = CACHE / f"sacrebleu-{VERSION}"
    if (folder / "test").is_dir():
        return folder
    CACHE.mkdir(exist_ok=True)
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"sacrebleu=={VERSION}",
                "-d",
                str(CACHE),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        pytest.skip("PyPI did not answer within 5 minutes: SacreBLEU's tests not fetched")
    archive = CACHE / f"sacrebleu-{VERSION}.tar.gz"
    if proc.returncode != 0 or not archive.is_file():
        pytest.skip(
            f"PyPI is unreachable, SacreBLEU's tests not fetched: "
            f"{(proc.stderr or proc.stdout).strip()[-200:]}"
        )
    with tarfile.open(archive) as tf:
        members = [
            m
            for m in tf.getmembers()
            if m.name.startswith(f"sacrebleu-{VERSION}/") and m.isfile() and ".." not in m.name
        ]
        tf.extractall(CACHE, members=members)  # noqa: S202 - names checked above
    return folder


def test_sacrebleu_suite_passes_under_the_alias() -> None:
    folder = sacrebleu_sdist()
    deselect = [arg for node in NEEDS_NETWORK for arg in ("--deselect", node)]
    script = (
        "import bleucli; bleucli.install_as_sacrebleu()\n"
        "import sys, pytest\n"
        "code = pytest.main(sys.argv[1:])\n"
        "import sacrebleu\n"
        "assert sacrebleu.__file__.startswith(" + repr(str(ROOT / "bleucli")) + ")\n"
        "sys.exit(code)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BLEUCLI_OFFLINE": "1"}
    env.pop("SACREBLEU_SEED", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-p",
            "no:randomly",
            "test",
            *deselect,
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) == 133, summary
    assert "failed" not in summary and "error" not in summary, summary
