"""Sentence scores of many pairs in one call, for the loops that score millions of them:
minimum Bayes risk (MBR) decoding, RL rewards, reranking.

:func:`sentence_scores` scores aligned hypotheses against their references (one score
per hypothesis), :func:`pairwise` every hypothesis of a group against every reference of
that group (fastchrf's (batch, hypotheses, references) layout), :func:`mbr` picks the
candidate with the highest expected utility. Every score is exactly
``METRIC(**options).sentence_score(hypothesis, references).score``: each distinct sentence
is preprocessed once, then the compiled core counts its n-grams once and scores the pairs
on ``threads`` threads without the GIL (the pure-Python engine, the specification, gives
the same numbers). The call owns what it reads before any thread starts: another thread
changing the caller's lists meanwhile changes nothing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any, cast

from bleucli.errors import ConfigError, InputError
from bleucli.native import native as _NATIVE

if TYPE_CHECKING:
    import numpy as np

    from bleucli.metrics.base import Metric

__all__ = ["sentence_scores", "pairwise", "mbr", "MBRResult", "scorer"]


def _is_neural(metric: str | Metric) -> bool:
    """Whether ``metric`` (a name or an instance) reads sources (COMET, ...)."""
    if isinstance(metric, str):
        from bleucli.metrics import uses_source

        return uses_source(metric)
    return metric.uses_source


def scorer(metric: str | Metric, options: dict[str, Any]) -> Metric:
    """The metric object whose sentence scores a batch gives: a name (``bleu``, ``chrf``,
    ``ter``, any case) with its constructor's keywords, or a metric object. BLEU takes
    SacreBLEU's sentence-level default, ``effective_order=True``, unless told otherwise."""
    from bleucli.metrics.base import Metric

    if isinstance(metric, Metric):
        if options:
            raise ConfigError("give the options to the metric object, or a metric name with them")
        return metric
    if not isinstance(metric, str):
        raise TypeError(f"metric should be a name (bleu, chrf, ter), got {type(metric).__name__}")
    from bleucli.metrics import metric_class

    cls = metric_class(metric)
    if metric.lower() == "bleu":
        options = {"effective_order": True, **options}
    try:
        return cls(**options)
    except TypeError as err:  # an unknown keyword: one line that says which
        raise ConfigError(f"{metric}: {err}") from None


def thread_count(threads: int) -> int:
    """``threads`` as a positive count: 0 means one per CPU."""
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ConfigError(f"threads must be a whole number >= 0 (0: one per CPU), got {threads!r}")
    return threads or _cpu_count()


@functools.cache
def _cpu_count() -> int:
    """The CPU count, asked once: os.cpu_count() reads a file each time (~15 us), which a
    reward function called every training step would pay on every call."""
    return os.cpu_count() or 1


def _strings(owner: str, argument: str, values: Any, allow_none: bool = False) -> list:
    """``values`` as a list of str (``None`` too where allowed), or a TypeError naming the
    argument and the first index that is not."""
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(
            f"{owner}: {argument} should be a list of strings, got {type(values).__name__}"
        )
    values = list(values)
    allowed = {str, type(None)} if allow_none else {str}
    if not set(map(type, values)) <= allowed:
        for i, value in enumerate(values):
            if type(value) not in allowed and not isinstance(value, str):
                kind = "a string or None" if allow_none else "a string"
                raise TypeError(
                    f"{owner}: {argument}[{i}] should be {kind}, got {type(value).__name__}"
                )
    return values


class _Texts:
    """The distinct sentences of a call, each preprocessed once by the metric."""

    def __init__(self, metric: Metric, *streams: list) -> None:
        raw = list(dict.fromkeys(chain.from_iterable(streams)))
        if None in raw:
            raw.remove(None)
        self.raw = raw
        self.position = {text: k for k, text in enumerate(raw)}
        self.preprocessed = metric.preprocess_many(raw) if raw else []

    def indices(self, texts: list[str]) -> Any:
        import numpy as np

        return np.fromiter(map(self.position.__getitem__, texts), dtype=np.int64, count=len(texts))


