"""Metric registry: the ``-m`` name -> class (imported on first use). Built-in metrics are
listed here; others register through the ``bleucli.metrics`` entry-point group
(``name = "package.module:Class"``), as tokenisers do through ``bleucli.tokenizers``
(docs/metrics.md: adding a metric)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import TypeVar

from bleucli.errors import ConfigError, UsageError
from bleucli.metrics.base import Metric

_METRICS: dict[str, str] = {
    "bleu": "bleucli.metrics.bleu:BLEU",
    "chrf": "bleucli.metrics.chrf:CHRF",
    "ter": "bleucli.metrics.ter:TER",
    "comet": "bleucli.metrics.neural:COMET",
    "cometkiwi": "bleucli.metrics.neural:CometKiwi",
    "xcomet": "bleucli.metrics.neural:XCOMET",
    "metricx24": "bleucli.metrics.neural:MetricX24",
    "metricx24-qe": "bleucli.metrics.neural:MetricX24QE",
}
#: Plugins found through the entry points (read once).
_PLUGINS: dict[str, str] | None = None
ENTRY_POINT_GROUP = "bleucli.metrics"


def _plugins() -> dict[str, str]:
    global _PLUGINS
    if _PLUGINS is None:
        from importlib.metadata import entry_points

        _PLUGINS = {
            point.name.lower(): point.value
            for point in entry_points(group=ENTRY_POINT_GROUP)
            if point.name.lower() not in _METRICS
        }
    return _PLUGINS


def available_metrics() -> list[str]:
    return [*_METRICS, *sorted(_plugins())]


def metric_class(name: str) -> type[Metric]:
    """Resolve a metric name (any case) to its class."""
    key = name.lower()
    target = _METRICS.get(key) or _plugins().get(key)
    if target is None:
        raise UsageError(f"unknown metric {name!r}; available: {', '.join(available_metrics())}")
    module_name, _, class_name = target.partition(":")
    try:
        cls = getattr(import_module(module_name), class_name)
    except (ImportError, AttributeError) as err:
        raise ConfigError(
            f"metric plugin {key} ({target}) cannot be loaded: {err}; reinstall the package "
            f"that provides it, or uninstall it"
        ) from None
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        raise ConfigError(f"metric plugin {key} ({target}) is not a bleucli Metric class")
    if not cls.key:
        cls.key = key
    return cls


def metric_classes() -> list[type[Metric]]:
    """Every metric's class, built-in first (importing each)."""
    return [metric_class(name) for name in available_metrics()]


def builtin_names() -> list[str]:
    return list(_METRICS)


def uses_source(name: str) -> bool:
    """Whether the metric ``-m name`` reads the source sentences (COMET and its kin: a
    model that scores a batch in one pass, with sources)."""
    return metric_class(name).uses_source


#: SacreBLEU's own metrics: a run of these alone prints them sorted by name, as SacreBLEU
#: does (its outputs stay byte-identical).
SACREBLEU_METRICS = ("bleu", "chrf", "ter")
_T = TypeVar("_T")


def output_order(metrics: Mapping[str, _T]) -> list[tuple[str, _T]]:
    """The order results are printed in: the order ``-m`` named them (a paper's table
    reads ``-m bleu chrf ter comet`` as BLEU, chrF2, TER, COMET), except for a run of
    SacreBLEU's metrics alone, which SacreBLEU prints sorted by name (``-m ter bleu``:
    BLEU, TER) and bleucli prints alike."""
    if set(metrics) <= set(SACREBLEU_METRICS):
        return sorted(metrics.items())
    return list(metrics.items())
