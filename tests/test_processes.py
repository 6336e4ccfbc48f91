"""Multi-process runs stop cleanly: on Ctrl-C and when the reader of stdout goes away, the
command ends promptly, prints no worker tracebacks and leaves no worker processes behind."""

from __future__ import annotations

import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

WORDS = "der die das Haus ist klein groß und ein Hund Katze schläft im Garten".split()


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """100k lines: long enough that a run with --jobs 2 is still busy after a second."""
    folder = tmp_path_factory.mktemp("big")
    rng = random.Random(7)
    hyp, ref = folder / "hyp.txt", folder / "ref.txt"
    for path in (hyp, ref):
        path.write_text(
            "".join(" ".join(rng.choice(WORDS) for _ in range(14)) + "\n" for _ in range(100_000)),
            encoding="utf-8",
        )
    return hyp, ref


def _default_sigint() -> None:
    """Ctrl-C's disposition in a terminal: a test runner started in the background of a
    script ignores SIGINT, and a child would inherit that (Python keeps an ignored SIGINT)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(args: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "bleucli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
        preexec_fn=_default_sigint,
    )


def _children(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait_for_workers(proc: subprocess.Popen, count: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(_children(proc.pid)) >= count:
            return
        time.sleep(0.05)
    pytest.fail("the worker processes never started")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc to find workers")
@pytest.mark.parametrize("trial", range(6))
def test_ctrl_c_with_jobs_stops_cleanly(big_corpus, trial) -> None:
    hyp, ref = big_corpus
    proc = _start([str(ref), "-i", str(hyp), "-m", "bleu", "chrf", "--jobs", "2"])
    _wait_for_workers(proc, 2)
    time.sleep(0.1 * trial)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole process group
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("bleucli hung after Ctrl-C")
    text = err.decode()
    assert proc.returncode == 130
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    assert text.strip().splitlines()[-1] == "bleucli: interrupted"
    deadline = time.monotonic() + 5
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _group_alive(proc.pid), "worker processes outlived the command"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc to find workers")
def test_closed_stdout_with_jobs_ends_the_run(big_corpus) -> None:
    hyp, ref = big_corpus
    proc = _start([str(ref), "-i", str(hyp), "-sl", "--jobs", "2"])
    first = proc.stdout.readline()
    assert first.startswith(b"BLEU|")
    proc.stdout.close()  # like `| head -1`
    try:
        err = proc.stderr.read()
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("bleucli hung after its reader went away")
    assert b"Traceback" not in err
    deadline = time.monotonic() + 5
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _group_alive(proc.pid), "worker processes outlived the command"


@pytest.mark.skipif(shutil.which("script") is None, reason="needs util-linux `script` for a tty")
@pytest.mark.parametrize(
    ("args", "bar"),
    [
        ([], "bleucli: scoring hyp.txt"),  # one system, streamed
        (["-m", "bleu", "chrf", "--paired-bs", "-pbsn", "20"], "bleucli: paired bootstrap"),
        (["-ci", "-cin", "20", "-m", "ter"], "bleucli: scoring with 20 bootstrap resamples"),
        (["--rank", "-pbsn", "20"], "bleucli: ranking (20 samples)"),
        (["analyze", "--top", "2"], "bleucli: analysing"),
    ],
)
def test_progress_on_a_terminal_only(big_corpus, tmp_path, args, bar) -> None:
    hyp, ref = big_corpus
    small_hyp, small_ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    small_hyp.write_text("".join(hyp.read_text().splitlines(True)[:3000]))
    small_ref.write_text("".join(ref.read_text().splitlines(True)[:3000]))
    several = "--paired-bs" in args or "--rank" in args or "analyze" in args
    inputs = [str(small_hyp), str(small_ref)] if several else [str(small_hyp)]
    sub = ["analyze"] if args[:1] == ["analyze"] else []
    command = [
        sys.executable,
        "-m",
        "bleucli",
        *sub,
        str(small_ref),
        "-i",
        *inputs,
        *args[len(sub) :],
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    quoted = " ".join(shlex.quote(c) for c in command)
    log = tmp_path / "tty.log"
    tty = subprocess.run(
        ["script", "-qec", quoted + " > /dev/null", str(log)],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert tty.returncode == 0, log.read_text(errors="replace")
    assert bar in log.read_text(errors="replace")
    quiet = subprocess.run(
        ["script", "-qec", quoted + " -q > /dev/null", str(log)],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert quiet.returncode == 0 and "bleucli: " not in log.read_text(errors="replace")
    piped = subprocess.run(command, env=env, capture_output=True, timeout=120)
    assert piped.returncode == 0 and bar.encode() not in piped.stderr
