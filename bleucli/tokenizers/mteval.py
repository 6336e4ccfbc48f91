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

from bleucli.tokenizers.base import Tokenizer

#: ASCII punctuation and symbols that always become tokens of their own (rule 3a).
_ALWAYS_SPLIT = re.compile(r"([{|}~\[\\\]^_` !\"#$%&()*+:;<=>?@/])")
#: A period or comma after a non-digit (rule 3b, left context).
_PUNCT_AFTER_NON_DIGIT = re.compile(r"([^0-9])([.,])")
#: A period or comma before a non-digit (rule 3b, right context).
_PUNCT_BEFORE_NON_DIGIT = re.compile(r"([.,])([^0-9])")
#: A dash after a digit (rule 3c).
_DASH_AFTER_DIGIT = re.compile(r"([0-9])(-)")

_ESCAPES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))


def split_western_punctuation(line: str) -> str:
    """Rule 3 of mteval-v13a; shared by ``13a`` and ``zh`` for non-CJK text."""
    line = _ALWAYS_SPLIT.sub(r" \1 ", line)
    line = _PUNCT_AFTER_NON_DIGIT.sub(r"\1 \2 ", line)
    line = _PUNCT_BEFORE_NON_DIGIT.sub(r" \1 \2", line)
    line = _DASH_AFTER_DIGIT.sub(r"\1 \2 ", line)
    return " ".join(line.split())


class Tokenizer13a(Tokenizer):
    """mteval-v13a tokenisation, SacreBLEU's default for every target language but zh/ja/ko."""

    name = "13a"

    def tokenize(self, line: str) -> str:
        line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
        if "&" in line:
            for escaped, plain in _ESCAPES:
                line = line.replace(escaped, plain)
        return split_western_punctuation(f" {line} ")
