"""``sacrebleu.metrics.helpers``: n-gram extraction with SacreBLEU's signatures, over
bleucli's own n-gram code."""

from __future__ import annotations

from collections import Counter

from bleucli.metrics.bleu import ngrams
from bleucli.metrics.chrf import char_ngram_counts, word_ngram_counts


def extract_all_word_ngrams(line: str, min_order: int, max_order: int) -> tuple[Counter, int]:
    """All word n-grams of orders ``min_order..max_order`` (as tuples) and the length."""
    tokens = line.split()
    counts: Counter = Counter()
    for n in range(min_order, max_order + 1):
        counts.update(tuple(gram) if n > 1 else (gram,) for gram in ngrams(tokens, n))
    return counts, len(tokens)


def extract_word_ngrams(tokens: list[str], n: int) -> Counter:
    """Word n-grams of order ``n`` joined by spaces (chrF++'s word n-grams)."""
    return word_ngram_counts(tokens, n)


def extract_char_ngrams(line: str, n: int, include_whitespace: bool = False) -> Counter:
    return char_ngram_counts(line, n, include_whitespace)[n - 1] if n > 0 else Counter()


def extract_all_char_ngrams(
    line: str, max_order: int, include_whitespace: bool = False
) -> list[Counter]:
    return char_ngram_counts(line, max_order, include_whitespace)


__all__ = [
    "extract_all_word_ngrams",
    "extract_word_ngrams",
    "extract_char_ngrams",
    "extract_all_char_ngrams",
]
