from __future__ import annotations

from bleucli.tokenizers.simple import NoneTokenizer

__all__ = ["NoneTokenizer"]
