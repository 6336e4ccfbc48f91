"""Readers of human judgements and of mt-metrics-eval's directory layout.

Each human-score format becomes a :class:`~bleucli.metaeval.table.HumanScores` keyed by
the names the file uses; matching those names to the systems is the caller's (see
:func:`match_systems`). Every malformed line is refused with its file and line number.

Formats:

* ``tsv``: ``system<TAB>segment<TAB>score``, segment the 1-based line; an optional header.
* ``wmt-da``: WMT's DA segment file, ``SYS SID RAW.SCR Z.SCR N`` (space-separated, a
  header); ``field`` picks RAW.SCR (``raw``) or Z.SCR (``z``).
* ``mqm``: Google's MQM TSV, one row per error (``system doc doc_id seg_id rater source
  target category severity``): a rater's segment score is minus the sum of the error
  weights (major 5, minor 1, minor Fluency/Punctuation 0.1, Non-translation 25, no error
  0), and a segment's score the mean over its raters.
* ``mqm-avg``: Google's averaged MQM file, ``system mqm_avg_score seg_id`` per row.
* ``mtme``: MTME's ``SYS SCORE`` lines, one block of N lines per system (``None``: unrated).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from bleucli.errors import InputError, UsageError
from bleucli.io import read_text
from bleucli.metaeval.table import HumanScores

HUMAN_FORMATS = ("auto", "tsv", "wmt-da", "mqm", "mqm-avg", "mtme")
#: WMT's DA files number their systems (``Online-Y.3``); the outputs do not.
DA_SUFFIX = re.compile(r"\.\d+$")
MQM_WEIGHTS = {"major": 5.0, "minor": 1.0, "no-error": 0.0, "neutral": 0.0}
MQM_SPECIAL = {
    ("minor", "fluency/punctuation"): 0.1,
    ("major", "non-translation!"): 25.0,
    ("minor", "non-translation!"): 25.0,
}


def _lines(path: str) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based numbers."""
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if line.strip():
            yield number, line


def _number(text: str, path: str, line: int, what: str) -> float:
    if text in ("None", "none", "NA", "nan", "NaN", ""):
        return math.nan
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{path}:{line}: {what} {text!r} is not a number") from None
    if math.isinf(value):
        raise InputError(f"{path}:{line}: {what} {text!r} is not finite")
    return value


def _segment(text: str, path: str, line: int, n_segments: int) -> int:
    try:
        segment = int(text)
    except ValueError:
        raise InputError(f"{path}:{line}: segment {text!r} is not a whole number") from None
    if not 1 <= segment <= n_segments:
        raise InputError(
            f"{path}:{line}: segment {segment} is outside the {n_segments:,} lines of the "
            f"references (segments are numbered from 1)"
        )
    return segment - 1


@dataclass
class _Collector:
    """Scores per (system, segment), refusing a second score for the same entry."""

    path: str
    n_segments: int
    seen: dict[tuple[str, int], int] = field(default_factory=dict)
    scores: dict[str, np.ndarray] = field(default_factory=dict)

    def add(self, system: str, segment: int, score: float, line: int) -> None:
        key = (system, segment)
        if key in self.seen:
            raise InputError(
                f"{self.path}:{line}: a second score for system {system!r}, segment "
                f"{segment + 1} (the first is on line {self.seen[key]})"
            )
        self.seen[key] = line
        row = self.scores.setdefault(system, np.full(self.n_segments, np.nan))
        row[segment] = score


def sniff(path: str) -> str:
    """The format of a human-score file, from its first line."""
    for _, line in _lines(path):
        fields = line.split("\t")
        words = line.split()
        if words[:5] == ["SYS", "SID", "RAW.SCR", "Z.SCR", "N"]:
            return "wmt-da"
        if words[:3] == ["system", "mqm_avg_score", "seg_id"]:
            return "mqm-avg"
        if [f.strip().lower() for f in fields[:5]] == [
            "system",
            "doc",
            "doc_id",
            "seg_id",
            "rater",
        ]:
            return "mqm"
        if len(fields) == 3 or [f.lower() for f in fields] == ["system", "segment", "score"]:
            return "tsv"
        raise InputError(
            f"{path}:1: cannot tell the format of these human scores; name it with "
            f"--human-format ({', '.join(HUMAN_FORMATS[1:])})"
        )
    raise InputError(f"{path}: no human scores in the file")


def read_tsv(path: str, n_segments: int) -> HumanScores:
    collector = _Collector(path, n_segments)
    for number, line in _lines(path):
        fields = line.split("\t")
        if len(fields) != 3:
            raise InputError(
                f"{path}:{number}: expected system<TAB>segment<TAB>score, got {len(fields)} fields"
            )
        system, segment, score = (f.strip() for f in fields)
        if number == 1 and segment.lower() in ("segment", "seg", "seg_id", "line"):
            continue  # header
        value = _number(score, path, number, "score")
        if not math.isnan(value):
            collector.add(system, _segment(segment, path, number, n_segments), value, number)
    return HumanScores("tsv", path, collector.scores)


def read_wmt_da(path: str, n_segments: int, field_name: str = "z") -> HumanScores:
    column = {"raw": 2, "z": 3}.get(field_name)
    if column is None:
        raise UsageError(f"--human-field: {field_name!r} is not one of raw, z")
    collector = _Collector(path, n_segments)
    for number, line in _lines(path):
        words = line.split()
        if number == 1 and words[:1] == ["SYS"]:
            continue
        if len(words) != 5:
            raise InputError(
                f"{path}:{number}: expected 'SYS SID RAW.SCR Z.SCR N', got {len(words)} fields"
            )
        value = _number(words[column], path, number, "score")
        if not math.isnan(value):
            segment = _segment(words[1], path, number, n_segments)
            collector.add(words[0], segment, value, number)
    return HumanScores(f"wmt-{field_name}", path, collector.scores)


