"""Score history for CI: series with labels, the server-side gate (whose numbers equal
``bleucli gate``'s statistical gate on the same files), baselines by ``--against`` and
``--promote``, the series API and its CSV, the trend page in Chromium,
and badges."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import requests

from tests.browser import launch, needs_chromium
from tests.conftest import EXAMPLES
from tests.server.conftest import (
    HYP,
    HYP2,
    REF,
    Task,
    add_testset,
    bleucli,
    serving,
    set_up,
    start_server,
)


def slightly_worse(folder: Path) -> str:
    """The example output with one word fewer on its first line: a drop that is noise."""
    lines = Path(HYP).read_text(encoding="utf-8").splitlines()
    path = folder / "slightly.de"
    path.write_text("\n".join([lines[0].rsplit(" ", 1)[0], *lines[1:]]) + "\n", encoding="utf-8")
    return str(path)


def submit(task: Task, path: str, *extra: str, check: bool = True):
    proc = bleucli(
        "submit", "--server", task.server.url, "--token-file", task.token_file("alpha"),
        "-t", "news", "-i", path, "--series", "main", *extra, check=False,
    )  # fmt: skip
    if check:
        assert proc.returncode in (0, 3), proc.stderr
    return proc


@pytest.fixture
def series_task(db_url, tmp_path):
    tokens = set_up(
        db_url, tmp_path,
        testset_args=("-m", "bleu", "chrf", "ter", "--limit-per-day", "50", "--visibility", "public"),
    )  # fmt: skip
    server = start_server(db_url, tmp_path)
    yield Task(server, tokens, tmp_path)
    server.stop()


def local_gate(folder: Path, base: str, now: str, *args: str) -> dict:
    """``bleucli gate``'s statistical gate on the same two files, as JSON."""
    for name, path in (("base.json", base), ("now.json", now)):
        (folder / name).write_text(bleucli(REF, "-i", path, "-m", "bleu", "chrf", "ter").stdout)
    proc = bleucli(
        "gate", str(folder / "now.json"), "--baseline", str(folder / "base.json"),
        "--baseline-output", base, "--output", now, "--refs", REF, "-f", "json", *args, check=False,
    )  # fmt: skip
    return json.loads(proc.stdout)


def test_gate_verdicts_equal_bleucli_gate(series_task: Task, tmp_path: Path) -> None:
    first = submit(series_task, HYP, "--gate", "--promote", "-f", "json")
    assert first.returncode == 0 and json.loads(first.stdout)["baseline"] is None
    # a drop that is noise: passes, with bleucli gate's p-value
    noisy = slightly_worse(tmp_path)
    proc = submit(series_task, noisy, "--gate", "--tolerance", "0.01", "-f", "json")
    verdict = json.loads(proc.stdout)
    local = local_gate(tmp_path, HYP, noisy, "--tolerance", "0.01")
    assert proc.returncode == 0 and verdict["passed"] is local["passed"] is True
    assert [c["detail"] for c in verdict["checks"]] == [c["detail"] for c in local["checks"]]
    assert any("not significant: p = " in c["detail"] for c in verdict["checks"])
    # a significant drop: fails (exit 3), the same p-values
    proc = submit(series_task, HYP2, "--gate", "--tolerance", "0.5", "-f", "json")
    verdict = json.loads(proc.stdout)
    local = local_gate(tmp_path, HYP, HYP2, "--tolerance", "0.5")
    assert proc.returncode == 3 and verdict["passed"] is local["passed"] is False
    assert [(c["check"], c["status"], c["detail"]) for c in verdict["checks"]] == [
        (c["check"], c["status"], c["detail"]) for c in local["checks"]
    ]
    # the baseline stayed the promoted first run
    assert verdict["baseline"] == json.loads(first.stdout)["run"]


