"""The HTML analysis report as a reader sees it: rendered by the system's Chromium (driven by
Playwright's Python package, no browser download) at 800-1600 px, on a report with every
length bucket, four systems with long names and three metrics. Nothing is wider than the
page, every figure is visible, scaled down but legible, has a legend naming every system
and one metric per axis; the example highlighting differs in more than colour."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.browser import launch, needs_chromium
from tests.conftest import run_cli

pytest.importorskip("matplotlib", reason="figures need the plot extra (bleucli[plot])")
pytestmark = needs_chromium
SYSTEMS = [
    "baseline-transformer-big",
    "candidate-with-backtranslation",
    "candidate-with-document-context",
    "online-commercial-system-A",
]
METRICS = ["BLEU", "chrF2", "TER"]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """A report whose length buckets are all filled: lines of 3 to 70 words."""
    rng = random.Random(5)
    vocabulary = [f"w{k}" for k in range(300)]
    folder = tmp_path_factory.mktemp("report")
    refs = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 70))) for _ in range(240)]
    (folder / "ref.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    args = ["analyze", str(folder / "ref.txt"), "-m", "bleu", "chrf", "ter"]
    for k, name in enumerate(SYSTEMS):
        lines = [
            " ".join(
                w if rng.random() > 0.1 * (k + 1) else rng.choice(vocabulary) for w in ref.split()
            )
            for ref in refs
        ]
        path = folder / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        args += ["-i", f"{name}:{path}"]
    page = folder / "report.html"
    result = run_cli([*args, "-s", str(folder / "ref.txt"), "--html", str(page)])
    assert result.exit_code == 0, result.stderr
    return page


@pytest.fixture(scope="module")
def browser():
    yield from launch()


#: Elements reaching past the viewport's right edge (outside <svg>: its parts are drawn
#: inside the scaled figure; inside a table's box: it scrolls on its own, the page not).
OVERFLOW = """() => [...document.querySelectorAll('body *')]
    .filter(e => !e.closest('svg') && !e.parentElement.closest('div.table'))
    .filter(e => e.getBoundingClientRect().right > innerWidth + 0.5)
    .map(e => e.tagName + ': ' + (e.textContent || '').slice(0, 60))"""
FIGURES = """() => [...document.querySelectorAll('figure svg')].map(s => {
    const box = s.getBoundingClientRect();
    const texts = [...s.querySelectorAll('text')];
    return {width: box.width, height: box.height, right: box.right,
            visible: s.checkVisibility(),
            natural: s.viewBox.baseVal.width,
            texts: texts.map(t => t.textContent.trim()),
            smallest: Math.min(...texts.map(t => t.getBoundingClientRect().height)),
            caption: s.closest('figure').querySelector('figcaption').textContent};
})"""


@pytest.mark.parametrize("width", [800, 1024, 1280, 1600])
def test_every_figure_fits_and_is_legible(report, browser, width) -> None:
    page = browser.new_page(viewport={"width": width, "height": 1000})
    page.goto(report.as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(OVERFLOW) == []
    figures = page.evaluate(FIGURES)
    bucket_figures = [f for f in figures if f["caption"].startswith("Scores by")]
    assert len(bucket_figures) == 2 and len(figures) >= 4
    for figure in figures:
        assert figure["visible"] and figure["width"] > 200 and figure["height"] > 100
        assert figure["right"] <= width
        # scaled down to the page when needed, never up, and never past legibility
        assert figure["width"] <= figure["natural"] * 4 / 3 + 1
        assert figure["smallest"] >= 7, figure["caption"]
    for figure in bucket_figures:
        texts = figure["texts"]
        assert all(name in texts for name in SYSTEMS)  # the legend names every system
        assert all(metric in texts for metric in METRICS)  # one axis per metric
        assert any("length (words)" in text for text in texts)  # the x axis says what it is
    page.close()


def test_example_highlighting_differs_in_more_than_colour(report, browser) -> None:
    page = browser.new_page(viewport={"width": 1024, "height": 1000})
    page.goto(report.as_uri())
    styles = page.evaluate("""() => ['a', 'b'].map(k => {
        const mark = document.querySelector('div.example mark.' + k);
        const style = getComputedStyle(mark);
        return [style.borderBottomStyle, style.fontStyle, style.backgroundColor];
    })""")
    (first_border, first_font, first_colour), (second_border, second_font, second_colour) = styles
    assert first_border != second_border and first_font != second_font
    assert first_colour != second_colour
    legend = page.evaluate("document.querySelector('p.note mark.a').textContent")
    assert "solid underline" in legend
    page.close()


def test_screenshot_shows_the_report(report, browser, tmp_path) -> None:
    """The rendered page is not blank (the earlier screenshot test, through Playwright)."""
    from PIL import Image

    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.goto(report.as_uri())
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    page.close()
    image = Image.open(shot).convert("L")
    dark = sum(image.histogram()[:200])
    assert image.size[0] == 1280 and dark > 0.005 * image.size[0] * image.size[1]
