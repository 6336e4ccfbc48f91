"""Figures and display names with real-looking inputs: 1 to 20 systems named by paths or
names of 1 to 120 characters in several scripts. Every figure is rendered as SVG (glyphs as
paths, as ``bleucli plot -o x.svg`` writes it) and measured in Chromium: every text group
inside the canvas, no two over each other, and no warning from the figure code."""

from __future__ import annotations

import random
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bleucli.analysis.names import abbreviated, display_names, labels
from tests.browser import launch, needs_chromium
from tests.conftest import EXAMPLES, run_subprocess

# -- display names ---------------------------------------------------------------------------


def test_wmt_paths_lose_their_common_folder_and_affixes() -> None:
    paths = [f"data/wmt22/en-de/sys.{n}.de" for n in ("JDExploreAcademy", "Online-A", "Lan-Bridge")]
    assert display_names(paths) == ["JDExploreAcademy", "Online-A", "Lan-Bridge"]
    # cut only between words: Online-A and Online-B keep what tells them apart as a name
    assert display_names(["sys.Online-A.de", "sys.Online-B.de"]) == ["Online-A", "Online-B"]
    assert display_names(["runs/a/hyp.de", "runs/b/hyp.de"]) == ["a", "b"]
    assert display_names(["a.de", "a.b.de"]) == ["a", "a.b"]  # each keeps a word
    assert display_names(["data/x/sys.Only.de"]) == ["sys.Only.de"]  # one system: its file
    # NAME:FILE names stay as given; a clash keeps the full forms
    assert display_names(["base", "x/base.de"], [True, False]) == ["base", "base.de"]
    assert display_names(["a", "a/hyp.de", "b/hyp.de"], [True, False, False]) == [
        "a",
        "a/hyp.de",
        "b",
    ]


WORD = st.text(alphabet="abcXYZ019-Жж猫ب", min_size=1, max_size=6)
PATH = st.lists(WORD, min_size=1, max_size=5).map(lambda w: "/".join(w[:-1] + [".".join(w[-1:])]))


@settings(max_examples=300, deadline=None)
@given(
    stem=st.lists(WORD, max_size=3).map("/".join),
    names=st.lists(
        st.tuples(st.lists(WORD, min_size=1, max_size=3).map("_".join), st.sampled_from(["", ".de", ".txt"])),
        min_size=1,
        max_size=20,
        unique=True,
    ),
)  # fmt: skip
def test_display_names_are_distinct_short_and_stable(stem: str, names) -> None:
    paths = list(dict.fromkeys(f"{stem}/sys.{name}{ext}".lstrip("/") for name, ext in names))
    shown = display_names(paths)
    assert len(shown) == len(paths) and len(set(shown)) == len(shown)  # distinct
    assert all(s and s in p for s, p in zip(shown, paths))  # a part of its own path
    if len(paths) > 1:
        assert display_names(shown) == shown  # shortest: nothing common is left to drop
    order = list(range(len(paths)))
    random.Random(len(paths)).shuffle(order)
    again = display_names([paths[k] for k in order])
    assert again == [shown[k] for k in order]  # a name does not depend on the order


def test_labels_abbreviate_and_stay_distinct() -> None:
    assert abbreviated("x" * 10, 40) == "x" * 10
    long = "data/" + "a" * 100 + "/sys.Online-A.de"
    short = abbreviated(long, 40)
    assert len(short) == 40 and short.startswith("data/") and short.endswith("Online-A.de")
    twins = ["p" * 60 + "q" + "r" * 30, "p" * 60 + "s" + "r" * 30]
    out = labels(twins, 40)
    assert len(set(out)) == 2 and all(len(label) <= 40 for label in out)


# -- figures ----------------------------------------------------------------------------------

pytest.importorskip("matplotlib", reason="figures need the plot extra (bleucli[plot])")

#: Letters of several scripts (some without glyphs in the default font: drawn as boxes of
#: their own width, which the layout measures like any glyph).
SCRIPTS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.жЖщфλΩ猫犬語ب ع한글"

NAMES = st.lists(
    st.text(alphabet=SCRIPTS, min_size=1, max_size=120).map(str.strip).filter(bool),
    min_size=1,
    max_size=20,
    unique=True,
)

#: The bounding box of the SVG and of every top-level text group (a label drawn as glyph
#: paths is a <g id="text_N">), in CSS pixels.
BOXES = """() => {
    const svg = document.querySelector('svg');
    const box = svg.getBoundingClientRect();
    const groups = [...svg.querySelectorAll('g[id^="text_"]')]
        .filter(g => !g.parentElement.closest('g[id^="text_"]'));
    return {canvas: [box.left, box.top, box.right, box.bottom],
            texts: groups.map(g => { const r = g.getBoundingClientRect();
                                     return [g.id, r.left, r.top, r.right, r.bottom]; })
                         .filter(t => t[3] - t[1] > 0.5 && t[4] - t[2] > 0.5)};
}"""


