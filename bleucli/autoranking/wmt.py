"""WMT's published scores: the segment-score files of WMT25's ``data/automatic_scores``
(one JSONL file per system, the file stem is its name; a line per document with
``language_pair``, ``document_id`` and ``metric_scores`` {METRIC: [segment score or null]}),
the system-score lines ``system<TAB>metric<TAB>score`` of data published without segment
scores (WMT24), and what WMT decided per language pair: which metrics AutoRank combines and
how many decimals the tables print.

WMT25's files store every metric higher-is-better: MetricX-24-Hybrid-XL is stored negated
(values <= 0). They are read as stored."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bleucli.autoranking.table import Metric, ScoreTable, document_index, lower_is_better_by_name
from bleucli.errors import InputError

#: WMT25's metrics, in the tables' column order.
WMT25_METRICS = (
    "CometKiwi-XL",
    "GEMBA-ESA-CMDA",
    "GEMBA-ESA-GPT4.1",
    "MetricX-24-Hybrid-XL",
    "XCOMET-XL",
)
#: Pairs with human references: CometKiwi-XL is combined only there (the preliminary
#: ranking's tables; pairs without references use MetricX and XCOMET in QE mode instead).
WMT25_WITH_COMETKIWI = frozenset(
    {
        "cs-de_DE", "cs-uk_UA", "ja-zh_CN", "en-ar_EG", "en-cs_CZ", "en-et_EE", "en-is_IS",
        "en-ja_JP", "en-ko_KR", "en-ru_RU", "en-sr_Cyrl_RS", "en-uk_UA", "en-zh_CN",
    }
)  # fmt: skip
#: The two lowest-resource targets: chrF++ alone.
WMT25_CHRF_ONLY = frozenset({"en-bho_IN", "en-mas_KE"})
#: WMT24's two metrics.
WMT24_METRICS = ("MetricX-23-XL", "CometKiwi-DA-XL")

#: Decimals the WMT tables print (AutoRank, the judges, MetricX and chrF++ 1; the COMET
#: family 3); a metric not here gets bleucli's own precision.
PRINTED_DECIMALS = {
    "AutoRank": 1,
    "CometKiwi-XL": 3,
    "XCOMET-XL": 3,
    "GEMBA-ESA-CMDA": 1,
    "GEMBA-ESA-GPT4.1": 1,
    "MetricX-24-Hybrid-XL": 1,
    "chrF++": 1,
    "MetricX-23-XL": 1,
    "CometKiwi-DA-XL": 3,
}

#: WMT metrics bleucli computes itself, for outputs added to a published pair: the ``-m``
#: name, its options, and the sign WMT's files store it with.
COMPUTABLE: dict[str, tuple[str, dict[str, Any], float]] = {
    "chrF++": ("chrf", {"word_order": 2}, 1.0),
    "XCOMET-XL": ("xcomet", {"model": "XCOMET-XL"}, 1.0),
}


def default_metrics(recipe: str, pair: str | None, available: Sequence[str]) -> list[str]:
    """The metrics the recipe combines for ``pair``: WMT25's choice for its pairs (five,
    without CometKiwi-XL where there were no human references, chrF++ alone for Bhojpuri
    and Maasai), WMT24's two; otherwise every metric in the data."""
    if recipe == "wmt25" and pair in WMT25_CHRF_ONLY and "chrF++" in available:
        return ["chrF++"]
    if recipe == "wmt25" and set(WMT25_METRICS) <= set(available) | {"CometKiwi-XL"}:
        chosen = [m for m in WMT25_METRICS if m in available]
        if pair not in WMT25_WITH_COMETKIWI:
            chosen = [m for m in chosen if m != "CometKiwi-XL"]
        return chosen
    if recipe == "wmt24" and set(WMT24_METRICS) <= set(available):
        return list(WMT24_METRICS)
    return list(available)


@dataclass
class SystemFile:
    """One system's lines of one pair: documents in file order."""

    path: str
    documents: list[str] = field(default_factory=list)
    scores: list[dict[str, list[Any]]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)


