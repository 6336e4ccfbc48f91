"""``sacrebleu.compat``: the function-style API, on the compatibility metric classes."""

from __future__ import annotations

from bleucli.functional import function_api
from bleucli.sacrebleu_compat.metrics import BLEU, CHRF, TER

(
    corpus_bleu,
    raw_corpus_bleu,
    sentence_bleu,
    corpus_chrf,
    sentence_chrf,
    corpus_ter,
    sentence_ter,
) = function_api(BLEU, CHRF, TER)

from bleucli.sacrebleu_compat.metrics import BLEUScore, CHRFScore, TERScore  # noqa: E402,F401

__all__ = [
    "corpus_bleu",
    "raw_corpus_bleu",
    "sentence_bleu",
    "corpus_chrf",
    "sentence_chrf",
    "corpus_ter",
    "sentence_ter",
]
