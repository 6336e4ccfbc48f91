"""chrF (Popović, 2015) and chrF++ (Popović, 2017), exactly as SacreBLEU 2.x computes them.

Per sentence and n-gram order (character orders 1..``char_order``, then word orders
1..``word_order``) the statistics are ``[hyp n-grams, ref n-grams, matches]`` against the
reference with the best sentence F-score. The corpus score is an F-beta of the precisions and
recalls averaged over the orders that have both hypothesis and reference n-grams
("effective order"), or, with ``eps_smoothing``, the mean of per-order F-scores with a tiny
epsilon for empty orders (as chrF++.py, NLTK and Moses do).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bleucli.metrics.base import MAX_ORDER_LIMIT, Metric, Number, Score, chunks, use_batch
from bleucli.metrics.options import Option
from bleucli.native import native as _NATIVE  # the engine, chosen once per process

#: chrF's names in signatures: ``chrF2``, ``chrF2++`` (beta, then one ``+`` per word order).
_SIGNATURE_NAME = re.compile(r"^chrF(\d*)(\+*)$", re.IGNORECASE)

#: Punctuation split off word edges for chrF++'s word n-grams (one character, either side).
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_EPS = 1e-16


@functools.cache
def _nep50() -> bool:
    """Whether numpy promotes Python numbers weakly (NEP 50, numpy 2): then a float32
    scalar and a float32 array compute alike. Asked on first use (numpy stays unimported
    at start-up)."""
    try:
        import numpy as np
    except ImportError:
        return False
    return type(np.float32(1) * 1.0) is np.float32 and type(0.0 + np.float32(1)) is np.float32


#: Character n-grams make the per-sentence loop slow: numpy pays for its import from about
#: this many sentences on (measured: 300 lines 0.17 s with numpy, 0.23 s without).
BATCH_WITHOUT_NUMPY = 150


def char_ngram_counts(text: str, max_order: int, include_whitespace: bool) -> list[Counter]:
    """Character n-gram counts of orders 1..max_order (whitespace removed unless kept)."""
    if not include_whitespace:
        text = "".join(text.split())
    return [
        Counter([text[i : i + n] for i in range(len(text) - n + 1)])
        for n in range(1, max_order + 1)
    ]


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


def char_ngrams(text: str, order: int) -> Counter:
    """Character n-gram counts of one order."""
    return Counter([text[i : i + order] for i in range(len(text) - order + 1)])


def word_ngram_counts(words: list[str], order: int) -> Counter:
    return Counter([" ".join(words[i : i + order]) for i in range(len(words) - order + 1)])


def match_statistics(hyp: dict, hyp_total: Number, ref: dict, ref_total: Number) -> list[Number]:
    """``[hyp n-grams, ref n-grams, matches]`` of one order: matches clipped by the
    reference counts; no hypothesis n-grams are counted where the reference has none of
    that order (SacreBLEU's rule, which keeps such orders out of the effective order)."""
    matches = 0
    for ngram, count in hyp.items():
        ref_count = ref.get(ngram)
        if ref_count:
            matches += count if count < ref_count else ref_count
    return [hyp_total if ref else 0, ref_total, matches]


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
    key = "chrf"
    integer_stats = True
    batches_systems = True
    signature_abbreviations = {"case": "c", "eff": "e", "nc": "nc", "nw": "nw", "space": "s"}
    signature_keys = {
        "eff": "eff", "e": "eff", "nc": "nc", "numchars": "nc", "charorder": "nc", "nw": "nw",
        "numwords": "nw", "wordorder": "nw", "space": "space", "s": "space",
    }  # fmt: skip
    CHAR_ORDER = 6
    WORD_ORDER = 0
    BETA = 2
    OPTIONS = (
        Option("char_order", ("-cc", "--chrf-char-order"), kind="int", default=CHAR_ORDER, low=0,
               high=100, show_default=True, signature="nc",
               help="chrF character n-gram order (0-100)."),
        Option("word_order", ("-cw", "--chrf-word-order"), kind="int", default=WORD_ORDER, low=0,
               high=100, show_default=True, signature="nw",
               help="chrF word n-gram order (2 = chrF++; 0-100)."),
        Option("beta", ("--chrf-beta",), kind="int", default=BETA, low=0, high=1000,
               show_default=True, help="chrF recall weight (0-1000)."),
        Option("whitespace", ("--chrf-whitespace",), signature="space",
               help="chrF: keep spaces in character n-grams."),
        Option("lowercase", ("--chrf-lowercase",), signature="case", help="Case-insensitive chrF."),
        Option("eps_smoothing", ("--chrf-eps-smoothing",), signature="eff",
               help="chrF: epsilon smoothing (chrF++.py, NLTK, Moses) instead of effective order."),
    )  # fmt: skip

    @classmethod
    def names_signature(cls, name: str) -> bool:
        return _SIGNATURE_NAME.match(name) is not None

    @classmethod
    def options_from_signature(cls, fields: dict[str, str], name: str) -> dict[str, Any]:
        """Keywords that reproduce a signature: beta and the word order from the name
        (``chrF2++``), the rest from the fields."""
        from bleucli.metrics.fields import flag_value, integer_value

        match = _SIGNATURE_NAME.match(name)
        beta = match.group(1) if match else ""
        options: dict[str, Any] = {"beta": int(beta) if beta else cls.BETA}
        if match and match.group(2):
            options["word_order"] = len(match.group(2))
        for key, value in fields.items():
            if key == "case":
                options["lowercase"] = value == "lc"
            elif key == "eff":
                options["eps_smoothing"] = not flag_value(key, value)
            elif key == "nc":
                options["char_order"] = integer_value(key, value)
            elif key == "nw":
                options["word_order"] = integer_value(key, value)
            elif key == "space":
                options["whitespace"] = flag_value(key, value)
        return options

    def __init__(
        self,
        char_order: int = CHAR_ORDER,
        word_order: int = WORD_ORDER,
        beta: int = BETA,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
        references: Sequence[Sequence[str | None]] | None = None,
    ) -> None:
        from bleucli.errors import ConfigError

        for name, value in (("char_order", char_order), ("word_order", word_order)):
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or not 0 <= value <= MAX_ORDER_LIMIT
            ):
                raise ConfigError(
                    f"{name} must be a whole number from 0 to {MAX_ORDER_LIMIT}, got {value!r}"
                )
        if char_order + word_order == 0:
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
        """The preprocessed references themselves: n-grams are counted when a sentence
        needs them, one order at a time."""
        return references

    def sentence_stats(self, hypothesis: str, ref_info: Any) -> list[Number]:
        """Against every reference, ``[hyp, ref, match]`` per character then word order; the
        statistics of the reference with the best sentence chrF (the first of equals).
        One order's n-gram counts at a time: memory stays linear in the sentences'
        length whatever the orders."""
        per_ref: list[list[Number]] = [[] for _ in ref_info]
        count: Any
        for kind, orders in ((0, self.char_order), (1, self.word_order)):
            if kind == 0:
                keep = str if self.whitespace else (lambda text: "".join(text.split()))
                hyp_seq: Any = keep(hypothesis)
                ref_seqs: list[Any] = [keep(ref) for ref in ref_info]
                count = char_ngrams
            else:
                hyp_seq = split_word_punctuation(hypothesis)
                ref_seqs = [split_word_punctuation(ref) for ref in ref_info]
                count = word_ngram_counts
            for order in range(1, orders + 1):
                hyp = count(hyp_seq, order)
                hyp_total = max(len(hyp_seq) - order + 1, 0)
                for stats, ref_seq in zip(per_ref, ref_seqs):
                    stats += match_statistics(
                        hyp, hyp_total, count(ref_seq, order), max(len(ref_seq) - order + 1, 0)
                    )
        best: list[Number] = []
        best_f = -1.0
        for stats in per_ref:
            f_score = self.f_score(stats)
            if f_score > best_f:
                best_f, best = f_score, stats
        return best

    def f_score(self, stats: Sequence[Number]) -> float:
        """chrF from ``[hyp, ref, match]`` triples, one per order."""
        factor = self.beta**2
        score = 0.0
        avg_prec = avg_rec = 0.0
        effective_order = 0
        for i in range(self.order):
            n_hyp, n_ref, n_match = stats[3 * i : 3 * i + 3]
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

    def f_scores(self, columns):
        """:meth:`f_score` of many rows at once (``columns[j]`` is statistic j of every
        row), with the same floating-point operations in the same order."""
        import numpy as np

        with np.errstate(divide="ignore", invalid="ignore"):
            factor = self.beta**2
            n = columns.shape[1]
            score = np.zeros(n)
            avg_prec, avg_rec = np.zeros(n), np.zeros(n)
            effective_order = np.zeros(n, dtype=np.int64)
            for i in range(self.order):
                n_hyp, n_ref, n_match = columns[3 * i], columns[3 * i + 1], columns[3 * i + 2]
                prec = np.where(n_hyp > 0, n_match / np.maximum(n_hyp, 1), _EPS)
                rec = np.where(n_ref > 0, n_match / np.maximum(n_ref, 1), _EPS)
                denom = factor * prec + rec
                score = score + np.where(denom > 0, (1 + factor) * prec * rec / denom, _EPS)
                both = (n_hyp > 0) & (n_ref > 0)
                avg_prec = np.where(both, avg_prec + prec, avg_prec)
                avg_rec = np.where(both, avg_rec + rec, avg_rec)
                effective_order = effective_order + both
            if self.eps_smoothing:
                return 100 * score / self.order
            safe = np.maximum(effective_order, 1)
            avg_prec = np.where(effective_order > 0, avg_prec / safe, 0.0)
            avg_rec = np.where(effective_order > 0, avg_rec / safe, 0.0)
            total = avg_prec + avg_rec
            return np.where(
                total != 0,
                100 * ((1 + factor) * avg_prec * avg_rec / ((factor * avg_prec) + avg_rec)),
                0.0,
            )

    def resample_scores(self, sums: Any) -> Any:
        """chrF of every resample at once, with the float32 arithmetic that
        :meth:`f_score` performs on one row of float32 sums, operation by operation.

        Taken only where the two provably agree: numpy's NEP 50 promotion (a Python number
        meeting a float32 stays float32, for scalars and arrays alike) and no zero
        hypothesis, reference or match count in any resample (there :meth:`f_score` mixes
        Python floats in); otherwise, row by row."""
        import numpy as np

        if not _nep50() or getattr(sums, "dtype", None) != np.float32 or sums.ndim != 2:
            return super().resample_scores(sums)
        columns = sums.T
        if self.order == 0 or (columns[: 3 * self.order] <= 0).any():
            return super().resample_scores(sums)
        factor = self.beta**2
        score = np.zeros(columns.shape[1], dtype=np.float32)
        avg_prec = np.zeros_like(score)
        avg_rec = np.zeros_like(score)
        with np.errstate(divide="ignore", invalid="ignore"):
            for i in range(self.order):
                n_hyp, n_ref, n_match = columns[3 * i], columns[3 * i + 1], columns[3 * i + 2]
                prec = n_match / n_hyp
                rec = n_match / n_ref
                denom = factor * prec + rec
                score = score + (1 + factor) * prec * rec / denom
                avg_prec = avg_prec + prec
                avg_rec = avg_rec + rec
            if self.eps_smoothing:
                return 100 * score / self.order
            avg_prec = avg_prec / self.order
            avg_rec = avg_rec / self.order
            return 100 * ((1 + factor) * avg_prec * avg_rec / ((factor * avg_prec) + avg_rec))

    def stats_rows_many(
        self, systems: list[list[str]], ref_infos: Sequence[Any]
    ) -> list[list[list[Number]]]:
        """Large corpora go through the vectorised engine (same numbers), all systems at
        once so that the references are counted once."""
        if _NATIVE is not None and systems:
            return [self._native_rows(hypotheses, ref_infos) for hypotheses in systems]
        if (
            not systems
            or not use_batch(len(systems[0]), without_numpy=BATCH_WITHOUT_NUMPY)
            or any(not info for info in ref_infos)
        ):
            return super().stats_rows_many(systems, ref_infos)
        from bleucli.metrics.chrf_batch import batch_chrf_stats

        results: list[list[list[Number]]] = [[] for _ in systems]
        for start, stop in chunks(len(systems[0])):
            infos = ref_infos[start:stop]
            streams = max(len(info) for info in infos)
            refs = [[info[k] if k < len(info) else None for info in infos] for k in range(streams)]
            hyps = [hypotheses[start:stop] for hypotheses in systems]
            for rows, out in zip(
                batch_chrf_stats(
                    hyps,
                    refs,
                    self.char_order,
                    self.word_order,
                    self.whitespace,
                    split_word_punctuation,
                    self.f_scores,
                ),
                results,
            ):
                out.extend(rows.tolist())
        return results

    def _native_rows(self, hypotheses: list[str], ref_infos: Sequence[Any]) -> list[list[Number]]:
        """The compiled engine's statistics: per sentence one row per reference, of which
        the best by sentence chrF is kept (the first of equals), as in :meth:`sentence_stats`."""
        texts = [list(info) for info in ref_infos]
        assert _NATIVE is not None
        candidates = _NATIVE.chrf_stats(
            list(hypotheses), texts, self.char_order, self.word_order, self.whitespace
        )
        rows = []
        f_score = self.f_score
        for per_ref in candidates:
            if len(per_ref) == 1:
                rows.append(per_ref[0])
                continue
            best: list[Number] = []
            best_f = -1.0
            for stats in per_ref:
                value = f_score(stats)
                if value > best_f:
                    best_f, best = value, stats
            rows.append(best)
        return rows

    def engine_flags(self, lowers: bool) -> int | None:
        """How the compiled batch engine preprocesses raw texts itself (chrF's preprocessing
        is lowercasing: 2 where the engine lowercases), or None: preprocess_many first."""
        if not self.lowercase:
            return 0
        return 2 if lowers else None

    def batch_spec(self) -> tuple[int, tuple] | None:
        """What the compiled batch engine (bleucli.batch) needs: metric 1, the orders, an
        integer beta (other betas go through the pure-Python engine), whitespace and
        smoothing."""
        if (
            isinstance(self.beta, bool)
            or not isinstance(self.beta, int)
            or not 0 <= self.beta <= 1_000_000
        ):
            return None
        return 1, (
            self.char_order,
            self.word_order,
            self.beta,
            bool(self.whitespace),
            bool(self.eps_smoothing),
        )

    @property
    def stats_length(self) -> int:
        """Hypothesis, reference and matching n-gram counts per character and word order."""
        return 3 * self.order

    def impossible_stats(self, values: Sequence[Number]) -> str | None:
        for i in range(self.order):
            n_hyp, n_ref, n_match = values[3 * i : 3 * i + 3]
            if n_match > min(n_hyp, n_ref):
                return (
                    f"order {i + 1}: {n_match} matches of {n_hyp} hypothesis and {n_ref} "
                    f"reference n-grams"
                )
        return None

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
