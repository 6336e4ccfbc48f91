#!/usr/bin/env python3
"""Regenerate ``testsets/*.json`` from the test-set facts SacreBLEU publishes.

Maintenance tool, not part of the package: it reads SacreBLEU's registry (URLs, md5 sums,
language pairs, file paths, citations and document annotations — facts) and writes them in
bleucli's schema (``testsets/schema.json``). Descriptions are bleucli's own, derived from
the set names. Run it after upgrading the pinned SacreBLEU test dependency, then review
the diff:

    python scripts/import_registry.py && git diff testsets/
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sacrebleu.dataset import DATASETS, SUBSETS

OUT = Path(__file__).resolve().parent.parent / "testsets"

FAMILIES = {
    "wmt": lambda n: n.startswith("wmt"),
    "iwslt": lambda n: n.startswith("iwslt"),
    "mtedx": lambda n: n.startswith("mtedx"),
    "multi30k": lambda n: n.startswith("multi30k"),
    "mtnt": lambda n: n.startswith("mtnt"),
}

FORMAT_OF_CLASS = {
    "FakeSGMLDataset": "sgm",
    "WMTAdditionDataset": "sgm",
    "IWSLTXMLDataset": "iwslt",
    "PlainTextDataset": "plain",
    "TSVDataset": "tsv",
    "WMTXMLDataset": "xml",
}

VARIANTS = {
    "dev": "development data",
    "B": "scored against the second (B) reference",
    "tworefs": "scored against both references",
    "improved": "with corrected references",
    "full": "the complete, unfiltered test set",
    "test-ts": "the test set including test-suite documents",
    "ms": "with additional Chinese-English references by Microsoft Research",
    "systems": "with the participating systems' outputs",
    "nc": "News Commentary test set",
    "europarl": "Europarl test set",
}


def describe(name: str) -> str:
    """A short description of our own, built from the parts of the name."""
    parts = name.split("/")
    head = parts[0]
    if head.startswith("wmt"):
        year = "20" + head[3:]
        base = f"WMT {year} news translation test set"
        if len(parts) == 1:
            return base
        if parts[1] == "google":
            return f"WMT {year} en-de with Google's additional reference '{parts[2]}'"
        if parts[1] == "robust":
            return f"WMT {year} robustness task, {parts[2]}"
        if parts[1] in VARIANTS:
            return f"{base}: {VARIANTS[parts[1]]}"
        return f"{base}: scored against reference(s) {'+'.join(parts[1])}"
    if head == "iwslt17":
        which = parts[1] if len(parts) > 1 else "tst2017"
        return f"IWSLT 2017 TED talks, {which}"
    if head == "mtedx":
        return f"Multilingual TEDx corpus, {parts[1]} split"
    if head == "multi30k":
        return f"Multi30k image description test set {parts[1]} (Flickr)"
    if head.startswith("mtnt"):
        split = parts[1] if len(parts) > 1 else "test"
        return f"MTNT noisy-text translation ({head}), {split} split"
    return name


def local_name(dataset_name: str, path: str) -> str:
    """SacreBLEU stores non-archive downloads as ``<name>.<basename>``; bleucli uses the basename."""
    prefix = dataset_name.replace("/", "_") + "."
    return path[len(prefix) :] if path.startswith(prefix) else path


def tsv_column(meta: str, is_source: bool) -> tuple[str, int]:
    match = re.match(r"^(\d+):(.*)$", meta)
    if match:
        return match.group(2), int(match.group(1))
    return meta, 0 if is_source else 1


def convert(name: str, ds) -> dict:
    fmt = FORMAT_OF_CLASS[type(ds).__name__]
    entry: dict = {
        "description": describe(name),
        "citation": ds.citation or "",
        "data": [{"url": u, "md5": m} for u, m in zip(ds.data, ds.md5)],
        "langpairs": {},
    }
    default_refs = ds.kwargs.get("refs")
    for pair, spec in ds.langpairs.items():
        if fmt == "xml":
            path = spec["path"] if isinstance(spec, dict) else spec[0]
            refs = spec.get("refs", default_refs) if isinstance(spec, dict) else default_refs
            item = {
                "format": "xml",
                "source": path,
                "references": [path],
                "translators": list(refs or []),
            }
        elif fmt == "tsv":
            src, src_col = tsv_column(spec[0], True)
            refs = [tsv_column(m, False) for m in spec[1:]]
            item = {
                "format": "tsv",
                "source": src,
                "source_column": src_col,
                "references": [r for r, _ in refs],
                "reference_columns": [c for _, c in refs],
            }
        else:
            item = {
                "format": fmt,
                "source": local_name(name, spec[0]),
                "references": [local_name(name, p) for p in spec[1:]],
            }
            if fmt in ("sgm", "iwslt") and name.startswith("wmt08"):
                item["metadata"] = False
        entry["langpairs"][pair] = item
    if name in SUBSETS:
        entry["subsets"] = SUBSETS[name]
    return entry


def main() -> None:
    families: dict[str, dict] = {f: {} for f in FAMILIES}
    for name, ds in DATASETS.items():
        family = next(f for f, match in FAMILIES.items() if match(name))
        families[family][name] = convert(name, ds)
    for family, entries in families.items():
        path = OUT / f"{family}.json"
        path.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{path}: {len(entries)} test sets")


if __name__ == "__main__":
    main()
