"""Named test sets: the registry, the cache, and the references of a language pair.

Typical use::

    from bleucli.testsets import TestSets
    data = TestSets().load("wmt14", "en-de")       # downloads once, then from the cache
    refs = data.reference_streams                   # list of streams, as corpus_score wants

The names are resolved on first use (PEP 562): a run that scores files never loads the
registry, download or archive code, and importing a submodule such as
:mod:`bleucli.testsets.offline` costs nothing more.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {
    "TestSets": "bleucli.testsets.loader",
    "LoadedTestSet": "bleucli.testsets.loader",
    "Registry": "bleucli.testsets.registry",
    "TestSet": "bleucli.testsets.registry",
    "LangPair": "bleucli.testsets.registry",
    "cache_root": "bleucli.testsets.store",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bleucli.testsets' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
