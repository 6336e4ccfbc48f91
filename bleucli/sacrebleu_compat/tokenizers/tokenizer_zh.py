from __future__ import annotations

from bleucli.sacrebleu_compat.tokenizers.tokenizer_re import TokenizerRegexp  # noqa: E402,F401
from bleucli.tokenizers.base import Tokenizer as BaseTokenizer  # noqa: E402,F401
from bleucli.tokenizers.zh import TokenizerZh

__all__ = ["TokenizerZh"]
