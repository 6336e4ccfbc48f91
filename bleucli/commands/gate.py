"""``bleucli gate``: fail CI when scores drop, miss a floor, or stop being comparable.

Results are any JSON layout bleucli or SacreBLEU writes, read by :mod:`bleucli.results`. A
result is keyed by system (when the file has several), metric name and the test set its
signature names. Checks per baseline result:

- the current results must contain it (``missing`` fails);
- the signatures must agree on every field but ``version`` (a different tokeniser, case,
  reference count, ... makes the numbers incomparable: ``signature`` fails, never passes);
- it must not get worse by more than the tolerance (``drop``; TER is better when lower);
- it must meet ``--min-score`` (for TER: stay at or below it).

With the two systems' translations, :mod:`bleucli.gating.significance` turns ``drop`` failures
that a paired bootstrap test finds insignificant into ``not-significant`` passes.

Metric names in ``--tolerance-for``/``--min-score`` match the results' names
case-insensitively; a name the results do not have is a usage error, never ignored, and so
are NaN or infinite thresholds (they would let every comparison pass).

Exit codes: 0 all checks pass, 3 some check failed, 1 unusable input, 2 usage error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from bleucli.gating.checks import by_key, finite, parse_thresholds, run_checks
from bleucli.gating.render import (
    EXIT_GATE_FAILED,
    actions_annotations,
    render_json,
    render_text,
    write_junit,
    write_step_summary,
)
from bleucli.io import write_atomic


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
    source: str | None = None  # neural metrics read it
    models: tuple[str, ...] = ()  # neural models' folders, found by the signatures' hashes


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
    write_step_summary(f"{request.current} against the baseline {request.baseline}", checks)
    failed = any(c.status == "fail" for c in checks)
    return GateOutcome(text, EXIT_GATE_FAILED if failed else 0, actions_annotations(checks))
