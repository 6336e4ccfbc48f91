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


def _truncated(owner: str, hypotheses: Sequence[str], references: Any,
               problem: InputError) -> tuple[list[str], list[list[Any]]]:
    """What ``zip(hypotheses, *references)`` gives SacreBLEU: every stream (a string
    counts as a stream of characters) cut to the shortest length."""
    streams = [list(stream) for stream in references]
    length = min([len(hypotheses), *(len(stream) for stream in streams)])
    sacrelogger.warning(f"{problem}; scoring the first {length} sentence(s), as "
                        f"SacreBLEU does")
    return list(hypotheses)[:length], [stream[:length] for stream in streams]


class CompatMetric:
    """SacreBLEU's metric interface over a bleucli metric (use as the first base)."""

    def _lenient(self, hypotheses: Sequence[str], references: Any) -> tuple[Any, Any]:
        if references is None:
            return hypotheses, references
        try:
            check_corpus_args(type(self).__name__, hypotheses, references)
        except InputError as problem:
            if "has no reference" in str(problem) or "no hypotheses" in str(problem) \
                    or "no reference streams" in str(problem):
                raise
            return _truncated(type(self).__name__, hypotheses, references, problem)
        return hypotheses, references

    def corpus_score(self, hypotheses: Sequence[str], references: Any,
                     n_bootstrap: int = 1) -> Score:
        hypotheses, references = self._lenient(hypotheses, references)
        return super().corpus_score(hypotheses, references, n_bootstrap)  # type: ignore[misc]

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> Score:
        if isinstance(references, str):  # SacreBLEU takes each character as a reference
            sacrelogger.warning(f"{type(self).__name__}: references should be a list of "
                                f"strings; taking each character as one, as SacreBLEU does")
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

    def _extract_corpus_statistics(self, hypotheses: Sequence[str],
                                   references: Any) -> list[list[Any]]:
        hypotheses, references = self._lenient(hypotheses, references)
        return [list(row) for row in
                self.per_sentence_stats(hypotheses, references)]  # type: ignore[attr-defined]

    def _compute_score_from_stats(self, stats: Sequence[Any]) -> Score:
        return self.score_from_values(stats)  # type: ignore[attr-defined]

    def _aggregate_and_compute(self, stats: Sequence[Sequence[Any]]) -> Score:
        return self.score_from_values(sum_rows(stats))  # type: ignore[attr-defined]

    def _cache_references(self, references: Any) -> Any:
        return self.cache_references(references)  # type: ignore[attr-defined]

    def _extract_reference_info(self, refs: Sequence[str]) -> Any:
        return self.reference_info([self.preprocess(r) for r in refs])  # type: ignore[attr-defined]

    def _compute_segment_statistics(self, hypothesis: str, ref_kwargs: Any) -> list[Any]:
        return list(self.sentence_stats(self.preprocess(hypothesis), ref_kwargs))  # type: ignore[attr-defined]