def _for_engine(
    metric: Metric, streams: list[list[str | None]], lowers: bool
) -> tuple[list[list], int]:
    """The streams as the compiled engine takes them (``None`` kept where a reference is
    missing) and its flags (1: it 13a-tokenises, 2: it lowercases): raw texts where the
    engine preprocesses them itself (``lowers``: this engine can lowercase), else
    preprocessed here."""
    flags = metric.engine_flags(lowers)
    if flags is not None:
        return streams, flags
    prepared: list[list] = []
    for stream in streams:
        if None in stream:
            present = [text for text in stream if text is not None]
            it = iter(metric.preprocess_many(present))
            prepared.append([None if text is None else next(it) for text in stream])
        else:
            prepared.append(metric.preprocess_many(cast("list[str]", stream)))
    return prepared, 0


def _check_ter_sizes(
    owner: str, metric: Metric, texts: _Texts, jobs: Sequence[tuple[Sequence[str], Sequence[str]]]
) -> None:
    """TER's limit on a line pair (words x words), checked before any work, naming the job
    (a hypothesis and its references, or a group's hypotheses and references)."""
    from bleucli.metrics.ter import MAX_WORD_PAIRS, TER

    if not isinstance(metric, TER):
        return
    words = [len(text.split()) for text in texts.preprocessed]
    position = texts.position
    for j, (hyps, refs) in enumerate(jobs):
        longest = max((words[position[h]] for h in hyps), default=0)
        for ref in refs:
            if longest * words[position[ref]] > MAX_WORD_PAIRS:
                raise InputError(
                    f"{owner}: item {j}: {longest} x {words[position[ref]]} words is more than "
                    f"{MAX_WORD_PAIRS} word pairs: beyond TER's limit per line pair; split "
                    f"long lines into sentences"
                )


def _engine_call(owner: str, function: Any, *args: Any) -> Any:
    """Call the compiled engine; its one data error (TER's limit on a line pair's words) as
    an InputError that says what to do."""
    try:
        return function(*args)
    except ValueError as err:
        if "word pairs" not in str(err):
            raise
        raise InputError(
            f"{owner}: {err}: beyond TER's limit per line pair; split long lines into sentences"
        ) from None


def _native_spec(metric: Metric) -> tuple[int, tuple] | None:
    """What the compiled batch engine needs to know of the metric, or None when it cannot
    score this configuration (then the pure-Python engine does)."""
    spec = getattr(metric, "batch_spec", None)
    return spec() if _NATIVE is not None and spec is not None else None


def sentence_scores(
    metric: str | Metric,
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str | None]],
    *,
    threads: int = 0,
    **options: Any,
) -> np.ndarray:
    """One score per hypothesis, against its references: ``references`` is a list of
    reference streams as for ``corpus_score`` (stream k holds every hypothesis' k-th
    reference; ``None`` where a hypothesis has fewer). A float64 array, each value exactly
    ``METRIC(**options).sentence_score(h, refs).score``.

    >>> sentence_scores("chrf", ["the cat sat"], [["the cat sat down"]]).round(2).tolist()
    [66.02]
    """
    import numpy as np

    owner = "sentence_scores"
    sources = options.pop("sources", None)
    if _is_neural(metric):  # COMET and its kin: the model scores the batch in one pass
        neural = scorer(metric, options)
        if references is None or (isinstance(references, Sequence) and not references):
            hyps, streams = _strings(owner, "hypotheses", hypotheses), []  # type: ignore[var-annotated]  # QE
        else:
            hyps, streams = _aligned_inputs(owner, hypotheses, references)
        first = [r if r is not None else "" for r in streams[0]] if streams else None
        return np.array(neural.predict(hyps, first, sources).scores, dtype=np.float64)  # type: ignore[attr-defined]
    if sources is not None:
        raise ConfigError(f"{owner}: sources are for neural metrics (comet, cometkiwi, xcomet)")
    m = None
    if (
        type(hypotheses) is list
        and type(references) is list
        and references
        and all(type(s) is list and len(s) == len(hypotheses) for s in references)
    ):  # plain lists: the compiled engine checks every item itself, before any work
        m = scorer(metric, options)
        spec = _native_spec(m)
        if spec is not None and m.engine_flags(True) is not None:
            return _aligned_native(owner, m, spec, hypotheses, references, thread_count(threads))
    hyps, streams = _aligned_inputs(owner, hypotheses, references)
    count = thread_count(threads)
    if m is None:
        m = scorer(metric, options)
    if not hyps:
        return np.zeros(0)
    spec = _native_spec(m)
    if spec is not None:
        return _aligned_native(owner, m, spec, hyps, streams, count)
    m.num_refs = len(streams)
    rows = [[ref for ref in refs if ref is not None] for refs in zip(*streams)]
    texts = _Texts(m, hyps, *streams)
    _check_ter_sizes(owner, m, texts, [([h], refs) for h, refs in zip(hyps, rows)])
    return np.array(_python_scores(m, texts, hyps, rows), dtype=np.float64)


