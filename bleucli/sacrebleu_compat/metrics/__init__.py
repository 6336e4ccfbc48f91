"""``sacrebleu.metrics``: the metric classes under SacreBLEU's names."""

from __future__ import annotations

from bleucli.sacrebleu_compat.metrics.bleu import BLEU, BLEUScore
from bleucli.sacrebleu_compat.metrics.chrf import CHRF, CHRFScore
from bleucli.sacrebleu_compat.metrics.ter import TER, TERScore

METRICS = {"BLEU": BLEU, "CHRF": CHRF, "TER": TER}

__all__ = ["METRICS", "BLEU", "CHRF", "TER", "BLEUScore", "CHRFScore", "TERScore"]
