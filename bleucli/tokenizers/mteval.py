"""The ``13a`` tokeniser: the rules of mteval-v13a.pl, the script WMT used for official BLEU.

The rules (facts of mteval-v13a, as SacreBLEU applies them):

1. drop ``<skipped>``, join ``-\\n`` line breaks, turn newlines into spaces;
2. unescape ``&quot; &amp; &lt; &gt;``;
3. pad the line with a space on each side, then split off ASCII punctuation and symbols
   except ``' , - .``; split ``.`` and ``,`` unless both neighbours are digits;
   split ``-`` after a digit; collapse runs of whitespace.

The substitutions run in this order on purpose: each one sees the output of the last, and
changing the order changes the tokens (e.g. ``1.5.`` keeps ``1.5`` but splits the final dot).
"""

from __future__ import annotations

import re

from bleucli.native import native as _NATIVE
from bleucli.tokenizers.base import Tokenizer

#: ASCII punctuation and symbols that always become tokens of their own (rule 3a). The rule
#: also pads spaces, which cannot change any token, so the space is left out here.
_ALWAYS_SPLIT = re.compile(r"([{|}~\[\\\]^_`!\"#$%&()*+:;<=>?@/])")
#: A period or comma after a non-digit (rule 3b, left context).
_PUNCT_AFTER_NON_DIGIT = re.compile(r"([^0-9])([.,])")
#: A period or comma before a non-digit (rule 3b, right context).
_PUNCT_BEFORE_NON_DIGIT = re.compile(r"([.,])([^0-9])")
#: A dash after a digit (rule 3c).
_DASH_AFTER_DIGIT = re.compile(r"([0-9])(-)")

_ESCAPES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))

#: Rules 3a-3c in one pass, valid when no two of ``.`` and ``,`` are adjacent: then each
#: ``.``/``,`` is split off unless both its neighbours are digits (rule 3b applied twice, and
#: a split on one side always leads to a split on the other), and a ``-`` after a digit is
#: split off (3c). Adjacent ``..`` or ``.,`` interact through the order in which the
#: sequential substitutions consume characters, so such lines take the exact slow path.
_ALL_RULES = re.compile(  # every alternative starts with a character class: fast scanning
    r"([{|}~\[\\\]^_`!\"#$%&()*+:;<=>?@/]|[.,](?:(?<=[^0-9].)|(?=[^0-9]))|-(?<=[0-9]-))"
)


def pad_matches(pattern: re.Pattern, line: str) -> str:
    """Surround every (single-character) match of ``pattern`` with spaces.

    Same tokens as ``pattern.sub(r" \\1 ", line)`` but much faster: ``re.split`` with a
    capturing group runs in C, while a template substitution calls back into Python for
    every match. The number of spaces between pieces may differ, which no later rule
    (they look at the characters next to ``.``, ``,`` and ``-``) or the final split sees.
    """
    return " ".join(pattern.split(line))


def split_western_punctuation(line: str) -> str:
    """Rule 3 of mteval-v13a; shared by ``13a`` and ``zh`` for non-CJK text."""
    if ".." not in line and ".," not in line and ",." not in line and ",," not in line:
        return " ".join(" ".join(_ALL_RULES.split(line)).split())  # pad_matches, inlined
    line = pad_matches(_ALWAYS_SPLIT, line)
    if "." in line or "," in line:
        line = _PUNCT_AFTER_NON_DIGIT.sub(r"\1 \2 ", line)
        line = _PUNCT_BEFORE_NON_DIGIT.sub(r" \1 \2", line)
    if "-" in line:
        line = _DASH_AFTER_DIGIT.sub(r"\1 \2 ", line)
    return " ".join(line.split())


def tokenize_13a_python(line: str) -> str:
    """The pure-Python 13a tokeniser (the specification the compiled core matches)."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        for escaped, plain in _ESCAPES:
            line = line.replace(escaped, plain)
    return split_western_punctuation(f" {line} ")


#: The engine's 13a, chosen once per process.
_tokenize_13a = _NATIVE.tokenize_13a if _NATIVE is not None else tokenize_13a_python


class Tokenizer13a(Tokenizer):
    """mteval-v13a tokenisation, SacreBLEU's default for every target language but zh/ja/ko."""

    name = "13a"

    def tokenize(self, line: str) -> str:
        return _tokenize_13a(line)

    @staticmethod
    def tokenize_many(lines: list[str]) -> list[str]:
        """A whole list in one call (see ``BLEU.preprocess_many``), without the per-line
        cache: tokenising costs little more than looking a line up, and corpora rarely
        repeat lines."""
        return _tokenize_13a_many(lines)


def _tokenize_13a_many_python(lines: list[str]) -> list[str]:
    return list(map(tokenize_13a_python, lines))


_tokenize_13a_many = _NATIVE.tokenize_13a_many if _NATIVE is not None else _tokenize_13a_many_python
