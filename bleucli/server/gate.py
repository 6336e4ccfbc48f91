"""The server-side gate: a run of a series against its baseline run on the server, with the
checks of ``bleucli gate`` (signature, drop, floor, missing; each its own verdict) and its
statistical gate on the two runs' stored per-sentence statistics -- the same paired
bootstrap test and seed handling, so the numbers equal ``bleucli gate``'s on the same files.

The baseline: ``against="ID"`` that run; ``"last"`` the previous run of the series whatever
its verdict; ``"best"`` the best earlier run by the test set's first metric; by default the
last run promoted with ``promote``, else the series' first run.
"""

from __future__ import annotations

import json
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
    earlier = [row for row in runs if row.id < current.id and row.status == "scored"]
    if against.isdigit():
        chosen = [row for row in runs if row.id == int(against)]
        if not chosen or chosen[0].id == current.id:
            raise GateError(
                404, f"--against {against}: no other run {against} in series {current.series!r}"
            )
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


def evaluate(engine: Any, current: Any, request: dict[str, Any]) -> dict[str, Any]:
    """The verdict document (``bleucli gate -f json``'s, with the baseline's id), stored on
    the run; a passing run with ``promote`` becomes the series' baseline."""
    from bleucli.commands.gate import finite, parse_thresholds, run_checks
    from bleucli.commands.gate_significance import Rows, statistical_checks
    from bleucli.errors import ConfigError
    from bleucli.results import parse_results
    from bleucli.server.scoring import metrics_for

    if current.status != "scored":
        raise GateError(409, f"run {current.id} is {current.status}, not scored")
    if not current.series:
        raise GateError(400, f"run {current.id} is in no series: submit it with --series NAME")
    runs = store.series_runs(engine, current.testset_id, current.team_id, current.series)
    version = store.version(engine, current.version_id)
    metrics = metrics_for(version.references, version.args)
    own = store.stats(engine, [current.id])[current.id]
    names = {metric.score_from_values(own[key][0]).name: key for key, metric in metrics.items()}
    first_metric = next(iter(json.loads(current.scores)))
    higher = metrics[names[first_metric]].higher_is_better if first_metric in names else True
    baseline = baseline_run(runs, current, str(request.get("against") or ""), first_metric, higher)
    try:
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
            finite(float(request.get("tolerance", 0.0)), "--tolerance", 0.0),
            parse_thresholds(
                tuple(request.get("tolerance_for", ())), "--tolerance-for", known, 0.0
            ),
            parse_thresholds(tuple(request.get("min_score", ())), "--min-score", known),
        )
        if baseline is not None:
            stats = store.stats(engine, [current.id, baseline.id])

            def rows_for(check: Any) -> Rows:
                key = names[check.metric]
                return metrics[key], stats[baseline.id][key], stats[current.id][key]

            checks = statistical_checks(
                checks,
                rows_for,
                float(request.get("alpha", 0.05)),
                int(request.get("paired_bs_n", 1000)),
            )
    except (ConfigError, ValueError, TypeError) as err:
        raise GateError(400, str(err)) from None
    from dataclasses import asdict

    passed = all(c.status == "pass" for c in checks)
    document = {
        "passed": passed,
        "checks": [asdict(c) for c in checks],
        "run": current.id,
        "baseline": baseline.id if baseline is not None else None,
        "against": request.get("against") or "promoted",
        "series": current.series,
    }
    promote = bool(request.get("promote")) and passed
    store.save_gate(engine, current.id, json.dumps(document), promote)
    document["promoted"] = promote
    return document
