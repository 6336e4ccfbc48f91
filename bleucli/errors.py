"""One exception family for the library; the CLI maps it to one-line messages and exit codes.

The library never calls ``sys.exit``: callers decide what an error means for them.
"""

from __future__ import annotations


class BleucliError(Exception):
    """Base class of every error bleucli raises on purpose."""

    exit_code = 1


class InputError(BleucliError, ValueError):
    """Bad hypotheses or references: wrong shape, line counts, encoding, empty input."""


class ConfigError(BleucliError, ValueError):
    """An option that makes no sense: unknown tokeniser, smoothing method, metric, field."""


class UsageError(ConfigError):
    """The command line itself is wrong (a value out of range, an unknown name, a malformed
    option): exit code 2, as argparse and click use for usage errors. Combinations of valid
    options that cannot work together stay :class:`ConfigError` (exit 1, as SacreBLEU)."""

    exit_code = 2


class OutputError(BleucliError):
    """A file bleucli was asked to write cannot be written."""


class MissingExtraError(BleucliError, ImportError):
    """An optional dependency is needed; the message says which ``pip install`` fixes it."""

    def __init__(self, what: str, extra: str, module: str) -> None:
        super().__init__(
            f"{what} needs the optional dependency {module!r}: "
            f"install it with `pip install 'bleucli[{extra}]'`"
        )
