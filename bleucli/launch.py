"""Console entry point. ``bleucli --help`` and ``--version`` are answered here without
importing click (a third of the tool's start-up); everything else goes to
:func:`bleucli.cli.main`.

The help text is click's own rendering, stored in :mod:`bleucli._help` for the two widths
click picks in practice (80-column terminals and pipes; terminals of 100 columns or more).
``scripts/update_help.py`` regenerates it and a test fails when it is out of date.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

#: Commands of the evaluation server (``bleucli.cli_server``).
SERVER_COMMANDS = ("server", "submit", "verify")
#: Commands with their own module above ``bleucli.cli`` (they use its runner).
OWN_MODULES = {"meta-eval": "bleucli.cli_metaeval"}


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
        from bleucli._help import HELP

        width = max(min(terminal_columns(), 100) - 2, 50)  # as click does
        return HELP.get(width)
    return None


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    answer = fast_answer(args)
    if answer is not None:
        sys.stdout.write(answer)
        sys.stdout.flush()
        sys.exit(0)
    if args and args[0] in SERVER_COMMANDS:
        from bleucli.cli_server import main as server_main

        server_main(args)
        return
    if args and args[0] in OWN_MODULES:
        from importlib import import_module

        import_module(OWN_MODULES[args[0]]).main(args[1:])
        return
    from bleucli.cli import main as full_main

    full_main(args)
