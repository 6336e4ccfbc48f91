from __future__ import annotations

from bleucli.sacrebleu_compat.dataset.base import Dataset


class PlainTextDataset(Dataset):
    """Test sets of plain text files, one sentence per line."""


from bleucli.sacrebleu_compat.dataset.base import smart_open  # noqa: E402,F401

__all__ = ["PlainTextDataset"]
