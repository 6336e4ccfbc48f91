"""BLEU (Papineni et al., 2002) exactly as SacreBLEU 2.x computes it.

Per sentence the sufficient statistics are
``[hyp_len, closest_ref_len, matches_1..N, totals_1..N]``: clipped n-gram matches
(a hypothesis n-gram counts at most as often as it occurs in any single reference),
hypothesis n-gram totals, and the reference length closest to the hypothesis length
(ties to the shorter). Corpus BLEU is ``BP * exp(mean(log p_n))`` over the summed statistics
with ``BP = exp(1 - r/c)`` when ``c < r``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from bleucli.errors import ConfigError, UsageError
from bleucli.log import logger
from bleucli.metrics.base import MAX_ORDER_LIMIT, Metric, Number, Score, chunks, use_batch
from bleucli.metrics.options import Option
from bleucli.native import native as _NATIVE  # the engine, chosen once per process
from bleucli.tokenizers import default_tokenizer, get_tokenizer

MAX_NGRAM_ORDER = 4

#: A smoothing setting in a signature: ``exp``, ``floor[0.1]`` (2.x) or ``floor-0.1`` (1.x).
_SMOOTH = re.compile(r"^(none|floor|add-k|exp)(?:\[([0-9.eE+-]+)\]|-([0-9.eE+-]+))?$")

#: Default value of each smoothing method (Chen & Cherry, 2014); ``None``: takes no value.
SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}

#: log(0) stand-in that SacreBLEU uses so that a zero precision gives a ~0 score, not an error.
_LOG_ZERO = -9999999999

#: A hypothesis ending in " ." this many times probably was not detokenised.
TOKENISED_PERIOD_WARNING_THRESHOLD = 100

_LANGUAGE_TOKENIZER_ADVICE = {
    "zh": ("zh", "Consider using the 'zh' or 'spm' tokenizer for Chinese."),
    "ja": ("ja-mecab", "Consider using the 'ja-mecab' or 'spm' tokenizer for Japanese."),
    "ko": ("ko-mecab", "Consider using the 'ko-mecab' or 'spm' tokenizer for Korean."),
}

#: Without numpy loaded, the per-sentence loop stays faster up to about this many sentences
#: (measured: 2,000 lines take the same time either way, import included).
BATCH_WITHOUT_NUMPY = 2500


def _log(x: float) -> float:
    return math.log(x) if x != 0.0 else _LOG_ZERO


try:  # the C loop behind Counter(), without Counter's per-call Python overhead
    from collections import _count_elements  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - other Python implementations

    def _count_elements(mapping: dict, iterable: Iterable) -> None:
        for item in iterable:
            mapping[item] = mapping.get(item, 0) + 1


def ngrams(tokens: list[str], order: int) -> list:
    """The n-grams of one order: unigrams are the tokens, longer ones are tuples."""
    return tokens if order == 1 else list(zip(*[tokens[i:] for i in range(order)]))


def ngram_counts(tokens: list[str], order: int) -> dict:
    """Counts of the n-grams of one order."""
    counts: dict = {}
    _count_elements(counts, ngrams(tokens, order))
    return counts


def clipped_matches(grams: list, ref_counts: dict) -> int:
    """Hypothesis n-grams matched by the references, each at most as often as it occurs in
    one reference (Papineni et al.'s modified precision numerator).

    Usually no n-gram repeats, and then the answer is just the number shared with the
    references: a set intersection in C. Otherwise counts are compared one by one.
    """
    distinct = set(grams)
    if len(distinct) == len(grams):
        return len(distinct.intersection(ref_counts))
    counts: dict = {}
    _count_elements(counts, grams)
    return sum(
        [min(count, ref_counts[gram]) for gram, count in counts.items() if gram in ref_counts]
    )


def closest_ref_len(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """The reference length nearest the hypothesis length; ties go to the shorter one."""
    best = -1
    best_diff = -1
    for ref_len in ref_lens:
        diff = abs(hyp_len - ref_len)
        if best_diff == -1 or diff < best_diff or (diff == best_diff and ref_len < best):
            best, best_diff = ref_len, diff
    return best


def count_tokenised_periods(hypotheses: Iterable[str]) -> int:
    """Lines ending in " ." — a sign that the output was not detokenised."""
    return sum(1 for h in hypotheses if h.endswith(" ."))


def warn_if_tokenised(count: int) -> None:
    if count >= TOKENISED_PERIOD_WARNING_THRESHOLD:
        logger.warning("That's 100 lines that end in a tokenized period ('.')")
        logger.warning(
            "It looks like you forgot to detokenize your test data, which may hurt your score."
        )
        logger.warning(
            "If you insist your data is detokenized, or don't care, "
            "you can suppress this message with the `force` parameter."
        )


class BLEUScore(Score):
    """A BLEU value with its n-gram statistics, brevity penalty and lengths."""

    def __init__(
        self,
        score: float,
        counts: list[Number],
        totals: list[Number],
        precisions: list[float],
        bp: float,
        sys_len: int,
        ref_len: int,
    ) -> None:
        super().__init__("BLEU", score)
        self.counts = counts
        self.totals = totals
        self.precisions = precisions
        self.bp = bp
        self.sys_len = sys_len
        self.ref_len = ref_len
        self.ratio = sys_len / ref_len if ref_len else 0

    @property
    def prec_str(self) -> str:
        """The n-gram precisions as SacreBLEU prints them (formatted on demand)."""
        return "/".join(f"{p:.1f}" for p in self.precisions)

    @property
    def _verbose(self) -> str:  # type: ignore[override]
        return (
            f"{self.prec_str} (BP = {self.bp:.3f} ratio = {self.ratio:.3f} "
            f"hyp_len = {self.sys_len:d} ref_len = {self.ref_len:d})"
        )


def check_smooth_method(smooth_method: str) -> None:
    if smooth_method not in SMOOTH_DEFAULTS:
        raise UsageError(
            f"unknown smoothing method {smooth_method!r}; available: {', '.join(SMOOTH_DEFAULTS)}"
        )


def compute_bleu(
    correct: list[Number],
    total: list[Number],
    sys_len: int,
    ref_len: int,
    smooth_method: str = "none",
    smooth_value: float | None = None,
    effective_order: bool = False,
    max_ngram_order: int = MAX_NGRAM_ORDER,
) -> BLEUScore:
    """BLEU from summed statistics, with the smoothing methods of Chen & Cherry (2014).

    ``floor`` (method 1) replaces a zero match count by ``smooth_value``; ``add-k``
    (method 2) adds ``smooth_value`` to matches and totals of orders > 1 (the reported
    counts include it, as in SacreBLEU); ``exp`` (method 3, mteval-v13a's) uses
    ``1 / (2^k * total)`` for the k-th zero precision. With ``effective_order``, orders
    with no hypothesis n-grams are left out of the geometric mean.
    """
    check_smooth_method(smooth_method)
    if smooth_value is None:
        smooth_value = SMOOTH_DEFAULTS[smooth_method]
    correct, total = list(correct), list(total)

    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0

    precisions = [0.0] * max_ngram_order
    if not any(correct):
        return BLEUScore(0.0, correct, total, precisions, bp, sys_len, ref_len)

    exp_factor = 1.0
    eff_order = max_ngram_order
    for n in range(1, max_ngram_order + 1):
        if smooth_method == "add-k" and n > 1:
            correct[n - 1] += smooth_value  # type: ignore[operator]
            total[n - 1] += smooth_value  # type: ignore[operator]
        if total[n - 1] == 0:
            break
        if effective_order:
            eff_order = n
        if correct[n - 1] == 0:
            if smooth_method == "exp":
                exp_factor *= 2
                precisions[n - 1] = 100.0 / (exp_factor * total[n - 1])
            elif smooth_method == "floor":
                precisions[n - 1] = 100.0 * smooth_value / total[n - 1]  # type: ignore[operator]
        else:
            precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1]

    score = bp * math.exp(sum([_log(p) for p in precisions[:eff_order]]) / eff_order)
    return BLEUScore(score, correct, total, precisions, bp, sys_len, ref_len)


class BLEU(Metric):
    """Corpus and sentence BLEU; constructor keywords are SacreBLEU 2.x's ``BLEU``'s."""

    name = "BLEU"
    key = "bleu"
    integer_stats = True
    batches_systems = True
    signature_abbreviations = {"case": "c", "eff": "e", "tok": "tok", "smooth": "s"}
    signature_keys = {"eff": "eff", "e": "eff", "tok": "tok", "smooth": "smooth", "s": "smooth"}
    SMOOTH_DEFAULTS = SMOOTH_DEFAULTS
    TOKENIZER_DEFAULT = "13a"
    OPTIONS = (
        Option("tokenize", ("-tok", "--tokenize"), kind="str", metavar="NAME", signature="tok",
               help="BLEU tokenizer: none, 13a, intl, char, zh, ja-mecab, ko-mecab, spm, "
               "flores101, flores200, spBLEU-1K (default: by target language, else 13a)."),
        Option("lowercase", ("-lc", "--lowercase"), help="Case-insensitive BLEU.", signature="case"),
        Option("smooth_method", ("-s", "--smooth-method"), kind="str", default="exp",
               show_default=True, metavar="exp|floor|add-k|none", signature="smooth",
               help="BLEU smoothing method."),
        Option("smooth_value", ("-sv", "--smooth-value"), kind="float", low=0, signature="smooth",
               help="Smoothing value for floor (default 0.1) and add-k (default 1)."),
        Option("force", ("--force",), help="Do not warn about input that looks tokenised."),
        Option("effective_order", (), signature="eff", cli=False,
               help="Effective order: n-gram orders without matches are left out (sentence BLEU)."),
    )  # fmt: skip

    @classmethod
    def options_from_signature(cls, fields: dict[str, str], name: str) -> dict[str, Any]:
        """Keywords that reproduce a signature's fields (SacreBLEU 2.x's and 1.x's)."""
        from bleucli.metrics.fields import flag_value, tokenizer_name

        options: dict[str, Any] = {}
        for key, value in fields.items():
            if key == "case":
                if value not in ("mixed", "lc"):
                    raise UsageError(f"signature field case:{value} is not 'mixed' or 'lc'")
                options["lowercase"] = value == "lc"
            elif key == "eff":
                options["effective_order"] = flag_value(key, value)
            elif key == "tok":
                options["tokenize"] = tokenizer_name(value)
            elif key == "smooth":
                match = _SMOOTH.match(value)
                if not match:
                    raise UsageError(f"signature field smooth:{value} is not a smoothing method")
                options["smooth_method"] = match.group(1)
                number = match.group(2) or match.group(3)
                if number is not None:
                    try:
                        options["smooth_value"] = float(number)
                    except ValueError:
                        raise UsageError(
                            f"signature field smooth:{value}: {number!r} is not a number"
                        ) from None
        return options

    def __init__(
        self,
        lowercase: bool = False,
        force: bool = False,
        tokenize: str | None = None,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        max_ngram_order: int = MAX_NGRAM_ORDER,
        effective_order: bool = False,
        trg_lang: str = "",
        references: Sequence[Sequence[str | None]] | None = None,
    ) -> None:
        check_smooth_method(smooth_method)
        if (
            isinstance(max_ngram_order, bool)
            or not isinstance(max_ngram_order, int)
            or not 1 <= max_ngram_order <= MAX_ORDER_LIMIT
        ):
            raise ConfigError(
                f"max_ngram_order must be a whole number from 1 to "
                f"{MAX_ORDER_LIMIT}, got {max_ngram_order!r}"
            )
        self.lowercase = lowercase
        self._force = force
        self.smooth_method = smooth_method
        self.smooth_value = smooth_value
        self.max_ngram_order = max_ngram_order
        self.effective_order = effective_order
        self.trg_lang = trg_lang or ""
        if tokenize is None:
            tokenize = default_tokenizer(self.trg_lang)
        else:
            advice = _LANGUAGE_TOKENIZER_ADVICE.get(self.trg_lang)
            if advice and tokenize != advice[0]:
                logger.warning(advice[1])
        self.tokenizer = get_tokenizer(tokenize)
        self.tokenizer_signature = self.tokenizer.signature()
        super().__init__(references)

    # -- statistics ----------------------------------------------------------------------
    def preprocess(self, sentence: str) -> str:
        if self.lowercase:
            sentence = sentence.lower()
        return self.tokenizer(sentence.rstrip())

    def preprocess_many(self, sentences: Sequence[str]) -> list[str]:
        """With the compiled 13a tokeniser, a whole list in one call (no per-line cache:
        tokenising in C costs less than looking the line up)."""
        batch = getattr(self.tokenizer, "tokenize_many", None)
        if batch is None:
            return super().preprocess_many(sentences)
        lines = list(map(str.rstrip, sentences))
        if self.lowercase:
            lines = list(map(str.lower, lines))
        return batch(lines)

    def reference_info(self, references: list[str]) -> Any:
        """The preprocessed references themselves (a fresh list from the cache builder,
        never shared): tokens and n-gram counts are derived when a chunk of hypotheses
        needs them, so a large corpus never holds every reference's token list."""
        return references

    @staticmethod
    def _reference_counts(token_lists: list[list[str]], order: int) -> dict:
        """Each n-gram of one order at its maximum count over the references."""
        if len(token_lists) == 1:  # the common case needs no merging
            return ngram_counts(token_lists[0], order)
        merged: dict = {}
        for tokens in token_lists:
            for ngram, count in ngram_counts(tokens, order).items():
                if count > merged.get(ngram, 0):
                    merged[ngram] = count
        return merged

    def sentence_stats(self, hypothesis: str, ref_info: Any) -> list[Number]:
        """Clipped matches and totals per order, hypothesis and closest reference length.
        One order's n-grams at a time, so memory does not grow with the order."""
        if ref_info and isinstance(ref_info[0], str):  # the compiled engine's form
            ref_info = [ref.split() for ref in ref_info]
        ref_lens = [len(tokens) for tokens in ref_info]
        tokens = hypothesis.split()
        hyp_len = len(tokens)
        order_max = self.max_ngram_order
        correct = [0] * order_max
        total = [0] * order_max
        for order in range(1, min(order_max, hyp_len) + 1):
            total[order - 1] = hyp_len - order + 1
            correct[order - 1] = clipped_matches(
                ngrams(tokens, order), self._reference_counts(ref_info, order)
            )
        return [hyp_len, closest_ref_len(hyp_len, ref_lens), *correct, *total]

    def stats_rows_many(
        self, systems: list[list[str]], ref_infos: Sequence[Any]
    ) -> list[list[list[Number]]]:
        """Large corpora go through the vectorised engine (same numbers, integer ids), all
        systems at once so that the references are counted once."""
        if _NATIVE is not None:
            refs = list(ref_infos)
            return [
                _NATIVE.bleu_stats(list(hypotheses), refs, self.max_ngram_order)
                for hypotheses in systems
            ]
        if not systems or not use_batch(len(systems[0]), without_numpy=BATCH_WITHOUT_NUMPY):
            return super().stats_rows_many(systems, ref_infos)
        from bleucli.metrics.bleu_batch import batch_bleu_stats

        results: list[list[list[Number]]] = [[] for _ in systems]
        for start, stop in chunks(len(systems[0])):
            infos = ref_infos[start:stop]
            streams = max((len(info) for info in infos), default=0)
            refs = [[info[k] if k < len(info) else None for info in infos] for k in range(streams)]
            hyps = [hypotheses[start:stop] for hypotheses in systems]
            for rows, out in zip(batch_bleu_stats(hyps, refs, self.max_ngram_order), results):
                out.extend(rows.tolist())
        return results

    def engine_flags(self, lowers: bool) -> int | None:
        """How the compiled batch engine preprocesses raw texts itself (1: right-strip and
        13a, the default configuration), or None: preprocess_many first."""
        from bleucli.tokenizers.mteval import Tokenizer13a

        if not self.lowercase and type(self.tokenizer) is Tokenizer13a:
            return 1
        return None

    def batch_spec(self) -> tuple[int, tuple] | None:
        """What the compiled batch engine (bleucli.batch) needs: metric 0, then the order,
        the smoothing method's code, effective order and the smoothing value."""
        value = self.smooth_value
        if value is None:
            value = SMOOTH_DEFAULTS[self.smooth_method] or 0.0
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        codes = {"none": 0, "floor": 1, "add-k": 2, "exp": 3}
        return 0, (
            self.max_ngram_order,
            codes[self.smooth_method],
            bool(self.effective_order),
            float(value),
        )

    @property
    def stats_length(self) -> int:
        """Hypothesis and reference length, then correct and total n-grams per order."""
        return 2 + 2 * self.max_ngram_order

    def impossible_stats(self, values: Sequence[Number]) -> str | None:
        order = self.max_ngram_order
        for n in range(order):
            correct, total = values[2 + n], values[2 + order + n]
            if correct > total:
                return f"{correct} matching {n + 1}-grams out of {total}: more matches than n-grams"
        return None

    def score_from_values(self, values: Sequence[Number]) -> BLEUScore:
        order = self.max_ngram_order
        return compute_bleu(
            correct=list(values[2 : 2 + order]),
            total=list(values[2 + order :]),
            sys_len=int(values[0]),
            ref_len=int(values[1]),
            smooth_method=self.smooth_method,
            smooth_value=self.smooth_value,
            effective_order=self.effective_order,
            max_ngram_order=order,
        )

    # -- checks and signature --------------------------------------------------------------
    def _warn_hypotheses(self, hypotheses: Sequence[str]) -> None:
        if not self._force:
            warn_if_tokenised(count_tokenised_periods(hypotheses))

    def sentence_score(self, hypothesis: str, references: Sequence[str | None]) -> BLEUScore:
        if not self.effective_order:
            logger.warning("It is recommended to enable `effective_order` for sentence-level BLEU.")
        return super().sentence_score(hypothesis, references)  # type: ignore[return-value]

    def signature_fields(self) -> dict[str, Any]:
        smooth = self.smooth_method
        default = SMOOTH_DEFAULTS[smooth]
        if default is not None:
            value = default if self.smooth_value is None else self.smooth_value
            smooth += f"[{value:.2f}]"
        return {
            "case": "lc" if self.lowercase else "mixed",
            "eff": "yes" if self.effective_order else "no",
            "tok": self.tokenizer_signature,
            "smooth": smooth,
        }
