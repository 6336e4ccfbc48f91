"""bleucli's logger (``logging.getLogger("bleucli")``), created on the first message.

Most runs log nothing, and importing :mod:`logging` costs a start-up several milliseconds,
so every module logs through :data:`logger`, a stand-in that imports ``logging`` when it is
first used; the command line's settings (:func:`configure`) are applied then.
"""

from __future__ import annotations

import sys
from typing import Any

NAME = "bleucli"

#: The command line's choice (``-q``), applied when the logger is first used.
_pending: dict[str, bool] = {}


def _apply(quiet: bool) -> None:
    """Messages go to stderr as ``bleucli: ...``; ``-q`` keeps only warnings and errors."""
    import logging

    class StderrHandler(logging.StreamHandler):
        """Writes to whatever ``sys.stderr`` is at the time (tests and tools swap it)."""

        @property
        def stream(self):
            return sys.stderr

        @stream.setter
        def stream(self, _value) -> None:
            pass

    real = logging.getLogger(NAME)
    handler = StderrHandler()
    handler.setFormatter(logging.Formatter("bleucli: %(message)s"))
    real.handlers[:] = [handler]
    real.setLevel(logging.WARNING if quiet else logging.INFO)


def configure(quiet: bool) -> None:
    """The command line's logging: now if ``logging`` is loaded, else on the first message."""
    if "logging" in sys.modules:
        _pending.clear()
        _apply(quiet)
    else:
        _pending["quiet"] = quiet


class _Logger:
    """Forwards to the real logger, made (and configured) on first use."""

    def __getattr__(self, name: str) -> Any:
        import logging

        if _pending:
            _apply(_pending.pop("quiet"))
        return getattr(logging.getLogger(NAME), name)


logger: Any = _Logger()
