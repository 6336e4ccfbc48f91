from __future__ import annotations

from bleucli.tokenizers.zh import TokenizerZh

__all__ = ["TokenizerZh"]
