"""Tokeniser registry: signature name -> class, loaded lazily.

Built-in tokenisers are listed by module path so that importing bleucli stays cheap
(``intl`` pulls in ``regex``); third-party tokenisers register under the
``bleucli.tokenizers`` entry-point group with the name they want in signatures.
"""

from __future__ import annotations

from importlib import import_module

from bleucli.errors import UsageError
from bleucli.tokenizers.base import Tokenizer

ENTRY_POINT_GROUP = "bleucli.tokenizers"

_BUILTIN: dict[str, str] = {
    "none": "bleucli.tokenizers.simple:NoneTokenizer",
    "13a": "bleucli.tokenizers.mteval:Tokenizer13a",
    "intl": "bleucli.tokenizers.intl:TokenizerIntl",
    "char": "bleucli.tokenizers.simple:CharTokenizer",
    "zh": "bleucli.tokenizers.zh:TokenizerZh",
    "ja-mecab": "bleucli.tokenizers.mecab:TokenizerJaMecab",
    "ko-mecab": "bleucli.tokenizers.mecab:TokenizerKoMecab",
    "spm": "bleucli.tokenizers.spm:TokenizerSpm",
    "flores101": "bleucli.tokenizers.spm:TokenizerFlores101",
    "flores200": "bleucli.tokenizers.spm:TokenizerFlores200",
    "spBLEU-1K": "bleucli.tokenizers.spm:TokenizerSpBLEU1K",
}

#: SacreBLEU's default tokeniser for a target language; anything else gets ``13a``.
DEFAULT_BY_LANGUAGE: dict[str, str] = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}
DEFAULT_TOKENIZER = "13a"


def _entry_points() -> dict[str, object]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_tokenizers() -> list[str]:
    """Every name that :func:`get_tokenizer` accepts, built-ins first."""
    return list(_BUILTIN) + sorted(set(_entry_points()) - set(_BUILTIN))


def default_tokenizer(trg_lang: str | None) -> str:
    """The tokeniser SacreBLEU picks when none is given and the target language is known."""
    return DEFAULT_BY_LANGUAGE.get(trg_lang or "", DEFAULT_TOKENIZER)


def tokenizer_class(name: str) -> type[Tokenizer]:
    """Resolve a tokeniser name to its class, or raise :class:`UsageError` listing the names."""
    if name in _BUILTIN:
        module_name, class_name = _BUILTIN[name].split(":")
        return getattr(import_module(module_name), class_name)
    entry = _entry_points().get(name)
    if entry is None:
        raise UsageError(
            f"unknown tokenizer {name!r}; available: {', '.join(available_tokenizers())}"
        )
    return entry.load()  # type: ignore[attr-defined]


def get_tokenizer(name: str) -> Tokenizer:
    """A ready-to-call tokeniser instance for ``name``."""
    return tokenizer_class(name)()
