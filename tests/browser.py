"""The system's Chromium for the tests that look at what bleucli renders (HTML pages, SVG
figures), driven by Playwright's Python package (no browser download). A module that uses
it skips with the reason where either is missing."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Chromium flags for a closed network and a root user (the machine's own rules).
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no system Chromium (Debian's chromium package; .ci/run installs it where "
    "apt-get is available)",
)


def launch():
    """A context manager's generator: the browser, closed afterwards (for fixtures)."""
    playwright_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright's Python package is part of the test extra"
    )
    with playwright_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()
