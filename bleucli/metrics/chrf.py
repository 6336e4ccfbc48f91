"""chrF (Popović, 2015) and chrF++ (Popović, 2017), exactly as SacreBLEU 2.x computes them.

Per sentence and n-gram order (character orders 1..``char_order``, then word orders
1..``word_order``) the statistics are ``[hyp n-grams, ref n-grams, matches]`` against the
reference with the best sentence F-score. The corpus score is an F-beta of the precisions and
recalls averaged over the orders that have both hypothesis and reference n-grams
("effective order"), or, with ``eps_smoothing``, the mean of per-order F-scores with a tiny
epsilon for empty orders (as chrF++.py, NLTK and Moses do).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from bleucli.metrics.base import Metric, Number, Score

#: Punctuation split off word edges for chrF++'s word n-grams (one character, either side).
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_EPS = 1e-16


def char_ngram_counts(text: str, max_order: int, include_whitespace: bool) -> list[Counter]:
    """Character n-gram counts of orders 1..max_order (whitespace removed unless kept)."""
    if not include_whitespace:
        text = "".join(text.split())
    return [Counter([text[i:i + n] for i in range(len(text) - n + 1)])
            for n in range(1, max_order + 1)]


def split_word_punctuation(text: str) -> list[str]:
    """Words for chrF++, with one punctuation mark split off the end (else the start)."""
    words: list[str] = []
    for word in text.split():
        if len(word) == 1:
            words.append(word)
        elif word[-1] in _PUNCTUATION:
            words += [word[:-1], word[-1]]
        elif word[0] in _PUNCTUATION:
            words += [word[0], word[1:]]
        else:
            words.append(word)
    return words


def word_ngram_counts(words: list[str], order: int) -> Counter:
    return Counter([" ".join(words[i:i + order]) for i in range(len(words) - order + 1)])


class CHRFScore(Score):
    """A chrF value; its name says beta and word order (``chrF2``, ``chrF2++``)."""

    def __init__(self, score: float, char_order: int, word_order: int, beta: int) -> None:
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        super().__init__(f"chrF{beta}" + "+" * word_order, score)


class CHRF(Metric):
    """chrF / chrF++; constructor keywords are SacreBLEU 2.x's ``CHRF``'s."""

    name = "chrF"
    integer_stats = True
    signature_abbreviations = {"case": "c", "eff": "e", "nc": "nc", "nw": "nw", "space": "s"}
    CHAR_ORDER = 6
    WORD_ORDER = 0
    BETA = 2

    def __init__(self, char_order: int = CHAR_ORDER, word_order: int = WORD_ORDER,
                 beta: int = BETA, lowercase: bool = False, whitespace: bool = False,
                 eps_smoothing: bool = False,
                 references: Sequence[Sequence[str | None]] | None = None) -> None:
        from bleucli.errors import ConfigError

        if char_order < 0 or word_order < 0 or char_order + word_order == 0:
            raise ConfigError("chrF needs a positive character or word n-gram order")
        self.char_order = char_order
        self.word_order = word_order
        self.order = char_order + word_order
        self.beta = beta
        self.lowercase = lowercase
        self.whitespace = whitespace
        self.eps_smoothing = eps_smoothing
        super().__init__(references)

    def preprocess(self, sentence: str) -> str:
        return sentence.lower() if self.lowercase else sentence

    def _ngrams(self, text: str) -> list[Counter]:
        counts = char_ngram_counts(text, self.char_order, self.whitespace)
        if self.word_order:
            words = split_word_punctuation(text)
            counts += [word_ngram_counts(words, n) for n in range(1, self.word_order + 1)]
        return counts

    def reference_info(self, references: list[str]) -> Any:
        return [(counts, [sum(c.values()) for c in counts])
                for counts in map(self._ngrams, references)]

    def sentence_stats(self, hypothesis: str, ref_info: Any) -> list[Number]:
        hyp_counts = self._ngrams(hypothesis)
        hyp_totals = [sum(c.values()) for c in hyp_counts]
        best: list[Number] = []
        best_f = -1.0
        for ref_counts, ref_totals in ref_info:
            stats: list[Number] = []
            for hyp, hyp_total, ref, ref_total in zip(hyp_counts, hyp_totals, ref_counts,
                                                      ref_totals):
                matches = 0
                for ngram, count in hyp.items():
                    ref_count = ref.get(ngram)
                    if ref_count:
                        matches += count if count < ref_count else ref_count
                stats += [hyp_total if ref else 0, ref_total, matches]
            f_score = self.f_score(stats)
            if f_score > best_f:
                best_f, best = f_score, stats
        return best

    def f_score(self, stats: Sequence[Number]) -> float:
        """chrF from ``[hyp, ref, match]`` triples, one per order."""
        factor = self.beta ** 2
        score = 0.0
        avg_prec = avg_rec = 0.0
        effective_order = 0
        for i in range(self.order):
            n_hyp, n_ref, n_match = stats[3 * i:3 * i + 3]
            prec = n_match / n_hyp if n_hyp > 0 else _EPS
            rec = n_match / n_ref if n_ref > 0 else _EPS
            denom = factor * prec + rec
            score += ((1 + factor) * prec * rec / denom) if denom > 0 else _EPS
            if n_hyp > 0 and n_ref > 0:
                avg_prec += prec
                avg_rec += rec
                effective_order += 1
        if self.eps_smoothing:
            return 100 * score / self.order
        if effective_order == 0:
            avg_prec = avg_rec = 0.0
        else:
            avg_prec /= effective_order
            avg_rec /= effective_order
        if avg_prec + avg_rec:
            return 100 * ((1 + factor) * avg_prec * avg_rec / ((factor * avg_prec) + avg_rec))
        return 0.0

    def score_from_values(self, values: Sequence[Number]) -> CHRFScore:
        return CHRFScore(self.f_score(values), self.char_order, self.word_order, self.beta)

    def signature_fields(self) -> dict[str, Any]:
        return {
            "case": "lc" if self.lowercase else "mixed",
            "eff": "yes" if not self.eps_smoothing else "no",
            "nc": self.char_order,
            "nw": self.word_order,
            "space": "yes" if self.whitespace else "no",
        }
