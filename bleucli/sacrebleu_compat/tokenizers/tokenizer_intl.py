from __future__ import annotations

from bleucli.tokenizers.base import Tokenizer as BaseTokenizer  # noqa: E402,F401
from bleucli.tokenizers.intl import TokenizerIntl as TokenizerV14International

__all__ = ["TokenizerV14International"]
