"""Signed receipts: a submission's result, the hashes of what it was scored from, and an
Ed25519 signature over the canonical JSON of all that (sorted keys, no spaces, UTF-8), made
with the server's key. Anyone with the public key checks it offline (``bleucli verify``)."""

from __future__ import annotations

import base64
import json
from typing import Any

from bleucli.errors import ConfigError

RECEIPT_VERSION = 1


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        from bleucli.server import INSTALL_HINT

        raise ConfigError(f"receipts need the cryptography package: {INSTALL_HINT}") from None
    return ed25519


def canonical(document: dict[str, Any]) -> bytes:
    """The bytes that are signed: every field but ``signature``, canonical JSON."""
    unsigned = {k: v for k, v in document.items() if k != "signature"}
    return json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def new_private_key() -> str:
    """A new Ed25519 private key as PKCS#8 PEM."""
    from cryptography.hazmat.primitives import serialization

    key = _crypto().Ed25519PrivateKey.generate()
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode("ascii")


def public_pem(private_pem: str) -> str:
    """The SubjectPublicKeyInfo PEM of a private key."""
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(private_pem.encode("ascii"), password=None)
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode("ascii")
    )


def sign(document: dict[str, Any], private_pem: str) -> dict[str, Any]:
    """``document`` with its ``signature`` (base64)."""
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(private_pem.encode("ascii"), password=None)
    signature = key.sign(canonical(document))  # type: ignore[call-arg, union-attr]
    return {**document, "signature": base64.b64encode(signature).decode("ascii")}


def check(document: dict[str, Any], public: str) -> bool:
    """Whether ``document``'s signature was made over its other fields with ``public``'s key."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import serialization

    _crypto()
    try:
        key = serialization.load_pem_public_key(public.encode("ascii"))
    except ValueError:
        raise ConfigError("the public key is not an Ed25519 PEM key") from None
    try:
        signature = base64.b64decode(str(document.get("signature", "")), validate=True)
        key.verify(signature, canonical(document))  # type: ignore[call-arg, union-attr]
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def document(
    submission: int,
    testset: Any,
    version: Any,
    hypothesis_sha256: str,
    result: Any,
    parts: dict[str, Any] | None,
    issued_at: str,
    server: str,
) -> dict[str, Any]:
    """The unsigned receipt of a scored run. On a blind set whose version has a secret, a
    version-2 receipt: the reference files committed with HMAC-SHA256 under that secret (checkable
    once ``reveal`` publishes it), the result cut to what the leaderboard shows, and on a
    split set the public part's result. Otherwise version 1: the references' SHA-256."""
    from bleucli.server import blind
    from bleucli.version import __version__

    common = {
        "submission": submission,
        "testset": testset.name,
        "hypothesis_sha256": hypothesis_sha256,
        "version": __version__,
        "issued_at": issued_at,
        "server": server,
    }
    if testset.visibility != "blind" or version.references_hmac is None:
        return {"bleucli_receipt": RECEIPT_VERSION, **common,
                "references_sha256": version.references_sha256, "result": result}  # fmt: skip
    digests = list(version.references_hmac)
    lines: Any = "all"
    if parts is not None:
        result = parts["public"]["result"]
        lines = {"part": "public", "fraction": version.public_fraction}
    return {
        "bleucli_receipt": 2,
        **common,
        "testset_version": version.number,
        "references_commitment": {"scheme": blind.SCHEME, "digests": digests},
        "lines": lines,
        "result": blind.public_result(result),
    }
