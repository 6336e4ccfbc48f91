"""Reading hypothesis and reference files the way SacreBLEU does, with precise errors.

Lines end at ``\\n`` only (a ``\\r`` before it is trailing whitespace and is stripped, so CRLF
files score like LF files); a missing final newline still ends the last line; ``.gz`` files
are decompressed. Every line is right-stripped, as SacreBLEU's CLI does.
"""

from __future__ import annotations

import codecs
import gzip
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from bleucli.errors import InputError, OutputError

if TYPE_CHECKING:
    from pathlib import Path  # imported where used: scoring a file needs no pathlib


@dataclass
class TextSource:
    """A named stream of lines: ``name`` is what error messages call it (a path or ``<stdin>``);
    ``named`` says the user chose the name (``NAME:FILE``), so displays keep it as given."""

    name: str
    lines: list[str]
    named: bool = False


#: What separates a system's name from its file: ``NAME=FILE`` or ``NAME:FILE``.
NAME_SEPARATORS = ("=", ":")


def split_named(spec: str) -> tuple[str | None, str]:
    """(name, path) of a system given as ``NAME=FILE``, ``NAME:FILE`` or ``FILE`` (name
    None), the same in every command. A path that exists is always read as a path (a file
    may have ``=`` or ``:`` in its name); otherwise the first separator whose rest is a file
    that exists splits it, else the first separator (so the error names the missing file)."""
    import os

    if os.path.exists(spec):
        return None, spec
    splits = []
    for position, char in enumerate(spec):
        if char in NAME_SEPARATORS and 0 < position < len(spec) - 1:
            splits.append((spec[:position], spec[position + 1 :]))
    for name, path in splits:
        if os.path.exists(path):
            return name, path
    if splits and not spec.startswith(("/", ".")) and "/" not in splits[0][0]:
        return splits[0]
    return None, spec


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
    if text.startswith("\ufeff"):
        warn_bom(name, encoding)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip() for line in lines]


def warn_bom(name: str, encoding: str) -> None:
    """A file that starts with a byte-order mark (U+FEFF) keeps it, as SacreBLEU keeps it:
    it is part of the first line, and it changes that line's tokens (BLEU 59.43 instead
    of 59.94 on the shipped example). Said once per file, with the way to drop it."""
    from bleucli.log import logger

    logger.warning(
        f"{name} starts with a byte-order mark (U+FEFF): it is scored as part of the first "
        f"line, as SacreBLEU scores it; read the file with `-e utf-8-sig` to drop it"
    )


def open_binary(path: str) -> IO[bytes]:
    """Open a file (``.gz`` decompressed) for reading, with one-line errors naming it."""
    try:
        if path.endswith(".gz"):
            return gzip.open(path, "rb")  # type: ignore[return-value]  # noqa: SIM115
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


def read_file_or_stdin(path: str, encoding: str = "utf-8") -> TextSource:
    """:func:`read_file`, with ``-`` meaning standard input (for commands that take files as
    options, where a pipeline's output has no other way in)."""
    import sys

    if path != "-":
        return read_file(path, encoding)
    return TextSource("<stdin>", decode_lines(sys.stdin.buffer.read(), "<stdin>", encoding))


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


#: What to do when an output's lines do not match the references' (every length error says it).
RESEGMENT_HINT = (
    "if the output's lines do not match the reference lines (speech translation, "
    "document-level output), add --resegment"
)


def check_same_length(hypotheses: TextSource, references: Sequence[TextSource]) -> None:
    """Every reference stream must have one line per hypothesis; name both files if not."""
    for ref in references:
        if len(ref.lines) != len(hypotheses.lines):
            raise InputError(
                f"line counts differ: {hypotheses.name} has {len(hypotheses.lines)} lines, "
                f"{ref.name} has {len(ref.lines)}; {RESEGMENT_HINT}"
            )


def read_text(path: str) -> str:
    """A whole UTF-8 text file, with one-line errors naming it (score files, human scores)."""
    from pathlib import Path

    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise InputError(f"{path}: {err.strerror or err}") from None


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


@contextmanager
def atomic_replace(target: Path, mode: int | None = None) -> Iterator[str]:
    """The path of a temporary file beside ``target`` that replaces it in one step when the
    block succeeds, and is removed otherwise: a reader (or a crash) never sees half a file.
    ``mode``: the permissions it gets. File-system errors propagate as ``OSError``."""
    import os
    import tempfile
    from pathlib import Path

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    os.close(fd)
    try:
        yield tmp
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: str, text: str) -> None:
    """Write a file the user asked for (a baseline, a report) in one step, so that a crash
    never leaves half of it. A file that exists keeps its permissions; a new one gets the
    usual ones (0666 less the umask). Problems are one :class:`OutputError` naming the file."""
    import os
    from pathlib import Path

    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise OutputError(f"{path}: is a directory; give a file name")
    if not folder.is_dir():
        raise OutputError(f"{path}: folder {folder} does not exist; create it first")
    try:
        mode = target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        with atomic_replace(target, mode) as tmp, open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as err:
        raise OutputError(f"{path}: cannot write ({err.strerror or err})") from None


def copy_atomic(source: Path, dest: Path) -> None:
    """Copy a file so that ``dest`` appears complete or not at all."""
    import shutil

    with atomic_replace(dest) as tmp:
        shutil.copyfile(source, tmp)
