"""``sacrebleu.tokenizers.tokenizer_base``: the tokeniser interface (``__call__`` and
``signature()``)."""

from __future__ import annotations

from bleucli.tokenizers.base import Tokenizer as BaseTokenizer

__all__ = ["BaseTokenizer"]
