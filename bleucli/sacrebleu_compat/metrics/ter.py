"""``sacrebleu.metrics.ter``: TER with SacreBLEU's class attributes."""

from __future__ import annotations

from bleucli.metrics.base import Signature
from bleucli.metrics.ter import TER as _TER
from bleucli.metrics.ter import TERScore
from bleucli.sacrebleu_compat.metrics.base import CompatMetric


class TERSignature(Signature):
    """The TER signature class."""


class TER(CompatMetric, _TER):
    """SacreBLEU's ``TER``: bleucli's TER with SacreBLEU's class attributes."""

    _SIGNATURE_TYPE = TERSignature


from bleucli.metrics.base import Metric, Score  # noqa: E402,F401
from bleucli.metrics.ter_edit import translation_edit_rate  # noqa: E402,F401
from bleucli.sacrebleu_compat.utils import sum_of_lists  # noqa: E402,F401
from bleucli.tokenizers.tercom import TercomTokenizer  # noqa: E402,F401

__all__ = ["TER", "TERScore", "TERSignature"]
