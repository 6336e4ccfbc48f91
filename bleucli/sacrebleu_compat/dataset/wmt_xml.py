from __future__ import annotations

from bleucli.sacrebleu_compat.dataset.base import Dataset


class WMTXMLDataset(Dataset):
    """WMT21+ XML test sets (several translators' references)."""


from bleucli.sacrebleu_compat.dataset.base import smart_open  # noqa: E402,F401

__all__ = ["WMTXMLDataset"]
