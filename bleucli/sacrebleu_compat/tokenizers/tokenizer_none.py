from __future__ import annotations

from bleucli.tokenizers.base import Tokenizer as BaseTokenizer  # noqa: E402,F401
from bleucli.tokenizers.simple import NoneTokenizer

__all__ = ["NoneTokenizer"]
