"""SacreBLEU 2.6's public module tree over bleucli: what ``bleucli.install_as_sacrebleu()``
registers as ``sacrebleu``, so third-party code written for SacreBLEU runs unchanged.

Every name is a thin adapter over bleucli's own code (no second implementation). Under the
``sacrebleu`` name ``__version__`` is the SacreBLEU API level implemented ("2.6.0");
bleucli's own version is ``__bleucli_version__``, and signatures still say
``version:bleucli-X``. Inputs SacreBLEU accepts are accepted with SacreBLEU's result (a
warning says where SacreBLEU silently truncates); bleucli's own API stays strict.
"""

from __future__ import annotations

from bleucli.sacrebleu_compat.compat import (
    corpus_bleu,
    corpus_chrf,
    corpus_ter,
    raw_corpus_bleu,
    sentence_bleu,
    sentence_chrf,
    sentence_ter,
)
from bleucli.sacrebleu_compat.dataset import DATASETS
from bleucli.sacrebleu_compat.metrics import BLEU, CHRF, TER, BLEUScore, CHRFScore, TERScore
from bleucli.sacrebleu_compat.metrics.helpers import extract_char_ngrams, extract_word_ngrams
from bleucli.sacrebleu_compat.utils import (
    SACREBLEU_DIR,
    download_test_set,
    get_available_testsets,
    get_langpairs_for_testset,
    get_reference_files,
    get_source_file,
    smart_open,
)
from bleucli.sacrebleu_compat.version import __bleucli_version__, __version__

__description__ = (
    "Hassle-free computation of shareable, comparable, and reproducible BLEU, "
    "chrF, and TER scores (bleucli's SacreBLEU-compatible API)"
)

__all__ = [
    "__version__",
    "__bleucli_version__",
    "__description__",
    "BLEU",
    "CHRF",
    "TER",
    "BLEUScore",
    "CHRFScore",
    "TERScore",
    "DATASETS",
    "SACREBLEU_DIR",
    "corpus_bleu",
    "corpus_chrf",
    "corpus_ter",
    "raw_corpus_bleu",
    "sentence_bleu",
    "sentence_chrf",
    "sentence_ter",
    "download_test_set",
    "extract_char_ngrams",
    "extract_word_ngrams",
    "get_available_testsets",
    "get_langpairs_for_testset",
    "get_reference_files",
    "get_source_file",
    "smart_open",
]
