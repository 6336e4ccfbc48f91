"""The ``intl`` tokeniser: mteval-v14's international rules on Unicode properties.

Punctuation (``\\p{P}``) is split off unless it sits between digits, and symbols (``\\p{S}``)
always are. As in mteval-v14 (and SacreBLEU), the line is *not* padded with spaces, so a
number followed by a final period (``2019.``) keeps its period; escaped entities are not
unescaped, since they should never occur in MT output.
"""

from __future__ import annotations

import regex

from bleucli.tokenizers.base import Tokenizer

_PUNCT_AFTER_NON_DIGIT = regex.compile(r"(\P{N})(\p{P})")
_PUNCT_BEFORE_NON_DIGIT = regex.compile(r"(\p{P})(\P{N})")
_SYMBOL = regex.compile(r"(\p{S})")


class TokenizerIntl(Tokenizer):
    """Language-independent tokenisation for any script (mteval-v14 ``--international``)."""

    name = "intl"

    def tokenize(self, line: str) -> str:
        line = _PUNCT_AFTER_NON_DIGIT.sub(r"\1 \2 ", line)
        line = _PUNCT_BEFORE_NON_DIGIT.sub(r" \1 \2", line)
        return " ".join(" ".join(_SYMBOL.split(line)).split())  # pad symbols, then normalise
