from __future__ import annotations

from bleucli.tokenizers.tercom import TercomTokenizer

__all__ = ["TercomTokenizer"]
