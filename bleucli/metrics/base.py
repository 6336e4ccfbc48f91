"""The metric base: extract per-sentence statistics, sum them, score the sum.

Every metric SacreBLEU defines is a function of *summed* per-sentence sufficient statistics,
so one mechanism serves corpus scores, sentence scores, bootstrap resampling and sharded
scoring. Signatures and score objects mirror SacreBLEU 2.x's so outputs are interchangeable.
"""

from __future__ import annotations

import gc
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from bleucli.errors import InputError, UsageError
from bleucli.metrics.options import Option
from bleucli.native import native as _NATIVE
from bleucli.version import __version__

#: The value of the ``version:`` signature field: it names the tool, not only a number.
VERSION_FIELD = f"bleucli-{__version__}"

Number = int | float


@dataclass(slots=True)
class Stats:
    """Summed sufficient statistics of some sentences under one metric configuration.

    ``config`` is the metric's signature without volatile fields; adding statistics
    computed under different configurations is refused, because the sum would be meaningless.
    """

    config: str
    values: list[Number]
    n_sentences: int = 1

    def __add__(self, other: Stats) -> Stats:
        if not isinstance(other, Stats):
            return NotImplemented
        if other.config != self.config:
            raise InputError(
                f"cannot add statistics of different configurations: "
                f"{self.config!r} vs {other.config!r}"
            )
        return Stats(
            self.config,
            [a + b for a, b in zip(self.values, other.values, strict=True)],
            self.n_sentences + other.n_sentences,
        )


class Signature:
    """The reproducibility signature: ordered ``key:value`` fields, with SacreBLEU's abbreviations.

    Field order is SacreBLEU 2.x's: the shared fields (``nrefs``, statistical-test and test-set
    fields), then the metric's own, and ``version`` always last.
    """

    #: Long name -> ``--short`` abbreviation, for the fields every metric shares.
    ABBREVIATIONS: dict[str, str] = {
        "version": "v",
        "nrefs": "#",
        "test": "t",
        "lang": "l",
        "subset": "S",
        "origlang": "o",
        "bs": "bs",
        "ar": "ar",
        "seed": "rs",
        "corr": "corr",
        "reseg": "reseg",
    }

    def __init__(
        self,
        num_refs: int | str,
        metric_fields: dict[str, Any],
        metric_abbreviations: dict[str, str],
    ) -> None:
        self.abbreviations = {**self.ABBREVIATIONS, **metric_abbreviations}
        self.info: dict[str, Any] = {
            "version": VERSION_FIELD,
            "nrefs": "var" if num_refs == -1 else num_refs,
            "bs": None,
            "ar": None,
            "seed": None,
            "test": None,
            "lang": None,
            "origlang": None,
            "subset": None,
            **metric_fields,
        }

    def update(self, key: str, value: Any) -> None:
        """Set a field (e.g. ``test`` and ``lang`` when scoring on a named test set)."""
        self.info[key] = value

    def shorten(self, signature: str) -> str:
        """The ``--short`` form of a long signature string of this metric."""
        long_to_short = self.abbreviations
        return "|".join(
            f"{long_to_short.get(key, key)}:{value}"
            for key, _, value in (field.partition(":") for field in signature.split("|"))
        )

    def format(self, short: bool = False) -> str:
        keys = [k for k in self.info if k != "version"] + ["version"]
        pairs = []
        for key in keys:
            value = self.info[key]
            if value is None:
                continue
            if isinstance(value, bool):
                value = "yes" if value else "no"
            pairs.append(f"{self.abbreviations[key] if short else key}:{value}")
        return "|".join(pairs)

    def __str__(self) -> str:
        return self.format()

    __repr__ = __str__


