"""``sacrebleu.significance``: paired tests with SacreBLEU's classes, on bleucli's engine
(the same seeded draws, so the same p-values, means and intervals)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from bleucli.stats.paired import DEFAULT_SAMPLES, PairedResult, estimate_ci
from bleucli.stats.paired import p_value as _p_value

sacrelogger = logging.getLogger("sacrebleu")
IS_WINDOWS = os.name == "nt"


class Result:
    """A system's score under one metric, with its p-value against the baseline and, for
    the bootstrap test, the resampled mean and 95% half-interval."""

    def __init__(
        self,
        score: float,
        p_value: float | None = None,
        mean: float | None = None,
        ci: float | None = None,
    ) -> None:
        self.score = score
        self.p_value = p_value
        self.mean = mean
        self.ci = ci

    def __repr__(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.__dict__.items())


def _result(paired: PairedResult) -> Result:
    def plain(value: Any) -> Any:
        return None if value is None else float(value)

    return Result(float(paired.score), plain(paired.p_value), plain(paired.mean), plain(paired.ci))


def _bootstrap_resample(stats: list[list[Any]], metric: Any, n_samples: int = 1000):
    """Seed label and the scores of ``n_samples`` bootstrap resamples of ``stats``."""
    from bleucli.stats.bootstrap import bootstrap_scores

    return bootstrap_scores(stats, metric, n_samples)


def _compute_p_value(stats, real_difference: float) -> float:
    return _p_value(stats, real_difference)


class PairedTest:
    """SacreBLEU's ``PairedTest(named_systems, metrics, references, test_type, n_samples,
    n_ar_confidence, n_jobs)``; calling it returns ``(signatures, scores)`` where
    ``scores["System"]`` names the systems and ``scores[metric]`` holds a ``Result`` each."""

    _DEFAULT_SAMPLES = dict(DEFAULT_SAMPLES)

    def __init__(
        self,
        named_systems: list[tuple[str, Sequence[str]]],
        metrics: Mapping[str, Any],
        references: Sequence[Sequence[str]] | None,
        test_type: str = "ar",
        n_samples: int = 0,
        n_ar_confidence: int = -1,
        n_jobs: int = 1,
    ) -> None:
        assert test_type in ("ar", "bs"), f"Unknown test type {test_type!r}"
        self.test_type = test_type
        self.named_systems = named_systems
        self.references = references
        self.n_samples = n_samples if n_samples > 0 else self._DEFAULT_SAMPLES[test_type]
        self.n_ar_confidence = (
            n_ar_confidence if n_ar_confidence != 0 else self._DEFAULT_SAMPLES["bs"]
        )
        if test_type == "ar" and self.n_ar_confidence > 0:
            sacrelogger.warning(
                "n_ar_confidence is not supported by bleucli's paired tests; "
                "no confidence intervals for approximate randomisation"
            )
        self.n_systems = len(named_systems) - 1
        self.n_jobs = n_jobs
        if n_jobs == 0:
            self.n_jobs = max(1, min((os.cpu_count() or 1) // 2, self.n_systems))
        self.metrics = dict(metrics)
        if references is not None:
            for metric in self.metrics.values():
                metric._ref_cache = metric.cache_references(references)

    def __call__(self) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        from bleucli.stats.paired import run_paired

        results, signatures = run_paired(
            self.test_type,
            self.metrics,
            [(name, list(hyps)) for name, hyps in self.named_systems],
            self.n_samples,
            jobs=self.n_jobs,
        )
        scores: dict[str, list[Any]] = {"System": [name for name, _ in self.named_systems]}
        for metric, per_system in results.items():
            scores[metric] = [_result(r) for r in per_system]
        return signatures, scores


from bleucli.metrics.base import Metric, Score, Signature  # noqa: E402,F401

__all__ = ["PairedTest", "Result", "estimate_ci", "IS_WINDOWS", "sacrelogger"]
