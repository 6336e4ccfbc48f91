"""Figures for papers with matplotlib (the optional ``bleucli[plot]`` extra), written as
PDF, PNG or SVG, or returned as inline SVG for the HTML report. Headless (Agg backend)."""

from __future__ import annotations

import io
from collections.abc import Sequence
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


def scores_figure(names: Sequence[str], metric: str, scores: Sequence[float],
                  means: Sequence[float], halves: Sequence[float]):
    """One point per system: the score, with the bootstrap 95% interval around the mean."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(names)), 3.2))
    positions = range(len(names))
    ax.errorbar(positions, means, yerr=halves, fmt="none", ecolor="#555", capsize=4,
                label="95% interval")
    ax.plot(positions, scores, "o", color="#1f5fa8", label=metric)
    ax.set_xticks(list(positions), list(names), rotation=20, ha="right")
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel(metric)
    ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def bootstrap_figure(differences: Sequence[float], observed: float, metric: str,
                     label: str):
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


def buckets_figure(title: str, labels: Sequence[str], series: dict[str, Sequence[float]],
                   ylabel: str):
    """Grouped bars: one group per bucket, one bar per system."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(labels) * max(1, len(series))), 3.2))
    width = 0.8 / max(1, len(series))
    for k, (name, values) in enumerate(series.items()):
        ax.bar([i + k * width for i in range(len(labels))], values, width, label=name)
    ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(labels))],
                  list(labels))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(frameon=False, fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def save(fig: Any, path: str) -> None:
    """Write ``fig`` to ``path``; the suffix picks the format."""
    plt = _pyplot()
    if not path.lower().endswith(SUFFIXES):
        raise ConfigError(f"{path}: plots are written as {', '.join(SUFFIXES)}")
    try:
        fig.savefig(path, metadata={"Creator": "bleucli"} if not path.endswith(".png")
                    else None)
    except OSError as err:
        raise ConfigError(f"{path}: cannot write ({err.strerror or err})") from None
    finally:
        plt.close(fig)


def inline_svg(fig: Any) -> str:
    """The figure as an ``<svg>`` element (no XML prolog), for embedding in HTML."""
    plt = _pyplot()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]
