"""Where bleucli keeps what it downloads and computes (test sets, models, embeddings,
hashes): one root for every part of the package, below all of them."""

from __future__ import annotations

import os
from pathlib import Path

ENV_CACHE = "BLEUCLI_CACHE"


def cache_root() -> Path:
    """``BLEUCLI_CACHE``; else a ``bleucli`` folder inside SacreBLEU's ``SACREBLEU`` folder
    when that is set (beside SacreBLEU's own files, never mixed with them); else the
    platform's user cache folder."""
    configured = os.environ.get(ENV_CACHE)
    if configured:
        return Path(configured).expanduser()
    sacrebleu_home = os.environ.get("SACREBLEU")
    if sacrebleu_home:
        return Path(sacrebleu_home).expanduser() / "bleucli"
    import platformdirs

    return Path(platformdirs.user_cache_dir("bleucli", appauthor=False))
