"""bleucli: reproducible BLEU scoring with SacreBLEU-identical numbers.

The public names are SacreBLEU 2.x's, so ``from bleucli import BLEU, corpus_bleu`` is a
drop-in replacement. They are resolved lazily (PEP 562) to keep ``bleucli --help`` fast.
"""

from __future__ import annotations

from importlib import import_module

from bleucli.version import __version__

TYPE_CHECKING = False  # typing itself is not imported at start-up
if TYPE_CHECKING:
    from typing import Any

_LAZY = {
    "BLEU": "bleucli.metrics.bleu",
    "BLEUScore": "bleucli.metrics.bleu",
    "CHRF": "bleucli.metrics.chrf",
    "CHRFScore": "bleucli.metrics.chrf",
    "TER": "bleucli.metrics.ter",
    "TERScore": "bleucli.metrics.ter",
    "COMET": "bleucli.metrics.neural",
    "CometKiwi": "bleucli.metrics.neural",
    "XCOMET": "bleucli.metrics.neural",
    "MetricX24": "bleucli.metrics.neural",
    "MetricX24QE": "bleucli.metrics.neural",
    "autorank": "bleucli.autoranking.api",
    "Metric": "bleucli.metrics.base",
    "Score": "bleucli.metrics.base",
    "Signature": "bleucli.metrics.base",
    "Stats": "bleucli.metrics.base",
    "corpus_bleu": "bleucli.functional",
    "raw_corpus_bleu": "bleucli.functional",
    "sentence_bleu": "bleucli.functional",
    "corpus_chrf": "bleucli.functional",
    "sentence_chrf": "bleucli.functional",
    "corpus_ter": "bleucli.functional",
    "sentence_ter": "bleucli.functional",
    "BleucliError": "bleucli.errors",
    "InputError": "bleucli.errors",
    "ConfigError": "bleucli.errors",
    "parse_signature": "bleucli.signature",
    "UsageError": "bleucli.errors",
    "install_as_sacrebleu": "bleucli.install",
    "ENGINE": "bleucli.native",
    "uninstall_sacrebleu": "bleucli.install",
    "resegment": "bleucli.mwer",
    "ScoringRequest": "bleucli.scoring",
    "MetricRequest": "bleucli.scoring",
    "Scored": "bleucli.scoring",
    "score": "bleucli.scoring",
    "metric_class": "bleucli.metrics",
    "available_metrics": "bleucli.metrics",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bleucli' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
