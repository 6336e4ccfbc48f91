"""Figures for papers with matplotlib (the optional ``bleucli[plot]`` extra), written as
PDF, PNG or SVG, or returned as inline SVG for the HTML report. Headless (Agg backend)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from bleucli.errors import ConfigError

INSTALL_HINT = "pip install 'bleucli[plot]'"
SUFFIXES = (".pdf", ".png", ".svg")


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


def scores_figure(
    names: Sequence[str],
    metric: str,
    scores: Sequence[float],
    means: Sequence[float],
    halves: Sequence[float],
):
    """One point per system: the score, with the bootstrap 95% interval around the mean."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(names)), 3.2))
    positions = range(len(names))
    ax.errorbar(
        positions, means, yerr=halves, fmt="none", ecolor="#555", capsize=4, label="95% interval"
    )
    ax.plot(positions, scores, "o", color="#1f5fa8", label=metric)
    ax.set_xticks(list(positions), list(names), rotation=20, ha="right")
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel(metric)
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def bootstrap_figure(differences: Sequence[float], observed: float, metric: str, label: str):
    """The bootstrap distribution of a paired difference, and the observed difference."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.0, 3.2))
    ax.hist(differences, bins=40, color="#9bbbe0", edgecolor="#1f5fa8")
    ax.axvline(observed, color="#b22222", label=f"observed {observed:+.2f}")
    ax.axvline(0.0, color="#333", linestyle=":")
    ax.set_xlabel(f"{metric} difference ({label})")
    ax.set_ylabel("resamples")
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


#: Okabe & Ito's palette, whose colours stay apart under the common colour-vision
#: deficiencies; every series also gets its own hatch, so bars differ in more than colour.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
HATCHES = ("", "///", "...", "xxx", "\\\\", "---", "ooo", "+++")
#: Widest figure in inches: the HTML report scales figures down to the page, and a wider
#: one would shrink its text below legibility at 800 px.
MAX_WIDTH = 9.0


def buckets_figure(
    title: str,
    labels: Sequence[str],
    panels: Mapping[str, Mapping[str, Sequence[float]]],
    xlabel: str,
):
    """Grouped bars, one group per bucket and one bar per system, in one panel per metric
    (each on its own axis: BLEU and chrF never share a scale); one legend of the systems
    under the panels, inside the figure."""
    plt = _pyplot()
    systems = list(next(iter(panels.values()), {}))
    n_series = max(1, len(systems))
    width = min(MAX_WIDTH, max(5.0, 0.45 * len(labels) * n_series + 1.6))
    columns = max(1, min(n_series, int(width // 2.6)))
    legend_rows = -(-len(systems) // columns)
    legend_height = 0.25 * legend_rows + 0.05
    height = 2.4 * len(panels) + 0.6 + legend_height
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, height), sharex=True, squeeze=False)
    bar = 0.8 / n_series
    for ax, (metric, series) in zip(axes[:, 0], panels.items()):
        for k, (name, values) in enumerate(series.items()):
            ax.bar(
                [i + k * bar for i in range(len(labels))],
                values,
                bar,
                label=name,
                color=PALETTE[k % len(PALETTE)],
                hatch=HATCHES[k % len(HATCHES)],
                edgecolor="#333333",
                linewidth=0.6,
            )
        ax.set_ylabel(metric)
        ax.grid(axis="y", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
    bottom = axes[-1, 0]
    bottom.set_xticks(
        [i + bar * (n_series - 1) / 2 for i in range(len(labels))],
        list(labels),
        rotation=30 if len(labels) > 8 else 0,
    )
    bottom.set_xlabel(xlabel)
    fig.suptitle(title)
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=columns, frameon=False, fontsize="small")
    fig.tight_layout(rect=(0.0, legend_height / height, 1.0, 1.0))
    return fig


def save(fig: Any, path: str) -> None:
    """Write ``fig`` to ``path``; the suffix picks the format."""
    plt = _pyplot()
    if not path.lower().endswith(SUFFIXES):
        raise ConfigError(f"{path}: plots are written as {', '.join(SUFFIXES)}")
    try:
        fig.savefig(path, metadata={"Creator": "bleucli"} if not path.endswith(".png") else None)
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
        fig.savefig(buffer, format="svg")
    plt.close(fig)
    text = buffer.getvalue()
    svg = text[text.index("<svg") :]
    head, rest = svg.split(">", 1)
    width = re.search(r'\bwidth="([0-9.]+)pt"', head)
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    natural = f"max-width:min(100%, {width.group(1)}pt)" if width else "max-width:100%"
    return f'{head} class="figure" style="width:100%;{natural};height:auto">{rest}'