def test_a_signature_change_starts_the_gate_afresh(tmp_path) -> None:
    """A new version (here another tokeniser) changes the signature: compared across it
    (--against the old run) the gate fails on the signature; by default it starts afresh on
    the new version instead of failing for ever (docs/server.md shows the way)."""
    with serving(tmp_path, testset_args=("-m", "bleu", "--visibility", "public")) as task:
        first = submit(task, HYP, "--gate", "-f", "json")
        assert first.returncode == 0
        old = json.loads(first.stdout)["run"]
        add_testset(task.server.db, "-m", "bleu", "-tok", "intl")
        afresh = submit(task, HYP, "--gate")
        assert afresh.returncode == 0, afresh.stdout
        assert "no earlier run on this version of the test set" in afresh.stdout
        across = submit(task, HYP, "--gate", "--against", str(old))
        assert across.returncode == 3
        assert "FAIL BLEU signature" in across.stdout and "tok:13a -> tok:intl" in across.stdout


def test_against_last_best_id_and_promote(tmp_path) -> None:
    with serving(
        tmp_path, testset_args=("-m", "bleu", "--limit-per-day", "50", "--visibility", "public")
    ) as task:

        def gate(path: str, *extra: str) -> dict:
            return json.loads(submit(task, path, "--gate", "-f", "json", *extra).stdout)

        worse = gate(HYP2)["run"]  # the series' first run: the default baseline
        best = gate(HYP, "--promote")["run"]  # passes (better than the first) and is promoted
        assert gate(HYP2)["baseline"] == best  # default: the last promoted run
        last = gate(HYP, "--against", "last")
        assert last["baseline"] == best + 1  # the previous run, whatever its verdict
        assert gate(HYP2, "--against", "best")["baseline"] == best  # first of the best scores
        assert gate(HYP, "--against", str(worse))["baseline"] == worse
        missing = submit(task, HYP, "--gate", "--against", "99999", check=False)
        assert missing.returncode == 1 and "no other run 99999" in missing.stderr
        failed = gate(HYP2, "--tolerance", "0.5", "--promote")
        assert failed["passed"] is False and failed["promoted"] is False  # only a pass promotes


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """A series with every state: a first run, a significant step, runs equal to their
    predecessor, a signature change; labels on every run; a public badge. Built once: the
    tests that use it only read (one server for every page width)."""
    tmp_path = tmp_path_factory.mktemp("history")
    db = f"sqlite:///{tmp_path / 'history.db'}"
    tokens = set_up(db, tmp_path, teams=("alpha", "beta"))
    bleucli("server", "add-testset", "--db", db, "news", "-l", "en-de", "--ref", REF, "-m", "bleu", "chrf",
            "--visibility", "private", "--owner", "alpha", "--public-badge", "--limit-per-day", "50")  # fmt: skip
    server = start_server(db, tmp_path)
    task = Task(server, tokens, tmp_path)
    try:  # a failing set-up must not leave the server running
        for k, path in enumerate([HYP, HYP2, HYP, HYP]):
            submit(task, path, "--gate", "--label", f"commit=c{k}", "--label", "model=base,v2")
        add_testset(db, "-m", "bleu", "chrf", "-lc")
        submit(task, HYP, "--gate", "--label", "commit=lowercased")
        yield task
    finally:
        server.stop()


def test_series_api_and_csv_round_trip(history: Task) -> None:
    url = history.server.url + "/api/v1/series/news/main"
    headers = {"Authorization": f"Bearer {history.tokens['alpha']}"}
    runs = requests.get(url, headers=headers, timeout=30).json()["runs"]
    assert [run["labels"]["commit"] for run in runs] == ["c0", "c1", "c2", "c3", "lowercased"]
    assert all(run["gate"] is not None for run in runs)
    assert runs[-1]["signatures"]["BLEU"] != runs[0]["signatures"]["BLEU"]
    text = requests.get(url + "?format=csv", headers=headers, timeout=30).text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [int(row["id"]) for row in rows] == [run["id"] for run in runs]
    for row, run in zip(rows, runs):
        assert float(row["BLEU"]) == run["scores"]["BLEU"]
        assert float(row["BLEU ci"]) == run["intervals"]["BLEU"][1]
        assert row["BLEU signature"] == run["signatures"]["BLEU"]
        assert row["label:model"] == run["labels"].get("model", "")
    assert (
        requests.get(
            url, headers={"Authorization": f"Bearer {history.tokens['beta']}"}, timeout=30
        ).status_code
        == 404
    )


