"""Figures for papers with matplotlib (the optional ``bleucli[plot]`` extra), written as
PDF, PNG or SVG, or returned as inline SVG for the HTML report. Headless (Agg backend).

Every figure fits any system names (1 to 20 systems, names of any length and script): tick
labels and legend entries are display names (:mod:`bleucli.analysis.names`), abbreviated
with an ellipsis past :data:`LABEL_CHARS` characters; tick labels stand upright when they
do not fit side by side; legends sit outside the axes, never over the data; long axis labels
wrap; the canvas grows to take in every text (saved with a tight bounding box); and a key
under the figure gives each label's file where the label is not the file's whole name.
matplotlib's own warnings (a missing glyph, a layout it cannot make) never reach the user.
"""

from __future__ import annotations

import io
import textwrap
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from bleucli.errors import ConfigError, UsageError

INSTALL_HINT = "pip install 'bleucli[plot]'"
SUFFIXES = (".pdf", ".png", ".svg")

#: Characters of a system name in a figure before it is abbreviated (the key gives it whole).
LABEL_CHARS = 40
#: Widest figure in inches: the HTML report scales figures down to the page, and a wider
#: one would shrink its text below legibility at 800 px.
MAX_WIDTH = 9.0
#: Font size of tick labels, legends and keys (points).
SMALL = 9.0
#: Families tried after matplotlib's default for glyphs it lacks (CJK, Indic, ...), where
#: the system has them; matplotlib falls back glyph by glyph.
FALLBACK_FONTS = (
    "Noto Sans",
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Noto Sans Devanagari",
    "Noto Sans Arabic",
    "Noto Sans Thai",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
    "Arial Unicode MS",
)

