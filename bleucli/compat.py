"""SacreBLEU's function-style API (``corpus_bleu`` & co.) over the metric classes."""

from __future__ import annotations

from collections.abc import Sequence

from bleucli.metrics.bleu import BLEU, SMOOTH_DEFAULTS, BLEUScore


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]],
                smooth_method: str = "exp", smooth_value: float | None = None,
                force: bool = False, lowercase: bool = False, tokenize: str = "13a",
                use_effective_order: bool = False) -> BLEUScore:
    """Corpus BLEU of ``hypotheses`` against a list of reference streams."""
    metric = BLEU(lowercase=lowercase, force=force, tokenize=tokenize,
                  smooth_method=smooth_method, smooth_value=smooth_value,
                  effective_order=use_effective_order)
    return metric.corpus_score(hypotheses, references)  # type: ignore[return-value]


def raw_corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]],
                    smooth_value: float | None = SMOOTH_DEFAULTS["floor"]) -> BLEUScore:
    """BLEU on text as given: no tokenisation, floor smoothing, effective order."""
    return corpus_bleu(hypotheses, references, smooth_method="floor",
                       smooth_value=smooth_value, force=True, tokenize="none",
                       use_effective_order=True)


def sentence_bleu(hypothesis: str, references: Sequence[str | None],
                  smooth_method: str = "exp", smooth_value: float | None = None,
                  lowercase: bool = False, tokenize: str = "13a",
                  use_effective_order: bool = True) -> BLEUScore:
    """BLEU of one sentence against its references (effective order on by default)."""
    metric = BLEU(lowercase=lowercase, tokenize=tokenize, smooth_method=smooth_method,
                  smooth_value=smooth_value, effective_order=use_effective_order)
    return metric.sentence_score(hypothesis, references)
