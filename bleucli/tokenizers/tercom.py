"""TER's own normalisation (tercom's ``Normalizer``), as SacreBLEU's TER applies it.

Lowercasing unless case-sensitive; with ``normalized``: join hyphenated line breaks,
unescape XML entities, split punctuation (13a-like rules plus English possessive ``'s``),
and with ``asian_support`` split CJK characters and kana runs; with ``no_punct``: delete
basic (and, with ``asian_support``, CJK and full-width) punctuation. The rule order is
tercom's and matters.
"""

from __future__ import annotations

import re

from bleucli.tokenizers.base import Tokenizer

ASIAN_PUNCT = re.compile("([\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb])")
FULL_WIDTH_PUNCT = re.compile("([\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09])")

_GENERAL = [
    (re.compile(r"\n-"), ""),
    (re.compile(r"\n"), " "),
    (re.compile(r"&quot;"), '"'),
    (re.compile(r"&amp;"), "&"),
    (re.compile(r"&lt;"), "<"),
    (re.compile(r"&gt;"), ">"),
]
_WESTERN = [
    (re.compile(r"([{-~\[-` -&(-+:-@/])"), r" \1 "),
    (re.compile(r"'s "), r" 's "),
    (re.compile(r"'s$"), r" 's"),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]
_ASIAN = [
    (re.compile("([\u4e00-\u9fff\u3400-\u4dbf])"), r" \1 "),  # CJK ideographs (+ Ext. A)
    (re.compile("([\u31c0-\u31ef\u2e80-\u2eff])"), r" \1 "),  # strokes, radicals
    (re.compile("([\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f])"), r" \1 "),  # compatibility
    (re.compile("([\u3200-\u3f22])"), r" \1 "),  # enclosed letters (tercom's range)
    # kana runs: tercom's patterns, which in effect only match a whole-line run
    (re.compile("(^|^[\u3040-\u309f])([\u3040-\u309f]+)(?=$|^[\u3040-\u309f])"), r"\1 \2 "),
    (re.compile("(^|^[\u30a0-\u30ff])([\u30a0-\u30ff]+)(?=$|^[\u30a0-\u30ff])"), r"\1 \2 "),
    (re.compile("(^|^[\u31f0-\u31ff])([\u31f0-\u31ff]+)(?=$|^[\u31f0-\u31ff])"), r"\1 \2 "),
    (ASIAN_PUNCT, r" \1 "),
    (FULL_WIDTH_PUNCT, r" \1 "),
]
_BASIC_PUNCT = re.compile(r"[\.,\?:;!\"\(\)]")


def _apply(rules: list[tuple[re.Pattern, str]], text: str) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


class TercomTokenizer(Tokenizer):
    """The ``tercom`` tokeniser; its options are TER's, so it is built by the TER metric."""

    name = "tercom"

    def __init__(
        self,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
    ) -> None:
        self.normalized = normalized
        self.no_punct = no_punct
        self.asian_support = asian_support
        self.case_sensitive = case_sensitive
        super().__init__()

    def tokenize(self, line: str) -> str:
        if not line:
            return ""
        if not self.case_sensitive:
            line = line.lower()
        if self.normalized:
            line = _apply(_WESTERN, " " + _apply(_GENERAL, line) + " ")
            if self.asian_support:
                line = _apply(_ASIAN, line)
        if self.no_punct:
            line = _BASIC_PUNCT.sub("", line)
            if self.asian_support:
                line = FULL_WIDTH_PUNCT.sub("", ASIAN_PUNCT.sub("", line))
        return " ".join(line.split())
