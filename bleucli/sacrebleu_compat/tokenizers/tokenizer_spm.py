"""``sacrebleu.tokenizers.tokenizer_spm``: SentencePiece tokenisers; models come through
bleucli's verified model cache."""

from __future__ import annotations

from bleucli.tokenizers.spm import (
    TokenizerFlores101,
    TokenizerFlores200,
    TokenizerSpBLEU1K,
    TokenizerSpm,
    _models,
)

#: SacreBLEU's table of models: key -> URL and signature name.
SPM_MODELS = {key: {"url": entry["url"], "signature": key} for key, entry in _models().items()}
SPM_MODELS["spm"] = {**SPM_MODELS["flores101"], "signature": "flores101"}

_BY_KEY = {
    "spm": TokenizerSpm,
    "flores101": TokenizerFlores101,
    "flores200": TokenizerFlores200,
    "spBLEU-1K": TokenizerSpBLEU1K,
}


def TokenizerSPM(key: str = "spm"):  # noqa: N802 - SacreBLEU's class name
    """SacreBLEU's ``TokenizerSPM(key)``: the SentencePiece tokeniser of model ``key``."""
    return _BY_KEY[key]()


Flores101Tokenizer = TokenizerFlores101
Flores200Tokenizer = TokenizerFlores200
spBLEU1KTokenizer = TokenizerSpBLEU1K

from bleucli.sacrebleu_compat.dataset.base import SACREBLEU_DIR  # noqa: E402,F401
from bleucli.sacrebleu_compat.utils import download_file, sacrelogger  # noqa: E402,F401
from bleucli.tokenizers.base import Tokenizer as BaseTokenizer  # noqa: E402,F401

__all__ = [
    "TokenizerSPM",
    "Flores101Tokenizer",
    "Flores200Tokenizer",
    "spBLEU1KTokenizer",
    "SPM_MODELS",
]
