"""The tokeniser interface: a pure ``str -> str`` function with a signature name."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import ClassVar

#: Sentences repeat across systems and references; caching the tokenised form pays off
#: for the regex-heavy tokenisers. The size bounds memory on web-scale inputs.
CACHE_SIZE = 2**16


class Tokenizer:
    """A tokeniser turns a detokenised sentence into space-separated tokens.

    Subclasses implement :meth:`tokenize`; calling the instance goes through a
    per-instance LRU cache when ``cached`` is true, because the function is pure.
    """

    #: The name used in signatures (``tok:13a``) and on the command line.
    name: ClassVar[str] = ""
    #: Whether calls should be memoised (not worth it for trivial tokenisers).
    cached: ClassVar[bool] = True

    def __init__(self) -> None:
        self._make_cache()

    def _make_cache(self) -> None:
        self._call: Callable[[str], str]
        if self.cached:
            self._call = lru_cache(maxsize=CACHE_SIZE)(self.tokenize)
        else:
            self._call = self.tokenize

    def __getstate__(self) -> dict:
        """Pickle without the cache (a bound ``lru_cache`` cannot be pickled), so metric
        objects can be sent to ``multiprocessing`` workers; the copy starts a fresh cache."""
        state = self.__dict__.copy()
        state.pop("_call", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._make_cache()

    def tokenize(self, line: str) -> str:
        raise NotImplementedError

    def __call__(self, line: str) -> str:
        return self._call(line)

    def signature(self) -> str:
        """The value of the ``tok:`` signature field (may carry versions, e.g. MeCab's)."""
        return self.name
