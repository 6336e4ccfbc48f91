"""External segment scores as a metric: one number per segment per system from any scorer
(COMET, BLEURT, MetricX, human direct assessment), aggregated by the mean.

The statistics of a segment are ``[score, 1]``: they add up like BLEU's, so confidence
intervals, paired tests, rankings and shards treat the metric exactly like BLEU, chrF and TER.
bleucli cannot recompute the scores, so the signature names the aggregation and a short
content hash of every score behind the result (all systems of the run, in order): two
results are comparable only when they came from the same scores.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Any

from bleucli.errors import InputError, UsageError
from bleucli.io import read_text
from bleucli.metrics.base import Metric, Number, Score

#: A metric name fit for a signature and a table header (``|`` and ``:`` separate fields).
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.+\-]*")
#: Names the built-in metrics already use.
RESERVED = {"bleu", "chrf", "ter"}


class SegmentScore(Score):
    """The mean of external segment scores (which may be negative)."""

    signed = True

    def __init__(self, name: str, score: float, count: float) -> None:
        super().__init__(name, score)
        self.count = int(count)


class SegmentScores(Metric):
    """A metric whose per-segment values come from files, one list per system.

    Systems are told apart by their hypothesis list (the object the command layer loaded),
    so the same object must be scored that was bound with :meth:`bind`.
    """

    integer_stats = False
    batches_systems = True
    signature_abbreviations = {"agg": "a", "scores": "sc"}

    def __init__(self, name: str, num_refs: int = 1) -> None:
        if not NAME.fullmatch(name) or name.lower() in RESERVED:
            raise UsageError(
                f"--segment-scores: {name!r} cannot name a metric (letters, "
                f"digits, '_.+-', not bleu/chrf/ter)"
            )
        self.name = name
        self._bound: dict[int, tuple[Sequence[str], list[float]]] = {}
        self._digest = hashlib.sha256()
        super().__init__(None)
        self.num_refs = num_refs

    def bind(self, hypotheses: Sequence[str], scores: list[float], source: str = "") -> None:
        """Attach ``scores`` (one per line of ``hypotheses``) to that system."""
        if len(scores) != len(hypotheses):
            raise InputError(
                f"{source or self.name}: {len(scores)} segment scores but the "
                f"system has {len(hypotheses)} lines"
            )
        self._bound[id(hypotheses)] = (hypotheses, scores)
        self._digest.update(b"%d\n" % len(scores))
        self._digest.update("\n".join(map(repr, scores)).encode())

    @property
    def content_hash(self) -> str:
        """Eight hex digits of SHA-256 over every bound score, in binding order."""
        return self._digest.hexdigest()[:8]

    def _scores_of(self, hypotheses: Sequence[str]) -> list[float]:
        bound = self._bound.get(id(hypotheses))
        if bound is None or bound[0] is not hypotheses:
            raise InputError(f"{self.name}: no segment scores were given for this system")
        return bound[1]

    # -- the Metric interface ---------------------------------------------------------------
    def per_sentence_stats(
        self, hypotheses: Sequence[str], references: Sequence[Sequence[str | None]] | None
    ) -> list[list[Number]]:
        return [[score, 1] for score in self._scores_of(hypotheses)]

    def per_sentence_stats_many(self, systems: Sequence[Sequence[str]]) -> list[list[list[Number]]]:
        return [self.per_sentence_stats(hypotheses, None) for hypotheses in systems]

    def preprocess(self, sentence: str) -> str:
        return sentence

    def reference_info(self, references: list[str]) -> Any:
        return None

    def sentence_stats(self, hypothesis: str, ref_info: Any) -> list[Number]:
        raise InputError(f"{self.name}: segment scores come from files, not from text")

    @property
    def stats_length(self) -> int:
        """Sum of the scores and number of segments."""
        return 2

    def score_from_values(self, values: Sequence[Number]) -> SegmentScore:
        total, count = values[0], values[1]
        return SegmentScore(self.name, float(total / count) if count else 0.0, count)

    def signature_fields(self) -> dict[str, Any]:
        return {"agg": "mean", "scores": self.content_hash}

    def _config_key(self) -> str:
        return f"{self.name}|agg:mean"


# -- reading score files -------------------------------------------------------------------------


def _number(text: Any, where: str) -> float:
    if isinstance(text, bool):
        raise InputError(f"{where}: {text!r} is not a number")
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {str(text)[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(
            f"{where}: {text!r} is not a finite number (NaN and infinities cannot be averaged)"
        )
    return value


def _column(header: list[str], column: str | None, path: str) -> int:
    if column is None:
        if len(header) != 1:
            raise InputError(f"{path}: {len(header)} columns; name one as {path}:COLUMN")
        return 0
    if column in header:
        return header.index(column)
    if column.isdigit() and 1 <= int(column) <= len(header):
        return int(column) - 1
    raise InputError(f"{path}: no column {column!r}; columns: {', '.join(header)}")


def split_spec(spec: str) -> tuple[str, str | None]:
    """``FILE.tsv:COLUMN`` -> (``FILE.tsv``, ``COLUMN``); other specs are a path alone."""
    head, sep, tail = spec.rpartition(":")
    if sep and head.lower().endswith((".tsv", ".json", ".jsonl")):
        return head, tail
    return spec, None


def read_scores(spec: str) -> list[float]:
    """Segment scores from ``FILE`` (one number per line), ``FILE.tsv[:COLUMN]`` (a header
    row, the column by name or 1-based number), ``FILE.json[:FIELD]`` (a list of numbers,
    or of objects with FIELD, default ``score``; or an object with a ``scores`` list) or
    ``FILE.jsonl[:FIELD]`` (a number or an object per line)."""
    path, column = split_spec(spec)
    text = read_text(path)
    lower = path.lower()
    if lower.endswith(".tsv"):
        lines = text.splitlines()
        if not lines:
            raise InputError(f"{path}: empty file, no header row")
        header = lines[0].split("\t")
        index = _column(header, column, path)
        scores = []
        for number, line in enumerate(lines[1:], start=2):
            cells = line.split("\t")
            if len(cells) != len(header):
                raise InputError(
                    f"{path}:{number}: {len(cells)} cells, the header has {len(header)}"
                )
            scores.append(_number(cells[index], f"{path}:{number}"))
        return scores
    if lower.endswith(".jsonl"):
        import json

        values = []
        for number, line in enumerate(text.splitlines(), start=1):
            try:
                values.append(json.loads(line))
            except ValueError:
                raise InputError(f"{path}:{number}: not JSON") from None
        return [_field(value, column, f"{path}:{number}") for value in values]
    if lower.endswith(".json"):
        import json

        try:
            document = json.loads(text)
        except json.JSONDecodeError as err:
            raise InputError(f"{path}: not JSON ({err.msg}, line {err.lineno})") from None
        if isinstance(document, dict) and isinstance(document.get("scores"), list):
            document = document["scores"]
        if not isinstance(document, list):
            raise InputError(f'{path}: expected a list of scores (or {{"scores": [...]}})')
        return [_field(value, column, f"{path}: item {k + 1}") for k, value in enumerate(document)]
    scores = []
    for number, line in enumerate(text.splitlines(), start=1):
        scores.append(_number(line.strip(), f"{path}:{number}"))
    if not scores:
        raise InputError(f"{path}: empty file, no segment scores")
    return scores


def _field(value: Any, field: str | None, where: str) -> float:
    if isinstance(value, dict):
        key = field or "score"
        if key not in value:
            raise InputError(f"{where}: no field {key!r}")
        return _number(value[key], where)
    if field is not None:
        raise InputError(f"{where}: a plain number has no field {field!r}")
    return _number(value, where)


def parse_option(value: str) -> tuple[str, list[str]]:
    """``NAME=FILE,FILE,...`` or ``NAME:FILE,...`` (as ``-i`` names a system) -> (name, file
    specs). A colon names only when what precedes it cannot be a file (no ``.`` or ``/``):
    ``scores.tsv:COLUMN`` stays a file's column."""
    name, sep, files = value.partition("=")
    if not sep:
        head, colon, rest = value.partition(":")
        if colon and head and not any(c in head for c in "./\\"):
            name, sep, files = head, colon, rest
    if not sep or not name or not files:
        raise UsageError(
            f"--segment-scores {value!r}: expected NAME=FILE[,FILE...] or NAME:FILE[,FILE...] "
            f"(one file per -i system)"
        )
    return name, [f for f in files.split(",") if f]


def build(specs: Sequence[str], systems: Sequence[Any], num_refs: int) -> dict[str, SegmentScores]:
    """One metric per ``--segment-scores`` value, bound to ``systems`` (objects with
    ``name`` and ``lines``), in the order of ``-i``."""
    metrics: dict[str, SegmentScores] = {}
    for value in specs:
        name, files = parse_option(value)
        if name in metrics:
            raise UsageError(f"--segment-scores {name}: given twice")
        if len(files) != len(systems):
            raise UsageError(
                f"--segment-scores {name}: {len(files)} file(s) for "
                f"{len(systems)} system(s); give one per -i system, in order"
            )
        metric = SegmentScores(name, num_refs)
        for spec, system in zip(files, systems):
            metric.bind(system.lines, read_scores(spec), split_spec(spec)[0])
        metrics[name] = metric
    return metrics
