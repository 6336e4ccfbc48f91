"""``sacrebleu.metrics.chrf``: chrF and chrF++ with SacreBLEU's class attributes."""

from __future__ import annotations

from bleucli.metrics.base import Signature
from bleucli.metrics.chrf import _PUNCTUATION, CHRFScore
from bleucli.metrics.chrf import CHRF as _CHRF
from bleucli.sacrebleu_compat.metrics.base import CompatMetric


class CHRFSignature(Signature):
    """The chrF signature class."""


class CHRF(CompatMetric, _CHRF):
    """SacreBLEU's ``CHRF``: bleucli's chrF with SacreBLEU's class attributes."""

    _PUNCTS = set(_PUNCTUATION)
    _SIGNATURE_TYPE = CHRFSignature

    def _remove_punctuation(self, sent: str) -> list[str]:
        from bleucli.metrics.chrf import split_word_punctuation

        return split_word_punctuation(sent)


from bleucli.metrics.base import Metric, Score  # noqa: E402,F401
from bleucli.sacrebleu_compat.metrics.helpers import (  # noqa: E402,F401
    extract_all_char_ngrams,
    extract_word_ngrams,
)
from bleucli.sacrebleu_compat.utils import sum_of_lists  # noqa: E402,F401

__all__ = ["CHRF", "CHRFScore", "CHRFSignature"]
