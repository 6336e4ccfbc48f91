"""Start-up stays light: each command imports what it needs. A plain file score loads no
test-set, download, archive, shard or paired-test code (nor numpy, requests or logging);
``--help`` and ``--version`` load no metric and not even click. Checked in a fresh
interpreter; ``scripts/bench.py`` measures the time with ``python -X importtime``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT

REF, HYP = str(EXAMPLES / "ref.de"), str(EXAMPLES / "hyp.de")

#: What scoring a file never needs.
NOT_FOR_A_PLAIN_SCORE = (
    "bleucli.testsets.loader",
    "bleucli.testsets.registry",
    "bleucli.testsets.download",
    "bleucli.testsets.store",
    "bleucli.testsets.extract",
    "bleucli.testsets.formats",
    "bleucli.shards",
    "bleucli.commands.paired",
    "bleucli.commands.testset_info",
    "bleucli.commands.rank",
    "bleucli.commands.documents",
    "bleucli.stats.bootstrap",
    "bleucli.analysis",
    "bleucli.sacrebleu_compat",
    "bleucli.cli.server",
    "bleucli.cli.metaeval",
    "bleucli.server",
    "importlib.metadata",  # metric plugins are looked up only when a run names one
    "requests",
    "urllib3",
    "tarfile",
    "zipfile",
    "numpy",
    "logging",
    "filelock",
    "platformdirs",
    "tabulate",
    "pathlib",
    "tempfile",
    "shutil",
)
#: What --help and --version never need.
NOT_FOR_HELP = (
    "click",
    "bleucli.cli.main",
    "bleucli.metrics",
    "bleucli.metrics.base",
    "bleucli.commands",
    *NOT_FOR_A_PLAIN_SCORE,
)


#: Runs ``bleucli ARGS`` in-process in a bare interpreter (``-I -S``: no site, no .pth files,
#: no PYTHONSTARTUP) and reports every module it added to what that bare start had loaded.
#: What the tests forbid is so measured against the same baseline in any environment: a
#: site or .pth that happens to import shutil or logging at start-up hides nothing.
PROBE = """
import sys
before = set(sys.modules)
sys.path[:0] = PATHS
import atexit, json, runpy
atexit.register(lambda: sys.stderr.write("\\nMODULES " + json.dumps(sorted(set(sys.modules) - before))))
sys.argv = ["bleucli", *sys.argv[1:]]
runpy.run_module("bleucli", run_name="__main__")
"""


def imported(*args: str) -> set[str]:
    """The modules ``bleucli ARGS`` imports, in a fresh bare interpreter."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLEUCLI_")}
    env["BLEUCLI_CACHE"] = os.environ["BLEUCLI_CACHE"]
    paths = [str(ROOT), *(path for path in sys.path if path)]  # site's paths, not its imports
    probe = PROBE.replace("PATHS", repr(paths))
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return set(json.loads(proc.stderr.rsplit("MODULES ", 1)[1]))


def test_a_plain_score_loads_only_what_it_needs() -> None:
    modules = imported(REF, "-i", HYP, "-b")
    assert "bleucli.metrics.bleu" in modules  # the check sees the scoring imports
    assert sorted(modules & set(NOT_FOR_A_PLAIN_SCORE)) == []


def test_metric_options_and_prefixes_do_not_look_for_plugins() -> None:
    modules = imported(REF, "-i", HYP, "-m", "bleu", "chrf", "--chrf-word", "2", "-tok", "intl")
    assert "bleucli.metrics.chrf" in modules
    assert sorted(modules & set(NOT_FOR_A_PLAIN_SCORE)) == []


def test_a_score_that_logs_a_message_still_logs_it() -> None:
    """logging loads with the first message (a notice here), which still reaches stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "bleucli", REF, "-i", HYP, "-b", "-j", "999"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stderr.startswith("bleucli: -j 999: using ")
    quiet = subprocess.run(
        [sys.executable, "-m", "bleucli", REF, "-i", HYP, "-b", "-j", "999", "-q"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert quiet.returncode == 0 and quiet.stderr == ""


@pytest.mark.parametrize("flag", ["--help", "-h", "--version", "-V"])
def test_help_and_version_load_no_metric_and_no_click(flag) -> None:
    assert sorted(imported(flag) & set(NOT_FOR_HELP)) == []


def test_a_test_set_run_does_load_the_test_set_code(cache_dir) -> None:
    """The negative check above is not vacuous: the same probe sees test-set code load
    when a test set is used."""
    env_modules = imported("-t", "sample", "-l", "en-de", "--echo", "src")
    assert "bleucli.testsets.loader" in env_modules
