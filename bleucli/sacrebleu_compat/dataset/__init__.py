"""``sacrebleu.dataset``: ``DATASETS``, SacreBLEU 2.6.0's test sets (exactly its names,
with their real URLs and md5 sums) as dataset objects. Clients build a task per listed set
(lm-evaluation-harness), so bleucli's own sets and custom registries are not listed; the
helper functions still find them by name."""

from __future__ import annotations

from bleucli.sacrebleu_compat.dataset.base import Dataset
from bleucli.sacrebleu_compat.dataset.fake_sgml import FakeSGMLDataset, WMTAdditionDataset
from bleucli.sacrebleu_compat.dataset.iwslt_xml import IWSLTXMLDataset
from bleucli.sacrebleu_compat.dataset.plain_text import PlainTextDataset
from bleucli.sacrebleu_compat.dataset.tsv import TSVDataset
from bleucli.sacrebleu_compat.dataset.wmt_xml import WMTXMLDataset

_BY_FORMAT = {
    "sgm": FakeSGMLDataset,
    "iwslt": IWSLTXMLDataset,
    "plain": PlainTextDataset,
    "tsv": TSVDataset,
    "xml": WMTXMLDataset,
}


def _datasets() -> tuple[dict[str, Dataset], dict[str, Dataset]]:
    """Every known set, and SacreBLEU's sets among them."""
    from bleucli.testsets.registry import Registry

    registry = Registry()
    every: dict[str, Dataset] = {}
    for name in sorted(registry.sets):
        testset = registry.sets[name]
        formats = {pair.format for pair in testset.langpairs.values()}
        cls = _BY_FORMAT.get(formats.pop(), Dataset) if len(formats) == 1 else Dataset
        every[name] = cls(testset)
    return every, {name: every[name] for name in registry.sacrebleu_names}


_ALL_DATASETS, DATASETS = _datasets()
SUBSETS = {name: dict(ds._testset.subsets) for name, ds in DATASETS.items() if ds._testset.subsets}
_SUBSETS = SUBSETS
COUNTRIES = sorted(
    {value.split("-")[0] for subsets in SUBSETS.values() for value in subsets.values()}
)
DOMAINS = sorted(
    {
        value.split("-")[1]
        for subsets in SUBSETS.values()
        for value in subsets.values()
        if "-" in value
    }
)

__all__ = [
    "DATASETS",
    "SUBSETS",
    "COUNTRIES",
    "DOMAINS",
    "Dataset",
    "FakeSGMLDataset",
    "WMTAdditionDataset",
    "IWSLTXMLDataset",
    "PlainTextDataset",
    "TSVDataset",
    "WMTXMLDataset",
]