def test_badge_is_valid_svg_and_public_only_where_allowed(history: Task) -> None:
    url = history.server.url + "/badges/news/main.svg"
    answer = requests.get(url, timeout=30)  # the owner allowed it: no token needed
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("image/svg+xml")
    root = ET.fromstring(answer.text)
    assert root.tag.endswith("svg") and "BLEU" in answer.text
    assert (
        requests.get(history.server.url + "/badges/news/other.svg", timeout=30).status_code == 404
    )
    assert (
        requests.get(
            url, headers={"Authorization": f"Bearer {history.tokens['beta']}"}, timeout=30
        ).status_code
        == 404
    )


@pytest.fixture(scope="module")
def browser():
    yield from launch()


@needs_chromium
@pytest.mark.parametrize("width", [800, 1280, 1600])
def test_trend_page_renders_every_state(history: Task, browser, width) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(history.server.url + "/signin")
    page.fill("#token", history.tokens["alpha"])
    with page.expect_navigation():
        page.click("button")
    page.goto(history.server.url + "/testsets/news/series/main")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    figure = page.evaluate("""() => { const s = document.querySelector('svg.trend');
        const b = s.getBoundingClientRect();
        return {width: b.width, right: b.right, polylines: s.querySelectorAll('polyline').length,
                titles: [...s.querySelectorAll('title')].map(t => t.textContent),
                texts: [...s.querySelectorAll('text')].map(t => t.textContent)}; }""")
    assert figure["right"] <= width and figure["width"] > 300
    assert any("commit=c1" in title for title in figure["titles"])  # labels on hover
    assert any(text.startswith("new signature from run") for text in figure["texts"])
    assert any("significant step" in title for title in figure["titles"])  # run c1, a real drop
    assert "commit=lowercased" in page.inner_text("table")  # labels in the table
    page.close()


def test_one_run_series_page(tmp_path) -> None:
    with serving(
        tmp_path, teams=("alpha",), testset_args=("-m", "bleu", "--visibility", "public")
    ) as task:
        submit(task, str(EXAMPLES / "hyp.de"))
        answer = requests.get(task.server.url + "/testsets/news/series/main",
                              headers={"Authorization": f"Bearer {task.tokens['alpha']}"}, timeout=30)  # fmt: skip
        assert (
            answer.status_code == 200 and "<svg" in answer.text and "<polyline" not in answer.text
        )


def test_github_actions_annotations_and_step_summary(tmp_path) -> None:
    with serving(
        tmp_path, testset_args=("-m", "bleu", "--limit-per-day", "50", "--visibility", "public")
    ) as task:
        summary = tmp_path / "summary.md"
        env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
        args = ["submit", "--server", task.server.url, "--token-file", task.token_file("alpha"), "-t", "news",
                "--series", "main", "--gate", "--tolerance", "0.5"]  # fmt: skip
        assert bleucli(*args, "-i", HYP, env=env).returncode == 0
        failed = bleucli(*args, "-i", HYP2, env=env, check=False)
        assert failed.returncode == 3
        assert "::error title=bleucli gate: BLEU drop::drop: worse by" in failed.stderr
        as_json = bleucli(*args, "-i", HYP2, "-f", "json", env=env, check=False)
        assert as_json.returncode == 3 and json.loads(as_json.stdout)["passed"] is False
        assert "::error" in as_json.stderr and "::error" not in as_json.stdout
        text = summary.read_text(encoding="utf-8")
        assert text.count("### bleucli gate: ") == 3 and "### bleucli gate: failed" in text
        assert "| FAIL | BLEU drop | 59.9 | 39.7 |" in text
