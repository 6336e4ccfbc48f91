from __future__ import annotations

from bleucli.sacrebleu_compat.dataset.base import Dataset


class PlainTextDataset(Dataset):
    """Test sets of plain text files, one sentence per line."""


__all__ = ["PlainTextDataset"]
