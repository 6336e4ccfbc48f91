"""Sufficient statistics as files: score shards anywhere, merge them into the corpus score.

``bleucli stats ...`` writes, for every metric of ``-m``, the summed statistics of its input
together with the metric's options and signature; ``bleucli merge`` adds shards and scores the
sum. BLEU and chrF statistics are integers, so the merge equals scoring the whole corpus at
once exactly; TER's averaged reference lengths are floats, so with several references the
last bits may differ from a one-piece run (as any other summation order would).

A shard is data from elsewhere, so it is validated before anything is added: its layout,
known metrics and options, the right number of finite, non-negative (whole, for BLEU/chrF)
values that are consistent with each other (no more matches than n-grams), and its identity,
a SHA-256 of the hypotheses and references it was computed from: the same shard (or the same
part of the data) given twice is refused instead of being counted twice.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from bleucli.errors import ConfigError, InputError
from bleucli.io import read_json
from bleucli.metrics.base import Metric, Number
from bleucli.version import __version__

FORMAT = "bleucli-stats"
FORMAT_VERSION = 2
_HINT = "write it again with `bleucli stats`"


class ContentDigest:
    """SHA-256 of a shard's hypotheses and reference streams, fed chunk by chunk."""

    def __init__(self) -> None:
        self._hypotheses = hashlib.sha256()
        self._references: list[Any] = []

    def update(self, hypotheses: list[str], references: list[list[str]]) -> None:
        for line in hypotheses:
            self._hypotheses.update(line.encode("utf-8", "surrogatepass") + b"\n")
        while len(self._references) < len(references):
            self._references.append(hashlib.sha256())
        for digest, stream in zip(self._references, references):
            for line in stream:
                digest.update(
                    ("" if line is None else line).encode("utf-8", "surrogatepass") + b"\n"
                )

    def hexdigest(self) -> str:
        combined = hashlib.sha256(self._hypotheses.digest())
        for digest in self._references:
            combined.update(digest.digest())
        return combined.hexdigest()


def stats_document(
    metrics: dict[str, Metric],
    specs: dict[str, tuple[type, dict[str, Any]]],
    totals: dict[str, list[Number]],
    n_sentences: int,
    extra_fields: dict[str, str | None],
    content_sha256: str,
) -> str:
    """The JSON of one shard."""
    entries = []
    for name in sorted(metrics):
        metric = metrics[name]
        signature = metric.get_signature()
        for key, value in extra_fields.items():
            if value is not None:
                signature.update(key, value)
        options = {k: v for k, v in specs[name][1].items() if k != "force"}
        entries.append(
            {
                "metric": name,
                "options": options,
                "nrefs": metric.num_refs,
                "signature": str(signature),
                "values": list(totals[name]),
                "sentences": n_sentences,
            }
        )
    return json.dumps(
        {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "bleucli": __version__,
            "data": {"sha256": content_sha256, "lines": n_sentences},
            "metrics": entries,
        },
        indent=1,
    )


@dataclass
class ShardEntry:
    """One metric's statistics in a shard, validated."""

    path: str
    name: str
    metric: Metric
    options: dict[str, Any]
    nrefs: int
    signature: str
    values: list[Number]
    sentences: int


@dataclass
class Shard:
    path: str
    sha256: str
    lines: int
    entries: list[ShardEntry]


