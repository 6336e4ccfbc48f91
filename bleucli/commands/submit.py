"""``bleucli submit``: upload an output to a bleucli server; with ``--wait``, print the
result once scored. A refusal prints the server's message on one line (exit 1)."""

from __future__ import annotations

import json
import time
from typing import Any

from bleucli.errors import ConfigError, InputError


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


def submit(
    server: str,
    token_file: str,
    testset: str,
    hypothesis: str,
    name: str | None,
    wait: bool,
    receipt: str | None,
    timeout: float = 600.0,
) -> str:
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
    try:
        response = requests.post(
            f"{base}/api/v1/submissions",
            headers=headers,
            data={"testset": testset, "name": run_name},
            files={"hypothesis": (os.path.basename(hypothesis), data, "text/plain")},
            timeout=120,
        )
        accepted = _answer(response)
        submission = accepted["id"]
        if not wait and receipt is None:
            return json.dumps(accepted)
        deadline = time.monotonic() + timeout
        while True:
            state = _answer(
                requests.get(f"{base}/api/v1/submissions/{submission}", headers=headers, timeout=60)
            )
            if state["status"] in ("scored", "failed"):
                break
            if time.monotonic() > deadline:
                raise InputError(
                    f"submission {submission} is still {state['status']} after {timeout:g} s"
                )
            time.sleep(0.2)
    except requests.RequestException as err:
        raise ConfigError(f"cannot reach {base}: {type(err).__name__}") from None
    if state["status"] == "failed":
        raise InputError(f"submission {submission} failed: {state.get('error')}")
    if receipt is not None:
        write_atomic(receipt, json.dumps(state["receipt"], indent=1, ensure_ascii=False) + "\n")
    return json.dumps(state["result"], indent=1, ensure_ascii=False)
