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
