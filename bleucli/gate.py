"""``bleucli gate``: fail CI when scores drop, miss a floor, or stop being comparable.

Results are the JSON objects bleucli prints (one or a list per file). A result is keyed by
metric name plus test set and language pair when present. Checks per baseline result:

- the current results must contain it (``missing`` fails);
- the signatures must agree on every field but ``version`` (a different tokeniser, case,
  reference count, ... makes the numbers incomparable: ``signature`` fails, never passes);
- it must not get worse by more than the tolerance (``drop``; TER is better when lower);
- it must meet ``--min-score`` (for TER: stay at or below it).

With the two systems' translations, :mod:`bleucli.gate_significance` turns ``drop`` failures
that a paired bootstrap test finds insignificant into ``not-significant`` passes.

Exit codes: 0 all checks pass, 3 some check failed, 1 unusable input.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bleucli.errors import ConfigError
from bleucli.io import result_records

EXIT_GATE_FAILED = 3
#: Metrics where a lower score is better.
LOWER_IS_BETTER = {"TER"}


@dataclass
class Check:
    metric: str
    test: str
    status: str  # "pass" or "fail"
    reason: str  # ok, new, missing, signature, drop, min-score, not-significant
    baseline: float | None
    current: float | None
    delta: float | None
    detail: str = ""

    @property
    def label(self) -> str:
        return f"{self.metric} ({self.test})" if self.test else self.metric


def load_results(path: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Results of a JSON file keyed by (metric name, "test/lang")."""
    records = result_records(path)
    results = {}
    for record in records:
        test = "/".join(str(record[k]) for k in ("test", "lang") if record.get(k))
        results[(record["name"], test)] = record
    return results


def _signature_fields(record: dict[str, Any]) -> dict[str, str]:
    pairs = [f.split(":", 1) for f in str(record.get("signature", "")).split("|") if ":" in f]
    return {k: v for k, v in pairs if k not in ("version", "v")}


def parse_thresholds(values: tuple[str, ...], what: str) -> dict[str, float]:
    """``NAME=number`` pairs (``BLEU=0.5``)."""
    out = {}
    for value in values:
        name, sep, number = value.partition("=")
        try:
            out[name] = float(number)
        except ValueError:
            raise ConfigError(f"{what} {value!r} is not NAME=NUMBER") from None
        if not sep or not name:
            raise ConfigError(f"{what} {value!r} is not NAME=NUMBER")
    return out


def run_checks(baseline: dict, current: dict, tolerance: float,
               tolerances: dict[str, float], min_scores: dict[str, float]) -> list[Check]:
    checks = []
    for key, base in baseline.items():
        metric, test = key
        now = current.get(key)
        old = float(base["score"])
        if now is None:
            checks.append(Check(metric, test, "fail", "missing", old, None, None,
                                "no current result"))
            continue
        new = float(now["score"])
        delta = round(new - old, 10)
        old_sig, new_sig = _signature_fields(base), _signature_fields(now)
        if old_sig != new_sig:
            changed = [f"{k}:{old_sig.get(k, '-')} -> {k}:{new_sig.get(k, '-')}"
                       for k in sorted(set(old_sig) | set(new_sig))
                       if old_sig.get(k) != new_sig.get(k)]
            checks.append(Check(metric, test, "fail", "signature", old, new, delta,
                                "signature differs: " + ", ".join(changed)))
            continue
        allowed = tolerances.get(metric, tolerance)
        worse = -delta if metric not in LOWER_IS_BETTER else delta
        if worse > allowed + 1e-12:
            checks.append(Check(metric, test, "fail", "drop", old, new, delta,
                                f"worse by {worse:.4g} (tolerance {allowed:g})"))
            continue
        floor = min_scores.get(metric)
        if floor is not None and (new > floor if metric in LOWER_IS_BETTER else new < floor):
            bound = "maximum" if metric in LOWER_IS_BETTER else "minimum"
            checks.append(Check(metric, test, "fail", "min-score", old, new, delta,
                                f"{bound} is {floor:g}"))
            continue
        checks.append(Check(metric, test, "pass", "ok", old, new, delta))
    for key, now in current.items():
        if key not in baseline:
            metric, test = key
            new = float(now["score"])
            floor = min_scores.get(metric)
            if floor is not None and (new > floor if metric in LOWER_IS_BETTER else new < floor):
                checks.append(Check(metric, test, "fail", "min-score", None, new, None,
                                    f"{'maximum' if metric in LOWER_IS_BETTER else 'minimum'}"
                                    f" is {floor:g}"))
            else:
                checks.append(Check(metric, test, "pass", "new", None, new, None,
                                    "not in the baseline"))
    return checks


def render_text(checks: list[Check]) -> str:
    lines = []
    for c in checks:
        old = "-" if c.baseline is None else f"{c.baseline:g}"
        new = "-" if c.current is None else f"{c.current:g}"
        delta = "" if c.delta is None else f" ({c.delta:+g})"
        detail = f": {c.detail}" if c.detail else ""
        lines.append(f"{c.status.upper()} {c.label} {old} -> {new}{delta}{detail}")
    failed = sum(c.status == "fail" for c in checks)
    lines.append(f"gate {'failed' if failed else 'passed'}: {len(checks) - failed} passed, "
                 f"{failed} failed")
    return "\n".join(lines)


def render_json(checks: list[Check]) -> str:
    return json.dumps({"passed": all(c.status == "pass" for c in checks),
                       "checks": [asdict(c) for c in checks]}, indent=1)


def github_annotations(checks: list[Check]) -> str:
    """Workflow commands GitHub Actions turns into annotations on the run."""
    return "\n".join(f"::error title=bleucli gate: {c.label}::{c.reason}: {c.detail}"
                     for c in checks if c.status == "fail")


def write_junit(checks: list[Check], path: str) -> None:
    import xml.etree.ElementTree as ET

    failed = sum(c.status == "fail" for c in checks)
    suite = ET.Element("testsuite", name="bleucli gate", tests=str(len(checks)),
                       failures=str(failed), errors="0")
    for c in checks:
        case = ET.SubElement(suite, "testcase", classname="bleucli.gate", name=c.label)
        if c.status == "fail":
            failure = ET.SubElement(case, "failure", message=f"{c.reason}: {c.detail}",
                                    type=c.reason)
            failure.text = f"baseline {c.baseline}, current {c.current}"
    suites = ET.Element("testsuites", tests=str(len(checks)), failures=str(failed))
    suites.append(suite)
    write_atomic(path, ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n")


def write_atomic(path: str, text: str) -> None:
    """Replace ``path`` in one step, so a crash never leaves half a baseline."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent or Path("."), prefix=f".{target.name}.",
                               suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
