"""``sacrebleu.metrics.chrf``: chrF and chrF++ with SacreBLEU's class attributes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from bleucli.metrics.base import Signature
from bleucli.metrics.chrf import _PUNCTUATION, CHRFScore, match_statistics, split_word_punctuation
from bleucli.metrics.chrf import CHRF as _CHRF
from bleucli.sacrebleu_compat.metrics.base import CompatMetric


class CHRFSignature(Signature):
    """The chrF signature class."""


class CHRF(CompatMetric, _CHRF):
    """SacreBLEU's ``CHRF``: bleucli's chrF with SacreBLEU's class attributes."""

    _PUNCTS = set(_PUNCTUATION)
    _SIGNATURE_TYPE = CHRFSignature

    def _remove_punctuation(self, sent: str) -> list[str]:
        return split_word_punctuation(sent)

    @staticmethod
    def _get_match_statistics(hyp_ngrams: Counter, ref_ngrams: Counter) -> list[Any]:
        """``[hyp n-grams, ref n-grams, matches]`` of one order's counters."""
        return match_statistics(
            hyp_ngrams, sum(hyp_ngrams.values()), ref_ngrams, sum(ref_ngrams.values())
        )

    def _compute_f_score(self, statistics: Sequence[Any]) -> float:
        return self.f_score(statistics)

    def _extract_reference_info(self, refs: Sequence[str]) -> dict[str, Any]:
        """``{'ref_ngrams': [per reference: one Counter per character order, then per word
        order]}`` for preprocessed references."""
        return {"ref_ngrams": [self._ngrams(ref) for ref in refs]}

    def _compute_segment_statistics(self, hypothesis: str, ref_kwargs: dict[str, Any]) -> list[Any]:
        """The statistics against the reference with the best sentence chrF (the first of
        equals), from SacreBLEU's reference dict."""
        hyp_ngrams = self._ngrams(hypothesis)
        best: list[Any] = []
        best_f = -1.0
        for ref_ngrams in ref_kwargs["ref_ngrams"]:
            stats = [
                value
                for hyp, ref in zip(hyp_ngrams, ref_ngrams)
                for value in self._get_match_statistics(hyp, ref)
            ]
            f_score = self.f_score(stats)
            if f_score > best_f:
                best_f, best = f_score, stats
        return best


from bleucli.metrics.base import Metric, Score  # noqa: E402,F401
from bleucli.sacrebleu_compat.metrics.helpers import (  # noqa: E402,F401
    extract_all_char_ngrams,
    extract_word_ngrams,
)
from bleucli.sacrebleu_compat.utils import sum_of_lists  # noqa: E402,F401

__all__ = ["CHRF", "CHRFScore", "CHRFSignature"]
