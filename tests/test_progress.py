"""Progress where work is long: a bar on standard error when it is a terminal (a real
pseudo-terminal here), none in a pipe or with -q; the results are the same either way."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT

MTME = str(EXAMPLES / "meta-eval" / "wmt22-ru-en")
REF, HYP, HYP2 = (str(EXAMPLES / n) for n in ("ref.de", "hyp.de", "hyp2.de"))


def _on_a_terminal(args: list[str]) -> tuple[int, str, str]:
    """Run ``bleucli ARGS`` with stderr on a pseudo-terminal: (exit code, stdout, what the
    terminal showed)."""
    primary, secondary = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "TERM": "xterm"}
    process = subprocess.Popen(
        [sys.executable, "-m", "bleucli", *args], stdout=subprocess.PIPE, stderr=secondary,
        stdin=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    os.close(secondary)
    shown = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the other side closed (Linux: EIO)
            break
        if not chunk:
            break
        shown += chunk
    out = process.stdout.read().decode()
    process.wait(timeout=300)
    os.close(primary)
    return process.returncode, out, shown.decode(errors="replace")


BAR = re.compile(r"\[[#-]{10,}\]")

COMMANDS = {
    "meta-eval": (
        ["meta-eval", "--mtme", MTME, "-l", "ru-en", "--stat", "seg-kendall-none", "-k", "200"],
        "seg-kendall-none: permutation draws",
    ),  # fmt: skip
    "paired": ([REF, "-i", HYP, HYP2, "--paired-bs", "-f", "text"], "bleucli:"),
    "rank": ([REF, "-i", HYP, HYP2, "--rank", "-f", "text"], "bleucli:"),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_terminal_gets_a_bar_and_a_pipe_none(name: str) -> None:
    args, marker = COMMANDS[name]
    code, out, shown = _on_a_terminal(args)
    assert code == 0, shown
    assert marker in shown and BAR.search(shown), shown  # a bar: [#####-----]  50%
    piped = subprocess.run([sys.executable, "-m", "bleucli", *args], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)  # fmt: skip
    assert piped.returncode == 0 and not BAR.search(piped.stderr)
    assert piped.stdout == out  # the same results
    quiet_code, _, quiet = _on_a_terminal([*args, "-q"])
    assert quiet_code == 0 and not BAR.search(quiet)


def test_where_no_bar_shows_a_long_stage_says_what_it_does_once_a_minute(
    monkeypatch, capsys
) -> None:
    """A CI log or a pipe: a line per LOG_EVERY seconds, not a bar; nothing for short stages
    and nothing with -q."""
    import io

    from bleucli import progress

    clock = [1000.0]
    monkeypatch.setattr("time.monotonic", lambda: clock[0])
    stream = io.StringIO()
    monkeypatch.setattr(progress.sys, "stderr", stream)
    progress.configure(quiet=False)  # a StringIO is not a terminal
    with progress.stage("COMET (wmt22-comet-da)", 2000) as advance:
        advance(100)  # quick: nothing said
        clock[0] += 61
        advance(900)
        clock[0] += 30
        advance(500)  # within the minute: nothing more
        clock[0] += 31
        advance(100)
    lines = stream.getvalue().splitlines()
    assert lines == [
        "bleucli: COMET (wmt22-comet-da): 1,000 of 2,000 (50%), 61 s so far",
        "bleucli: COMET (wmt22-comet-da): 1,600 of 2,000 (80%), 122 s so far",
    ]
    progress.configure(quiet=True)
    stream.truncate(0)
    with progress.stage("quiet", 10) as advance:
        clock[0] += 100
        advance(5)
    assert stream.getvalue() == ""
