"""``sacrebleu.tokenizers``: the tokenisers under SacreBLEU's module and class names, each a
thin subclass of bleucli's (same tokens, same signatures)."""

from __future__ import annotations

from bleucli.sacrebleu_compat.tokenizers.tokenizer_base import BaseTokenizer

__all__ = ["BaseTokenizer"]
