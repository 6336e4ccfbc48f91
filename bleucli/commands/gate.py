"""``bleucli gate``: fail CI when scores drop, miss a floor, or stop being comparable.

Results are any JSON layout bleucli or SacreBLEU writes, read by :mod:`bleucli.results`. A
result is keyed by system (when the file has several), metric name and the test set its
signature names. Checks per baseline result:

- the current results must contain it (``missing`` fails);
- the signatures must agree on every field but ``version`` (a different tokeniser, case,
  reference count, ... makes the numbers incomparable: ``signature`` fails, never passes);
- it must not get worse by more than the tolerance (``drop``; TER is better when lower);
- it must meet ``--min-score`` (for TER: stay at or below it).

With the two systems' translations, :mod:`bleucli.commands.gate_significance` turns ``drop`` failures
that a paired bootstrap test finds insignificant into ``not-significant`` passes.

Metric names in ``--tolerance-for``/``--min-score`` match the results' names
case-insensitively; a name the results do not have is a usage error, never ignored, and so
are NaN or infinite thresholds (they would let every comparison pass).

Exit codes: 0 all checks pass, 3 some check failed, 1 unusable input, 2 usage error.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass

from bleucli.errors import UsageError
from bleucli.io import write_atomic
from bleucli.results import (
    Check,
    ScoreRecord,
    comparable_signature,
    match_metric,
    signature_fields,
)

EXIT_GATE_FAILED = 3


@dataclass
class GateRequest:
    """What ``bleucli gate`` was asked to do, independent of click."""

    current: str
    baseline: str
    tolerance: float = 0.0
    tolerance_for: tuple[str, ...] = ()
    min_score: tuple[str, ...] = ()
    update_baseline: bool = False
    fmt: str = "text"
    junit: str | None = None
    baseline_output: str | None = None
    current_output: str | None = None
    refs: tuple[str, ...] = ()
    alpha: float = 0.05
    paired_bs_n: int = 1000


@dataclass
class GateOutcome:
    text: str  # stdout: the lines, or with -f json exactly one JSON document
    exit_code: int
    annotations: str = ""  # GitHub Actions workflow commands, for stderr (the runner reads both)


def run(request: GateRequest) -> GateOutcome:
    """Load both result files, run every check, write the reports asked for."""
    from bleucli.io import read_json
    from bleucli.results import parse_results

    finite(request.tolerance, "--tolerance", 0.0)  # a usage mistake, before any file is read
    document = read_json(request.current, "a bleucli JSON result")
    current = by_key(parse_results(document, request.current))
    if request.update_baseline:
        write_atomic(request.baseline, json.dumps(document, indent=1, ensure_ascii=False) + "\n")
        return GateOutcome(f"baseline {request.baseline} updated with {len(current)} result(s)", 0)
    from bleucli.results import load_results

    baseline = by_key(load_results(request.baseline))
    known = sorted({key[1] for key in (*baseline, *current)})
    checks = run_checks(
        baseline,
        current,
        finite(request.tolerance, "--tolerance", 0.0),
        parse_thresholds(request.tolerance_for, "--tolerance-for", known, 0.0),
        parse_thresholds(request.min_score, "--min-score", known),
    )
    if request.baseline_output or request.current_output:
        from bleucli.commands.gate_significance import significance_gate

        checks = significance_gate(checks, baseline, current, request)
    text = render_json(checks) if request.fmt == "json" else render_text(checks)
    if request.junit:
        write_junit(checks, request.junit)
    failed = any(c.status == "fail" for c in checks)
    return GateOutcome(text, EXIT_GATE_FAILED if failed else 0, actions_annotations(checks))


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


def render_text(checks: list[Check]) -> str:
    lines = []
    for c in checks:
        old = "-" if c.baseline is None else f"{c.baseline:g}"
        new = "-" if c.current is None else f"{c.current:g}"
        delta = "" if c.delta is None else f" ({c.delta:+g})"
        detail = f": {c.detail}" if c.detail else ""
        lines.append(f"{c.status.upper()} {c.name}: {old} -> {new}{delta}{detail}")
    failed = sum(c.status == "fail" for c in checks)
    lines.append(
        f"gate {'failed' if failed else 'passed'}: {len(checks) - failed} passed, {failed} failed"
    )
    return "\n".join(lines)


def render_json(checks: list[Check]) -> str:
    return json.dumps(
        {"passed": all(c.status == "pass" for c in checks), "checks": [asdict(c) for c in checks]},
        indent=1,
    )


def actions_annotations(checks: list[Check]) -> str:
    """Under GitHub Actions, the annotations of the failed checks (for stderr: stdout keeps
    one document); elsewhere nothing."""
    return github_annotations(checks) if os.environ.get("GITHUB_ACTIONS") == "true" else ""


def github_annotations(checks: list[Check]) -> str:
    """Workflow commands GitHub Actions turns into annotations on the run."""
    return "\n".join(
        f"::error title=bleucli gate: {c.name}::{c.reason}: {c.detail}"
        for c in checks
        if c.status == "fail"
    )


def write_junit(checks: list[Check], path: str) -> None:
    import xml.etree.ElementTree as ET

    failed = sum(c.status == "fail" for c in checks)
    suite = ET.Element(
        "testsuite", name="bleucli gate", tests=str(len(checks)), failures=str(failed), errors="0"
    )
    for c in checks:
        case = ET.SubElement(suite, "testcase", classname="bleucli.commands.gate", name=c.name)
        if c.status == "fail":
            failure = ET.SubElement(
                case, "failure", message=f"{c.reason}: {c.detail}", type=c.reason
            )
            failure.text = f"baseline {c.baseline}, current {c.current}"
    suites = ET.Element("testsuites", tests=str(len(checks)), failures=str(failed))
    suites.append(suite)
    write_atomic(path, ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n")
