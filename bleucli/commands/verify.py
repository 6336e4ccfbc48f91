"""``bleucli verify RECEIPT.json``: check a server's receipt offline. One line per check:
the signature (with ``--key FILE`` or the key from ``--server URL``); with ``-i HYP``, the
hypothesis' hash; with the references (files, or ``-t SET -l PAIR``), their hashes (files)
and every score, recomputed from the receipt's signatures. A blind set's receipt commits to
its references with a key the organisers publish at the reveal: before it, the references
(and so the scores) cannot be checked, and nothing about a guessed reference file is
confirmed; after it, ``--server`` fetches the key (or give it with ``--reference-key``) and
the receipt verifies in full.

Exit 0 when every check passed and nothing was left unchecked (``--partial``: when none
failed), 1 otherwise; the last line says which."""

from __future__ import annotations

import math
from typing import Any

from bleucli.errors import BleucliError, ConfigError, UsageError
from bleucli.hashing import sha256_hex
from bleucli.results import result_entries


def load(path: str) -> dict[str, Any]:
    from bleucli.io import read_json

    document = read_json(path, "a bleucli receipt")
    if not isinstance(document, dict) or document.get("bleucli_receipt") not in (1, 2):
        raise ConfigError(f'{path}: not a bleucli receipt (no "bleucli_receipt": 1 or 2)')
    references = (
        "references_sha256" if document["bleucli_receipt"] == 1 else "references_commitment"
    )
    for field in ("signature", "result", "hypothesis_sha256", references):
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
    return sha256_hex(_read_bytes(path))


def _close(recomputed: float, stated: float) -> bool:
    """Equal to the decimals the receipt writes (as the gate compares result files)."""
    decimals = 0 if float(stated).is_integer() else len(repr(float(stated)).split(".")[1])
    return math.isclose(recomputed, stated, abs_tol=0.5 * 10**-decimals + 1e-9)


def _get_json(server: str, path: str) -> Any:
    import requests

    try:
        response = requests.get(server.rstrip("/") + path, timeout=60)
    except requests.RequestException as err:
        raise ConfigError(f"cannot reach {server}: {type(err).__name__}") from None
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def reference_key(receipt: dict[str, Any], given: str | None, server: str | None) -> str | None:
    """The key of a blind receipt's commitment: given, or published by the server once the
    set is revealed; None while it is secret."""
    if given:
        try:
            bytes.fromhex(given)
        except ValueError:
            raise UsageError("--reference-key: give the key as hexadecimal") from None
        return given
    if not server:
        return None
    from urllib.parse import quote

    facts = _get_json(server, f"/api/v1/testsets/{quote(str(receipt.get('testset', '')), safe='')}")
    if not isinstance(facts, dict):
        return None
    for version in facts.get("versions", []):
        if version.get("number") == receipt.get("testset_version") and version.get("key"):
            return str(version["key"])
    return None


def verify(
    receipt_path: str,
    key: str | None,
    server: str | None,
    hypothesis: str | None,
    refs: tuple[str, ...],
    test_set: str | None,
    language_pair: str | None,
    secret: str | None = None,
    partial: bool = False,
    source: str | None = None,
    models: tuple[str, ...] = (),
) -> tuple[str, bool]:
    from bleucli.server.receipts import check

    if secret is not None:
        reference_key({}, secret, None)  # a malformed key is a usage mistake: before any file
    receipt = load(receipt_path)
    lines: list[str] = []
    failed: list[str] = []
    skipped: list[str] = []

    def report(passed: bool, what: str, text: str) -> None:
        if not passed:
            failed.append(what)
        lines.append(f"{'PASS' if passed else 'FAIL'} {text}")

    def skip(what: str, text: str) -> None:
        skipped.append(what)
        lines.append(f"SKIP {what}: {text}")

    if key or server:
        signed = check(receipt, public_key(key, server))
        report(
            signed,
            "signature",
            "signature: "
            + (
                "made by the server's key over every field"
                if signed
                else "does not match the receipt's fields"
            ),
        )
    else:
        skip("signature", "give --key FILE or --server URL to check it")
    if hypothesis:
        digest = _sha256(hypothesis)
        report(
            digest == receipt["hypothesis_sha256"],
            "hypothesis",
            f"hypothesis {hypothesis}: sha256 {digest[:16]}...",
        )
    else:
        skip("hypothesis", "give it with -i HYP")
    blind = receipt["bleucli_receipt"] == 2
    checked_refs = True
    key_hex = None
    if blind:
        key_hex = reference_key(receipt, secret, server)
    if not refs and not test_set:
        skip("references", "give the reference files (or -t SET -l PAIR)")
        checked_refs = False
    elif blind and key_hex is None:
        skip(
            "references",
            f"committed with a keyed hash until the organisers reveal {receipt.get('testset')}; "
            "verify again after the reveal (--server URL fetches the key then)",
        )
        checked_refs = False
    elif refs:
        if blind:
            from bleucli.server.blind import commitment

            stated = list(receipt["references_commitment"]["digests"])
            digests = [commitment(str(key_hex), _read_bytes(path)) for path in refs]
            kind = "keyed hash (HMAC-SHA256)"
        else:
            stated = list(receipt["references_sha256"])
            digests = [_sha256(path) for path in refs]
            kind = "sha256"
        report(
            digests == stated,
            "references",
            f"references: {kind} of {len(refs)} file(s) "
            + ("match" if digests == stated else "differ"),
        )
    if not checked_refs:
        skip("scores", "recomputed once the references are checked")
    elif not hypothesis:
        skip("scores", "give the hypothesis (-i HYP) to recompute them")
    else:
        part = receipt.get("lines", "all")
        if part != "all" and not refs:
            skip("scores", "give the reference files to recompute a part's scores")
        else:
            hyp_lines, ref_lines, src_lines = _part_lines(part, key_hex, hypothesis, refs,
                                                          test_set, language_pair, source)  # fmt: skip
            for entry in result_entries(receipt["result"]):
                overrides, reason = _neural_plan(entry, src_lines is not None, models)
                if reason is not None:
                    skip(entry["name"], reason)
                    continue
                try:
                    score = _rescore(entry, hyp_lines, ref_lines, src_lines, overrides)
                except BleucliError as err:
                    if not _is_neural(entry):
                        raise
                    skip(entry["name"], f"cannot recompute it here: {err}")
                    continue
                report(
                    _close(score, float(entry["score"])),
                    entry["name"],
                    f"{entry['name']} recomputed {score:.4f}, receipt says {entry['score']}"
                    + (" (the public part's lines)" if part != "all" else ""),
                )
    if failed:
        lines.append(f"not verified: {len(failed)} check(s) failed ({', '.join(failed)})")
    elif skipped:
        lines.append(f"incomplete: not checked: {', '.join(skipped)}")
    else:
        lines.append("verified: every check passed")
    return "\n".join(lines), not failed and (partial or not skipped)


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read ({err.strerror or err})") from None


