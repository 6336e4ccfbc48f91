from __future__ import annotations

from bleucli.tokenizers.mecab import TokenizerJaMecab

__all__ = ["TokenizerJaMecab"]
