"""The offline switch (``--offline``, ``BLEUCLI_OFFLINE=1``): nothing is downloaded, neither
test sets nor SentencePiece models. Its own module so that every command can set it without
loading the download code."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

ENV_OFFLINE = "BLEUCLI_OFFLINE"


def offline_from_environment() -> bool:
    return os.environ.get(ENV_OFFLINE, "").strip().lower() not in ("", "0", "false", "no")


@contextmanager
def offline_mode(enabled: bool) -> Iterator[None]:
    """``--offline`` for everything a run may fetch, restored afterwards (the API and
    tests run commands in-process)."""
    if not enabled:
        yield
        return
    previous = os.environ.get(ENV_OFFLINE)
    os.environ[ENV_OFFLINE] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(ENV_OFFLINE, None)
        else:
            os.environ[ENV_OFFLINE] = previous
