"""``sacrebleu.metrics.base``: the metric base class, with SacreBLEU's lenient handling of
argument shapes layered over bleucli's metrics.

bleucli's own API refuses references that are not a list of streams as long as the
hypotheses; SacreBLEU silently truncates them (it zips hypotheses with the streams). Under
the ``sacrebleu`` name the same inputs are accepted with SacreBLEU's result, and a warning
says what was truncated.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from bleucli.errors import InputError
from bleucli.metrics.base import Metric, Score, Signature, check_corpus_args, sum_rows

sacrelogger = logging.getLogger("sacrebleu")

__all__ = ["Metric", "Score", "Signature", "CompatMetric", "sacrelogger"]


#: Lenient shapes already warned about in this process (one warning per kind: callers
#: such as fairseq's translation_moe scorer pass strings once per sentence).
_WARNED: set[str] = set()


def warn_once(kind: str, message: str) -> None:
    """Log ``message`` on SacreBLEU's logger the first time a ``kind`` of lenient input
    is met in this process."""
    if kind not in _WARNED:
        _WARNED.add(kind)
        sacrelogger.warning(f"{message} (said once per process)")


def _truncated(
    owner: str, hypotheses: Sequence[str], references: Any, problem: Exception, kind: str
) -> tuple[list[str], list[list[Any]]]:
    """What ``zip(hypotheses, *references)`` gives SacreBLEU: every stream (a string
    counts as a stream of characters, hypotheses too) cut to the shortest length."""
    streams = [list(stream) for stream in references]
    length = min([len(hypotheses), *(len(stream) for stream in streams)])
    warn_once(
        f"{owner}:{kind}", f"{problem}; scoring the first {length} sentence(s) as SacreBLEU does"
    )
    return list(hypotheses)[:length], [stream[:length] for stream in streams]


class CompatMetric:
    """SacreBLEU's metric interface over a bleucli metric (use as the first base)."""

    num_refs: int | None

    def _lenient(self, hypotheses: Sequence[str], references: Any) -> tuple[Any, Any]:
        owner = type(self).__name__
        if references is None:
            return hypotheses, references
        try:
            check_corpus_args(owner, hypotheses, references)
        except InputError as problem:
            if (
                "has no reference" in str(problem)
                or "no hypotheses" in str(problem)
                or "no reference streams" in str(problem)
            ):
                raise
            return _truncated(owner, hypotheses, references, problem, "shape")
        except TypeError as problem:
            # SacreBLEU iterates a string: its characters are the hypotheses or the
            # reference streams (fairseq's translation_moe scorer relies on it)
            if not (isinstance(hypotheses, str) or isinstance(references, str)):
                raise
            return _truncated(owner, hypotheses, references, problem, "string")
        return hypotheses, references

    def corpus_score(
        self, hypotheses: Sequence[str], references: Any, n_bootstrap: int = 1
    ) -> Score:
        hypotheses, references = self._lenient(hypotheses, references)
        return super().corpus_score(hypotheses, references, n_bootstrap)  # type: ignore[misc]

    def sentence_score(self, hypothesis: str, references: Any) -> Any:
        if isinstance(references, str):  # SacreBLEU takes each character as a reference
            warn_once(
                f"{type(self).__name__}:sentence-str",
                f"{type(self).__name__}: references should be a list of strings; "
                f"taking each character as one, as SacreBLEU does",
            )
            references = list(references)
        return super().sentence_score(hypothesis, references)  # type: ignore[misc]

    # -- SacreBLEU's underscored methods that clients call -------------------------------
    def _check_corpus_score_args(self, hyps: Sequence[str], refs: Any) -> None:
        check_corpus_args(type(self).__name__, hyps, refs)

    def _check_sentence_score_args(self, hyp: str, refs: Sequence[str]) -> None:
        from bleucli.metrics.base import _check_sentence_args

        _check_sentence_args(type(self).__name__, hyp, refs)

    def _preprocess_segment(self, sent: str) -> str:
        return self.preprocess(sent)  # type: ignore[attr-defined]

    def _extract_corpus_statistics(
        self, hypotheses: Sequence[str], references: Any
    ) -> list[list[Any]]:
        hypotheses, references = self._lenient(hypotheses, references)
        return [list(row) for row in self.per_sentence_stats(hypotheses, references)]  # type: ignore[attr-defined]

    def _compute_score_from_stats(self, stats: Sequence[Any]) -> Score:
        return self.score_from_values(stats)  # type: ignore[attr-defined]

    def _aggregate_and_compute(self, stats: Sequence[Sequence[Any]]) -> Score:
        return self.score_from_values(sum_rows(stats))  # type: ignore[attr-defined]

    def _cache_references(self, references: Sequence[Sequence[str | None]]) -> list[Any]:
        """SacreBLEU's reference cache: per segment, what :meth:`_extract_reference_info`
        makes of its preprocessed references (``None`` entries dropped); sets ``num_refs``
        (-1 when it varies). MBR libraries (mbrs) read these structures directly."""
        cache = []
        counts = set()
        for refs in zip(*references):
            lines = [self._preprocess_segment(ref) for ref in refs if ref is not None]
            counts.add(len(lines))
            cache.append(self._extract_reference_info(lines))
        self.num_refs = counts.pop() if len(counts) == 1 else -1
        return cache

    def _extract_reference_info(self, refs: Sequence[str]) -> dict[str, Any]:
        """SacreBLEU's per-segment reference information (a dict passed to
        :meth:`_compute_segment_statistics`); each metric defines its own."""
        raise NotImplementedError

    def _compute_segment_statistics(self, hypothesis: str, ref_kwargs: dict[str, Any]) -> list[Any]:
        """Statistics of a preprocessed hypothesis against SacreBLEU's reference dict."""
        raise NotImplementedError