def _part_lines(part: Any, key: str | None, hypothesis: str, refs: tuple[str, ...],
                test_set: str | None, language_pair: str | None, source: str | None = None,
                ) -> tuple[list[str], list[list[str]], list[str] | None]:  # fmt: skip
    """The hypothesis, reference and source lines a receipt's scores were computed on:
    every line, or a split set's public lines (``part``), chosen with the revealed key."""
    from bleucli.commands.inputs import load_references
    from bleucli.commands.request import Options
    from bleucli.io import check_same_length, read_file

    hyp = read_file(hypothesis)
    if refs:
        sources = load_references(Options(refs=refs))
    else:
        sources = load_references(Options(test_set=test_set, language_pair=language_pair))
    check_same_length(hyp, sources)
    references = [source.lines for source in sources]
    src = None
    if source is not None:
        src = read_file(source).lines
        if len(src) != len(hyp.lines):
            raise ConfigError(f"{source}: {len(src)} lines, the hypothesis has {len(hyp.lines)}")
    if part == "all":
        return hyp.lines, references, src
    from bleucli.server.blind import public_lines

    chosen = public_lines(str(key), len(hyp.lines), float(part["fraction"]))
    return (
        [hyp.lines[i] for i in chosen],
        [[ref[i] for i in chosen] for ref in references],
        [src[i] for i in chosen] if src is not None else None,
    )


def _rescore(
    entry: dict[str, Any],
    hypotheses: list[str],
    references: list[list[str]],
    sources: list[str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> float:
    """The score of the hypotheses under the entry's own signature (``overrides``: options
    replaced, such as where a neural model's weights are here)."""
    from dataclasses import replace

    from bleucli.scoring import MetricRequest, ScoringRequest, score

    request = ScoringRequest.from_signatures([f"{entry['name']}|{entry['signature']}"], 10)
    if overrides:
        metric = request.metrics[0]
        request = replace(
            request, metrics=(MetricRequest(metric.name, {**metric.options, **overrides}),)
        )
    metrics = request.build(references, sources)
    return float(score(request, hypotheses, references, metrics=metrics).results[0].score.score)


def _signature_of(entry: dict[str, Any]) -> Any:
    from bleucli.signature import signature_of

    return signature_of(entry["name"], entry["signature"])


def _is_neural(entry: dict[str, Any]) -> bool:
    from bleucli.metrics import uses_source

    return uses_source(_signature_of(entry).metric)


def _neural_plan(
    entry: dict[str, Any], have_source: bool, models: tuple[str, ...]
) -> tuple[dict[str, Any], str | None]:
    """For a neural metric's entry: the model to recompute it with (a ``--model`` folder
    whose weights have the signature's hash, else the registered model of that name), or
    why it cannot be recomputed here."""
    if not _is_neural(entry):
        return {}, None
    name = entry["name"]
    if not have_source:
        return {}, f"give the source sentences (--source FILE) to recompute {name}"
    from bleucli.neural.load import locate, resolve, split_spec

    spec = str(_signature_of(entry).metric_options().get("model", ""))
    label, _ = split_spec(spec)
    found = locate(spec, models)
    if found != spec:
        return {"model": found}, None
    try:
        resolve(spec)
    except BleucliError as err:
        return {}, (
            f"the model {spec} is not here ({err}); give its folder with --model DIR, "
            f"or download it: bleucli models download {label}"
        )
    return {}, None
