"""Which scoring engine runs: the optional compiled core (``bleucli._native``, built by
``pip install .`` when a C compiler is present) or the pure-Python engine, which is the
specification: both give identical statistics, scores and signatures, and the tests check
that. ``BLEUCLI_PUREPYTHON=1`` forces the pure-Python engine (msgpack's pattern)."""

from __future__ import annotations

import os
from types import ModuleType


def _load() -> ModuleType | None:
    if os.environ.get("BLEUCLI_PUREPYTHON", "").strip() not in ("", "0"):
        return None
    try:
        from bleucli import _native
    except ImportError:
        return None
    return _native


#: The compiled module, or None when the pure-Python engine runs.
native: ModuleType | None = _load()
#: ``"native"`` or ``"python"``: what ``bleucli --version`` reports.
ENGINE = "native" if native is not None else "python"