def _whole(value: Any, where: str, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(
            f"{where}: {what} should be a whole number >= {minimum}, got {value!r}; {_HINT}"
        )
    return value


def parse_shard(data: Any, path: str) -> Shard:
    """Validate a parsed shard document (see the module doc)."""
    from bleucli.metrics import metric_class

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{path}: not a bleucli stats file (write one with `bleucli stats`)")
    if data.get("format_version") != FORMAT_VERSION:
        raise InputError(
            f"{path}: stats format version {data.get('format_version')!r} is not "
            f"{FORMAT_VERSION}; {_HINT}"
        )
    identity = data.get("data")
    if not isinstance(identity, dict) or not isinstance(identity.get("sha256"), str):
        raise InputError(f"{path}: 'data' should hold the shard's 'sha256' and 'lines'; {_HINT}")
    lines = _whole(identity.get("lines"), path, "'data.lines'", 1)
    entries_data = data.get("metrics")
    if not isinstance(entries_data, list) or not entries_data:
        raise InputError(f"{path}: 'metrics' should be a non-empty list; {_HINT}")
    entries = []
    for i, entry in enumerate(entries_data, 1):
        where = f"{path}: metrics item {i}"
        if not isinstance(entry, dict):
            raise InputError(f"{where}: should be an object; {_HINT}")
        missing = [
            k
            for k in ("metric", "options", "nrefs", "signature", "values", "sentences")
            if k not in entry
        ]
        if missing:
            raise InputError(f"{where}: missing {', '.join(repr(k) for k in missing)}; {_HINT}")
        name, options = entry["metric"], entry["options"]
        if not isinstance(name, str) or name not in ("bleu", "chrf", "ter"):
            raise InputError(f"{where}: unknown metric {name!r} (bleu, chrf or ter)")
        if not isinstance(options, dict) or not isinstance(entry["signature"], str):
            raise InputError(
                f"{where}: 'options' should be an object and 'signature' a string; {_HINT}"
            )
        try:
            metric = metric_class(name)(**options)
        except (TypeError, ValueError, ConfigError) as err:
            raise InputError(
                f"{where}: options {options} are not valid for {name} ({err})"
            ) from None
        nrefs = _whole(entry["nrefs"], where, "'nrefs'", 1)
        metric.num_refs = nrefs
        sentences = _whole(entry["sentences"], where, "'sentences'", 1)
        if sentences != lines:
            raise InputError(f"{where}: {sentences} sentences, but the shard has {lines} lines")
        problem = metric.stats_problem(entry["values"])
        if problem:
            raise InputError(f"{where}: impossible {name} statistics: {problem}")
        entries.append(
            ShardEntry(
                path,
                name,
                metric,
                options,
                nrefs,
                entry["signature"],
                list(entry["values"]),
                sentences,
            )
        )
    return Shard(path, identity["sha256"], lines, entries)


def _without_version(signature: str) -> str:
    return "|".join(f for f in signature.split("|") if not f.startswith("version:"))


def merge(paths: list[str]) -> list[tuple[Metric, Any, str]]:
    """Add the shards' statistics per metric; refuse shards computed differently, given
    twice, or holding impossible statistics."""
    if not paths:
        raise ConfigError("no stats files to merge")
    shards = [parse_shard(read_json(path, "a bleucli stats file"), path) for path in paths]
    order = [entry.name for entry in shards[0].entries]
    for shard in shards[1:]:
        names = [entry.name for entry in shard.entries]
        if names != order:
            raise InputError(
                f"{shard.path}: has metrics {', '.join(names)}, the first shard {', '.join(order)}"
            )
        for entry, first in zip(shard.entries, shards[0].entries):
            if (entry.options, entry.nrefs) != (first.options, first.nrefs) or _without_version(
                entry.signature
            ) != _without_version(first.signature):
                raise InputError(
                    f"{shard.path}: {entry.name} statistics were computed with "
                    f"{entry.signature}, not {first.signature} "
                    f"(as in {first.path}); they cannot be merged"
                )
    seen: dict[str, str] = {}
    for shard in shards:
        if shard.sha256 in seen:
            raise InputError(
                f"{shard.path}: the same data as {seen[shard.sha256]} (same "
                f"hypotheses and references); merge each part of the corpus once"
            )
        seen[shard.sha256] = shard.path
    merged = {entry.name: entry for entry in shards[0].entries}
    for shard in shards[1:]:
        for entry in shard.entries:
            first = merged[entry.name]
            first.values = [a + b for a, b in zip(first.values, entry.values)]
            first.sentences += entry.sentences
    return [
        (
            merged[key].metric,
            merged[key].metric.score_from_values(merged[key].values),
            merged[key].signature,
        )
        for key in order
    ]
