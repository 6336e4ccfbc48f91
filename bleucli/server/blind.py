"""What keeps a blind test set blind: receipts that commit to its references with a key only
the organisers hold until ``reveal`` publishes it, the seeded public part of a split set,
and results cut to the scores and signatures a leaderboard shows.

A plain SHA-256 of the references in a blind receipt lets anyone confirm a guessed
reference file (``bleucli verify receipt.json -i HYP GUESS.de``). HMAC-SHA256 under the
version's 256-bit secret commits to the same bytes but cannot be checked without the key:
before the reveal a guess tells nothing; after it the receipt verifies in full.

A split set (``--public-fraction F``, as Kaggle keeps its leaderboards from being
overfitted) ranks on its public part until the deadline and on the rest after it. The
public part is the ``round(F * n)`` lines (at least one, and one fewer than all) whose
HMAC-SHA256 of ``bleucli-public-part:I`` (I the line's index from 0) under the secret is
smallest: fixed for the version, unknown to participants until the reveal, and rebuilt
from the published key by ``bleucli verify``.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

SCHEME = "hmac-sha256"


def commitment(secret: str, data: bytes) -> str:
    """HMAC-SHA256 of ``data`` under the version's secret (hex)."""
    return hmac.new(bytes.fromhex(secret), data, hashlib.sha256).hexdigest()


def public_lines(secret: str, n_lines: int, fraction: float) -> list[int]:
    """The public part's line indices (from 0, ascending)."""
    if n_lines < 2:
        return list(range(n_lines))
    k = min(max(round(fraction * n_lines), 1), n_lines - 1)
    key = bytes.fromhex(secret)

    def rank(index: int) -> bytes:
        return hmac.new(
            key, f"bleucli-public-part:{index}".encode("ascii"), hashlib.sha256
        ).digest()

    return sorted(sorted(range(n_lines), key=rank)[:k])


def rest_lines(secret: str, n_lines: int, fraction: float) -> list[int]:
    """The lines outside the public part (from 0, ascending)."""
    public = set(public_lines(secret, n_lines, fraction))
    return [index for index in range(n_lines) if index not in public]


def public_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A result entry cut to its name, rounded score, signature and the signature's own
    fields: BLEU's n-gram precisions and lengths, finer than the score, are left out."""
    signature = str(entry.get("signature", ""))
    fields = {part.split(":", 1)[0] for part in signature.split("|") if ":" in part}
    keep = {"name", "score", "signature"} | fields
    return {key: value for key, value in entry.items() if key in keep}


def public_result(result: Any) -> Any:
    """:func:`public_entry` of every entry of a scoring result (one entry or a list)."""
    if isinstance(result, list):
        return [public_entry(entry) for entry in result]
    return public_entry(result)


def part_shown(testset: Any, row: Any) -> str:
    """``"all"``, or for a split set ``"public"`` before its deadline and ``"rest"`` after."""
    if not row.parts:
        return "all"
    return "rest" if testset.closed or testset.revealed else "public"