def figures(names: list[str], files: list[str]) -> dict[str, object]:
    """The three figures for these systems, as the plot command draws them."""
    from bleucli.analysis import plots

    rng = random.Random(len(names))
    scores = [rng.uniform(20, 40) for _ in names]
    buckets = ["<10", "10-19", "20-29", "30-39", "40-49", ">=50"]
    series = {name: [rng.uniform(10, 50) for _ in buckets] for name in names}
    pair = (names[0], names[-1])
    return {
        "scores": plots.scores_figure(names, "BLEU", scores, scores, [1.2] * len(names), files),
        "bootstrap": plots.bootstrap_figure(
            [rng.gauss(0.5, 1) for _ in range(300)], 0.4, "chrF2", pair, [files[0], files[-1]]
        ),
        "buckets": plots.buckets_figure(
            "BLEU by reference length", buckets, {"BLEU": series}, "reference length (words)", files
        ),
    }


def svg_of(fig) -> str:
    import io

    from bleucli.analysis import plots

    buffer = io.StringIO()
    plots._savefig(fig, buffer, format="svg")
    import matplotlib.pyplot as plt

    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def overlaps(a: list, b: list, tolerance: float = 0.5) -> bool:
    return (
        min(a[3], b[3]) - max(a[1], b[1]) > tolerance
        and min(a[4], b[4]) - max(a[2], b[2]) > tolerance
    )


@pytest.fixture(scope="module")
def browser():
    yield from launch()


def check_layout(page, svg: str, what: str) -> None:
    page.set_content(f"<!DOCTYPE html><html><body style='margin:0'>{svg}</body></html>")
    found = page.evaluate(BOXES)
    left, top, right, bottom = found["canvas"]
    texts = found["texts"]
    assert texts, what
    for name, x0, y0, x1, y1 in texts:
        inside = x0 >= left - 0.5 and y0 >= top - 0.5 and x1 <= right + 0.5 and y1 <= bottom + 0.5
        assert inside, f"{what}: {name} at {(x0, y0, x1, y1)} outside {found['canvas']}"
    for i, first in enumerate(texts):
        for second in texts[i + 1 :]:
            assert not overlaps(first, second), f"{what}: {first[0]} over {second[0]}"


@needs_chromium
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(names=NAMES, as_paths=st.booleans())
def test_every_figure_fits_any_names(browser, names: list[str], as_paths: bool) -> None:
    files = [f"data/wmt22/en-de/sys.{name}.de" if as_paths else name for name in names]
    shown = display_names(files)
    page = browser.new_page()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        drawn = {kind: svg_of(fig) for kind, fig in figures(shown, files).items()}
    assert [str(w.message) for w in caught] == []  # matplotlib's warnings stay inside
    for kind, svg in drawn.items():
        check_layout(page, svg, f"{kind} with {len(names)} systems")
    page.close()


@needs_chromium
def test_twenty_long_real_looking_paths(browser, tmp_path) -> None:
    """The worst case the issue names, fixed: 20 systems of 120-character paths."""
    rng = random.Random(7)
    names = [
        "/".join(["experiments", f"run-{k:02d}", "decoding", "beam-5"])
        + "/"
        + "".join(rng.choice("abcdefghij-") for _ in range(70))
        + f".{k}.de"
        for k in range(20)
    ]
    assert all(len(n) >= 100 for n in names)
    page = browser.new_page()
    for kind, fig in figures(display_names(names), names).items():
        check_layout(page, svg_of(fig), kind)
    page.close()


def test_plot_command_prints_no_warning_and_keys_the_paths(tmp_path) -> None:
    """``bleucli plot`` on files under a long real-looking path: only its own line on
    stderr, and the figure names the systems by their short names, the files in a key."""
    folder = tmp_path / "data" / "wmt22" / "en-de"
    folder.mkdir(parents=True)
    hyp = (EXAMPLES / "hyp.de").read_text(encoding="utf-8")
    for name in ("JDExploreAcademy", "Online-A", "Lan-Bridge"):
        (folder / f"sys.{name}.de").write_text(hyp, encoding="utf-8")
    systems = [
        f"data/wmt22/en-de/sys.{n}.de" for n in ("JDExploreAcademy", "Online-A", "Lan-Bridge")
    ]
    for kind in ("scores", "bootstrap", "buckets"):
        out = tmp_path / f"{kind}.svg"
        proc = run_subprocess(
            ["plot", kind, str(EXAMPLES / "ref.de"), "-i", *systems, "-o", str(out)], cwd=tmp_path
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.decode().strip() == f"wrote {out}"
        assert out.stat().st_size > 1000