def _aligned_native(
    owner: str,
    metric: Metric,
    spec: tuple[int, tuple],
    hyps: list,
    streams: list[list],
    count: int,
) -> np.ndarray:
    """Scores by the compiled engine (``spec``: the metric's), which owns each string
    before it starts. Raw lists may come straight from the caller when the engine
    preprocesses this metric's texts itself: an item of the wrong type or a job without
    references then fails in the engine, and the checks of :func:`_aligned_inputs` name
    the argument and index."""
    import numpy as np

    assert _NATIVE is not None
    metric.num_refs = len(streams)
    prepared, flags = _for_engine(metric, [hyps, *streams], lowers=True)
    out = np.empty(len(hyps))
    try:
        _engine_call(
            owner,
            _NATIVE.batch_aligned,
            spec[0],
            prepared[0],
            prepared[1:],
            spec[1],
            flags,
            count,
            out,
        )
    except (TypeError, ValueError) as err:
        if not str(err).startswith("batch:"):
            raise
        _aligned_inputs(owner, hyps, streams)  # raises the error that names the item
        raise InputError(f"{owner}: {str(err).removeprefix('batch: ')}") from None
    return out


def _aligned_inputs(owner: str, hypotheses: Any, references: Any) -> tuple[list, list[list]]:
    """The hypotheses and reference streams as lists, or the error naming the argument
    and index that is wrong."""
    hyps = _strings(owner, "hypotheses", hypotheses)
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError(f"{owner}: references should be a list of reference streams")
    if references and all(isinstance(r, str) for r in references):
        raise InputError(
            f"{owner}: references should be a list of reference streams (lists "
            f"of strings), got a flat list of {len(references)} strings; for one "
            f"reference per hypothesis pass [references]"
        )
    streams = [
        _strings(owner, f"references[{k}]", stream, allow_none=True)
        for k, stream in enumerate(references)
    ]
    if hyps and not streams:
        raise InputError(f"{owner}: there are no reference streams; pass [references]")
    for k, stream in enumerate(streams):
        if len(stream) != len(hyps):
            raise InputError(
                f"{owner}: references[{k}] has {len(stream)} entries but there "
                f"are {len(hyps)} hypotheses"
            )
    if any(None in stream for stream in streams):  # a C-level scan; the loop only if needed
        for i, refs in enumerate(zip(*streams)):
            if all(ref is None for ref in refs):
                raise InputError(f"{owner}: hypothesis {i} has no reference (None in every stream)")
    return hyps, streams


def _python_scores(
    metric: Metric, texts: _Texts, hyps: list[str], rows: list[list[str]]
) -> list[float]:
    """The specification: each job through the metric's own sentence statistics."""
    pre, position = texts.preprocessed, texts.position
    infos: dict[tuple[str, ...], Any] = {}
    scores = []
    for hyp, refs in zip(hyps, rows):
        key = tuple(refs)
        info = infos.get(key)
        if info is None:
            info = infos[key] = metric.reference_info([pre[position[r]] for r in refs])
        stats = metric.sentence_stats(pre[position[hyp]], info)
        scores.append(metric.score_from_values(stats).score)
    return scores


