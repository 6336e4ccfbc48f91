from __future__ import annotations

from bleucli.tokenizers.simple import CharTokenizer as TokenizerChar

__all__ = ["TokenizerChar"]
