"""``sacrebleu.metrics.ter``: TER with SacreBLEU's class attributes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bleucli.metrics.base import Signature
from bleucli.metrics.ter import TER as _TER
from bleucli.metrics.ter import TERScore
from bleucli.sacrebleu_compat.metrics.base import CompatMetric


class TERSignature(Signature):
    """The TER signature class."""


class TER(CompatMetric, _TER):
    """SacreBLEU's ``TER``: bleucli's TER with SacreBLEU's class attributes."""

    _SIGNATURE_TYPE = TERSignature

    def _extract_reference_info(self, refs: Sequence[str]) -> dict[str, Any]:
        """``{'ref_words': [...]}``; SacreBLEU tokenises the (already preprocessed)
        references once more here, which this keeps."""
        return {"ref_words": [self.preprocess(ref).split() for ref in refs]}

    def _compute_segment_statistics(self, hypothesis: str, ref_kwargs: dict[str, Any]) -> list[Any]:
        return self.sentence_stats(hypothesis, ref_kwargs["ref_words"])


from bleucli.metrics.base import Metric, Score  # noqa: E402,F401
from bleucli.metrics.ter_edit import translation_edit_rate  # noqa: E402,F401
from bleucli.sacrebleu_compat.utils import sum_of_lists  # noqa: E402,F401
from bleucli.tokenizers.tercom import TercomTokenizer  # noqa: E402,F401

__all__ = ["TER", "TERScore", "TERSignature"]
