"""Sufficient statistics as files: score shards anywhere, merge them into the corpus score.

``bleucli stats ...`` writes, for every metric of ``-m``, the summed statistics of its input
together with the metric's options and signature; ``bleucli merge`` adds shards and scores the
sum. BLEU and chrF statistics are integers, so the merge equals scoring the whole corpus at
once exactly; TER's averaged reference lengths are floats, so with several references the
last bits may differ from a one-piece run (as any other summation order would).
"""

from __future__ import annotations

import json
from typing import Any

from bleucli.errors import ConfigError, InputError
from bleucli.io import read_json
from bleucli.metrics.base import Metric, Number
from bleucli.version import __version__

FORMAT = "bleucli-stats"
FORMAT_VERSION = 1


def stats_document(metrics: dict[str, Metric], specs: dict[str, tuple[type, dict[str, Any]]],
                   totals: dict[str, list[Number]], n_sentences: int,
                   extra_fields: dict[str, str | None]) -> str:
    """The JSON of one shard."""
    entries = []
    for name in sorted(metrics):
        metric = metrics[name]
        signature = metric.get_signature()
        for key, value in extra_fields.items():
            if value is not None:
                signature.update(key, value)
        options = {k: v for k, v in specs[name][1].items() if k != "force"}
        entries.append({"metric": name, "options": options, "nrefs": metric.num_refs,
                        "signature": str(signature), "values": list(totals[name]),
                        "sentences": n_sentences})
    return json.dumps({"format": FORMAT, "format_version": FORMAT_VERSION,
                       "bleucli": __version__, "metrics": entries}, indent=1)


def _load(path: str) -> dict[str, Any]:
    data = read_json(path, "a bleucli stats file")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{path}: not a bleucli stats file (write one with `bleucli stats`)")
    if data.get("format_version") != FORMAT_VERSION:
        raise InputError(f"{path}: stats format version {data.get('format_version')} is not "
                         f"{FORMAT_VERSION}; rewrite it with this bleucli")
    return data


def _without_version(signature: str) -> str:
    return "|".join(f for f in signature.split("|") if not f.startswith("version:"))


def merge(paths: list[str]) -> list[tuple[Metric, Any, str]]:
    """Add the shards' statistics per metric; refuse shards computed differently."""
    from bleucli.metrics import metric_class

    if not paths:
        raise ConfigError("no stats files to merge")
    merged: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for path in paths:
        document = _load(path)
        names = [entry["metric"] for entry in document["metrics"]]
        if order and names != order:
            raise InputError(f"{path}: has metrics {', '.join(names)}, the first shard "
                             f"{', '.join(order)}")
        order = order or names
        for entry in document["metrics"]:
            first = merged.get(entry["metric"])
            if first is None:
                merged[entry["metric"]] = {**entry, "values": list(entry["values"]),
                                           "path": path}
                continue
            if (entry["options"], entry["nrefs"]) != (first["options"], first["nrefs"]) or \
                    _without_version(entry["signature"]) != _without_version(first["signature"]):
                raise InputError(f"{path}: {entry['metric']} statistics were computed with "
                                 f"{entry['signature']}, not {first['signature']} "
                                 f"(as in {first['path']}); they cannot be merged")
            if len(entry["values"]) != len(first["values"]):
                raise InputError(f"{path}: {entry['metric']} statistics have another length")
            for i, value in enumerate(entry["values"]):
                first["values"][i] += value
            first["sentences"] += entry["sentences"]
    results = []
    for name in order:
        entry = merged[name]
        metric = metric_class(name)(**entry["options"])
        metric.num_refs = entry["nrefs"]
        results.append((metric, metric.score_from_values(entry["values"]), entry["signature"]))
    return results
