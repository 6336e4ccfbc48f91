from __future__ import annotations

from bleucli.tokenizers.mteval import Tokenizer13a

__all__ = ["Tokenizer13a"]
