"""``sacrebleu.tokenizers.tokenizer_re``: the punctuation rules shared by ``13a`` and
``zh`` (mteval-v13a's rule 3), without 13a's unescaping and padding."""

from __future__ import annotations

from bleucli.tokenizers.base import Tokenizer
from bleucli.tokenizers.base import Tokenizer as BaseTokenizer  # noqa: F401
from bleucli.tokenizers.mteval import split_western_punctuation


class TokenizerRegexp(Tokenizer):
    name = "re"

    def tokenize(self, line: str) -> str:
        return split_western_punctuation(line)


__all__ = ["TokenizerRegexp"]
