"""The server's pages as a participant uses them, in Chromium: sign in with the team token,
upload through the form, see the submission and the leaderboard; every page at 800, 1280
and 1600 px without horizontal overflow."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.browser import launch, needs_chromium
from tests.server.conftest import HYP, Task, set_up, start_server

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser():
    yield from launch()


def _pages_task(folder) -> Iterator[Task]:
    db = f"sqlite:///{folder / 'pages.db'}"
    long_team = "University of Somewhere Far Away, Machine Translation Group (primary)"
    tokens = set_up(
        db, folder, teams=("alpha", long_team), testset_args=("-m", "bleu", "chrf", "ter")
    )
    server = start_server(db, folder)
    try:
        yield Task(server, tokens, folder)
    finally:
        server.stop()


@pytest.fixture
def task(tmp_path) -> Iterator[Task]:
    yield from _pages_task(tmp_path)


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Iterator[Task]:
    """One server for every page width: both teams' runs (long names) scored and shown."""
    import requests

    for task in _pages_task(tmp_path_factory.mktemp("board")):
        for team in task.tokens:
            with open(HYP, "rb") as handle:
                answer = requests.post(
                    task.server.url + "/api/v1/submissions",
                    headers={"Authorization": f"Bearer {task.tokens[team]}"},
                    data={"testset": "news", "name": "a-very-long-run-name-" * 5},
                    files={"hypothesis": ("h", handle.read())},
                    timeout=30,
                )
            assert answer.status_code == 202
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            shown = requests.get(task.server.url + "/testsets/news", timeout=30).text
            if shown.count("a-very-long-run-name") >= 2:
                break
            time.sleep(0.3)
        yield task


def test_sign_in_upload_and_read_the_leaderboard(task: Task, browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(task.server.url + "/signin")
    page.fill("#token", task.tokens["alpha"])
    with page.expect_navigation():
        page.click("button")
    assert page.url.rstrip("/") == task.server.url
    assert "signed in as alpha" in page.inner_text("header")
    page.goto(task.server.url + "/submit")
    page.fill("#name", "my <b>first</b> run")
    page.set_input_files("#hypothesis", HYP)
    with page.expect_navigation():
        page.click("form.stack button")
    assert "/submissions/" in page.url
    # the page says "counted by the leaderboard" only once the leaderboard counts the run
    # (before that: "scored; the leaderboard is being updated to count it")
    deadline = time.monotonic() + 60
    while "counted by the leaderboard" not in page.inner_text("main"):
        assert time.monotonic() < deadline, page.inner_text("main")
        time.sleep(0.3)
        page.reload()
    text = page.inner_text("main")
    assert "scored" in text and "BLEU" in text and "my <b>first</b> run" in text
    page.goto(task.server.url + "/testsets/news")
    assert "alpha" in page.inner_text("table") and "59.9" in page.inner_text("table")
    page.close()


@pytest.mark.parametrize("width", [800, 1280, 1600])
def test_pages_fit_every_width(board: Task, browser, width) -> None:
    long_team = next(name for name in board.tokens if name != "alpha")
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(board.server.url + "/signin")
    page.fill("#token", board.tokens[long_team])
    with page.expect_navigation():
        page.click("button")
    page.goto(board.server.url + "/testsets/news")
    assert page.inner_text("main").count("a-very-long-run-name") >= 2
    for path in ("/", "/testsets/news", "/submit", "/signin", "/submissions/2"):
        page.goto(board.server.url + path)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, path
    page.close()
