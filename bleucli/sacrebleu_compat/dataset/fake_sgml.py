from __future__ import annotations

from bleucli.sacrebleu_compat.dataset.base import Dataset


class FakeSGMLDataset(Dataset):
    """WMT's "fake SGML" test sets (``.sgm``)."""


class WMTAdditionDataset(FakeSGMLDataset):
    """Additional references of WMT test sets."""


from bleucli.sacrebleu_compat.dataset.base import smart_open  # noqa: E402,F401

__all__ = ["FakeSGMLDataset", "WMTAdditionDataset"]