def pairwise(
    metric: str | Metric,
    hypotheses: Sequence[Sequence[str]],
    references: Sequence[Sequence[str]],
    *,
    threads: int = 0,
    **options: Any,
) -> np.ndarray | list[np.ndarray]:
    """For each group b, the matrix of sentence scores of every hypothesis of
    ``hypotheses[b]`` against every single reference of ``references[b]`` (cell [i, j]:
    hypothesis i scored with reference j alone). Groups of equal sizes give one (B, N, M)
    float64 array; groups of different sizes a list of 2-D arrays.

    >>> pairwise("bleu", [["a b c d", "a b"]], [["a b c d", "b c"]]).round(1).tolist()
    [[[100.0, 31.9], [36.8, 50.0]]]
    """
    import numpy as np

    owner = "pairwise"
    if isinstance(hypotheses, str) or not isinstance(hypotheses, Sequence):
        raise TypeError(f"{owner}: hypotheses should be a list of groups (lists of strings)")
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError(f"{owner}: references should be a list of groups (lists of strings)")
    hyp_groups = [_strings(owner, f"hypotheses[{b}]", group) for b, group in enumerate(hypotheses)]
    ref_groups = [_strings(owner, f"references[{b}]", group) for b, group in enumerate(references)]
    if len(hyp_groups) != len(ref_groups):
        raise InputError(
            f"{owner}: {len(hyp_groups)} groups of hypotheses but "
            f"{len(ref_groups)} groups of references; one of each per source"
        )
    count = thread_count(threads)
    sources = options.pop("sources", None)
    m = scorer(metric, options)
    m.num_refs = 1
    shapes = [(len(h), len(r)) for h, r in zip(hyp_groups, ref_groups)]
    if _is_neural(m):  # COMET and its kin: each text encoded once, the head over the pairs
        found = m.pairwise(hyp_groups, ref_groups, sources)  # type: ignore[attr-defined]
        if len(set(shapes)) <= 1:
            n, k = shapes[0] if shapes else (0, 0)
            return np.array(found, dtype=np.float64).reshape(len(shapes), n, k)
        return found
    if sources is not None:
        raise ConfigError(f"{owner}: sources are for neural metrics (comet, ...)")
    spec = _native_spec(m)
    if spec is not None:
        distinct = list(
            dict.fromkeys(chain(chain.from_iterable(hyp_groups), chain.from_iterable(ref_groups)))
        )
        position = {text: k for k, text in enumerate(distinct)}
        members = list(chain.from_iterable(chain.from_iterable(zip(hyp_groups, ref_groups))))
        index = np.fromiter(map(position.__getitem__, members), dtype=np.int64, count=len(members))
        groups = np.zeros((len(shapes), 4), dtype=np.int64)
        at = 0
        for b, (n, k) in enumerate(shapes):
            groups[b] = (at, n, at + n, k)
            at += n + k
        (texts_for_engine,), flags = _for_engine(m, [distinct], lowers=False)
        flat = np.empty(sum(n * k for n, k in shapes))
        assert _NATIVE is not None  # a spec comes only with the compiled core
        _engine_call(
            owner,
            _NATIVE.batch_pairwise,
            spec[0],
            texts_for_engine,
            groups.ravel(),
            index,
            spec[1],
            bool(flags),
            count,
            flat,
        )
    else:
        texts = _Texts(m, *hyp_groups, *ref_groups)
        _check_ter_sizes(owner, m, texts, list(zip(hyp_groups, ref_groups)))
        cells = [(h, [r]) for hyps, refs in zip(hyp_groups, ref_groups) for h in hyps for r in refs]
        flat = np.array(
            _python_scores(m, texts, [h for h, _ in cells], [refs for _, refs in cells]),
            dtype=np.float64,
        )
    matrices, at = [], 0
    for n, k in shapes:
        matrices.append(flat[at : at + n * k].reshape(n, k))
        at += n * k
    if len(set(shapes)) <= 1:
        n, k = shapes[0] if shapes else (0, 0)
        return flat.reshape(len(shapes), n, k)
    return matrices


class MBRResult:
    """What :func:`mbr` chose: per source the index of the best sample (``best``), every
    sample's expected utility (``utilities``: a (B, N) array when every source has N
    samples, else a list of arrays), the chosen strings (``chosen``) and the signature
    naming metric and options."""

    def __init__(
        self,
        best: list[int],
        utilities: Any,
        chosen: list[str],
        signature: str,
        higher_is_better: bool,
    ) -> None:
        self.best = best
        self.utilities = utilities
        self.chosen = chosen
        self.signature = signature
        self.higher_is_better = higher_is_better

    def __repr__(self) -> str:
        return f"MBRResult(best={self.best!r}, signature={self.signature!r})"


