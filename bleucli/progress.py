"""Progress on stderr for long work: a bar where a person watches (a terminal, without
``-q``); where nobody watches a bar -- a CI log, a pipe -- a line at most once a minute
(:data:`LOG_EVERY`) for a stage that takes longer, so a long run is never minutes of silence.

Commands call :func:`configure` once; library code wraps its stages in :func:`stage`, which
costs next to nothing when progress is off (``-q``, the Python API).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_enabled = False
#: Periodic lines where no bar shows (a command without -q, stderr not a terminal).
_logging = False
#: Seconds between two lines of a stage that no bar shows.
LOG_EVERY = 60.0


def configure(quiet: bool) -> None:
    """Turn bars on when stderr is a terminal and ``-q`` was not given; elsewhere (without
    ``-q``) a line a minute for long stages."""
    global _enabled, _logging
    terminal = sys.stderr is not None and sys.stderr.isatty()
    _enabled = not quiet and terminal
    _logging = not quiet and sys.stderr is not None and not terminal


def enabled() -> bool:
    return _enabled


def _ignore(steps: int = 1) -> None:
    """``advance`` when no bar is shown."""


@contextmanager
def stage(label: str, total: int) -> Iterator[Callable[[int], None]]:
    """A named stage of ``total`` steps; yields ``advance(steps=1)``."""
    if _logging and not _enabled and total > 0:
        yield _lines(label, total)
        return
    if not _enabled or total <= 0:
        yield _ignore
        return
    import click

    with click.progressbar(
        length=total, label=f"bleucli: {label}", file=sys.stderr, width=30, show_eta=True
    ) as bar:
        yield bar.update


def _lines(label: str, total: int) -> Callable[[int], None]:
    """``advance`` that writes ``bleucli: LABEL: DONE of TOTAL (P%)`` at most once a
    :data:`LOG_EVERY` seconds (the first after that long: short stages say nothing)."""
    import time

    started = time.monotonic()
    state = {"done": 0, "said": started}

    def advance(steps: int = 1) -> None:
        state["done"] += steps
        moment = time.monotonic()
        if moment - state["said"] >= LOG_EVERY:
            state["said"] = moment
            done = min(int(state["done"]), total)
            sys.stderr.write(
                f"bleucli: {label}: {done:,} of {total:,} ({100 * done // total}%), "
                f"{moment - started:.0f} s so far\n"
            )
            sys.stderr.flush()

    return advance
