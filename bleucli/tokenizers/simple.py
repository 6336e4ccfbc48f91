"""Tokenisers that need no rules: ``none`` (identity) and ``char`` (every character a token)."""

from __future__ import annotations

from bleucli.tokenizers.base import Tokenizer


class NoneTokenizer(Tokenizer):
    """Leaves the text alone: for input that the user has tokenised already."""

    name = "none"
    cached = False

    def tokenize(self, line: str) -> str:
        return line


class CharTokenizer(Tokenizer):
    """Every character becomes a token (spaces too, which BLEU's split then drops).

    Used for languages without word boundaries when no dedicated tokeniser fits.
    """

    name = "char"

    def tokenize(self, line: str) -> str:
        return " ".join(line)
