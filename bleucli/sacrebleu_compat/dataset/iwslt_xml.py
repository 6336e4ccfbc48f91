from __future__ import annotations

from bleucli.sacrebleu_compat.dataset.fake_sgml import FakeSGMLDataset


class IWSLTXMLDataset(FakeSGMLDataset):
    """IWSLT's XML test sets."""


__all__ = ["IWSLTXMLDataset"]
