"""``bleucli verify RECEIPT.json``: check a server's receipt offline. One line per check:
the signature (with ``--key FILE`` or the key from ``--server URL``); with ``-i HYP``, the
hypothesis' hash; with the references (files, or ``-t SET -l PAIR``), their hashes (files)
and every score, recomputed from the receipt's signatures. Exit 0 when all hold."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from bleucli.errors import ConfigError


def load(path: str) -> dict[str, Any]:
    from bleucli.io import read_json

    document = read_json(path, "a bleucli receipt")
    if not isinstance(document, dict) or document.get("bleucli_receipt") != 1:
        raise ConfigError(f'{path}: not a bleucli receipt (no "bleucli_receipt": 1)')
    for field in ("signature", "result", "hypothesis_sha256", "references_sha256"):
        if field not in document:
            raise ConfigError(f"{path}: the receipt has no {field!r}")
    return document


def public_key(key: str | None, server: str | None) -> str:
    if key:
        try:
            with open(key, encoding="ascii") as handle:
                return handle.read()
        except (OSError, UnicodeDecodeError) as err:
            raise ConfigError(f"{key}: cannot read the key ({err})") from None
    if server:
        import requests

        try:
            response = requests.get(server.rstrip("/") + "/api/v1/key", timeout=60)
        except requests.RequestException as err:
            raise ConfigError(f"cannot reach {server}: {type(err).__name__}") from None
        if response.status_code != 200:
            raise ConfigError(f"{server} answered {response.status_code} for its key")
        return response.text
    raise ConfigError("give the server's public key with --key FILE or --server URL")


def _sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _close(recomputed: float, stated: float) -> bool:
    """Equal to the decimals the receipt writes (as the gate compares result files)."""
    decimals = 0 if float(stated).is_integer() else len(repr(float(stated)).split(".")[1])
    return math.isclose(recomputed, stated, abs_tol=0.5 * 10**-decimals + 1e-9)


def verify(
    receipt_path: str,
    key: str | None,
    server: str | None,
    hypothesis: str | None,
    refs: tuple[str, ...],
    test_set: str | None,
    language_pair: str | None,
) -> tuple[str, bool]:
    from bleucli.server.receipts import check

    receipt = load(receipt_path)
    lines: list[str] = []
    ok = True

    def report(passed: bool, text: str) -> None:
        nonlocal ok
        ok = ok and passed
        lines.append(f"{'PASS' if passed else 'FAIL'} {text}")

    if key or server:
        signed = check(receipt, public_key(key, server))
        report(
            signed,
            "signature: "
            + (
                "made by the server's key over every field"
                if signed
                else "does not match the receipt's fields"
            ),
        )
    else:
        lines.append("SKIP signature: give --key FILE or --server URL to check it")
    if hypothesis:
        digest = _sha256(hypothesis)
        report(
            digest == receipt["hypothesis_sha256"],
            f"hypothesis {hypothesis}: sha256 {digest[:16]}...",
        )
    if refs:
        stated = list(receipt["references_sha256"])
        digests = [_sha256(path) for path in refs]
        report(
            digests == stated,
            f"references: sha256 of {len(refs)} file(s) "
            + ("match" if digests == stated else "differ"),
        )
    if (refs or test_set) and hypothesis:
        for entry in _entries(receipt["result"]):
            score = _rescore(entry, hypothesis, refs, test_set, language_pair)
            report(
                _close(score, float(entry["score"])),
                f"{entry['name']} recomputed {score:.4f}, receipt says {entry['score']}",
            )
    elif refs or test_set:
        lines.append("SKIP scores: give the hypothesis (-i HYP) to recompute them")
    return "\n".join(lines), ok


def _entries(result: Any) -> list[dict[str, Any]]:
    return result if isinstance(result, list) else [result]


def _rescore(entry: dict[str, Any], hypothesis: str, refs: tuple[str, ...], test_set: str | None,
             language_pair: str | None) -> float:  # fmt: skip
    """The score of the hypothesis under the entry's own signature (``--from-signature``)."""
    from bleucli.cli import scoring_options
    from bleucli.commands.score import run

    where = list(refs) if refs else ["-t", str(test_set), "-l", str(language_pair or "")]
    signature = f"{entry['name']}|{entry['signature']}"
    options = scoring_options(
        [*where, "-i", hypothesis, "--from-signature", signature, "-f", "json", "-w", "10", "-q"]
    )
    document = json.loads(run(options))
    return float((document[0] if isinstance(document, list) else document)["score"])
