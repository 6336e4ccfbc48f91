from __future__ import annotations

from bleucli.tokenizers.intl import TokenizerIntl as TokenizerV14International

__all__ = ["TokenizerV14International"]
