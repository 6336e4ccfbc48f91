"""How many decimals a score is shown with: each metric its own. BLEU, chrF and TER live on
0-100 and follow ``-w`` (SacreBLEU's default: one decimal); COMET, CometKiwi and xCOMET live
on 0-1 and need four decimals to tell systems apart, MetricX (0-25) two; scores bleucli does
not compute (external segment scores) get four, since their scale is unknown. ``-w N`` sets
the 0-100 metrics, ``-w comet=4`` one metric by its ``-m`` name.

Every front end (tables, JSON, the server's boards and receipts, reports) asks
:meth:`Precision.decimals` with a score's name, so one number reads the same everywhere,
and :func:`shown` renders it without a negative zero (a BLEU-100 run's COMET of -0.00001
reads 0.0000, not -0.0000)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from bleucli.display import UNKNOWN_DECIMALS, WIDTH_RANGE, check_width, rounded, shown

__all__ = [
    "UNKNOWN_DECIMALS",
    "WIDTH_RANGE",
    "Precision",
    "check_width",
    "decimals",
    "metric_key",
    "own_decimals",
    "rounded",
    "shown",
]


@lru_cache(maxsize=256)
def metric_key(name: str) -> str | None:
    """The ``-m`` name of the metric a score's name belongs to (``chrF2++`` -> ``chrf``,
    ``MetricX-24`` -> ``metricx24``); None when no registered metric claims it. Plugins
    are looked up only for a name no built-in metric claims (a plain run loads none)."""
    from bleucli.metrics import available_metrics, builtin_names

    lowered = name.lower()
    builtin = builtin_names()
    if lowered in builtin:
        return lowered
    found = _claimed(name, builtin)
    if found is None:
        plugins = [key for key in available_metrics() if key not in builtin]
        found = lowered if lowered in plugins else _claimed(name, plugins)
    return found


def _claimed(name: str, keys: list[str]) -> str | None:
    """The first of ``keys`` whose metric names its scores ``name``."""
    from bleucli.metrics import metric_class

    for key in keys:
        try:
            cls = metric_class(key)
        except Exception:  # noqa: BLE001 - an uninstalled plugin names no score
            continue
        if cls.names_signature(name):
            return key
    return None


@lru_cache(maxsize=256)
def own_decimals(name: str) -> int | None:
    """The decimals a metric declares for its scores (None: it follows ``-w``)."""
    from bleucli.metrics import metric_class

    key = metric_key(name)
    if key is None:
        return UNKNOWN_DECIMALS
    return metric_class(key).decimals


@dataclass(frozen=True)
class Precision:
    """``-w``: the decimals of the metrics that follow it (``width``) and per-metric
    overrides by ``-m`` name (``per_metric``: ``-w comet=6``)."""

    width: int = 1
    per_metric: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        check_width(self.width)
        for key, value in self.per_metric:
            check_width(value, f"-w {key}=")

    @classmethod
    def of(cls, width: int | Precision, per_metric: Mapping[str, int] | None = None) -> Precision:
        if isinstance(width, Precision):
            return width
        return cls(width, tuple(sorted((per_metric or {}).items())))

    def decimals(self, name: str) -> int:
        """Decimals for a score named ``name`` (a display name or an ``-m`` name)."""
        given = dict(self.per_metric)
        if given:
            key = metric_key(name) or name.lower()
            if key in given:
                return given[key]
        own = own_decimals(name)
        return self.width if own is None else own


def decimals(width: int | Precision, name: str) -> int:
    """Decimals for ``name`` under ``width`` (an int: every metric that follows ``-w``
    gets it, the others their own)."""
    return Precision.of(width).decimals(name)
