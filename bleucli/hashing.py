"""Content digests, one place for every front end: uploads and tokens (the server),
files (model weights, ``verify``'s hypotheses and references, downloads' md5). A file is
read in 1 MiB blocks, so a multi-gigabyte checkpoint never sits in memory."""

from __future__ import annotations

import hashlib
import os

#: Block size files are read in.
BLOCK = 1 << 20


def sha256_hex(data: bytes | str) -> str:
    """The hex SHA-256 of ``data`` (text is hashed as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def file_digest(path: str | os.PathLike[str], algorithm: str = "sha256") -> str:
    """The hex digest of a file's bytes (``md5`` where a registry publishes md5 sums)."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()
