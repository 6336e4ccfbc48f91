"""``bleucli.install_as_sacrebleu()``: let code written for SacreBLEU import bleucli.

The pattern PyMySQL made familiar with ``install_as_MySQLdb()``: one explicit call registers
bleucli's compatibility package (:mod:`bleucli.sacrebleu_compat`) as ``sacrebleu`` and under
every module path SacreBLEU 2.6.0 has, so that a later ``import sacrebleu`` (or ``from
sacrebleu.metrics import BLEU``) in this process gets bleucli.
"""

from __future__ import annotations

import importlib
import logging
import sys

from bleucli.errors import ConfigError

PACKAGE = "bleucli.sacrebleu_compat"

#: SacreBLEU 2.6.0's modules, relative to the package.
MODULES = (
    "version",
    "utils",
    "compat",
    "significance",
    "sacrebleu",
    "metrics",
    "metrics.base",
    "metrics.bleu",
    "metrics.chrf",
    "metrics.ter",
    "metrics.helpers",
    "metrics.lib_ter",
    "tokenizers",
    "tokenizers.tokenizer_base",
    "tokenizers.tokenizer_13a",
    "tokenizers.tokenizer_char",
    "tokenizers.tokenizer_intl",
    "tokenizers.tokenizer_ja_mecab",
    "tokenizers.tokenizer_ko_mecab",
    "tokenizers.tokenizer_none",
    "tokenizers.tokenizer_re",
    "tokenizers.tokenizer_spm",
    "tokenizers.tokenizer_ter",
    "tokenizers.tokenizer_zh",
    "dataset",
    "dataset.base",
    "dataset.fake_sgml",
    "dataset.iwslt_xml",
    "dataset.plain_text",
    "dataset.tsv",
    "dataset.wmt_xml",
)


def install_as_sacrebleu(force: bool = False) -> None:
    """Register bleucli under the name ``sacrebleu`` (and all its submodules) in this
    process. Warnings bleucli logs become reachable through ``logging.getLogger("sacrebleu")``
    (its level and handlers apply). Calling it twice is harmless.

    If the real SacreBLEU is already imported, objects made from it would mix with
    bleucli's, so this refuses (``ConfigError``) unless ``force=True``.
    """
    existing = sys.modules.get("sacrebleu")
    if existing is not None and getattr(existing, "__name__", "") != PACKAGE:
        where = getattr(existing, "__file__", "?")
        if not force:
            raise ConfigError(
                f"the real sacrebleu is already imported (from {where}); call "
                f"bleucli.install_as_sacrebleu() before anything imports "
                f"sacrebleu, or pass force=True to replace it"
            )
        logging.getLogger("bleucli").warning(
            f"replacing the imported sacrebleu ({where}) with bleucli"
        )
        for name in [n for n in sys.modules if n == "sacrebleu" or n.startswith("sacrebleu.")]:
            del sys.modules[name]
    package = importlib.import_module(PACKAGE)
    sys.modules["sacrebleu"] = package
    for relative in MODULES:
        module = importlib.import_module(f"{PACKAGE}.{relative}")
        sys.modules[f"sacrebleu.{relative}"] = module
        parent_name, _, leaf = f"sacrebleu.{relative}".rpartition(".")
        setattr(sys.modules[parent_name], leaf, module)
    bleucli_logger = logging.getLogger("bleucli")
    bleucli_logger.parent = logging.getLogger("sacrebleu")


def uninstall_sacrebleu() -> None:
    """Undo :func:`install_as_sacrebleu` (tests, or code that needs the real SacreBLEU
    again later in the same process)."""
    for name in [n for n in sys.modules if n == "sacrebleu" or n.startswith("sacrebleu.")]:
        if getattr(sys.modules[name], "__name__", "").startswith(PACKAGE):
            del sys.modules[name]
    logging.getLogger("bleucli").parent = logging.getLogger()
