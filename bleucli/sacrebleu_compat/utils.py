"""``sacrebleu.utils``: SacreBLEU's helper functions over bleucli (test sets, output, I/O)."""

from __future__ import annotations

import logging
import os
import sys
from argparse import Namespace
from collections.abc import Sequence
from typing import Any

from bleucli.metrics.base import sum_rows
from bleucli.metrics.bleu import _log as my_log
from bleucli.sacrebleu_compat.dataset import _ALL_DATASETS, DATASETS, SUBSETS
from bleucli.sacrebleu_compat.dataset.base import (
    SACREBLEU_DIR,
    download_file,
    extract_tarball,
    smart_open,
)

USERHOME = os.path.expanduser("~")
sacrelogger = logging.getLogger("sacrebleu")


class Color:
    """SacreBLEU colours its terminal output; bleucli does not, so this returns ``msg``."""

    ENABLE_COLORS = False

    @staticmethod
    def format(msg: str, color: str) -> str:
        return msg


def sum_of_lists(lists: Sequence[Sequence[Any]]) -> Any:
    """Element-wise sum of statistics rows (one row comes back as it is, as in SacreBLEU)."""
    if len(lists) == 1:
        return lists[0]
    return sum_rows(lists)


def args_to_dict(args: Namespace, prefix: str, strip_prefix: bool = False) -> dict[str, Any]:
    """The ``prefix_*`` attributes of an argparse namespace as a dictionary."""
    prefix += "_"
    return {
        (key.replace(prefix, "") if strip_prefix else key): value
        for key, value in vars(args).items()
        if key.startswith(prefix)
    }


def sanity_check_lengths(
    system: Sequence[str], refs: Sequence[Sequence[str]], test_set: str | None = None
) -> None:
    if any(len(stream) != len(system) for stream in refs):
        sacrelogger.error("System and reference streams have different lengths.")
        sys.exit(1)


def _dataset(test_set: str):
    if test_set not in _ALL_DATASETS:
        raise Exception(f"No such test set {test_set}")  # SacreBLEU's exception type
    return _ALL_DATASETS[test_set]


def get_source_file(test_set: str, langpair: str) -> str:
    return _dataset(test_set).get_source_file(langpair)


def get_reference_files(test_set: str, langpair: str) -> list[str]:
    return _dataset(test_set).get_reference_files(langpair)


def get_files(test_set: str, langpair: str) -> list[str]:
    return _dataset(test_set).get_files(langpair)


def download_test_set(test_set: str, langpair: str | None = None) -> list[str]:
    return _dataset(test_set).get_files(langpair)


def get_langpairs_for_testset(testset: str) -> list[str]:
    return list(DATASETS[testset].langpairs) if testset in DATASETS else []


def get_available_testsets() -> list[str]:
    return sorted(DATASETS, reverse=True)


def get_available_testsets_for_langpair(langpair: str) -> list[str]:
    src, _, trg = langpair.partition("-")
    return [
        ds.name
        for ds in DATASETS.values()
        if f"{src}-{trg}" in ds.langpairs or f"{trg}-{src}" in ds.langpairs
    ]


def get_available_origlangs(test_sets: str | None, langpair: str) -> list[str]:
    from bleucli.testsets import TestSets

    return TestSets().available_origlangs(test_sets, langpair) if test_sets else []


def get_available_subsets(test_sets: str | None, langpair: str) -> list[str]:
    from bleucli.testsets import TestSets

    return TestSets().available_subsets(test_sets, langpair) if test_sets else []


def filter_subset(
    systems: list[list[str]],
    test_sets: str,
    langpair: str,
    origlang: str | None,
    subset: str | None = None,
) -> list[list[str]]:
    """Keep the sentences of documents with ``origlang`` (``non-xx`` negates) and whose
    annotation matches ``subset``, from system outputs covering the whole test sets."""
    if origlang is None and subset is None:
        return systems
    from bleucli.testsets import TestSets

    mask = TestSets().keep_mask(test_sets, langpair, origlang, subset)
    return [[line for line, keep in zip(system, mask) if keep] for system in systems]


def get_md5sum(dest_path: str) -> str:
    from pathlib import Path

    from bleucli.testsets.download import md5_of

    return md5_of(Path(dest_path))


