from __future__ import annotations

from bleucli.tokenizers.base import Tokenizer as BaseTokenizer  # noqa: E402,F401
from bleucli.tokenizers.mecab import TokenizerKoMecab

#: What SacreBLEU says when the MeCab extra is missing (bleucli names its extra).
FAIL_MESSAGE = "install the optional dependency: pip install 'bleucli[ko]'"

__all__ = ["TokenizerKoMecab"]
