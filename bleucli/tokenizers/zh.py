"""The ``zh`` tokeniser: every CJK character is a token; the rest follows 13a's punctuation rules.

The character ranges are those of the WMT Chinese evaluation script as SacreBLEU compares
them. Two of its ranges (CJK Extension B and the Compatibility Supplement) are written there
with five hex digits after ``\\u``, which Python reads as a four-digit code point followed by
a digit; the string comparisons then cover U+2001..U+2A6D and U+2F81..U+2FA1 instead. That
range includes general punctuation such as curly quotes and dashes, which therefore become
separate tokens, and Extension B ideographs are *not* split. bleucli reproduces this so that
``tok:zh`` scores are identical to published ones (see README, "Known SacreBLEU quirks").
"""

from __future__ import annotations

import re

from bleucli.native import native as _NATIVE
from bleucli.tokenizers.base import Tokenizer
from bleucli.tokenizers.mteval import pad_matches, split_western_punctuation

_CJK_RANGES = (
    ("\u3400", "\u4db5"),  # CJK Unified Ideographs Extension A
    ("\u4e00", "\u9fa5"),  # CJK Unified Ideographs
    ("\u9fa6", "\u9fbb"),  # CJK Unified Ideographs, Unicode 4.1
    ("\uf900", "\ufa2d"),  # CJK Compatibility Ideographs
    ("\ufa30", "\ufa6a"),
    ("\ufa70", "\ufad9"),
    ("\u2001", "\u2a6d"),  # meant as Extension B, U+20000..U+2A6D6 (see module docstring)
    ("\u2f81", "\u2fa1"),  # meant as Compatibility Supplement, U+2F800..U+2FA1D
    ("\uff00", "\uffef"),  # full-width ASCII and punctuation, half-width kana, Hangul
    ("\u2e80", "\u2eff"),  # CJK Radicals Supplement
    ("\u3000", "\u303f"),  # CJK punctuation
    ("\u31c0", "\u31ef"),  # CJK strokes
    ("\u2f00", "\u2fdf"),  # Kangxi radicals
    ("\u2ff0", "\u2fff"),  # ideographic description characters
    ("\u3100", "\u312f"),  # Bopomofo
    ("\u31a0", "\u31bf"),  # Bopomofo extended
    ("\ufe10", "\ufe1f"),  # vertical forms
    ("\ufe30", "\ufe4f"),  # CJK compatibility forms
    ("\u2600", "\u26ff"),  # miscellaneous symbols
    ("\u2700", "\u27bf"),  # dingbats
    ("\u3200", "\u32ff"),  # enclosed CJK letters
    ("\u3300", "\u33ff"),  # CJK compatibility
)

_CJK_CHAR = re.compile("([" + "".join(f"{lo}-{hi}" for lo, hi in _CJK_RANGES) + "])")


class TokenizerZh(Tokenizer):
    """Chinese: characters as tokens, as in the WMT Chinese BLEU evaluation."""

    name = "zh"

    def tokenize(self, line: str) -> str:
        if _NATIVE is not None:
            tokens = _NATIVE.tokenize_zh(line)  # None: adjacent '.'/',' need the rules in turn
            if tokens is not None:
                return tokens
        return tokenize_zh_python(line)


def tokenize_zh_python(line: str) -> str:
    """The pure-Python zh tokeniser (the specification the compiled one matches)."""
    return split_western_punctuation(pad_matches(_CJK_CHAR, line.strip()))
