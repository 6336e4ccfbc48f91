"""SacreBLEU's function-style API (``corpus_bleu`` & co.) over the metric classes.

The functions are made by :func:`function_api` for a set of metric classes, so that
``sacrebleu.compat`` (SacreBLEU's lenient classes) and this module (bleucli's strict ones)
share one definition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bleucli.metrics.bleu import BLEU, SMOOTH_DEFAULTS, BLEUScore
from bleucli.metrics.chrf import CHRF, CHRFScore
from bleucli.metrics.ter import TER, TERScore


def function_api(BLEU: Any, CHRF: Any, TER: Any) -> tuple[Callable[..., Any], ...]:  # noqa: N803
    """corpus_bleu, raw_corpus_bleu, sentence_bleu, corpus_chrf, sentence_chrf, corpus_ter
    and sentence_ter over the given classes, with SacreBLEU's parameters and defaults."""

    def corpus_bleu(
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        force: bool = False,
        lowercase: bool = False,
        tokenize: str = "13a",
        use_effective_order: bool = False,
    ) -> BLEUScore:
        metric = BLEU(
            lowercase=lowercase,
            force=force,
            tokenize=tokenize,
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            effective_order=use_effective_order,
        )
        return metric.corpus_score(hypotheses, references)

    def raw_corpus_bleu(
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        smooth_value: float | None = SMOOTH_DEFAULTS["floor"],
    ) -> BLEUScore:
        return corpus_bleu(
            hypotheses,
            references,
            smooth_method="floor",
            smooth_value=smooth_value,
            force=True,
            tokenize="none",
            use_effective_order=True,
        )

    def sentence_bleu(
        hypothesis: str,
        references: Sequence[str],
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        lowercase: bool = False,
        tokenize: str = "13a",
        use_effective_order: bool = True,
    ) -> BLEUScore:
        metric = BLEU(
            lowercase=lowercase,
            tokenize=tokenize,
            force=False,
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            effective_order=use_effective_order,
        )
        return metric.sentence_score(hypothesis, references)

    def corpus_chrf(
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        char_order: int = CHRF.CHAR_ORDER,
        word_order: int = CHRF.WORD_ORDER,
        beta: int = CHRF.BETA,
        remove_whitespace: bool = True,
        eps_smoothing: bool = False,
    ) -> CHRFScore:
        metric = CHRF(
            char_order=char_order,
            word_order=word_order,
            beta=beta,
            whitespace=not remove_whitespace,
            eps_smoothing=eps_smoothing,
        )
        return metric.corpus_score(hypotheses, references)

    def sentence_chrf(
        hypothesis: str,
        references: Sequence[str],
        char_order: int = CHRF.CHAR_ORDER,
        word_order: int = CHRF.WORD_ORDER,
        beta: int = CHRF.BETA,
        remove_whitespace: bool = True,
        eps_smoothing: bool = False,
    ) -> CHRFScore:
        metric = CHRF(
            char_order=char_order,
            word_order=word_order,
            beta=beta,
            whitespace=not remove_whitespace,
            eps_smoothing=eps_smoothing,
        )
        return metric.sentence_score(hypothesis, references)

    def corpus_ter(
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
    ) -> TERScore:
        metric = TER(
            normalized=normalized,
            no_punct=no_punct,
            asian_support=asian_support,
            case_sensitive=case_sensitive,
        )
        return metric.corpus_score(hypotheses, references)

    def sentence_ter(
        hypothesis: str,
        references: Sequence[str],
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
    ) -> TERScore:
        metric = TER(
            normalized=normalized,
            no_punct=no_punct,
            asian_support=asian_support,
            case_sensitive=case_sensitive,
        )
        return metric.sentence_score(hypothesis, references)

    return (
        corpus_bleu,
        raw_corpus_bleu,
        sentence_bleu,
        corpus_chrf,
        sentence_chrf,
        corpus_ter,
        sentence_ter,
    )


(
    corpus_bleu,
    raw_corpus_bleu,
    sentence_bleu,
    corpus_chrf,
    sentence_chrf,
    corpus_ter,
    sentence_ter,
) = function_api(BLEU, CHRF, TER)

__all__ = [
    "corpus_bleu",
    "raw_corpus_bleu",
    "sentence_bleu",
    "corpus_chrf",
    "sentence_chrf",
    "corpus_ter",
    "sentence_ter",
    "function_api",
    "BLEUScore",
    "CHRFScore",
    "TERScore",
    "Sequence",
]