#: Okabe & Ito's palette, whose colours stay apart under the common colour-vision
#: deficiencies; every series also gets its own hatch, so bars differ in more than colour.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
HATCHES = ("", "///", "...", "xxx", "\\\\", "---", "ooo", "+++")


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ConfigError(f"plots need matplotlib: {INSTALL_HINT}") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def _drawing() -> Iterator[Any]:
    """pyplot with the fallback fonts, its warnings kept from the user's terminal."""
    plt = _pyplot()
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    families = ["DejaVu Sans", *(name for name in FALLBACK_FONTS if name in installed)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with plt.rc_context({"font.family": families, "svg.hashsalt": "bleucli"}):
            yield plt


def _text_width(text: str, size: float = SMALL) -> float:
    """Width of ``text`` in inches at ``size`` points, as matplotlib lays it out."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        width, _, _ = TextToPath().get_text_width_height_descent(
            text, FontProperties(size=size), ismath=False
        )
    return width / 72.0


def _labels(names: Sequence[str]) -> list[str]:
    from bleucli.analysis.names import labels

    return labels(names, LABEL_CHARS)


def _wrap(text: str, inches: float, size: float = SMALL) -> str:
    """``text`` broken into lines of at most ``inches`` (between words where it can)."""
    average = max(_text_width("abcdefghijklmnopqrstuvwxyz", size) / 26, 1e-3)
    return "\n".join(
        textwrap.wrap(text, max(12, int(inches / average)), break_long_words=True) or [""]
    )


def _bottom_of(fig: Any, ax: Any) -> float:
    """The figure fraction just below everything drawn for ``ax`` (tick labels, axis
    label), so that what goes under it cannot overlap it."""
    fig.canvas.draw()
    box = ax.get_tightbbox(fig.canvas.get_renderer())
    return float(box.y0) / float(fig.bbox.height) - 0.02


def _key(fig: Any, ax: Any, labels: Sequence[str], files: Sequence[str] | None) -> None:
    """Under the figure: each label's file where the label is not the file's whole name."""
    if not files:
        return
    rows = [(label, path) for label, path in zip(labels, files) if label != path]
    if not rows:
        return
    width = fig.get_size_inches()[0] - 0.2
    text = "\n".join(_wrap(f"{label}: {path}", width) for label, path in rows)
    fig.text(0.01, _bottom_of(fig, ax), text, ha="left", va="top", fontsize=SMALL, color="#333")


def _x_labels(ax: Any, ticks: Sequence[float], labels: Sequence[str], slot: float) -> None:
    """Labels under the x axis: level when each fits its slot, else upright (each then
    takes a line's height of its slot, and no two can touch: a slot is wider than that)."""
    widest = max((_text_width(label) for label in labels), default=0.0)
    if widest + 0.08 <= slot:
        ax.set_xticks(list(ticks), list(labels), fontsize=SMALL)
    else:
        ax.set_xticks(list(ticks), list(labels), fontsize=SMALL, rotation=90)


def _slot(labels: Sequence[str], margin: float = 1.2, least: float = 4.0) -> tuple[float, float]:
    """Figure width and the width of each system's slot along the x axis: wide enough for
    level labels where the figure can grow to :data:`MAX_WIDTH`."""
    widest = max((_text_width(label) for label in labels), default=0.0)
    count = max(len(labels), 1)
    width = max(least, min(MAX_WIDTH, margin + max(0.75, widest + 0.15) * count))
    return width, (width - margin) / count


def scores_figure(
    names: Sequence[str],
    metric: str,
    scores: Sequence[float],
    means: Sequence[float],
    halves: Sequence[float],
    files: Sequence[str] | None = None,
):
    """One point per system: the score, with the bootstrap 95% interval around the mean."""
    with _drawing() as plt:
        labels = _labels(names)
        width, slot = _slot(labels)
        fig, ax = plt.subplots(figsize=(width, 3.2))
        positions = range(len(labels))
        ax.errorbar(
            positions, means, yerr=halves, fmt="none", ecolor="#555", capsize=4,
            label="95% interval",
        )  # fmt: skip
        ax.plot(positions, scores, "o", color="#1f5fa8", label=metric)
        _x_labels(ax, range(len(labels)), labels, slot)
        ax.set_xlim(-0.6, len(labels) - 0.4)
        ax.set_ylabel(metric)
        ax.grid(axis="y", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.legend(
            loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=2, frameon=False,
            borderaxespad=0.0, fontsize=SMALL,
        )  # fmt: skip
        _key(fig, ax, labels, files)
    return fig


def bootstrap_figure(
    differences: Sequence[float],
    observed: float,
    metric: str,
    systems: tuple[str, str],
    files: Sequence[str] | None = None,
):
    """The bootstrap distribution of a paired difference ``systems[1] - systems[0]``, and
    the observed difference."""
    with _drawing() as plt:
        base, other = _labels(systems)
        fig, ax = plt.subplots(figsize=(5.6, 3.4))
        ax.hist(differences, bins=40, color="#9bbbe0", edgecolor="#1f5fa8")
        ax.axvline(observed, color="#b22222", label=f"observed {observed:+.2f}")
        ax.axvline(0.0, color="#333", linestyle=":", label="no difference")
        ax.set_xlabel(_wrap(f"{metric} difference ({other} − {base})", 5.2, 10.0))
        ax.set_ylabel("resamples")
        ax.legend(
            loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=2, frameon=False,
            borderaxespad=0.0, fontsize=SMALL,
        )  # fmt: skip
        _key(fig, ax, [base, other], files)
    return fig


def buckets_figure(
    title: str,
    labels: Sequence[str],
    panels: Mapping[str, Mapping[str, Sequence[float]]],
    xlabel: str,
    files: Sequence[str] | None = None,
):
    """Grouped bars, one group per bucket and one bar per system, in one panel per metric
    (each on its own axis: BLEU and chrF never share a scale); one legend of the systems
    under the panels, in as many columns as their names allow."""
    with _drawing() as plt:
        systems = list(next(iter(panels.values()), {}))
        names = _labels(systems)
        n_series = max(1, len(systems))
        width = min(MAX_WIDTH, max(5.0, 0.45 * len(labels) * n_series + 1.6))
        fig, axes = plt.subplots(
            len(panels), 1, figsize=(width, 2.4 * len(panels) + 0.6), sharex=True, squeeze=False
        )
        bar = 0.8 / n_series
        for ax, (metric, series) in zip(axes[:, 0], panels.items()):
            for k, values in enumerate(series.values()):
                ax.bar(
                    [i + k * bar for i in range(len(labels))],
                    values,
                    bar,
                    label=names[k],
                    color=PALETTE[k % len(PALETTE)],
                    hatch=HATCHES[(k + k // len(PALETTE)) % len(HATCHES)],  # no pair twice
                    edgecolor="#333333",
                    linewidth=0.6,
                )
            ax.set_ylabel(metric)
            ax.grid(axis="y", color="#dddddd", linewidth=0.6)
            ax.set_axisbelow(True)
        bottom = axes[-1, 0]
        ticks = [i + bar * (n_series - 1) / 2 for i in range(len(labels))]
        _x_labels(bottom, ticks, labels, (width - 1.2) / max(len(labels), 1))
        bottom.set_xlabel(xlabel)
        if title:  # an HTML report's figcaption says it already
            axes[0, 0].set_title(title)
        # the legend under the lowest axis' labels; a column as wide as the widest name
        column = max(_text_width(name) for name in names) + 0.55 if names else 1.0
        columns = max(1, min(n_series, int((width - 0.2) // column)))
        handles, _ = axes[0, 0].get_legend_handles_labels()
        fig.legend(
            handles, names, loc="upper left", bbox_to_anchor=(0.01, _bottom_of(fig, bottom)),
            ncol=columns, frameon=False, fontsize=SMALL,
        )  # fmt: skip
        if files:
            fig.canvas.draw()  # the legend's place, for the key under it
            legend = fig.legends[-1]
            box = legend.get_window_extent(fig.canvas.get_renderer())
            rows = [(name, path) for name, path in zip(names, files) if name != path]
            if rows:
                text = "\n".join(_wrap(f"{name}: {path}", width - 0.2) for name, path in rows)
                y = float(box.y0) / float(fig.bbox.height) - 0.02
                fig.text(0.01, y, text, ha="left", va="top", fontsize=SMALL, color="#333")
    return fig


def _savefig(fig: Any, target: Any, **options: Any) -> None:
    """Save with a tight bounding box: the canvas takes in every text, whatever its size."""
    with _drawing():
        fig.savefig(target, bbox_inches="tight", pad_inches=0.08, **options)


def save(fig: Any, path: str) -> None:
    """Write ``fig`` to ``path``; the suffix picks the format."""
    plt = _pyplot()
    if not path.lower().endswith(SUFFIXES):
        raise UsageError(f"{path}: plots are written as {', '.join(SUFFIXES)}")
    try:
        _savefig(fig, path, metadata={"Creator": "bleucli"} if not path.endswith(".png") else None)
    except OSError as err:
        raise ConfigError(f"{path}: cannot write ({err.strerror or err})") from None
    finally:
        plt.close(fig)


def inline_svg(fig: Any) -> str:
    """The figure as an ``<svg>`` element (no XML prolog) for embedding in HTML: text as
    text (selectable, searchable, smaller), and sized by the page: it scales down to the
    width available (its natural size at most), keeping its aspect ratio."""
    import re

    plt = _pyplot()
    buffer = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none"}):
        _savefig(fig, buffer, format="svg")
    plt.close(fig)
    text = buffer.getvalue()
    svg = text[text.index("<svg") :]
    head, rest = svg.split(">", 1)
    width = re.search(r'\bwidth="([0-9.]+)pt"', head)
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    natural = f"max-width:min(100%, {width.group(1)}pt)" if width else "max-width:100%"
    return f'{head} class="figure" style="width:100%;{natural};height:auto">{rest}'
