"""Every command in the README and in docs/ runs as written.

Each page's ``bash`` blocks run in order, in a scratch folder holding the repository's
``examples/`` and the placeholder files the pages name (``ref.de``, ``hyp.de``, ... are copies
of the shipped examples), so a page may use what an earlier command of it wrote. Commands
that need a test set from the internet run offline and must stop with the offline error
(which shows that their flags, test set and language pair are valid); the few commands that
are not run at all are listed with their reason, so a new command cannot go untested by
accident. ``python`` blocks run too, unless listed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: Placeholder file -> the shipped example it is a copy of.
PLACEHOLDERS = {
    "ref.de": "ref.de",
    "ref2.de": "ref2.de",
    "ref1.de": "ref.de",
    "hyp.de": "hyp.de",
    "out.txt": "hyp.de",
    "base.de": "hyp.de",
    "sysA.de": "hyp2.de",
    "sysB.de": "ref2.de",
    "b.de": "hyp.de",
    "n.de": "hyp2.de",
    "a.de": "hyp.de",
    "c.de": "ref2.de",
    "src.en": "src.en",
    "ref.txt": "ref.de",
    "baseline.txt": "hyp.de",
    "ref.part1": "ref.de",
    "ref.part2": "ref2.de",
    "hyp.part1": "hyp.de",
    "hyp.part2": "hyp2.de",
    "both.txt": "hyp.de",
}

#: Commands not run, with the reason (a substring of the command -> why).
NOT_RUN = {
    "pip install": "installs packages: the README's commands are run by tests/test_setup.py",
    "python3 -m pytest": "the test suite itself",
    "scripts/bench.py": "minutes of timing runs: tests/test_bench.py runs its quick mode",
    "scripts/memcheck.sh": "runs the native tests under valgrind (CI-independent tool)",
    "scripts/fuzz_native.py": "needs atheris (a fuzzer); run by hand",
    "ruff check": "the static checks: their own step of .ci/run",
    "mypy": "the static checks: their own step of .ci/run",
    "python3 -m venv": "makes a virtualenv (tests/test_setup.py installs into fresh ones)",
    "scripts/update_help.py": "rewrites the stored help: tests/test_cli.py checks it is current",
    "bleucli server run": "serves until stopped: tests/server/ start real servers",
    "bleucli submit": "needs a running server: tests/server/test_server.py submits as written",
    "bleucli verify receipt.json --server": "needs a running server: tests/server/ verifies",
    "bleucli verify receipt.json -i hyp.de ref.de --source": "a neural set's receipt and a real "
    "model: tests/server/test_neural.py verifies one with a toy model",
    "bleucli models download wmt22": "downloads from the hub: tests/neural/test_hub.py downloads "
    "through a hub on 127.0.0.1",
}

#: Commands whose exit code is not 0 by design (substring -> exit code).
EXPECTED_EXIT = {
    "gate current.json --baseline baseline.json --tolerance 0.5": 3,
    # the walk-through's set closes in 2030: reveal refuses it until then
    "bleucli server reveal --db task.db news --yes": 1,
    "--cer-spaces sometimes": 2,  # docs/metrics.md shows the refusal
    # docs/neural.md: the real model is not downloaded here; the error says how to get it
    "HF_HUB_OFFLINE=1 bleucli ref.de -i hyp.de --source src.en -m comet": 1,
}

#: Python blocks that are sketches rather than programs (their first line -> why).
PYTHON_NOT_RUN = {
    "from bleucli.distributed import score_dask": "needs a Dask bag (the dask extra)",
    "from functools import partial": "needs a PySpark RDD",
    "from bleucli import BLEU\nfrom bleucli.testsets import TestSets": "downloads wmt14",
}

#: A command that names a test set other than the shipped sample.
_NETWORK_SET = re.compile(r"(?:-t|--test-set|--download)\s+(?!sample\b)\S+")


def blocks(page: Path, language: str) -> list[str]:
    text = page.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def commands(block: str) -> list[str]:
    """Logical command lines: continuations joined, comment lines and comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", block)
    out = []
    for line in joined.splitlines():
        line = re.sub(r"\s+#\s.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


#: Commands that are not bleucli's but run as written (the page says to run them).
OTHER_COMMANDS = ("python -m tests.neural_toy ",)


def sandbox(folder: Path, page: Path | None = None) -> Path:
    shutil.copytree(EXAMPLES, folder / "examples")
    if page is not None and page.name == "neural.md":  # its Python blocks use the toys
        from tests.neural_toy import build_all

        build_all(folder / "toy-comet")
    if page is not None and "tests/data/autorank" in page.read_text(encoding="utf-8"):
        # WMT25's published scores, at the path they have in a clone
        data = Path("tests", "data", "autorank")
        shutil.copytree(ROOT / data, folder / data)
    for name, source in PLACEHOLDERS.items():
        shutil.copy(EXAMPLES / source, folder / name)
    refs = [(EXAMPLES / n).read_text(encoding="utf-8").splitlines() for n in ("ref.de", "ref2.de")]
    zh = ["猫坐在垫子上。", "今天天气很好，我们去公园吧。", "他在2024年买了3本书。"]
    (folder / "ref.zh").write_text("\n".join(zh) + "\n", encoding="utf-8")
    (folder / "hyp.zh").write_text(
        "\n".join(line[:-2] + "。" for line in zh) + "\n", encoding="utf-8"
    )
    (folder / "refs.tsv").write_text(
        "".join(f"{a}\t{b}\n" for a, b in zip(*refs)), encoding="utf-8"
    )
    return folder


def environment(cache: str, page: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLEUCLI_")}
    env["BLEUCLI_CACHE"] = cache
    env["BLEUCLI_OFFLINE"] = "1"  # tests never touch the internet
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = str(ROOT)
    if page is not None and page.name == "metrics.md":  # its `pip install` of the example
        from tests.plugins import install_example

        site = install_example(Path(cache).parent / "site")
        env["PYTHONPATH"] = f"{site}{os.pathsep}{ROOT}"
    return env


def page_id(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def test_every_page_has_commands_and_links_resolve() -> None:
    """The README links every docs page, and every relative link points at a file."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in PAGES[1:]:
        assert f"(docs/{page.name})" in readme, page.name
    for page in PAGES:
        for target in re.findall(r"\]\((?!https?://|#)([^)#]+)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), (page_id(page), target)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_shell_commands_run_as_written(page: Path, tmp_path: Path) -> None:
    folder = sandbox(tmp_path / "work", page)
    env = environment(str(tmp_path / "cache"), page)
    ran = 0
    printed: list[str] = []
    shown = blocks(page, "bash")
    for block in shown:
        for command in commands(block):
            skipped = [why for marker, why in NOT_RUN.items() if marker in command]
            if skipped:
                continue
            assert "bleucli" in command or command.startswith(OTHER_COMMANDS), (
                f"{page_id(page)}: not a bleucli command: {command}"
            )
            proc = subprocess.run(
                ["bash", "-c", command],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                stdin=subprocess.DEVNULL,
            )
            where = f"{page_id(page)}: {command}"
            assert "Traceback" not in proc.stderr, where
            if _NETWORK_SET.search(command) and "offline mode is on" in proc.stderr:
                # a test set from the internet: valid up to the download (tests stay offline)
                assert proc.returncode == 1, where
            else:
                expected = next(
                    (code for marker, code in EXPECTED_EXIT.items() if marker in command), 0
                )
                assert proc.returncode == expected, (where, proc.stdout[-500:], proc.stderr[-1500:])
            ran += 1
            printed.append(proc.stdout)
    assert ran > 0 or not shown, page_id(page)
    # a result line the page shows as output (``METRIC|...|version:bleucli-... = SCORE``)
    # is what one of its commands printed: the hash and the score as documented
    for block in blocks(page, "text"):
        for line in block.splitlines():
            if re.match(r"^\S+\|\S*version:bleucli-\S* = ", line) and "..." not in line:
                results = [r for out in printed for r in out.splitlines() if " = " in r]
                assert any(line in out for out in printed), (page_id(page), line, results)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_python_blocks_run_as_written(page: Path, tmp_path: Path) -> None:
    env = environment(str(tmp_path / "cache"), page)
    for code in blocks(page, "python"):
        if any(code.startswith(first) for first in PYTHON_NOT_RUN):
            continue
        proc = subprocess.run(
            [sys.executable, "-c", code],
            cwd=sandbox(tmp_path / "py", page),
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, (page_id(page), code[:200], proc.stderr[-1500:])
        shutil.rmtree(tmp_path / "py")