def score_files(paths: Iterable[str]) -> list[str]:
    """The JSONL files of ``paths`` (a folder: its ``*.jsonl`` and ``*.jsonl.gz``)."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            inside = sorted(
                os.path.join(path, name)
                for name in os.listdir(path)
                if name.endswith((".jsonl", ".jsonl.gz"))
            )
            if not inside:
                raise InputError(f"{path}: no *.jsonl score files in this folder")
            found += inside
        elif os.path.exists(path):
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    return found


def system_name(path: str) -> str:
    base = os.path.basename(path)
    for suffix in (".jsonl.gz", ".jsonl"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def _lines(path: str) -> Iterable[str]:
    import gzip

    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                yield from handle
        else:
            with open(path, encoding="utf-8") as handle:
                yield from handle
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    except OSError as err:
        raise InputError(f"{path}: {err.strerror or err}") from None


def read_score_files(paths: Iterable[str]) -> dict[str, dict[str, SystemFile]]:
    """pair -> system -> its documents and segment scores, from WMT25-layout files."""
    pairs: dict[str, dict[str, SystemFile]] = {}
    for path in score_files(paths):
        name = system_name(path)
        for number, line in enumerate(_lines(path), start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                item = json.loads(line)
            except ValueError:
                raise InputError(f"{where}: not JSON") from None
            if not isinstance(item, dict):
                raise InputError(f"{where}: expected an object with language_pair, document_id "
                                 f"and metric_scores")  # fmt: skip
            for key in ("language_pair", "document_id", "metric_scores"):
                if key not in item:
                    raise InputError(f"{where}: no {key!r} field")
            scores = item["metric_scores"]
            if not isinstance(scores, dict) or not all(
                isinstance(v, list) for v in scores.values()
            ):
                raise InputError(f"{where}: metric_scores must map each metric to a list of "
                                 f"segment scores")  # fmt: skip
            lengths = {len(v) for v in scores.values()}
            if len(lengths) > 1:
                raise InputError(f"{where}: the metrics list different numbers of segments")
            for metric, values in scores.items():
                for value in values:
                    if value is None:
                        continue
                    if isinstance(value, bool) or not isinstance(value, (int, float)):
                        raise InputError(f"{where}: {metric}: {str(value)[:30]!r} is not a number")
                    if not math.isfinite(value):
                        raise InputError(f"{where}: {metric}: {value} is not a finite number "
                                         f"(a missing score is null)")  # fmt: skip
            systems = pairs.setdefault(str(item["language_pair"]), {})
            entry = systems.get(name)
            if entry is None:
                entry = systems[name] = SystemFile(path)
            elif entry.path != path:
                raise InputError(f"{path}: system {name} is also in {entry.path}")
            entry.documents.append(str(item["document_id"]))
            entry.scores.append(scores)
            entry.lines.append(number)
    if not pairs:
        raise InputError("the score files hold no documents")
    return pairs


def pair_table(pairs: dict[str, dict[str, SystemFile]], pair: str | None) -> ScoreTable:
    """The table of one pair: its systems (sorted by name), documents in the first system's
    order, every metric the files hold, read as stored (higher is better)."""
    import numpy as np

    if pair is None:
        if len(pairs) > 1:
            raise InputError(f"the score files hold {len(pairs)} pairs: choose one with -l "
                             f"({', '.join(sorted(pairs))})")  # fmt: skip
        pair = next(iter(pairs))
    if pair not in pairs:
        raise InputError(f"-l {pair}: not in the score files; pairs there: "
                         f"{', '.join(sorted(pairs))}")  # fmt: skip
    systems = pairs[pair]
    names = sorted(systems)
    first = systems[names[0]]
    documents = first.documents
    if len(set(documents)) != len(documents):
        raise InputError(f"{first.path}: a document of {pair} is listed twice")
    order = {doc: k for k, doc in enumerate(documents)}
    counts = [len(next(iter(s.values()), [])) for s in first.scores]
    metrics = list(first.scores[0]) if first.scores else []
    arrays = {m: np.full((len(names), sum(counts)), np.nan) for m in metrics}
    starts = np.concatenate([[0], np.cumsum(counts)])
    for row, name in enumerate(names):
        entry = systems[name]
        if sorted(entry.documents) != sorted(documents):
            missing = [d for d in documents if d not in set(entry.documents)]
            extra = [d for d in entry.documents if d not in order]
            what = f"lacks {', '.join(missing[:3])}" if missing else f"adds {', '.join(extra[:3])}"
            raise InputError(
                f"{entry.path}: system {name} has {len(entry.documents)} documents of {pair}, "
                f"{first.path} {len(documents)} ({what})"
            )
        for doc, scores, line in zip(entry.documents, entry.scores, entry.lines):
            k = order[doc]
            absent = [m for m in metrics if m not in scores]
            if absent:
                raise InputError(f"{entry.path}:{line}: no {absent[0]} scores (other files "
                                 f"have {', '.join(metrics)})")  # fmt: skip
            for metric in metrics:
                values = scores[metric]
                if len(values) != counts[k]:
                    raise InputError(
                        f"{entry.path}:{line}: system {name} has {len(values)} segments in "
                        f"document {doc}, {first.path} has {counts[k]}"
                    )
                arrays[metric][row, starts[k] : starts[k + 1]] = [
                    np.nan if v is None else float(v) for v in values
                ]
    table = ScoreTable(names, pair=pair, documents=list(documents))
    table.document_of = document_index(counts)
    for metric in metrics:
        table.add_metric(Metric(metric, False, "wmt-scores"), segments=arrays[metric])
    return table


def read_system_scores(path: str) -> dict[str, dict[str, float]]:
    """system -> metric -> score from ``system<TAB>metric<TAB>score`` lines (no header)."""
    out: dict[str, dict[str, float]] = {}
    for number, line in enumerate(_lines(path), start=1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        cells = line.split("\t")
        where = f"{path}:{number}"
        if len(cells) != 3:
            raise InputError(f"{where}: {len(cells)} tab-separated fields; expected "
                             f"system<TAB>metric<TAB>score")  # fmt: skip
        system, metric, text = (c.strip() for c in cells)
        try:
            value = float(text)
        except ValueError:
            raise InputError(f"{where}: score {text[:30]!r} is not a number") from None
        if not math.isfinite(value):
            raise InputError(f"{where}: score {text!r} is not a finite number")
        if metric in out.setdefault(system, {}):
            raise InputError(f"{where}: {system} has a second {metric} score")
        out[system][metric] = value
    if not out:
        raise InputError(f"{path}: no system scores")
    return out


def system_table(scores: dict[str, dict[str, float]], path: str) -> ScoreTable:
    """A table of system-level scores (every system needs every metric); metric
    directions by the documented rule (``MetricX...`` and TER are error rates)."""
    import numpy as np

    names = sorted(scores)
    metrics = list(dict.fromkeys(m for s in names for m in scores[s]))
    for system in names:
        lacking = [m for m in metrics if m not in scores[system]]
        if lacking:
            raise InputError(f"{path}: {system} has no {lacking[0]} score")
    table = ScoreTable(names)
    for metric in metrics:
        table.add_metric(
            Metric(metric, lower_is_better_by_name(metric), "system-scores"),
            system_scores=np.array([scores[s][metric] for s in names]),
        )
    return table
