"""``bleucli submit``: upload an output to a bleucli server; with ``--wait``, print the
result once scored. A refusal prints the server's message on one line (exit 1)."""

from __future__ import annotations

import json
import time
from typing import Any

from bleucli.errors import ConfigError, InputError, UsageError


def _token(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            token = handle.read().strip()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the token file ({err.strerror or err})") from None
    if not token:
        raise ConfigError(f"{path}: the token file is empty")
    return token


def _answer(response: Any) -> dict[str, Any]:
    """The JSON answer, or the server's message as an error."""
    try:
        document = response.json()
    except ValueError:
        document = None
    if response.status_code >= 400:
        message = document.get("error") if isinstance(document, dict) else response.text[:200]
        raise InputError(f"the server refused ({response.status_code}): {message}")
    if not isinstance(document, (dict, list)):
        raise InputError(f"the server answered {response.status_code} without JSON")
    return document  # type: ignore[return-value]


#: How long an upload (or a poll) keeps retrying a server that does not answer, or answers
#: that it cannot now (502, 503 while its database restarts, 504), in seconds. Each retry
#: of an upload sends the same Idempotency-Key, so a retry of an upload the server did
#: store returns it.
PATIENCE = 120.0
RETRY_STATUSES = (502, 503, 504)


def _retry_wait(response: Any, attempt: int) -> float:
    """Seconds before the next attempt: the server's Retry-After (capped), else backoff."""
    advised = response.headers.get("retry-after", "") if response is not None else ""
    if advised.isdigit():
        return min(float(advised), 30.0)
    return min(0.5 * 2**attempt, 8.0)


def _request(method: str, url: str, timeout: float = 120, **kwargs: Any) -> Any:
    """An HTTP request, retried for :data:`PATIENCE` seconds on a dropped connection or a
    gateway or outage answer; the last answer (or error) once that runs out."""
    import requests

    deadline = time.monotonic() + PATIENCE
    attempt = 0
    while True:
        response = None
        try:
            response = requests.request(method, url, timeout=timeout, **kwargs)
        except (requests.ConnectionError, requests.Timeout):
            if time.monotonic() > deadline:
                raise
        else:
            if response.status_code not in RETRY_STATUSES or time.monotonic() > deadline:
                return response
        time.sleep(_retry_wait(response, attempt))
        attempt += 1


def _upload(
    url: str, headers: dict[str, str], fields: dict[str, Any], files: dict[str, Any]
) -> Any:
    """POST an upload, retrying on a dropped connection or a gateway or outage answer with
    one Idempotency-Key: the server answers a retry with the submission it already made."""
    import uuid

    keyed = {**headers, "Idempotency-Key": str(uuid.uuid4())}
    return _request("POST", url, headers=keyed, data=fields, files=files)


def _poll(
    url: str, headers: dict[str, str], done: tuple[str, ...], timeout: float, what: str
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        state = _answer(_request("GET", url, headers=headers, timeout=60))
        if state["status"] in done:
            return state
        if time.monotonic() > deadline:
            raise InputError(f"{what} is still {state['status']} after {timeout:g} s")
        time.sleep(0.2)


def submit(
    server: str,
    token_file: str,
    testset: str,
    hypothesis: str,
    name: str | None,
    wait: bool,
    receipt: str | None,
    series: str | None = None,
    labels: tuple[str, ...] = (),
    timeout: float = 600.0,
    fmt: str = "json",
) -> tuple[str, dict[str, Any]]:
    """Upload, and (``wait``/``receipt``) wait for the score: (what to print -- JSON, or
    with ``fmt`` "text" the scoring command's text lines --, the run's state as the API
    gives it)."""
    import os

    import requests

    from bleucli.io import write_atomic

    token = _token(token_file)
    base = server.rstrip("/")
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with open(hypothesis, "rb") as handle:
            data = handle.read()
    except OSError as err:
        raise ConfigError(f"{hypothesis}: cannot read ({err.strerror or err})") from None
    run_name = name or os.path.basename(hypothesis)
    for label in labels:
        if "=" not in label or not label.split("=", 1)[0].strip():
            raise UsageError(f"--label {label!r} is not KEY=VALUE (e.g. commit=3fc9bf1)")
    fields: dict[str, Any] = {"testset": testset, "name": run_name, "label": list(labels)}
    if series:
        fields["series"] = series
    try:
        response = _upload(
            f"{base}/api/v1/submissions",
            headers,
            fields,
            {"hypothesis": (os.path.basename(hypothesis), data, "text/plain")},
        )
        accepted = _answer(response)
        submission = accepted["id"]
        if not wait and receipt is None:
            if fmt == "text":
                return f"submission {submission} {accepted['status']}", accepted
            return json.dumps(accepted), accepted
        state = _poll(
            f"{base}/api/v1/submissions/{submission}", headers, ("scored", "failed"), timeout,
            f"submission {submission}",
        )  # fmt: skip
    except requests.RequestException as err:
        raise ConfigError(f"cannot reach {base}: {type(err).__name__}") from None
    if state["status"] == "failed":
        raise InputError(f"submission {submission} failed: {state.get('error')}")
    if receipt is not None:
        write_atomic(receipt, json.dumps(state["receipt"], indent=1, ensure_ascii=False) + "\n")
    if fmt == "text":
        return result_text(state["result"]), state
    return json.dumps(state["result"], indent=1, ensure_ascii=False), state


def result_text(result: Any) -> str:
    """A result document as the scoring command's ``-f text`` prints it: one
    ``NAME|SIGNATURE = SCORE DETAILS`` line per metric, aligned on ``=``."""
    from bleucli.precision import decimals, shown

    entries = result if isinstance(result, list) else [result]
    lines = []
    for entry in entries:
        head = f"{entry['name']}|{entry['signature']}" if entry.get("signature") else entry["name"]
        score = shown(float(entry["score"]), decimals(1, entry["name"]))
        detail = f" {entry['verbose_score']}" if entry.get("verbose_score") else ""
        lines.append((head, f" = {score}{detail}"))
    pad = max(len(head) for head, _ in lines)
    return "\n".join(f"{head:>{pad}}{rest}" for head, rest in lines)


def gate(
    server: str,
    token_file: str,
    submission: int,
    options: dict[str, Any],
    fmt: str,
    junit: str | None,
    timeout: float = 600.0,
) -> tuple[str, int, str]:
    """The server-side gate of a scored run (queued for a worker, then polled):
    ``bleucli gate``'s lines (or ``-f json``), JUnit report, GitHub annotations and step
    summary, and its exit code (3: failed): (stdout, exit code, annotations for stderr)."""
    import requests

    from bleucli.gating.render import (
        EXIT_GATE_FAILED,
        actions_annotations,
        render_text,
        write_junit,
        write_step_summary,
    )
    from bleucli.results import Check

    base = server.rstrip("/")
    headers = {"Authorization": f"Bearer {_token(token_file)}"}
    try:
        response = requests.post(
            f"{base}/api/v1/submissions/{submission}/gate", headers=headers, json=options,
            timeout=120,
        )  # fmt: skip
        queued = _answer(response)
        job = _poll(f"{base}/api/v1/jobs/{queued['job']}", headers, ("done", "failed"), timeout,
                    f"the gate of run {submission}")  # fmt: skip
    except requests.RequestException as err:
        raise ConfigError(f"cannot reach {base}: {type(err).__name__}") from None
    if job["status"] == "failed":
        raise InputError(f"the gate of run {submission} failed: {job.get('error')}")
    verdict = job["result"]
    checks = [Check(**check) for check in verdict["checks"]]
    baseline = verdict.get("baseline")
    head = f"run {submission} of series {verdict['series']!r} against " + (
        f"run {baseline} ({verdict['against']})"
        if baseline
        else "no earlier run on this version of the test set (the first of its series there)"
    )
    text = json.dumps(verdict, indent=1) if fmt == "json" else head + "\n" + render_text(checks)
    annotations = actions_annotations(checks)
    write_step_summary(head, checks)
    if junit:
        write_junit(checks, junit)
    return text, EXIT_GATE_FAILED if not verdict["passed"] else 0, annotations
