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


def _installed_core(package: str) -> ModuleType | None:
    """The compiled core of an installed bleucli elsewhere on ``sys.path`` that was built
    from the same C sources as ``package`` (a source tree that shadows the installed
    package: ``python`` run in the repository after ``pip install .``)."""
    import glob
    import importlib.util

    expected = source_hash(package)
    if expected is None:
        return None
    for entry in sys.path:
        folder = os.path.join(entry or os.getcwd(), "bleucli")
        try:
            if not os.path.isdir(folder) or os.path.samefile(folder, package):
                continue
        except OSError:
            continue
        for file in sorted(glob.glob(os.path.join(folder, "_native*.so"))
                           + glob.glob(os.path.join(folder, "_native*.pyd"))):  # fmt: skip
            spec = importlib.util.spec_from_file_location("bleucli._native", file)
            if spec is None or spec.loader is None:
                continue
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except ImportError:
                continue
            if getattr(module, "SOURCE_HASH", "") == expected:
                sys.modules["bleucli._native"] = module
                return module
    return None


def _say_missing(package: str) -> None:
    """One line: the slow engine runs, why, and what gives the fast one."""
    if source_hash(package) is not None:
        why = (
            f"{package} has no compiled core (a source tree that shadows the installed "
            f"bleucli, or one never built): build it in place with `pip install -e .`"
        )
    else:
        why = (
            "bleucli was installed without its compiled core (no C compiler then?): "
            "reinstall where a C compiler is, or from a wheel"
        )
    sys.stderr.write(
        f"bleucli: the pure-Python engine runs (same numbers, 20-160x slower): {why}; "
        f"BLEUCLI_PUREPYTHON=1 chooses it without this notice\n"
    )


def _load() -> ModuleType | None:
    if os.environ.get("BLEUCLI_PUREPYTHON", "").strip() not in ("", "0"):
        return None
    package = os.path.dirname(os.path.abspath(__file__))
    try:
        from bleucli import _native
    except ImportError:
        found = _installed_core(package)
        if found is None:
            _say_missing(package)
        return found
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
