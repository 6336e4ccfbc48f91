"""Reading hypothesis and reference files the way SacreBLEU does, with precise errors.

Lines end at ``\\n`` only (a ``\\r`` before it is trailing whitespace and is stripped, so CRLF
files score like LF files); a missing final newline still ends the last line; ``.gz`` files
are decompressed. Every line is right-stripped, as SacreBLEU's CLI does.
"""

from __future__ import annotations

import codecs
import gzip
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from bleucli.errors import InputError


@dataclass
class TextSource:
    """A named stream of lines: ``name`` is what error messages call it (a path or ``<stdin>``)."""

    name: str
    lines: list[str]


def check_encoding(encoding: str) -> None:
    try:
        codecs.lookup(encoding)
    except LookupError:
        from bleucli.errors import UsageError

        raise UsageError(f"-e/--encoding: unknown encoding {encoding!r}") from None


def decode_lines(data: bytes, name: str, encoding: str = "utf-8") -> list[str]:
    """Split ``data`` into right-stripped lines; bad bytes raise an error naming the line."""
    check_encoding(encoding)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as err:
        line_no = data.count(b"\n", 0, err.start) + 1
        column = err.start - data.rfind(b"\n", 0, err.start)
        raise InputError(
            f"{name}: line {line_no}: invalid {encoding} ({err.reason} at byte {column})"
        ) from None
    if text.startswith("\ufeff") and encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip() for line in lines]


def open_binary(path: str) -> IO[bytes]:
    """Open a file (``.gz`` decompressed) for reading, with one-line errors naming it."""
    try:
        if path.endswith(".gz"):
            return gzip.open(path, "rb")  # noqa: SIM115 - the caller closes it
        return open(path, "rb")  # noqa: SIM115 - the caller closes it
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read ({err.strerror})") from None


def read_file(path: str, encoding: str = "utf-8") -> TextSource:
    """Read a text file (optionally gzipped) into right-stripped lines."""
    import zlib

    try:
        with open_binary(path) as handle:
            data = handle.read()
    except InputError:
        raise
    except (OSError, EOFError, zlib.error) as err:
        what = "corrupt or truncated compressed data, " if path.endswith(".gz") else ""
        raise InputError(f"{path}: cannot read ({what}{err})") from None
    return TextSource(path, decode_lines(data, path, encoding))


def require_nonempty(source: TextSource) -> None:
    if not source.lines:
        raise InputError(f"{source.name}: empty file, nothing to score")


def split_multi_references(source: TextSource, num_refs: int) -> list[list[str]]:
    """Split each line of one file into ``num_refs`` tab-separated references."""
    streams: list[list[str]] = [[] for _ in range(num_refs)]
    for line_no, line in enumerate(source.lines, 1):
        fields = line.split("\t", num_refs - 1)
        if len(fields) != num_refs:
            raise InputError(
                f"{source.name}: line {line_no}: expected {num_refs} tab-separated "
                f"references, found {len(fields)}"
            )
        for stream, ref in zip(streams, fields):
            stream.append(ref)
    return streams


def check_same_length(hypotheses: TextSource, references: Sequence[TextSource]) -> None:
    """Every reference stream must have one line per hypothesis; name both files if not."""
    for ref in references:
        if len(ref.lines) != len(hypotheses.lines):
            raise InputError(
                f"line counts differ: {hypotheses.name} has {len(hypotheses.lines)} lines, "
                f"{ref.name} has {len(ref.lines)}"
            )


def read_json(path: str, what: str) -> object:
    """Parse a JSON file (``-``: standard input); errors name the file and line."""
    import json
    import sys

    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open_binary(path) as handle:
                text = handle.read().decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8, so not {what}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: line {err.lineno}: not {what} ({err.msg})") from None
