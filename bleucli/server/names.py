"""Team names a reader can tell apart. A leaderboard shows names, so two teams whose names
render the same (a trailing space, a no-break space, a Cyrillic ``а`` for a Latin ``a``,
a zero-width or bidi character) would let one pass for the other. Names are normalised
(NFKC, spaces collapsed and trimmed), refused when they hold invisible or control
characters, and refused when their *skeleton* -- what they look like, after Unicode's
confusable-detection idea (UTS #39) with a table of the lookalikes that matter for
names -- equals an existing team's."""

from __future__ import annotations

import unicodedata

from bleucli.errors import ConfigError

#: Letters and digits that render like a Latin letter (Cyrillic, Greek, digits, symbols),
#: mapped to that letter before case is folded.
LOOKALIKES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "B", "е": "e", "к": "k", "м": "M", "н": "H", "о": "o", "р": "p",
        "с": "c", "т": "T", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j", "ԁ": "d",
        "ԛ": "q", "ԝ": "w", "ү": "y", "һ": "h", "ӏ": "l", "ɡ": "g",
        "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
        "С": "C", "Т": "T", "У": "Y", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S", "Ԛ": "Q",
        "Ԝ": "W", "Ү": "Y", "Һ": "h", "Ӏ": "l",
        # Greek
        "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "υ": "u", "χ": "x",
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
        "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
        # digits and symbols that pass for letters
        "0": "O", "1": "l", "I": "l", "|": "l", "ǀ": "l",
    }
)  # fmt: skip


def normalised(name: str) -> str:
    """``name`` as stored: NFKC (a no-break space becomes a space, a full-width letter a
    letter), whitespace runs collapsed to one space and trimmed; refused when empty or
    when it holds a control, format (zero-width, bidi), private-use or unassigned
    character."""
    text = " ".join(unicodedata.normalize("NFKC", name).split())
    if not text:
        raise ConfigError("a team needs a name")
    for char in text:
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"):
            raise ConfigError(
                f"team name {text!a}: U+{ord(char):04X} ({unicodedata.name(char, category)}) "
                "is invisible or not text; use letters, digits, spaces and punctuation"
            )
    return text


def skeleton(name: str) -> str:
    """What ``name`` looks like: accents dropped, lookalikes mapped to Latin letters,
    case folded, spaces removed. Two names with one skeleton read the same."""
    decomposed = unicodedata.normalize("NFKD", normalised(name))
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return "".join(bare.translate(LOOKALIKES).casefold().split())


def check_new(name: str, existing: list[str]) -> str:
    """The normalised ``name``, refused when it reads like one of ``existing``."""
    text = normalised(name)
    mine = skeleton(text)
    for other in existing:
        if other == text:
            raise ConfigError(f"a team named {text!r} exists already")
        try:
            theirs = skeleton(other)
        except ConfigError:  # a name stored before names were checked
            continue
        if theirs == mine:
            raise ConfigError(
                f"team name {text!a} reads like the existing team {other!a}; choose a name "
                "readers can tell apart"
            )
    return text
