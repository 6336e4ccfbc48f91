"""The statistical gate, as a library: a score drop fails only if it is significant.

A drop beyond the tolerance can be noise on a small test set. Given the baseline system's
and the current system's translations, every ``drop`` check is re-examined with the paired
bootstrap test (SacreBLEU's, seeded by ``BLEUCLI_SEED``) under the metric the result's
signature describes: if the p-value is above ``alpha`` the check passes as
``not-significant``; otherwise it keeps failing, with the p-value in its detail. Only the drop
check is re-examined: a missed floor, a signature change or a missing result fails whatever
the test says.

Both translation files are first scored and must reproduce the scores in the JSON results,
so that a wrong file cannot silently decide the gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from bleucli.errors import ConfigError, InputError, UsageError
from bleucli.gating.checks import Key
from bleucli.metrics.base import Metric, sum_rows
from bleucli.results import Check, ScoreRecord

if TYPE_CHECKING:
    from bleucli.signature import ParsedSignature


def parsed_signature(record: ScoreRecord) -> ParsedSignature:
    """The signature of a result, read with the metric its name gives."""
    from bleucli.signature import signature_of

    if not record.signature:
        raise ConfigError(
            f"{record.where}: {record.metric} has no signature: the statistical "
            "gate cannot tell how it was computed"
        )
    return signature_of(record.metric, record.signature)


def metric_for(
    record: ScoreRecord,
    references: list[list[str]],
    sources: list[str] | None = None,
    models: Sequence[str] = (),
) -> Metric:
    """The metric (with its options) that produced ``record``, from its signature; a neural
    metric reads ``sources`` and finds its weights among ``models`` (folders) by hash."""
    from bleucli.metrics import metric_class

    parsed = parsed_signature(record)
    cls = metric_class(parsed.metric)
    options = parsed.metric_options()
    if not cls.uses_source:
        return cls(**options, references=references)
    if sources is None:
        raise UsageError(
            f"result {record.label}: {record.metric} reads the source sentences: give --source FILE"
        )
    from bleucli.neural.load import locate

    options["model"] = locate(str(options.get("model", "")), models)
    return cls(**options, references=references, sources=sources)  # type: ignore[call-arg]


def _checked_rows(metric: Metric, lines: list[str], record: ScoreRecord, path: str):
    """Per-sentence statistics of ``lines``, which must reproduce ``record``'s score (as
    rounded in the JSON: within half a unit of its last decimal)."""
    rows = metric.per_sentence_stats(lines, None)
    score = metric.score_from_values(sum_rows(rows)).score
    expected = record.score
    decimals = 0 if expected.is_integer() else len(repr(expected).split(".")[1])
    if abs(score - expected) > 0.5 * 10**-decimals + 1e-9:
        raise ConfigError(
            f"{path} scores {score:.4f} {record.metric}, but its JSON result "
            f"says {expected:g}: is it the right file?"
        )
    return rows


#: (path, lines) of a system output.
Output = tuple[str, list[str]]


#: Per-sentence statistics of a check's result: (metric, baseline rows, current rows).
Rows = tuple[Metric, list, list]


def statistical_checks(
    checks: list[Check], rows_for: Callable[[Check], Rows], alpha: float, n_samples: int
) -> list[Check]:
    """Re-examine the failed ``drop`` checks with the paired bootstrap test on the two runs'
    per-sentence statistics (``rows_for(check)``): a drop that is not significant passes as
    ``not-significant``. The one statistical gate of ``bleucli gate`` and of the server's
    gate (which keeps the statistics and so never scores again)."""
    import math

    from bleucli.stats.bootstrap import seed_from_environment
    from bleucli.stats.paired import paired_bootstrap

    if not (math.isfinite(alpha) and 0 < alpha < 1):
        raise UsageError(f"--alpha must be between 0 and 1, got {alpha}")
    if not 1 <= n_samples <= MAX_SAMPLES:
        raise UsageError(f"--paired-bs-n must be between 1 and {MAX_SAMPLES}, got {n_samples}")
    _, seed = seed_from_environment()
    out = []
    for check in checks:
        if check.check != "drop" or check.reason != "drop":  # only a failed drop is retried
            out.append(check)
            continue
        metric, base_rows, now_rows = rows_for(check)
        result = paired_bootstrap(metric, base_rows, now_rows, n_samples, seed or None)
        p = result.p_value
        if p is not None and p > alpha:
            detail = f"{check.detail}, but not significant: p = {p:.4f} > {alpha:g}"
            out.append(replace(check, status="pass", reason="not-significant", detail=detail))
        else:
            detail = f"{check.detail}; significant: p = {p:.4f} <= {alpha:g}"
            out.append(replace(check, detail=detail))
    return out


def apply_significance(
    checks: list[Check],
    baseline: dict[Key, ScoreRecord],
    current: dict[Key, ScoreRecord],
    inputs_for: Callable[[ScoreRecord], tuple[list[list[str]], Output, Output]],
    alpha: float,
    n_samples: int,
    sources: list[str] | None = None,
    models: Sequence[str] = (),
) -> list[Check]:
    """The statistical gate on two translation files: ``inputs_for(result)`` gives the
    references and the baseline's and current system's outputs for a result (selected like
    the references for origlang/subset); each output must reproduce its JSON score."""

    def rows_for(check: Check) -> Rows:
        now = current[check.key]
        references, baseline_output, current_output = inputs_for(now)
        for path, lines in (baseline_output, current_output):
            if references and len(lines) != len(references[0]):
                raise InputError(
                    f"{path}: {len(lines)} lines, but the references have {len(references[0])}"
                )
        if sources is not None and references and len(sources) != len(references[0]):
            raise InputError(
                f"--source: {len(sources)} lines, but the references have {len(references[0])}"
            )
        metric = metric_for(now, references, sources, models)
        base_rows = _checked_rows(
            metric, baseline_output[1], baseline[check.key], baseline_output[0]
        )
        now_rows = _checked_rows(metric, current_output[1], now, current_output[0])
        return metric, base_rows, now_rows

    return statistical_checks(checks, rows_for, alpha, n_samples)


#: The most resamples a command accepts (memory grows with resamples x sentences).
MAX_SAMPLES = 100_000
