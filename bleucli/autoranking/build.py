"""Building the table AutoRank combines from what a user has: WMT's published score files
and system scores, and system outputs scored here by bleucli's own metrics or by segment
scores from elsewhere (LLM judges, any metric bleucli does not compute). bleucli's string
metrics enter as the mean of their segment-level scores, as WMT25 computes chrF++ (not
the corpus score): every metric of the table is then a mean of segment scores, and the
bootstrap can resample documents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bleucli.autoranking.table import Metric, ScoreTable, document_index, lower_is_better_by_name
from bleucli.errors import ConfigError, InputError


@dataclass
class System:
    """Outputs to place: a name and one line per segment."""

    name: str
    lines: list[str]
    path: str = ""


@dataclass
class Own:
    """A metric bleucli computes: its ``-m`` name and keyword options."""

    key: str
    options: dict[str, Any] = field(default_factory=dict)


def published(
    wmt_scores: Sequence[str] = (), system_scores: str | None = None, pair: str | None = None
) -> ScoreTable | None:
    """The published table: WMT-layout segment-score files (one pair) and/or system
    scores; the system scores of systems in the files join them as more metrics."""
    from bleucli.autoranking.wmt import (
        pair_table,
        read_score_files,
        read_system_scores,
        system_table,
    )

    table = pair_table(read_score_files(wmt_scores), pair) if wmt_scores else None
    if system_scores is None:
        return table
    given = system_table(read_system_scores(system_scores), system_scores)
    if table is None:
        given.pair = pair
        return given
    if set(given.systems) != set(table.systems):
        only = sorted(set(given.systems) ^ set(table.systems))
        raise InputError(
            f"{system_scores}: its systems differ from the score files' ({', '.join(only[:3])} "
            f"in one only)"
        )
    rows = [given.systems.index(s) for s in table.systems]
    for metric in given.metrics:
        table.add_metric(metric, system_scores=given.system_scores[metric.name][rows])
    return table


def own_scores(
    own: Own, systems: Sequence[System], references: Sequence[Sequence[str]], sources: Any
) -> tuple[str, str, Any]:
    """(score name, signature, ``[system, segment]`` scores) of one bleucli metric."""
    import numpy as np

    from bleucli.batch import scorer, sentence_scores
    from bleucli.metrics import uses_source

    neural = uses_source(own.key)
    if neural and sources is None:
        raise ConfigError(
            f"-m {own.key}: neural metrics read the source sentences: give --source FILE"
        )
    if not references and not neural:
        raise ConfigError(f"-m {own.key} needs references")
    metric = scorer(own.key, dict(own.options))
    extra = {"sources": sources} if neural else {}
    rows = [sentence_scores(metric, system.lines, references, **extra) for system in systems]
    probe = systems[0].lines[0] if systems and systems[0].lines else ""
    if neural:
        name = metric.name
    else:
        name = metric.sentence_score(probe, [stream[0] for stream in references]).name
    return name, str(metric.get_signature()), np.array(rows, dtype=np.float64)


def external_scores(name: str, specs: Sequence[str], systems: Sequence[System]) -> Any:
    """``[system, segment]`` scores read from one file per system (the scoring command's
    ``--segment-scores`` forms)."""
    import numpy as np

    from bleucli.metrics.segment import read_scores, split_spec

    if len(specs) != len(systems):
        raise ConfigError(
            f"--segment-scores {name}: {len(specs)} file(s) for {len(systems)} system(s); give "
            f"one per system, in order"
        )
    rows = []
    for spec, system in zip(specs, systems):
        scores = read_scores(spec)
        if len(scores) != len(system.lines):
            raise InputError(
                f"{split_spec(spec)[0]}: {len(scores)} segment scores, {system.path or system.name} "
                f"has {len(system.lines)} lines"
            )
        rows.append(scores)
    return np.array(rows, dtype=np.float64)


def outputs_table(
    systems: Sequence[System],
    references: Sequence[Sequence[str]],
    sources: Any,
    own: Sequence[Own],
    segment_scores: Mapping[str, Sequence[str]],
    documents: Sequence[str] | None = None,
) -> ScoreTable:
    """The table of outputs scored here: one column per bleucli metric (in ``own`` order),
    then one per ``--segment-scores`` metric. ``documents``: a document id per line
    (consecutive lines of a document), else each line is its own document."""
    lengths = {len(s.lines) for s in systems}
    if len(lengths) > 1:
        short = min(systems, key=lambda s: len(s.lines))
        raise InputError(
            f"{short.path or short.name}: {len(short.lines)} lines, other systems have "
            f"{max(lengths)}"
        )
    n = lengths.pop() if lengths else 0
    for stream in references:
        if len(stream) != n:
            raise InputError(f"the references have {len(stream)} lines, the systems {n}")
    table = ScoreTable([s.name for s in systems])
    ids, counts = _documents(documents, n)
    table.documents, table.document_of = ids, document_index(counts)
    for metric in own:
        name, signature, scores = own_scores(metric, systems, references, sources)
        table.add_metric(Metric(name, lower_is_better_by_name(name), "bleucli", signature), scores)
    for name, specs in segment_scores.items():
        table.add_metric(
            Metric(name, lower_is_better_by_name(name), "segment-scores"),
            external_scores(name, specs, systems),
        )
    return table


def _documents(documents: Sequence[str] | None, n: int) -> tuple[list[str], list[int]]:
    if documents is None:
        return [str(k + 1) for k in range(n)], [1] * n
    if len(documents) != n:
        raise InputError(f"--docids: {len(documents)} lines, the systems have {n}")
    ids: list[str] = []
    counts: list[int] = []
    for doc in documents:
        if ids and ids[-1] == doc:
            counts[-1] += 1
        elif doc in ids:
            raise InputError(f"--docids: the lines of document {doc} are not consecutive")
        else:
            ids.append(doc)
            counts.append(1)
    return ids, counts


def add_systems(
    table: ScoreTable,
    systems: Sequence[System],
    references: Sequence[Sequence[str]],
    sources: Any,
    segment_scores: Mapping[str, Sequence[str]],
) -> ScoreTable:
    """``table`` with ``systems`` placed among its systems: each of its metrics computed by
    bleucli where it can (chrF++, XCOMET-XL, with the sign WMT stores), else read from
    ``--segment-scores NAME=FILE,...`` (one file per added system)."""
    import numpy as np

    from bleucli.autoranking.wmt import COMPUTABLE

    if table.system_scores:
        name = next(iter(table.system_scores))
        raise ConfigError(
            f"--add places new outputs by their segment scores, and {name} has system scores "
            f"only (--system-scores)"
        )
    clash = [s.name for s in systems if s.name in table.systems]
    if clash:
        raise ConfigError(f"--add {clash[0]}: a system of that name is already in the data")
    n = len(table.document_of)
    for system in systems:
        if len(system.lines) != n:
            raise InputError(
                f"{system.path or system.name}: {len(system.lines)} lines; the pair has {n} "
                f"segments (the score files' documents in order, their segments in order)"
            )
    grown = ScoreTable(
        [*table.systems, *(s.name for s in systems)],
        documents=list(table.documents),
        pair=table.pair,
    )
    grown.document_of = table.document_of
    for metric in table.metrics:
        if metric.name in segment_scores:
            new = external_scores(metric.name, segment_scores[metric.name], systems)
            signature = metric.signature
        elif metric.name in COMPUTABLE:
            key, options, sign = COMPUTABLE[metric.name]
            _, signature, scores = own_scores(Own(key, dict(options)), systems, references, sources)
            new = sign * scores
        else:
            raise ConfigError(
                f"bleucli cannot compute {metric.name}: give the added systems' segment scores "
                f"with --segment-scores {metric.name}=FILE[,FILE...] (one per --add system), or "
                f"leave the metric out (--metrics)"
            )
        values = np.vstack([table.segments[metric.name], new])
        grown.add_metric(
            Metric(metric.name, metric.lower_is_better, metric.origin, signature), values
        )
    return grown
