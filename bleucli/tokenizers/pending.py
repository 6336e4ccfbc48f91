"""Names SacreBLEU knows whose implementations need optional native packages.

They are registered so that signatures naming them parse and ``-tok ja-mecab`` gives a clear
message rather than "unknown tokenizer"; constructing one explains what is missing.
"""

from __future__ import annotations

from bleucli.errors import ConfigError
from bleucli.tokenizers.base import Tokenizer
from bleucli.version import __version__


class _PendingTokenizer(Tokenizer):
    extra: str = ""

    def __init__(self) -> None:
        raise ConfigError(
            f"tokenizer {self.name!r} is not available in bleucli {__version__} yet; "
            f"it will ship as the optional extra `pip install 'bleucli[{self.extra}]'`"
        )


class TokenizerJaMecab(_PendingTokenizer):
    name, extra = "ja-mecab", "ja"


class TokenizerKoMecab(_PendingTokenizer):
    name, extra = "ko-mecab", "ko"


class TokenizerSpm(_PendingTokenizer):
    name, extra = "spm", "spm"


class TokenizerFlores101(_PendingTokenizer):
    name, extra = "flores101", "spm"


class TokenizerFlores200(_PendingTokenizer):
    name, extra = "flores200", "spm"
