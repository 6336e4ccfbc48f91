"""``bleucli merge``: add statistics shards written by ``bleucli stats`` and print the corpus
score (the shards themselves are validated by :mod:`bleucli.shards`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bleucli.precision import Precision


@dataclass
class MergeRequest:
    """What ``bleucli merge`` was asked for, independent of click."""

    shards: list[str]
    fmt: str | None = None
    width: int | Precision = 1
    score_only: bool = False
    short: bool = False


def run(request: MergeRequest) -> str:
    from bleucli.commands.request import default_format
    from bleucli.formats import single_system
    from bleucli.metrics.base import Signature
    from bleucli.results import Result
    from bleucli.shards import merge

    fmt = request.fmt
    if fmt is None:
        fmt = default_format(("json", "text"))
    results = []
    for metric, score, signature in merge(request.shards):
        shortener = Signature(1, {}, metric.signature_abbreviations)
        results.append(Result("merged", score, signature, shortener.shorten(signature)))
    return single_system(results, fmt, request.width, request.score_only, request.short)