class Score:
    """A metric value with SacreBLEU's text and JSON renderings."""

    def __init__(self, name: str, score: float) -> None:
        self.name = name
        self.score = score
        #: Bootstrap mean and 95% half-interval; negative until a CI is estimated.
        self._mean = -1.0
        self._ci = -1.0

    #: Scores that may be negative (COMET, external segment scores): an interval is shown
    #: whenever one was estimated; SacreBLEU's metrics keep its rule (a positive mean).
    signed = False
    #: Metric-specific detail printed after the score (precisions, BP, ...); subclasses
    #: may compute it on demand (a sentence-level loop rarely prints it).
    _verbose = ""

    def format(
        self, width: int = 2, score_only: bool = False, signature: str = "", is_json: bool = False
    ) -> str:
        """Render as SacreBLEU does: ``NAME|sig = 12.3 details`` or its JSON object."""
        from bleucli.display import shown

        text = shown(self.score, width)
        record: dict[str, Any] = {
            "name": self.name,
            "score": float(text),
            "signature": signature,
        }
        if self._mean > 0 or (self.signed and self._ci >= 0):
            mean, half = shown(self._mean, width), shown(self._ci, width)
            confidence = f"μ = {mean} ± {half}"
            text += f" ({confidence})"
            if is_json:
                record.update(
                    confidence_mean=float(mean), confidence_var=float(half), confidence=confidence
                )
        if score_only:
            return text
        line = f"{self.name}|{signature}" if signature else self.name
        line = f"{line} = {text}"
        if self._verbose:
            line += f" {self._verbose}"
            record["verbose_score"] = self._verbose
        if is_json:
            for pair in signature.split("|") if signature else []:
                key, value = pair.split(":", 1)
                record[key] = value
            import json

            return json.dumps(record, indent=1, ensure_ascii=False)
        return line

    def estimate_ci(self, scores: Sequence[Score]) -> None:
        """Store the bootstrap mean and the half-width of the 2.5%..97.5% percentile range."""
        import statistics

        ordered = sorted(s.score for s in scores)
        lower_idx = len(ordered) // 40
        upper_idx = len(ordered) - lower_idx - 1
        self._ci = 0.5 * (ordered[upper_idx] - ordered[lower_idx])
        try:  # numpy float32 scores keep SacreBLEU's (float32) mean ...
            self._mean = statistics.mean(ordered)
        except TypeError:  # ... but a mix of float32 and float cannot be averaged that way
            self._mean = statistics.mean(float(x) for x in ordered)

    def __repr__(self) -> str:
        return self.format()


def _check_sentence_args(owner: str, hypothesis: Any, references: Any) -> None:
    if not isinstance(hypothesis, str):
        raise TypeError(
            f"{owner}: the hypothesis should be a string, got {type(hypothesis).__name__}"
        )
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError(f"{owner}: references should be a list of strings, one per reference")
    if not references:
        raise InputError(f"{owner}: at least one reference is needed")
    for ref in references:
        if ref is not None and not isinstance(ref, str):
            raise TypeError(f"{owner}: each reference should be a string, got {type(ref).__name__}")


def check_corpus_args(owner: str, hypotheses: Any, references: Any) -> None:
    """Validate the corpus API's shapes; SacreBLEU silently truncates what this refuses.

    ``references`` must be a list of reference *streams*, each a list with one entry
    (string, or ``None`` for "no reference here") per hypothesis.
    """
    if isinstance(hypotheses, str) or not isinstance(hypotheses, Sequence):
        raise TypeError(f"{owner}: hypotheses should be a list of strings")
    if len(hypotheses) == 0:
        raise InputError(f"{owner}: there are no hypotheses to score")
    if not set(map(type, hypotheses)) <= {str}:  # C-level scan; then find the culprit
        for i, hyp in enumerate(hypotheses):
            if not isinstance(hyp, str):
                raise TypeError(
                    f"{owner}: hypothesis {i} should be a string, got {type(hyp).__name__}"
                )
    if references is None:
        return
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError(f"{owner}: references should be a list of reference streams")
    if len(references) == 0:
        raise InputError(f"{owner}: there are no reference streams")
    if all(isinstance(r, str) for r in references):
        raise InputError(
            f"{owner}: references should be a list of reference streams (lists of strings), "
            f"got a flat list of {len(references)} strings; for one reference per "
            f"hypothesis pass [references]"
        )
    for k, stream in enumerate(references):
        if isinstance(stream, str) or not isinstance(stream, Sequence):
            raise TypeError(f"{owner}: reference stream {k} should be a list of strings")
        if len(stream) != len(hypotheses):
            raise InputError(
                f"{owner}: reference stream {k} has {len(stream)} lines but there are "
                f"{len(hypotheses)} hypotheses"
            )
        if set(map(type, stream)) <= {str, type(None)}:
            continue
        for i, ref in enumerate(stream):
            if ref is not None and not isinstance(ref, str):
                raise TypeError(
                    f"{owner}: reference {i} of stream {k} should be a string, "
                    f"got {type(ref).__name__}"
                )
    if any(None in stream for stream in references):
        for i, refs in enumerate(zip(*references)):
            if all(ref is None for ref in refs):
                raise InputError(
                    f"{owner}: sentence {i} has no reference (every stream has None there); "
                    f"None marks a missing reference among several, and each sentence needs "
                    f"at least one"
                )


