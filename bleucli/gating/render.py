"""The gate's verdicts as the reader gets them: lines, one JSON document, GitHub Actions
annotations, a JUnit report (the same for ``bleucli gate`` and ``bleucli submit --gate``)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict

from bleucli.io import write_atomic
from bleucli.results import Check

#: The exit code of a gate with a failed check.
EXIT_GATE_FAILED = 3


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
        # the class name stays what CI reports have always grouped by
        case = ET.SubElement(suite, "testcase", classname="bleucli.commands.gate", name=c.name)
        if c.status == "fail":
            failure = ET.SubElement(
                case, "failure", message=f"{c.reason}: {c.detail}", type=c.reason
            )
            failure.text = f"baseline {c.baseline}, current {c.current}"
    suites = ET.Element("testsuites", tests=str(len(checks)), failures=str(failed))
    suites.append(suite)
    write_atomic(path, ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n")


def step_summary(head: str, checks: list[Check]) -> str:
    """The gate as Markdown for a GitHub Actions job summary."""
    failed = sum(c.status == "fail" for c in checks)
    lines = [
        f"### bleucli gate: {'failed' if failed else 'passed'}",
        "",
        head,
        "",
        "| verdict | check | baseline | current | detail |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    for c in checks:
        base = "-" if c.baseline is None else f"{c.baseline:g}"
        now = "-" if c.current is None else f"{c.current:g}"
        detail = c.detail.replace("|", "\\|")
        lines.append(f"| {c.status.upper()} | {c.name} | {base} | {now} | {detail} |")
    return "\n".join(lines) + "\n\n"


def write_step_summary(head: str, checks: list[Check]) -> None:
    """Under GitHub Actions, append the gate's Markdown table to the job's summary
    (``$GITHUB_STEP_SUMMARY``): every gate, local or on a server, shows on the run's page."""
    import os

    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(step_summary(head, checks))