def mqm_weight(severity: str, category: str, path: str, line: int) -> float:
    """An MQM error's weight (Freitag et al. 2021)."""
    key = (severity.strip().lower(), category.strip().lower())
    if key in MQM_SPECIAL:
        return MQM_SPECIAL[key]
    if key[1] == "no-error":
        return 0.0
    if key[0] not in MQM_WEIGHTS:
        raise InputError(
            f"{path}:{line}: unknown MQM severity {severity!r} (expected Major, Minor, "
            f"Neutral or No-error)"
        )
    return MQM_WEIGHTS[key[0]]


def read_mqm(path: str, n_segments: int) -> HumanScores:
    penalties: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    header: list[str] | None = None
    for number, line in _lines(path):
        fields = line.split("\t")
        if header is None:
            header = [f.strip().lower() for f in fields]
            missing = {"system", "seg_id", "rater", "category", "severity"} - set(header)
            if missing:
                raise InputError(
                    f"{path}:{number}: an MQM header needs the columns system, seg_id, rater, "
                    f"category and severity (missing: {', '.join(sorted(missing))})"
                )
            continue
        if len(fields) < len(header):
            raise InputError(
                f"{path}:{number}: {len(fields)} fields where the header has {len(header)}"
            )
        row = dict(zip(header, fields))
        segment = _segment(row["seg_id"].strip(), path, number, n_segments)
        weight = mqm_weight(row["severity"], row["category"], path, number)
        raters = penalties[(row["system"].strip(), segment)]
        rater = row["rater"].strip()
        raters[rater] = raters.get(rater, 0.0) + weight
    scores: dict[str, np.ndarray] = {}
    for (system, segment), raters in penalties.items():
        row_scores = scores.setdefault(system, np.full(n_segments, np.nan))
        row_scores[segment] = -sum(raters.values()) / len(raters)
    return HumanScores("mqm", path, scores)


def read_mqm_avg(path: str, n_segments: int) -> HumanScores:
    collector = _Collector(path, n_segments)
    for number, line in _lines(path):
        words = line.split()
        if number == 1 and words[:1] == ["system"]:
            continue
        if len(words) != 3:
            raise InputError(
                f"{path}:{number}: expected 'system mqm_avg_score seg_id', got {len(words)} fields"
            )
        value = _number(words[1], path, number, "score")
        if not math.isnan(value):
            collector.add(words[0], _segment(words[2], path, number, n_segments), value, number)
    return HumanScores("mqm", path, collector.scores)


def read_blocks(path: str, n_segments: int, allow_none: bool = True) -> dict[str, np.ndarray]:
    """MTME's segment-level ``SYS SCORE`` file: one block of ``n_segments`` lines per system."""
    rows: dict[str, list[float]] = {}
    first_line: dict[str, int] = {}
    for number, line in _lines(path):
        parts = line.rsplit(None, 1)
        if len(parts) != 2:
            raise InputError(f"{path}:{number}: expected 'SYSTEM SCORE'")
        system, text = parts[0].strip(), parts[1]
        value = _number(text, path, number, "score")
        if math.isnan(value) and not allow_none:
            raise InputError(
                f"{path}:{number}: metric score {text!r} for {system!r}: metric files may "
                f"not leave segments unscored"
            )
        rows.setdefault(system, []).append(value)
        first_line.setdefault(system, number)
    for system, values in rows.items():
        if len(values) != n_segments:
            raise InputError(
                f"{path}:{first_line[system]}: system {system!r} has {len(values):,} scores, "
                f"the test set {n_segments:,} segments"
            )
    return {system: np.array(values) for system, values in rows.items()}


def read_system_scores(path: str, allow_none: bool = True) -> dict[str, float]:
    scores: dict[str, float] = {}
    for number, line in _lines(path):
        parts = line.rsplit(None, 1)
        if len(parts) != 2:
            raise InputError(f"{path}:{number}: expected 'SYSTEM SCORE'")
        value = _number(parts[1], path, number, "score")
        if math.isnan(value) and not allow_none:
            raise InputError(f"{path}:{number}: system {parts[0]!r} has no score")
        if parts[0] in scores:
            raise InputError(f"{path}:{number}: a second score for system {parts[0]!r}")
        scores[parts[0].strip()] = value
    return scores


def read_human(path: str, fmt: str, n_segments: int, field_name: str = "z") -> HumanScores:
    """Human scores from a file in any of :data:`HUMAN_FORMATS`."""
    if fmt == "auto":
        fmt = sniff(path)
    if fmt == "tsv":
        return read_tsv(path, n_segments)
    if fmt == "wmt-da":
        return read_wmt_da(path, n_segments, field_name)
    if fmt == "mqm":
        return read_mqm(path, n_segments)
    if fmt == "mqm-avg":
        return read_mqm_avg(path, n_segments)
    if fmt == "mtme":
        return HumanScores("mtme", path, read_blocks(path, n_segments))
    raise UsageError(f"--human-format: {fmt!r} is not one of {', '.join(HUMAN_FORMATS)}")


def match_systems(human_names: list[str], systems: list[str]) -> dict[str, str]:
    """Which human-score name stands for which system: the same name, else the name
    without WMT's numeric suffix (``Online-Y.3`` -> ``Online-Y``)."""
    wanted = set(systems)
    matched: dict[str, str] = {}
    for name in human_names:
        if name in wanted:
            matched[name] = name
    for name in human_names:
        if name in matched:
            continue
        base = DA_SUFFIX.sub("", name)
        if base in wanted and base not in matched.values():
            matched[name] = base
    return matched