class ReferenceCache:
    """Per-sentence reference information and how many references each sentence has
    (``num_refs`` is -1 when the count varies between sentences: ``nrefs:var``)."""

    __slots__ = ("infos", "num_refs", "extra")

    def __init__(
        self, infos: list[Any], num_refs: int, extra: dict[str, Any] | None = None
    ) -> None:
        self.infos = infos
        self.num_refs = num_refs
        self.extra = {} if extra is None else extra


#: The largest n-gram order a metric accepts (BLEU's and chrF's statistics hold two or
#: three numbers per order for every sentence); the compiled core accepts the same range.
MAX_ORDER_LIMIT = 1000

#: Below this many sentences the per-sentence loop is faster than array set-up.
MIN_BATCH = 64


def use_batch(n_sentences: int, without_numpy: int) -> bool:
    """Whether a vectorised (numpy) engine pays off for ``n_sentences``: from ``MIN_BATCH``
    on once numpy is loaded; before that only from ``without_numpy`` sentences on, where the
    time saved also pays for importing numpy (about 0.1 s), which short command-line runs
    would otherwise spend on the import alone. Both paths give the same numbers."""
    if n_sentences < MIN_BATCH:
        return False
    return "numpy" in sys.modules or n_sentences >= without_numpy


#: Vectorised engines take a corpus this many sentences at a time: memory stays bounded
#: (a 200k-line corpus at once held every token list and int64 array together), a chunk's
#: arrays stay in the CPU caches and its n-gram ids small enough to skip a sort. Measured
#: on 200k real lines: 16,384 -> 4.4-5.1 s of BLEU statistics, 1,024 -> 2.7-3.0 s, 512 ->
#: 2.5-2.6 s; chrF 1.7x faster too.
BATCH_CHUNK = 1024


