"""The server-side gate: a run of a series against its baseline run on the server, with the
checks of ``bleucli gate`` (signature, drop, floor, missing; each its own verdict) and its
statistical gate on the two runs' stored per-sentence statistics -- the same paired
bootstrap test and seed handling, so the numbers equal ``bleucli gate``'s on the same files.

Two halves: :func:`prepare` runs in the web request (cheap: it checks the options, the
set's resample cap and picks the baseline, so a mistake is answered at once) and
:func:`evaluate` on a worker (the bootstrap).

The baseline: ``against="ID"`` that run; ``"last"`` the previous run of the series whatever
its verdict; ``"best"`` the best earlier run by the test set's first metric; by default the
last run promoted with ``promote``, else the series' first run. Except for an explicit id,
only runs scored on the same version of the set are candidates: after a new version (other
references or options, so another signature) the gate starts afresh instead of failing on
the signature for ever.
"""

from __future__ import annotations

import json
import math
from typing import Any

from bleucli.server import store


class GateError(Exception):
    """A gate request the server refuses (status, message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def baseline_run(
    runs: list[Any], current: Any, against: str, first_metric: str, higher: bool
) -> Any:
    """The run ``current`` is compared with, among the earlier scored runs of its series."""
    earlier = [
        row
        for row in runs
        if row.id < current.id and row.status == "scored" and row.version_id == current.version_id
    ]
    if against.isdigit():
        chosen = [row for row in runs if row.id == int(against)]
        if not chosen or chosen[0].id == current.id:
            raise GateError(
                404, f"--against {against}: no other run {against} in series {current.series!r}"
            )
        if chosen[0].status != "scored":
            raise GateError(409, f"--against {against}: run {against} is {chosen[0].status}")
        return chosen[0]
    if not earlier:
        return None
    if against == "last":
        return earlier[-1]
    if against == "best":

        def key(row: Any) -> float:
            score = json.loads(row.scores).get(first_metric, float("nan"))
            return score if higher else -score

        return max(earlier, key=key)
    if against in ("", "promoted"):
        promoted = [row for row in earlier if row.promoted]
        return promoted[-1] if promoted else earlier[0]
    raise GateError(400, f"--against {against!r}: use last, best or a run's id")


def _number(options: dict[str, Any], key: str, default: float) -> float:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise GateError(422, f'"{key}" must be a finite number, not {value!r}')
    return float(value)


def _strings(options: dict[str, Any], key: str) -> list[str]:
    value = options.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or len(value) > 50:
        raise GateError(422, f'"{key}" must be a list of METRIC=VALUE strings')
    return value


def prepare(engine: Any, testset: store.TestSet, current: Any, options: Any) -> dict[str, Any]:
    """Check a gate request and pick its baseline: the worker's job payload. Refused with
    its status: a run not scored or in no series, a malformed option, more resamples than the
    set allows (422, naming the cap)."""
    from bleucli.errors import ConfigError
    from bleucli.gating.checks import finite, parse_thresholds
    from bleucli.results import parse_results
    from bleucli.server.scoring import first_metric_name, metrics_for

    if not isinstance(options, dict):
        raise GateError(400, "the gate's options are a JSON object")
    if current.status != "scored":
        raise GateError(409, f"run {current.id} is {current.status}, not scored")
    if not current.series:
        raise GateError(400, f"run {current.id} is in no series: submit it with --series NAME")
    against = options.get("against") or ""
    if not isinstance(against, str):
        raise GateError(422, '"against" is last, best or a run\'s id (a string)')
    samples = options.get("paired_bs_n", 1000)
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise GateError(422, f'"paired_bs_n" must be a whole number of resamples, not {samples!r}')
    if samples > testset.max_resamples:
        raise GateError(
            422,
            f"paired_bs_n {samples} is above this test set's cap of {testset.max_resamples} "
            "resamples (the organisers set it with --max-resamples)",
        )
    alpha = _number(options, "alpha", 0.05)
    if not 0 < alpha < 1:
        raise GateError(422, f'"alpha" must be between 0 and 1, not {alpha}')
    tolerance = _number(options, "tolerance", 0.0)
    tolerance_for, min_score = _strings(options, "tolerance_for"), _strings(options, "min_score")
    runs = store.series_runs(engine, current.testset_id, current.team_id, current.series)
    version = store.version(engine, current.version_id)
    metrics = metrics_for(version.references, version.request)
    first_metric = first_metric_name(version.request, current.result)
    higher = metrics[version.request.metrics[0].name].higher_is_better
    baseline = baseline_run(runs, current, against, first_metric, higher)
    try:
        now = parse_results(json.loads(current.result), f"run {current.id}")
        before = (
            parse_results(json.loads(baseline.result), f"run {baseline.id}") if baseline else []
        )
        known = sorted({record.key[1] for record in (*before, *now)})
        finite(tolerance, "--tolerance", 0.0)
        parse_thresholds(tuple(tolerance_for), "--tolerance-for", known, 0.0)
        parse_thresholds(tuple(min_score), "--min-score", known)
    except (ConfigError, ValueError, TypeError) as err:
        raise GateError(422, str(err)) from None
    return {
        "run": current.id,
        "baseline": baseline.id if baseline is not None else None,
        "against": against or "promoted",
        "tolerance": tolerance,
        "tolerance_for": tolerance_for,
        "min_score": min_score,
        "alpha": alpha,
        "paired_bs_n": samples,
        "promote": bool(options.get("promote")),
    }


def evaluate(engine: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """The verdict document (``bleucli gate -f json``'s, with the baseline's id), stored on
    the run; a passing run with ``promote`` becomes the series' baseline. On a worker."""
    from dataclasses import asdict

    from bleucli.gating.checks import parse_thresholds, run_checks
    from bleucli.gating.significance import Rows, statistical_checks
    from bleucli.results import parse_results
    from bleucli.server.scoring import metrics_for

    current = store.submission(engine, payload["run"])
    baseline = store.submission(engine, payload["baseline"]) if payload["baseline"] else None
    version = store.version(engine, current.version_id)
    metrics = metrics_for(version.references, version.request)
    own = store.stats(engine, [current.id])[current.id]
    names = {metric.score_from_values(own[key][0]).name: key for key, metric in metrics.items()}
    now = {r.key: r for r in parse_results(json.loads(current.result), f"run {current.id}")}
    before = (
        {r.key: r for r in parse_results(json.loads(baseline.result), f"run {baseline.id}")}
        if baseline is not None
        else {}
    )
    known = sorted({key[1] for key in (*before, *now)})
    checks = run_checks(
        before,
        now,
        payload["tolerance"],
        parse_thresholds(tuple(payload["tolerance_for"]), "--tolerance-for", known, 0.0),
        parse_thresholds(tuple(payload["min_score"]), "--min-score", known),
    )
    if baseline is not None:
        stats = store.stats(engine, [current.id, baseline.id])

        def rows_for(check: Any) -> Rows:
            key = names[check.metric]
            return metrics[key], stats[baseline.id][key], stats[current.id][key]

        checks = statistical_checks(checks, rows_for, payload["alpha"], payload["paired_bs_n"])
    passed = all(c.status == "pass" for c in checks)
    document = {
        "passed": passed,
        "checks": [asdict(c) for c in checks],
        "run": current.id,
        "baseline": baseline.id if baseline is not None else None,
        "against": payload["against"],
        "series": current.series,
    }
    promote = payload["promote"] and passed
    store.save_gate(engine, current.id, json.dumps(document), promote)
    document["promoted"] = promote
    return document
