"""Metric registry: the ``-m`` name -> class (imported on first use)."""

from __future__ import annotations

from importlib import import_module

from bleucli.errors import UsageError
from bleucli.metrics.base import Metric

_METRICS: dict[str, str] = {
    "bleu": "bleucli.metrics.bleu:BLEU",
    "chrf": "bleucli.metrics.chrf:CHRF",
    "ter": "bleucli.metrics.ter:TER",
}


def available_metrics() -> list[str]:
    return list(_METRICS)


def metric_class(name: str) -> type[Metric]:
    """Resolve a metric name (any case) to its class."""
    try:
        module_name, class_name = _METRICS[name.lower()].split(":")
    except KeyError:
        raise UsageError(
            f"unknown metric {name!r}; available: {', '.join(available_metrics())}"
        ) from None
    return getattr(import_module(module_name), class_name)