def chunks(n: int, size: int | None = None) -> list[tuple[int, int]]:
    """``(start, stop)`` of consecutive slices of ``range(n)``, ``size`` (default
    ``BATCH_CHUNK``) long but the last."""
    size = size or BATCH_CHUNK
    return [(start, min(start + size, n)) for start in range(0, n, size)]


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection while statistics are built: the per-sentence rows are
    many young containers without cycles, and collecting them on the way (a pass over
    every survivor each time a generation fills) costs ~10% on large corpora."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Metric(ABC):
    """Base class: subclasses define preprocessing, per-sentence statistics and scoring."""

    #: Display name, e.g. ``BLEU``.
    name: str = ""
    #: Whether a higher score is better (rankings; TER is an error rate).
    higher_is_better: bool = True
    #: The range a score is confined to, where it is not 0-100 (analysis bands).
    score_range: tuple[float, float] | None = None
    #: Whether the metric reads the source sentences (COMET and its kin).
    uses_source: bool = False
    #: Decimals its scores are shown with (:mod:`bleucli.precision`); None: ``-w``'s, as
    #: BLEU, chrF and TER on their 0-100 scale.
    decimals: int | None = None
    #: Abbreviations of the metric's own signature fields for ``--short``.
    signature_abbreviations: dict[str, str] = {}
    #: Fields a command adds to the signature (``reseg``: how the output was realigned);
    #: replaced, never mutated, so the class default stays empty.
    signature_extras: dict[str, str] = {}
    #: True when all statistics are integers, so partial sums add up exactly in any order.
    integer_stats: bool = False
    #: True when ``stats_rows_many`` shares work between systems (a batch engine), so that
    #: paired tests extract all systems together rather than one process per system.
    batches_systems: bool = False
    #: The ``-m`` name (``bleu``); the registry's key.
    key: str = ""
    #: Its options, declared once (:mod:`bleucli.metrics.options`): command-line flags,
    #: ranges, signature fields and SacreBLEU keywords come from here.
    OPTIONS: tuple[Option, ...] = ()
    #: Spellings of its own signature fields (long, ``--short``, SacreBLEU 1.x) -> long key.
    signature_keys: dict[str, str] = {}

    @classmethod
    def names_signature(cls, name: str) -> bool:
        """Whether a signature's metric name (``BLEU``, ``chrF2++``) is this metric's."""
        return name.lower() == cls.name.lower()

    @classmethod
    def options_from_signature(cls, fields: dict[str, str], name: str) -> dict[str, Any]:
        """Keyword arguments that reproduce a signature's fields: each declared option with
        a signature field, read by its kind (a metric with other conventions overrides)."""
        from bleucli.metrics.fields import flag_value, integer_value

        options: dict[str, Any] = {}
        for option in cls.OPTIONS:
            if option.signature is None or option.signature not in fields:
                continue
            value = fields[option.signature]
            if option.kind == "flag":
                options[option.keyword] = flag_value(option.signature, value)
            elif option.kind == "int":
                options[option.keyword] = integer_value(option.signature, value)
            elif option.kind == "float":
                try:
                    options[option.keyword] = float(value)
                except ValueError:
                    raise UsageError(
                        f"signature field {option.signature}:{value} is not a number"
                    ) from None
            else:
                options[option.keyword] = value
        return options

    def __init__(self, references: Sequence[Sequence[str | None]] | None = None) -> None:
        self.num_refs: int | None = None
        self._ref_cache: ReferenceCache | None = None
        #: Filled by bootstrap / paired tests so the signature can record them.
        self.n_bootstrap: int | None = None
        self.seed: int | str | None = None
        if references is not None:
            check_corpus_args(type(self).__name__, [""] * _stream_length(references), references)
            self._ref_cache = self.cache_references(references)

    # -- to implement ----------------------------------------------------------------------
    @abstractmethod
    def preprocess(self, sentence: str) -> str:
        """Normalise and tokenise one sentence (hypothesis or reference)."""

    @abstractmethod
    def reference_info(self, references: list[str]) -> Any:
        """What a sentence's (preprocessed) references contribute, e.g. n-gram counts."""

    @abstractmethod
    def sentence_stats(self, hypothesis: str, ref_info: Any) -> list[Number]:
        """Sufficient statistics of one preprocessed hypothesis against its references."""

    @abstractmethod
    def score_from_values(self, values: Sequence[Number]) -> Score:
        """Turn summed statistics into a score."""

    @abstractmethod
    def signature_fields(self) -> dict[str, Any]:
        """The metric's own signature fields, in SacreBLEU's order."""

    @property
    @abstractmethod
    def stats_length(self) -> int:
        """How many values one row of statistics holds under this configuration."""

    def impossible_stats(self, values: Sequence[Number]) -> str | None:
        """Metric-specific consistency of summed statistics (e.g. matches <= totals)."""
        return None

    def stats_problem(self, values: Sequence[Any]) -> str | None:
        """Why ``values`` cannot be summed statistics of this metric, or None: the right
        number of finite, non-negative values (whole numbers for integer statistics) that
        are consistent with each other. Guards merging statistics read from files."""
        import math

        if not isinstance(values, (list, tuple)):
            return f"values should be a list, got {type(values).__name__}"
        if len(values) != self.stats_length:
            return f"{len(values)} values, but this configuration has {self.stats_length}"
        for i, value in enumerate(values, 1):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return f"value {i} is {value!r}, not a number"
            if not math.isfinite(value) or value < 0:
                return f"value {i} is {value}, but statistics are counts (finite, >= 0)"
            if self.integer_stats and not float(value).is_integer():
                return f"value {i} is {value}, but {self.name} statistics are whole numbers"
        return self.impossible_stats(values)

    # -- shared machinery ---------------------------------------------------------------------
    def engine_flags(self, lowers: bool) -> int | None:
        """How the compiled batch engine (bleucli.batch) takes this metric's raw texts: its
        flags (1: it 13a-tokenises, 2: it lowercases; ``lowers``: the engine at hand can),
        or None when :meth:`preprocess_many` must run first."""
        return None

    def preprocess_many(self, sentences: Sequence[str]) -> list[str]:
        """:meth:`preprocess` of many sentences (engines may do it in one call)."""
        preprocess = self.preprocess
        return [preprocess(s) for s in sentences]

    def cache_references(self, references: Sequence[Sequence[str | None]]) -> ReferenceCache:
        """Preprocess every reference once; ``None`` entries mean "no reference here"."""
        if not any(None in stream for stream in references):  # the usual case, C-level loops
            streams = [self.preprocess_many(cast("Sequence[str]", stream)) for stream in references]
            infos = list(map(self.reference_info, map(list, zip(*streams))))
            self.num_refs = len(references)
            return ReferenceCache(infos, len(references))
        infos = []
        counts = set()
        streams = [
            self.preprocess_many([r for r in stream if r is not None])
            if None in stream
            else self.preprocess_many(cast("Sequence[str]", stream))
            for stream in references
        ]
        iterators = [iter(stream) for stream in streams]
        for refs in zip(*references):
            lines = [next(it) for it, r in zip(iterators, refs) if r is not None]
            counts.add(len(lines))
            infos.append(self.reference_info(lines))
        num_refs = counts.pop() if len(counts) == 1 else -1
        self.num_refs = num_refs
        return ReferenceCache(infos, num_refs)

    def _warn_hypotheses(self, hypotheses: Sequence[str]) -> None:
        """Hook for input sanity warnings (BLEU warns about tokenised input)."""
        return None

    def _reference_infos(
        self, hypotheses: Sequence[str], references: Sequence[Sequence[str | None]] | None
    ) -> list[Any]:
        """The per-sentence reference information for ``hypotheses``: from ``references``
        if given, else from the references cached at construction (lengths checked)."""
        owner = type(self).__name__
        check_corpus_args(owner, hypotheses, references)
        if references:
            cache = self.cache_references(references)
        elif self._ref_cache is not None:
            cache = self._ref_cache
            self.num_refs = cache.num_refs
            if len(cache.infos) != len(hypotheses):
                raise InputError(
                    f"{owner}: {len(hypotheses)} hypotheses but the cached references "
                    f"have {len(cache.infos)} lines"
                )
        else:
            raise InputError(f"{owner}: no references given and none cached")
        self._warn_hypotheses(hypotheses)
        return cache.infos

    def per_sentence_stats(
        self, hypotheses: Sequence[str], references: Sequence[Sequence[str | None]] | None
    ) -> list[list[Number]]:
        """Statistics for every sentence; the rows that corpus and resampling code share."""
        infos = self._reference_infos(hypotheses, references)
        with paused_gc():
            return self.stats_rows(self.preprocess_many(hypotheses), infos)

    def per_sentence_stats_many(self, systems: Sequence[Sequence[str]]) -> list[list[list[Number]]]:
        """Per system, the statistics of every sentence against the cached references (the
        paired tests): batch engines do the references' side once for all systems."""
        infos: list[Any] = []
        for hypotheses in systems:
            infos = self._reference_infos(hypotheses, None)
        with paused_gc():
            return self.stats_rows_many(
                [self.preprocess_many(hypotheses) for hypotheses in systems], infos
            )

    def stats_rows(self, hypotheses: list[str], ref_infos: Sequence[Any]) -> list[list[Number]]:
        """Statistics of one system's preprocessed hypotheses."""
        return self.stats_rows_many([hypotheses], ref_infos)[0]

    def stats_rows_many(
        self, systems: list[list[str]], ref_infos: Sequence[Any]
    ) -> list[list[list[Number]]]:
        """Statistics of several systems' preprocessed hypotheses against the same
        references, sentence by sentence; metrics with a batch engine override this."""
        stats = self.sentence_stats
        return [
            [stats(h, info) for h, info in zip(hypotheses, ref_infos)] for hypotheses in systems
        ]

    def extract_stats(
        self, hypotheses: Sequence[str], references: Sequence[Sequence[str | None]] | None = None
    ) -> Stats:
        """Summed statistics of a corpus: add the results of shards to score their union."""
        rows = self.per_sentence_stats(hypotheses, references)
        return Stats(self._config_key(), sum_rows(rows), len(rows))

    def resample_scores(self, sums: Any) -> Any:
        """The scores of bootstrap resamples (one row of float32 statistic sums each), as a
        numpy array: exactly ``score_from_values(row).score`` per row, as SacreBLEU computes
        them; metrics may override this with a vectorised equivalent."""
        import numpy as np

        return np.array([self.score_from_values(row).score for row in sums])

    def score_from_stats(self, stats: Stats) -> Score:
        if stats.config != self._config_key():
            raise InputError(
                f"statistics were computed with {stats.config!r}, not {self._config_key()!r}"
            )
        return self.score_from_values(list(stats.values))

    def corpus_score(
        self,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str | None]] | None,
        n_bootstrap: int = 1,
    ) -> Score:
        """Score a corpus; ``references`` is a list of streams, or ``None`` to use the cache."""
        return self.score_rows(self.per_sentence_stats(hypotheses, references), n_bootstrap)

    def score_rows(self, rows: Sequence[Sequence[Number]], n_bootstrap: int = 1) -> Score:
        """The corpus score of per-sentence statistics ``rows`` (their sum), with a
        bootstrap 95% interval from ``n_bootstrap`` resamples when more than one."""
        score = self.score_from_values(sum_rows(rows))
        if n_bootstrap > 1:
            from bleucli.stats.bootstrap import bootstrap_scores

            self.n_bootstrap = n_bootstrap
            self.seed, samples = bootstrap_scores(rows, self, n_bootstrap)
            score.estimate_ci(samples)
        return score

    def sentence_score(self, hypothesis: str, references: Sequence[str | None]) -> Score:
        """Score one sentence against one or more references: the corpus score of a
        one-line corpus, without the corpus plumbing (callers loop over millions)."""
        _check_sentence_args(type(self).__name__, hypothesis, references)
        if None in references:
            return self.corpus_score([hypothesis], [[r] for r in references])
        # hypothesis and references preprocess alike: one call; one line can never reach
        # the tokenised-input warning's threshold, so no check for it
        hyp, *refs = self.preprocess_many([hypothesis, *cast("Sequence[str]", references)])
        self.num_refs = len(refs)
        row = self.stats_rows([hyp], [self.reference_info(refs)])[0]
        return self.score_from_values(row)  # a single row is its own sum

    def get_signature(self) -> Signature:
        if self.num_refs is None:
            raise InputError(
                f"{type(self).__name__}: the number of references is unknown until "
                f"something has been scored"
            )
        signature = Signature(self.num_refs, self.signature_fields(), self.signature_abbreviations)
        signature.update("bs", self.n_bootstrap)
        signature.update("seed", self.seed)
        for key, value in self.signature_extras.items():
            signature.update(key, value)
        return signature

    def _config_key(self) -> str:
        return "|".join(f"{k}:{v}" for k, v in self.signature_fields().items())


def _stream_length(references: Any) -> int:
    try:
        return len(references[0])
    except (TypeError, IndexError, KeyError):
        return 0


def sum_rows(rows: Iterable[Sequence[Number]]) -> list[Number]:
    """Column sums of per-sentence statistics (the corpus statistics), added one row after
    the other as SacreBLEU does: ``sum()`` of floats is compensated on Python 3.12+, which
    would change TER's last bits."""
    from functools import reduce
    from operator import add

    if _NATIVE is not None and isinstance(rows, list):
        summed = _NATIVE.sum_int_rows(rows)  # None unless every value is a 64-bit int
        if summed is not None:
            return summed
    return [reduce(add, column, 0) for column in zip(*rows)]
