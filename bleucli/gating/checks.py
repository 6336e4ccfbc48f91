"""The gate's checks, as a library: the verdicts of ``bleucli gate`` and of the evaluation
server's gate, on results read by :mod:`bleucli.results`. Per baseline result: it must still
be there (``missing``), its signature must agree on every field but ``version``
(``signature``: never passes), it must not get worse by more than the tolerance (``drop``;
TER is better when lower); every current result with a floor must meet it (``min-score``).

Thresholds name metrics case-insensitively; a name the results do not have, NaN or
infinity is a usage error, never ignored (they would let every comparison pass)."""

from __future__ import annotations

import math

from bleucli.errors import UsageError
from bleucli.results import (
    Check,
    ScoreRecord,
    comparable_signature,
    match_metric,
    signature_fields,
)

#: Results keyed by (system, metric, test set).
Key = tuple[str, str, str]


def by_key(records: list[ScoreRecord]) -> dict[tuple[str, str, str], ScoreRecord]:
    """Results keyed by (system, metric, test set); the reader refused duplicates."""
    return {record.key: record for record in records}


def finite(value: float, option: str, minimum: float | None = None) -> float:
    """A usable number for ``option``: NaN or infinity would make every comparison pass."""
    if not math.isfinite(value):
        raise UsageError(f"{option} must be a finite number, got {value}")
    if minimum is not None and value < minimum:
        raise UsageError(f"{option} must be at least {minimum:g}, got {value:g}")
    return value


def parse_thresholds(
    values: tuple[str, ...], what: str, known: list[str], minimum: float | None = None
) -> dict[str, float]:
    """``NAME=number`` pairs (``BLEU=0.5``); names match the results' metrics
    case-insensitively, and a name the results do not have is a usage error."""
    out = {}
    for value in values:
        name, sep, number = value.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"{what} {value!r} is not NAME=NUMBER (e.g. BLEU=30)")
        try:
            parsed = float(number)
        except ValueError:
            raise UsageError(f"{what} {value!r}: {number!r} is not a number") from None
        metric = match_metric(name.strip(), known, what)
        if metric in out:
            raise UsageError(f"{what} gives {metric} twice")
        out[metric] = finite(parsed, f"{what} {metric}", minimum)
    return out


def run_checks(
    baseline: dict[tuple[str, str, str], ScoreRecord],
    current: dict[tuple[str, str, str], ScoreRecord],
    tolerance: float,
    tolerances: dict[str, float],
    min_scores: dict[str, float],
) -> list[Check]:
    """Every check of every result, each its own verdict: a missing result; for one in both
    files, its signature and (when the signatures agree, so the numbers compare) its drop;
    for every current result with a floor, the floor."""
    finite(tolerance, "--tolerance", 0.0)
    checks = []
    for key, base in baseline.items():
        system, metric, test = key
        now = current.get(key)
        if now is None:
            checks.append(
                Check(
                    metric, test, "fail", "missing", base.score, None, None,
                    "no current result", system, "missing",
                )
            )  # fmt: skip
            continue
        signature = signature_check(base, now)
        checks.append(signature)
        if signature.status == "pass":
            checks.append(drop_check(base, now, tolerances.get(metric, tolerance)))
    for key, now in current.items():
        system, metric, test = key
        if key not in baseline:
            checks.append(
                Check(
                    metric, test, "pass", "new", None, now.score, None,
                    "not in the baseline", system, "drop",
                )
            )  # fmt: skip
        if metric in min_scores:
            old = baseline[key].score if key in baseline else None
            checks.append(floor_check(now, old, min_scores[metric]))
    return checks


def signature_check(base: ScoreRecord, now: ScoreRecord) -> Check:
    """Both results computed alike: every signature field but ``version`` the same."""
    system, metric, test = now.key
    delta = round(now.score - base.score, 10)
    old_sig = signature_fields(comparable_signature(base.signature))
    new_sig = signature_fields(comparable_signature(now.signature))
    if old_sig == new_sig:
        return Check(
            metric, test, "pass", "ok", base.score, now.score, delta, "", system, "signature"
        )
    changed = [
        f"{k}:{old_sig.get(k, '-')} -> {k}:{new_sig.get(k, '-')}"
        for k in sorted(set(old_sig) | set(new_sig))
        if old_sig.get(k) != new_sig.get(k)
    ]
    detail = "signature differs: " + ", ".join(changed) + " (the scores are not compared)"
    return Check(
        metric, test, "fail", "signature", base.score, now.score, delta, detail, system, "signature"
    )


def drop_check(base: ScoreRecord, now: ScoreRecord, allowed: float) -> Check:
    """Not worse than the baseline by more than ``allowed`` (TER is better when lower)."""
    system, metric, test = now.key
    delta = round(now.score - base.score, 10)
    worse = delta if base.lower_is_better else -delta
    if worse > allowed + 1e-12:
        detail = f"worse by {worse:.4g} (tolerance {allowed:g})"
        return Check(
            metric, test, "fail", "drop", base.score, now.score, delta, detail, system, "drop"
        )
    return Check(metric, test, "pass", "ok", base.score, now.score, delta, "", system, "drop")


def floor_check(now: ScoreRecord, old: float | None, floor: float) -> Check:
    """``--min-score``: at least the floor (for TER, an error rate: at most it)."""
    system, metric, test = now.key
    delta = None if old is None else round(now.score - old, 10)
    kind = "maximum" if now.lower_is_better else "minimum"
    missed = now.score > floor if now.lower_is_better else now.score < floor
    status, reason = ("fail", "min-score") if missed else ("pass", "ok")
    detail = f"{kind} is {floor:g}" + (" (missed)" if missed else "")
    return Check(metric, test, status, reason, old, now.score, delta, detail, system, "min-score")
