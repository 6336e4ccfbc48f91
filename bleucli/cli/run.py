"""How every command runs: library errors as one line and their exit code, interrupts, a
closed pipe, single-threaded BLAS for the statistics, logging."""

from __future__ import annotations

import os
import sys

import click

from bleucli.cli.options import (
    expand_prefixes,
    expand_variadic,
    variadic_flags,
    with_plugin_options,
)
from bleucli.errors import BleucliError

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def configure_logging(quiet: bool) -> None:
    from bleucli.log import configure

    configure(quiet)


def single_threaded_blas() -> None:
    """One BLAS thread unless the user chose otherwise: the command line's matrix products
    (bootstrap draw counts x statistics) are small, and a thread pool spinning beside them
    doubled the CPU time of paired tests for no gain in wall time. Set before numpy loads;
    the Python API leaves the caller's setting alone."""
    import os

    # Threads that wait for work sleep instead of spinning (OpenMP's PASSIVE policy): on a
    # machine where other jobs run (a shared CI runner) spinning threads fight them for the
    # cores. Measured (scripts/BENCHMARKS-neural.md, COMET, 2 cores): as fast idle (1.03x),
    # and 58 s where spinning took 86-97 s and one thread 77 s beside two busy processes.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if "numpy" not in sys.modules:
        if "OMP_NUM_THREADS" not in os.environ:  # neural models take every core back
            from bleucli.neural.runtime import CLI_PINNED_THREADS

            os.environ[CLI_PINNED_THREADS] = "1"
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")


def run_command(selected: click.Command, args: list[str], prog: str, plugins: bool = False) -> None:
    """Run a click command as the tool runs every command: library errors as one line and
    their exit code, interrupts, a closed pipe (``bleucli.cli.server`` runs its commands
    through this too)."""
    try:
        if plugins:  # the metric plugins' options, when the arguments ask for one
            selected = with_plugin_options(selected, args)
        args = expand_prefixes(args, selected)
        returned = selected.main(
            expand_variadic(args, variadic_flags(selected)), prog_name=prog, standalone_mode=False
        )
        if isinstance(returned, int) and returned:  # click returns Exit codes here
            sys.exit(returned)
    except click.exceptions.Abort:
        click.echo("bleucli: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.exceptions.Exit as stop:
        sys.exit(stop.exit_code)
    except click.ClickException as err:
        err.show()
        sys.exit(EXIT_USAGE if isinstance(err, click.UsageError) else EXIT_ERROR)
    except BleucliError as err:
        click.echo(f"bleucli: error: {_one_line(str(err))}", err=True)
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        click.echo("bleucli: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except BrokenPipeError:  # the reader went away (`| head`): nothing left to say
        _quiet_stdout()
        sys.exit(EXIT_OK)
    except MemoryError:
        click.echo(
            "bleucli: error: out of memory; score the corpus in parts with "
            "`bleucli stats` and `bleucli merge`",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        click.echo(f"bleucli: error: {where}{err.strerror or err}", err=True)
        sys.exit(EXIT_ERROR)
    except Exception as err:  # a bug: one line unless the user asks for the traceback
        if os.environ.get("BLEUCLI_DEBUG", "") not in ("", "0"):
            raise
        click.echo(
            f"bleucli: internal error: {type(err).__name__}: {_one_line(str(err))} "
            f"(run with BLEUCLI_DEBUG=1 for the traceback, and please report it)",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_OK)


def _one_line(text: str) -> str:
    """Error messages are one line: embedded line breaks (from servers, files) are folded."""
    return " ".join(text.split())


def _quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush does
    not raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