def _expected_utility(matrix: np.ndarray, exclude_self: bool) -> np.ndarray:
    """Row means, summed left to right (as a loop would), leaving out the diagonal when the
    samples are their own pseudo-references; NaN where nothing is left to average."""
    import numpy as np

    n, k = matrix.shape
    if exclude_self:
        keep = ~np.eye(n, k, dtype=bool)
        values = [row[mask] for row, mask in zip(matrix, keep)]
    else:
        values = list(matrix)
    out = np.full(n, np.nan)
    for i, row in enumerate(values):
        if len(row):
            out[i] = np.cumsum(row)[-1] / len(row)
    return out


def mbr(
    samples: Sequence[Sequence[str]],
    metric: str | Metric = "chrf",
    *,
    pseudo_references: Sequence[Sequence[str]] | None = None,
    threads: int = 0,
    **options: Any,
) -> MBRResult:
    """Minimum Bayes risk selection: per source, the sample with the highest expected
    utility, the mean sentence score against the pseudo-references (by default the other
    samples of that source; TER, an error rate, picks the lowest). Ties go to the first
    sample; a source with a single sample and no pseudo-references keeps it (utility NaN).
    """
    import numpy as np

    owner = "mbr"
    if isinstance(samples, str) or not isinstance(samples, Sequence):
        raise TypeError(f"{owner}: samples should be a list of groups (lists of strings)")
    groups = [_strings(owner, f"samples[{b}]", group) for b, group in enumerate(samples)]
    for b, group in enumerate(groups):
        if not group:
            raise InputError(f"{owner}: samples[{b}] is empty; every source needs a sample")
    default = pseudo_references is None
    if default:
        references = groups
    else:
        if isinstance(pseudo_references, str) or not isinstance(pseudo_references, Sequence):
            raise TypeError(f"{owner}: pseudo_references should be a list of groups")
        references = [
            _strings(owner, f"pseudo_references[{b}]", group)
            for b, group in enumerate(pseudo_references)
        ]
        if len(references) != len(groups):
            raise InputError(
                f"{owner}: {len(groups)} sources of samples but "
                f"{len(references)} of pseudo_references"
            )
        for b, group in enumerate(references):
            if not group:
                raise InputError(f"{owner}: pseudo_references[{b}] is empty")
    sources = options.pop("sources", None)
    m = scorer(metric, options)
    matrices = pairwise(
        m,
        groups,
        references,
        threads=threads,
        **({"sources": sources} if sources is not None else {}),
    )
    utilities = [_expected_utility(matrix, default) for matrix in matrices]
    sign = 1.0 if m.higher_is_better else -1.0
    best = []
    for values in utilities:
        ranked = np.where(np.isnan(values), -np.inf, sign * values)
        best.append(int(np.argmax(ranked)))  # the first of equals
    chosen = [group[k] for group, k in zip(groups, best)]
    same = len({len(u) for u in utilities}) <= 1
    table: Any = np.array(utilities) if same and utilities else utilities
    return MBRResult(best, table, chosen, mbr_signature(m, default), m.higher_is_better)


def mbr_signature(metric: Metric, default_references: bool) -> str:
    """``MBR|metric:chrF2|utility:mean|pseudo:others|<the metric's fields>|version:...``."""
    from bleucli.metrics.base import VERSION_FIELD

    fields = metric.signature_fields()
    name = _metric_name(metric)
    parts = [
        f"metric:{name}",
        "utility:mean",
        f"pseudo:{'others' if default_references else 'given'}",
    ]
    for key, value in fields.items():
        if isinstance(value, bool):
            value = "yes" if value else "no"
        parts.append(f"{key}:{value}")
    return "MBR|" + "|".join(parts) + f"|version:{VERSION_FIELD}"


def _metric_name(metric: Metric) -> str:
    """The display name of the scores (``BLEU``, ``chrF2++``, ``TER``)."""
    return metric.score_from_values([0] * metric.stats_length).name
