"""Display names: what figures, analysis tables and HTML pages call a system.

A system given as a file is named by its path (``data/wmt22/en-de/sys.Online-A.de``), which
is what the scoring command's outputs keep (SacreBLEU names systems so). A reader of a figure
or a report needs only what tells the systems apart: the parts every file shares -- the
common folder and the common leading and trailing parts of the file names -- are dropped
(``Online-A``, ``JDExploreAcademy``). Parts are cut only at ``/``, ``.`` and ``_``, never
inside a word, so ``Online-A`` and ``Online-B`` keep their shared ``Online-``. A name given
explicitly (``NAME:FILE``) is kept as given. The full paths stay listed once beside the
figure or table (:func:`key`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: A name as pieces: runs of separators and the words between them.
_PIECES = re.compile(r"[/\\._]+|[^/\\._]+")
_SEPARATOR = re.compile(r"[/\\._]+")


def _pieces(name: str) -> list[str]:
    return _PIECES.findall(name)


def _is_word(piece: str) -> bool:
    return not _SEPARATOR.fullmatch(piece)


def _common_leading(sequences: list[list[str]]) -> int:
    count = 0
    for column in zip(*sequences):
        if any(piece != column[0] for piece in column):
            break
        count += 1
    return count


def _strip(pieces: list[str]) -> str:
    """The pieces joined, without separators at either end."""
    while pieces and not _is_word(pieces[0]):
        pieces = pieces[1:]
    while pieces and not _is_word(pieces[-1]):
        pieces = pieces[:-1]
    return "".join(pieces)


def _shortened(names: Sequence[str]) -> list[str]:
    """Each name without the pieces every name shares at its start and at its end, each
    keeping at least one word (a single name: its file name without the folder)."""
    if len(names) == 1:
        return [re.split(r"[/\\]", names[0].rstrip("/\\"))[-1] or names[0]]
    split = [_pieces(name) for name in names]
    lead = _common_leading(split)
    trail = _common_leading([pieces[::-1] for pieces in split])
    # every name keeps a word between what is dropped at each end
    for cut_lead, cut_trail in ((lead, trail), (0, trail), (lead, 0), (0, 0)):
        kept = [pieces[cut_lead : len(pieces) - cut_trail] for pieces in split]
        if all(any(_is_word(p) for p in pieces) for pieces in kept):
            return [_strip(pieces) for pieces in kept]
    return list(names)


def display_names(names: Sequence[str], explicit: Sequence[bool] | None = None) -> list[str]:
    """Short, distinct names for ``names`` in their order; ``explicit[k]`` keeps name k as
    given (a ``NAME:FILE`` name). Where shortening would make two names equal, both keep
    their full form."""
    flags = list(explicit) if explicit is not None else [False] * len(names)
    derived_at = [k for k, given in enumerate(flags) if not given]
    short = _shortened([names[k] for k in derived_at]) if derived_at else []
    out = list(names)
    for k, name in zip(derived_at, short):
        out[k] = name
    counts: dict[str, int] = {}
    for name in out:
        counts[name] = counts.get(name, 0) + 1
    return [name if counts[name] == 1 else full for name, full in zip(out, names)]


def key(display: Sequence[str], files: Sequence[str]) -> list[tuple[str, str]]:
    """(display name, file) for every system whose display name is not its file."""
    return [(name, path) for name, path in zip(display, files) if name != path]


def abbreviated(name: str, limit: int) -> str:
    """``name`` in at most ``limit`` characters: its start and end around an ellipsis (the
    end of a file name tells systems apart as often as its start)."""
    if len(name) <= limit:
        return name
    head = (limit - 1) * 2 // 3
    tail = limit - 1 - head
    return name[:head] + "…" + (name[-tail:] if tail else "")


def labels(names: Sequence[str], limit: int) -> list[str]:
    """``names`` abbreviated to ``limit`` characters, still distinct: where two would read
    the same, each is numbered by its position."""
    short = [abbreviated(name, limit) for name in names]
    if len(set(short)) == len(short):
        return short
    return [f"{k}. {abbreviated(name, max(limit - 4, 2))}" for k, name in enumerate(names, 1)]
