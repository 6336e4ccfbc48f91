"""``scripts/memcheck.sh`` says "no memory errors" only when its tests ran under valgrind
and passed, and changes nothing it was not asked to: it had reported success when pytest
was missing (valgrind's own exit code hid it) and replaced the user's install with an
editable one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "memcheck.sh"


def run(path: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": path}
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)  # fmt: skip


def fake_valgrind(folder: Path) -> Path:
    """A valgrind that runs nothing and exits as valgrind does when it saw errors."""
    folder.mkdir()
    tool = folder / "valgrind"
    tool.write_text("#!/bin/sh\nexit 99\n")
    tool.chmod(0o755)
    return folder


def test_a_run_whose_tests_never_ran_fails(tmp_path) -> None:
    pytest.importorskip("bleucli._native", reason="the script checks the compiled core first")
    fake = fake_valgrind(tmp_path / "bin")
    done = run(f"{fake}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no test ran under valgrind" in done.stdout
    assert "no memory errors" not in done.stdout


def test_without_pytest_it_says_so_and_installs_nothing(tmp_path) -> None:
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    fake = fake_valgrind(tmp_path / "bin")
    before = sorted(p.name for p in (bare / "lib").rglob("*"))
    done = run(f"{bare / 'bin'}{os.pathsep}{fake}{os.pathsep}/usr/bin:/bin")
    assert done.returncode == 2
    assert "pytest is not installed" in done.stdout and "no memory errors" not in done.stdout
    assert sorted(p.name for p in (bare / "lib").rglob("*")) == before  # nothing installed
