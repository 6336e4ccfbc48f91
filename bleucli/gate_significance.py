"""The statistical gate: a score drop fails only if it is significant.

A drop beyond the tolerance can be noise on a small test set. Given the baseline system's
and the current system's translations, every ``drop`` check is re-examined with the paired
bootstrap test (SacreBLEU's, seeded by ``BLEUCLI_SEED``) under the metric the result's
signature describes: if the p-value is above ``alpha`` the check passes as
``not-significant``; otherwise it keeps failing, with the p-value in its detail.

Both translation files are first scored and must reproduce the scores in the JSON results,
so that a wrong file cannot silently decide the gate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bleucli.errors import ConfigError, InputError
from bleucli.gate import Check
from bleucli.metrics.base import Metric, sum_rows

if TYPE_CHECKING:
    from bleucli.signature import ParsedSignature


def parsed_signature(record: dict[str, Any]) -> ParsedSignature:
    """The signature of a JSON result, read with the metric its ``name`` gives."""
    from bleucli.signature import parse_signature

    signature = record.get("signature")
    if not signature:
        raise ConfigError(f"result {record.get('name')!r} has no signature: the statistical "
                          "gate cannot tell how it was computed")
    return parse_signature(f"{record['name']}|{signature}")


def metric_for(record: dict[str, Any], references: list[list[str]]) -> Metric:
    """The metric (with its options) that produced ``record``, from its signature."""
    from bleucli.metrics import metric_class

    parsed = parsed_signature(record)
    return metric_class(parsed.metric)(**parsed.metric_options(), references=references)


def _checked_rows(metric: Metric, lines: list[str], record: dict[str, Any], path: str):
    """Per-sentence statistics of ``lines``, which must reproduce ``record``'s score (as
    rounded in the JSON: within half a unit of its last decimal)."""
    rows = metric.per_sentence_stats(lines, None)
    score = metric.score_from_values(sum_rows(rows)).score
    expected = record["score"]
    decimals = 0 if isinstance(expected, int) else len(repr(float(expected)).split(".")[1])
    if abs(score - float(expected)) > 0.5 * 10 ** -decimals + 1e-9:
        raise ConfigError(f"{path} scores {score:.4f} {record['name']}, but its JSON result "
                          f"says {expected}: is it the right file?")
    return rows


#: (path, lines) of a system output.
Output = tuple[str, list[str]]


def apply_significance(checks: list[Check], baseline: dict, current: dict,
                       inputs_for: Callable[[dict[str, Any]],
                                            tuple[list[list[str]], Output, Output]],
                       alpha: float, n_samples: int) -> list[Check]:
    """Re-examine the ``drop`` checks: pass those whose drop is not significant.

    ``inputs_for(result)`` gives the references and the baseline's and current system's
    outputs for a JSON result (selected like the references for origlang/subset)."""
    from bleucli.paired import paired_bootstrap
    from bleucli.significance import seed_from_environment

    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1, got {alpha}")
    _, seed = seed_from_environment()
    out = []
    for check in checks:
        if check.reason != "drop":
            out.append(check)
            continue
        key = (check.metric, check.test)
        references, baseline_output, current_output = inputs_for(current[key])
        for path, lines in (baseline_output, current_output):
            if references and len(lines) != len(references[0]):
                raise InputError(f"{path}: {len(lines)} lines, but the references have "
                                 f"{len(references[0])}")
        metric = metric_for(current[key], references)
        base_rows = _checked_rows(metric, baseline_output[1], baseline[key], baseline_output[0])
        now_rows = _checked_rows(metric, current_output[1], current[key], current_output[0])
        result = paired_bootstrap(metric, base_rows, now_rows, n_samples, seed or None)
        p = result.p_value
        if p is not None and p > alpha:
            out.append(Check(check.metric, check.test, "pass", "not-significant",
                             check.baseline, check.current, check.delta,
                             f"{check.detail}, but not significant: p = {p:.4f} > {alpha:g}"))
        else:
            out.append(Check(check.metric, check.test, "fail", "drop", check.baseline,
                             check.current, check.delta,
                             f"{check.detail}; significant: p = {p:.4f} <= {alpha:g}"))
    return out
