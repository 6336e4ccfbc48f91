"""Progress on stderr for long work, only where a person watches: a terminal, without ``-q``.

Commands call :func:`configure` once; library code wraps its stages in :func:`stage`, which
costs nothing when progress is off (pipes, files, ``-q``, the Python API).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_enabled = False


def configure(quiet: bool) -> None:
    """Turn bars on when stderr is a terminal and ``-q`` was not given."""
    global _enabled
    _enabled = not quiet and sys.stderr is not None and sys.stderr.isatty()


def enabled() -> bool:
    return _enabled


def _ignore(steps: int = 1) -> None:
    """``advance`` when no bar is shown."""


@contextmanager
def stage(label: str, total: int) -> Iterator[Callable[[int], None]]:
    """A named stage of ``total`` steps; yields ``advance(steps=1)``."""
    if not _enabled or total <= 0:
        yield _ignore
        return
    import click

    with click.progressbar(
        length=total, label=f"bleucli: {label}", file=sys.stderr, width=30, show_eta=True
    ) as bar:
        yield bar.update
