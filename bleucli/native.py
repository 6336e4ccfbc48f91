"""Which scoring engine runs: the optional compiled core (``bleucli._native``, built by
``pip install .`` when a C compiler is present) or the pure-Python engine, which is the
specification: both give identical statistics, scores and signatures, and the tests check
that. ``BLEUCLI_PUREPYTHON=1`` forces the pure-Python engine (msgpack's pattern).

In a source checkout (the C files beside the package) a core built from other sources than
the ones there is not used: it would score with code the tree no longer has.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

#: The files the core is built from, in setup.py's order (same order: same hash).
SOURCES = (
    "_native.c",
    "_native_ter.c",
    "_native_batch.c",
    "_native_aligned.c",
    "_native_mwer.c",
    "_native_kendall.c",
    "_native.h",
    "_native_batch.h",
)


def source_hash(folder: str) -> str | None:
    """The digest setup.py records in the core for the C sources in ``folder``, or None
    when they are not there (an installed wheel ships no C sources). A CRC, not a
    cryptographic hash: it tells an edited source from the built one, and ``zlib`` loads
    in a fraction of ``hashlib``'s time."""
    import zlib

    try:
        data = b"".join(_read(os.path.join(folder, name)) for name in SOURCES)
    except OSError:
        return None
    return f"{zlib.crc32(data):08x}-{len(data)}"


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _load() -> ModuleType | None:
    if os.environ.get("BLEUCLI_PUREPYTHON", "").strip() not in ("", "0"):
        return None
    try:
        from bleucli import _native
    except ImportError:
        return None
    folder = os.path.dirname(_native.__file__)
    expected = source_hash(folder)
    if expected is not None and getattr(_native, "SOURCE_HASH", "") != expected:
        sys.stderr.write(
            f"bleucli: the compiled core {os.path.basename(_native.__file__)} was built from "
            f"other sources than {os.path.join(folder, SOURCES[0])}; using the pure-Python "
            f"engine (same results, slower) until it is rebuilt: pip install -e .\n"
        )
        return None
    return _native


#: The compiled module, or None when the pure-Python engine runs.
native: ModuleType | None = _load()
#: ``"native"`` or ``"python"``: what ``bleucli --version`` reports.
ENGINE = "native" if native is not None else "python"
