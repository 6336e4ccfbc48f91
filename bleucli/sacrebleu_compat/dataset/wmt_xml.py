from __future__ import annotations

from bleucli.sacrebleu_compat.dataset.base import Dataset


class WMTXMLDataset(Dataset):
    """WMT21+ XML test sets (several translators' references)."""


__all__ = ["WMTXMLDataset"]
