"""Every HTML page bleucli writes -- the scoring command's ``-f html`` (with ``--rank``),
``report -f html`` and ``analyze --html`` -- in one page frame, read in Chromium at 800,
1280 and 1600 px with systems under long real-looking paths: the page never scrolls
sideways, and no table header breaks inside a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import launch, needs_chromium
from tests.conftest import EXAMPLES, run_subprocess

pytestmark = needs_chromium

SYSTEMS = ["JDExploreAcademy", "Online-A", "Lan-Bridge", "candidate-with-document-context"]

#: Words of table headers that the browser broke over two lines (a word whose characters
#: lie on more than one line box).
BROKEN_HEADERS = """() => {
    const broken = [];
    for (const th of document.querySelectorAll('th')) {
      const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
      for (let text = walker.nextNode(); text; text = walker.nextNode()) {
        const re = /\\S+/g; let m;
        while ((m = re.exec(text.data)) !== null) {
            const range = document.createRange();
            range.setStart(text, m.index); range.setEnd(text, m.index + m[0].length);
            const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
            if (tops.size > 1) broken.push(m[0]);
        }
      }
    }
    return broken;
}"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pages")
    data = folder / "data" / "wmt22" / "en-de" / "submissions" / "primary"
    data.mkdir(parents=True)
    lines = (EXAMPLES / "hyp.de").read_text(encoding="utf-8").splitlines()
    systems = []
    for k, name in enumerate(SYSTEMS):
        path = data / f"sys.{name}.de"
        changed = [
            " ".join(line.split()[: len(line.split()) - (i + k) % 3])
            for i, line in enumerate(lines)
        ]
        path.write_text("\n".join(changed) + "\n", encoding="utf-8")
        systems.append(str(path.relative_to(folder)))
    ref = str(EXAMPLES / "ref.de")
    out: dict[str, Path] = {}
    scored = run_subprocess(
        [ref, "-i", *systems, "-m", "bleu", "chrf", "ter", "--rank", "-f", "html"], cwd=folder
    )
    assert scored.returncode == 0, scored.stderr
    out["score"] = folder / "score.html"
    out["score"].write_bytes(scored.stdout)
    results = []
    for path in systems:
        proc = run_subprocess([ref, "-i", path, "-m", "bleu", "chrf", "ter"], cwd=folder)
        assert proc.returncode == 0, proc.stderr
        result = folder / (Path(path).stem + ".json")
        result.write_bytes(proc.stdout)
        results.append(str(result.relative_to(folder)))
    reported = run_subprocess(["report", *results, "-f", "html"], cwd=folder)
    assert reported.returncode == 0, reported.stderr
    out["report"] = folder / "report.html"
    out["report"].write_bytes(reported.stdout)
    out["analyze"] = folder / "analyze.html"
    analysed = run_subprocess(
        ["analyze", ref, "-i", *systems, "-m", "bleu", "chrf", "--html", str(out["analyze"])],
        cwd=folder,
    )
    assert analysed.returncode == 0, analysed.stderr
    return out


@pytest.fixture(scope="module")
def browser():
    yield from launch()


def test_the_pages_share_one_frame(pages) -> None:
    from bleucli.analysis.page import CSS

    for kind, path in pages.items():
        text = path.read_text(encoding="utf-8")
        assert text.startswith("<!DOCTYPE html>") and CSS in text, kind
        assert '<div class="table">' in text, kind


@pytest.mark.parametrize("width", [800, 1280, 1600])
@pytest.mark.parametrize("kind", ["score", "report", "analyze"])
def test_pages_fit_and_headers_break_between_words(pages, browser, kind, width) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(pages[kind].as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(BROKEN_HEADERS) == []
    headers = page.evaluate("[...document.querySelectorAll('th')].length")
    assert headers > 2
    page.close()


def test_analysis_names_systems_short_and_lists_the_files_once(pages) -> None:
    text = pages["analyze"].read_text(encoding="utf-8")
    assert "<h1>bleucli analysis: JDExploreAcademy, Online-A, Lan-Bridge" in text
    for name in SYSTEMS:
        assert text.count(f"data/wmt22/en-de/submissions/primary/sys.{name}.de") == 1