def print_single_results(results: list[str], args: Namespace) -> None:
    """Print result lines (``=``-aligned text, or JSON objects as a list)."""
    if args.format == "json":
        print(results[0] if len(results) == 1 else "[\n" + ",\n".join(results) + "\n]")
        return
    if len(results) == 1 or all(" = " not in line for line in results):
        print("\n".join(results))
        return
    width = max(line.index(" = ") for line in results if " = " in line)
    for line in results:
        cut = line.index(" = ") if " = " in line else len(line)
        print(f"{line[:cut]:>{width}}{line[cut:]}")


def print_results_table(results: dict, signatures: dict, args: Namespace) -> None:
    """Print a multi-system table (``results["System"]`` plus one column per metric, of
    score strings or paired-test ``Result`` objects) in ``args.format``."""
    import json

    from bleucli.formats import multi_system, paired_table
    from bleucli.results import Result
    from bleucli.stats.paired import PairedResult

    names = list(results["System"])
    metrics = [key for key in results if key != "System"]
    if args.format == "json":
        rows = []
        for i, name in enumerate(names):
            row: dict[str, Any] = {"system": name}
            for metric in metrics:
                cell = results[metric][i]
                row[metric] = cell if isinstance(cell, str) else dict(vars(cell))
            rows.append(row)
        print(json.dumps(rows, indent=4))
        return
    width = getattr(args, "width", 1)
    signature_text = {name: str(sig) for name, sig in signatures.items()}
    first = results[metrics[0]][0] if metrics else ""
    if isinstance(first, str):
        from bleucli.metrics.base import Score

        rendered = [
            Result(
                name,
                Score(metric, float(results[metric][i])),
                signature_text.get(metric, ""),
                signature_text.get(metric, ""),
            )
            for i, name in enumerate(names)
            for metric in metrics
        ]
        print(multi_system(rendered, args.format, width, False))
        return
    test = "bs" if any(r.mean is not None for m in metrics for r in results[m]) else "ar"
    paired = {
        metric: [PairedResult(r.score, r.p_value, r.mean, r.ci) for r in results[metric]]
        for metric in metrics
    }
    plain = [name.removeprefix("Baseline: ") for name in names]
    samples = max(
        (getattr(sig, "info", {}).get(test) or 0 for sig in signatures.values()), default=0
    )
    print(paired_table(plain, paired, signature_text, args.format, width, test, samples))


def print_test_set(
    test_set: str,
    langpair: str,
    requested_fields: list[str],
    origlang: str | None = None,
    subset: str | None = None,
) -> None:
    """Print fields of a test set, tab-separated, one segment per line (``--echo``)."""
    from bleucli.testsets import TestSets
    from bleucli.testsets.views import echo_fields, require_pair

    sets = TestSets()
    require_pair(sets, test_set, langpair)
    print(echo_fields(sets, test_set, langpair, requested_fields, origlang, subset))


def print_subset_results(
    metrics: dict, full_system: list[str], full_refs: Any, args: Namespace
) -> None:
    """Scores per origlang and subset of the test set (``--detail``)."""
    from bleucli.testsets import TestSets
    from bleucli.testsets.views import subset_details

    print(
        subset_details(
            TestSets(),
            args.test_set,
            args.langpair,
            metrics,
            full_system,
            getattr(args, "width", 1),
            getattr(args, "origlang", None),
            getattr(args, "subset", None),
        )  # fmt: skip
    )


__all__ = [
    "Color",
    "print_test_set",
    "print_subset_results",
    "SACREBLEU_DIR",
    "SUBSETS",
    "USERHOME",
    "args_to_dict",
    "download_file",
    "download_test_set",
    "extract_tarball",
    "filter_subset",
    "get_available_origlangs",
    "get_available_subsets",
    "get_available_testsets",
    "get_available_testsets_for_langpair",
    "get_files",
    "get_langpairs_for_testset",
    "get_md5sum",
    "get_reference_files",
    "get_source_file",
    "my_log",
    "print_results_table",
    "print_single_results",
    "sacrelogger",
    "sanity_check_lengths",
    "smart_open",
    "sum_of_lists",
    "DATASETS",
]
