"""Console entry point and the one table of subcommands. ``bleucli --help`` and
``--version`` are answered here without importing click (a third of the tool's start-up); a
subcommand's module is imported only when it runs (the scoring command never imports the
server's); everything else is the scoring command, :func:`bleucli.cli.main`.

The help text is click's own rendering, stored in :mod:`bleucli.cli._help` for the two widths
click picks in practice (80-column terminals and pipes; terminals of 100 columns or more).
``scripts/update_help.py`` regenerates it and a test fails when it is out of date.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from bleucli.cli.subcommands import COMMANDS


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` works it out ($COLUMNS, then the
    terminal of stdout, else 80), without importing shutil: a bare interpreter has not
    loaded it, and the fast path is here to stay light."""
    import os

    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def fast_answer(args: Sequence[str]) -> str | None:
    """The output of ``bleucli ARGS`` if it is a stored help text or the version, else None."""
    if len(args) != 1:
        return None
    if args[0] in ("-V", "--version"):
        from bleucli.native import ENGINE
        from bleucli.version import __version__

        return f"bleucli {__version__} ({ENGINE} engine)\n"
    if args[0] in ("-h", "--help"):
        from bleucli.cli._help import HELP

        width = max(min(terminal_columns(), 100) - 2, 50)  # as click does
        return HELP.get(width)
    return None


def dispatch(args: list[str]) -> None:
    """Run ``bleucli ARGS``: a subcommand of :data:`COMMANDS`, else the scoring command."""
    if args and args[0] in COMMANDS and COMMANDS[args[0]].attribute:
        from importlib import import_module

        from bleucli.cli.run import run_command, single_threaded_blas

        entry = COMMANDS[args[0]]
        single_threaded_blas()
        selected = getattr(import_module(entry.module), entry.attribute)
        run_command(selected, args[1:], f"bleucli {args[0]}")
        return
    from bleucli.cli.main import main as scoring_main

    scoring_main(args)


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    answer = fast_answer(args)
    if answer is not None:
        sys.stdout.write(answer)
        sys.stdout.flush()
        sys.exit(0)
    dispatch(args)
