"""The server's pages as a participant uses them, in Chromium: sign in with the team token,
upload through the form, see the submission and the leaderboard; every page at 800, 1280
and 1600 px without horizontal overflow."""

from __future__ import annotations

import time

import pytest

from tests.browser import launch, needs_chromium
from tests.server.conftest import HYP, Task, set_up, start_server

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser():
    yield from launch()


@pytest.fixture
def task(tmp_path) -> Task:
    db = f"sqlite:///{tmp_path / 'pages.db'}"
    long_team = "University of Somewhere Far Away, Machine Translation Group (primary)"
    tokens = set_up(
        db, tmp_path, teams=("alpha", long_team), testset_args=("-m", "bleu", "chrf", "ter")
    )
    server = start_server(db, tmp_path)
    yield Task(server, tokens, tmp_path)
    server.stop()


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
def test_pages_fit_every_width(task: Task, browser, width) -> None:
    import requests

    long_team = next(name for name in task.tokens if name != "alpha")
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
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(task.server.url + "/signin")
    page.fill("#token", task.tokens[long_team])
    with page.expect_navigation():
        page.click("button")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        page.goto(task.server.url + "/testsets/news")
        if page.inner_text("main").count("a-very-long-run-name") >= 2:
            break
        time.sleep(0.3)
    for path in ("/", "/testsets/news", "/submit", "/signin", "/submissions/2"):
        page.goto(task.server.url + path)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, path
    page.close()
