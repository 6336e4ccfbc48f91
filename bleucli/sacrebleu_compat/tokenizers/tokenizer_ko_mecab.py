from __future__ import annotations

from bleucli.tokenizers.mecab import TokenizerKoMecab

__all__ = ["TokenizerKoMecab"]
