from __future__ import annotations

from bleucli.sacrebleu_compat.dataset.base import Dataset


class TSVDataset(Dataset):
    """Test sets with source and references in columns of a TSV file."""


from bleucli.sacrebleu_compat.dataset.base import smart_open  # noqa: E402,F401

__all__ = ["TSVDataset"]
