"""SacreBLEU's function-style API (``corpus_bleu`` & co.) over the metric classes."""

from __future__ import annotations

from collections.abc import Sequence

from bleucli.metrics.bleu import BLEU, SMOOTH_DEFAULTS, BLEUScore
from bleucli.metrics.chrf import CHRF, CHRFScore
from bleucli.metrics.ter import TER, TERScore


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


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]],
                char_order: int = CHRF.CHAR_ORDER, word_order: int = CHRF.WORD_ORDER,
                beta: int = CHRF.BETA, remove_whitespace: bool = True,
                eps_smoothing: bool = False) -> CHRFScore:
    """Corpus chrF (chrF++ with ``word_order=2``) against a list of reference streams."""
    metric = CHRF(char_order=char_order, word_order=word_order, beta=beta,
                  whitespace=not remove_whitespace, eps_smoothing=eps_smoothing)
    return metric.corpus_score(hypotheses, references)  # type: ignore[return-value]


def sentence_chrf(hypothesis: str, references: Sequence[str | None],
                  char_order: int = CHRF.CHAR_ORDER, word_order: int = CHRF.WORD_ORDER,
                  beta: int = CHRF.BETA, remove_whitespace: bool = True,
                  eps_smoothing: bool = False) -> CHRFScore:
    """chrF of one sentence against its references."""
    metric = CHRF(char_order=char_order, word_order=word_order, beta=beta,
                  whitespace=not remove_whitespace, eps_smoothing=eps_smoothing)
    return metric.sentence_score(hypothesis, references)  # type: ignore[return-value]


def corpus_ter(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]],
               normalized: bool = False, no_punct: bool = False, asian_support: bool = False,
               case_sensitive: bool = False) -> TERScore:
    """Corpus TER against a list of reference streams."""
    metric = TER(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                 case_sensitive=case_sensitive)
    return metric.corpus_score(hypotheses, references)  # type: ignore[return-value]


def sentence_ter(hypothesis: str, references: Sequence[str | None], normalized: bool = False,
                 no_punct: bool = False, asian_support: bool = False,
                 case_sensitive: bool = False) -> TERScore:
    """TER of one sentence against its references."""
    metric = TER(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                 case_sensitive=case_sensitive)
    return metric.sentence_score(hypothesis, references)  # type: ignore[return-value]
