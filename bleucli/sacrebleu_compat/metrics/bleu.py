"""``sacrebleu.metrics.bleu``: BLEU with SacreBLEU's class attributes and helpers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from importlib import import_module
from typing import Any

from bleucli.metrics.base import Signature
from bleucli.metrics.bleu import BLEU as _BLEU
from bleucli.metrics.bleu import (
    MAX_NGRAM_ORDER,
    SMOOTH_DEFAULTS,
    BLEUScore,
    closest_ref_len,
    compute_bleu,
)
from bleucli.sacrebleu_compat.metrics.base import CompatMetric, sacrelogger
from bleucli.sacrebleu_compat.metrics.helpers import extract_all_word_ngrams

#: Tokeniser name -> ``module.Class`` under ``sacrebleu.tokenizers`` (SacreBLEU's table).
_TOKENIZERS = {
    "none": "tokenizer_none.NoneTokenizer",
    "zh": "tokenizer_zh.TokenizerZh",
    "13a": "tokenizer_13a.Tokenizer13a",
    "intl": "tokenizer_intl.TokenizerV14International",
    "char": "tokenizer_char.TokenizerChar",
    "ja-mecab": "tokenizer_ja_mecab.TokenizerJaMecab",
    "ko-mecab": "tokenizer_ko_mecab.TokenizerKoMecab",
    "spm": "tokenizer_spm.TokenizerSPM",
    "flores101": "tokenizer_spm.Flores101Tokenizer",
    "flores200": "tokenizer_spm.Flores200Tokenizer",
    "spBLEU-1K": "tokenizer_spm.spBLEU1KTokenizer",
}


def _get_tokenizer(name: str) -> type:
    """The tokeniser class for ``name`` (imported on demand, as SacreBLEU does)."""
    module_name, class_name = _TOKENIZERS[name].rsplit(".", 1)
    return getattr(import_module(f"bleucli.sacrebleu_compat.tokenizers.{module_name}"), class_name)


class BLEUSignature(Signature):
    """The BLEU signature class; SacreBLEU builds it from the metric's arguments."""


class BLEU(CompatMetric, _BLEU):
    """SacreBLEU's ``BLEU``: bleucli's BLEU with SacreBLEU's class attributes."""

    TOKENIZERS = _TOKENIZERS.keys()
    TOKENIZER_DEFAULT = "13a"
    SMOOTH_DEFAULTS: dict[str, Any] = dict(SMOOTH_DEFAULTS)
    _TOKENIZER_MAP = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}
    _SIGNATURE_TYPE = BLEUSignature
    compute_bleu = staticmethod(compute_bleu)

    def _get_closest_ref_len(self, hyp_len: int, ref_lens: list[int]) -> int:
        return closest_ref_len(hyp_len, ref_lens)

    def _extract_reference_info(self, refs: Sequence[str]) -> dict[str, Any]:
        """``{'ref_ngrams': Counter, 'ref_lens': [...]}`` for preprocessed references:
        n-grams as tuples (unigrams too), each at its maximum count over the references."""
        merged: Counter | None = None
        ref_lens = []
        for ref in refs:
            counts, length = extract_all_word_ngrams(ref, 1, self.max_ngram_order)
            ref_lens.append(length)
            if merged is None:
                merged = counts
            else:
                for ngram, count in counts.items():
                    merged[ngram] = max(merged[ngram], count)
        return {"ref_ngrams": merged, "ref_lens": ref_lens}

    def _compute_segment_statistics(self, hypothesis: str, ref_kwargs: dict[str, Any]) -> list[Any]:
        """``[hyp_len, closest_ref_len, matches..., totals...]`` against SacreBLEU's
        reference dict (counts may be any numbers, e.g. mbrs's weighted aggregates)."""
        ref_ngrams = ref_kwargs["ref_ngrams"]
        hyp_ngrams, hyp_len = extract_all_word_ngrams(hypothesis, 1, self.max_ngram_order)
        correct = [0] * self.max_ngram_order
        total = [0] * self.max_ngram_order
        for ngram, count in hyp_ngrams.items():
            total[len(ngram) - 1] += count
            if ngram in ref_ngrams:
                correct[len(ngram) - 1] += min(count, ref_ngrams[ngram])
        return [hyp_len, closest_ref_len(hyp_len, ref_kwargs["ref_lens"]), *correct, *total]


from bleucli.metrics.base import Metric, Score  # noqa: E402,F401
from bleucli.sacrebleu_compat.utils import my_log, sum_of_lists  # noqa: E402,F401

__all__ = [
    "BLEU",
    "BLEUScore",
    "BLEUSignature",
    "MAX_NGRAM_ORDER",
    "_TOKENIZERS",
    "_get_tokenizer",
    "sacrelogger",
]
