"""``bleucli report``: one table from many result files, e.g. a paper's main table.

Each input is any JSON layout bleucli (or SacreBLEU) writes, read by :mod:`bleucli.results`:
one result, several metrics, several systems, paired tests, or another report. Rows are
systems (named after the file, or ``name:path``; a file of several systems gives a row per
system), columns are (test set, metric) pairs, and each metric's signature is listed once
below the table without the test-set fields (the columns say them) and without the version
(it says which tool wrote the number, not how it was computed). A column whose results
disagree on the signature is reported on stderr: its numbers are not comparable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from bleucli.errors import InputError
from bleucli.log import logger
from bleucli.precision import Precision, decimals, shown
from bleucli.results import (
    TESTSET_KEYS,
    ScoreRecord,
    comparable_signature,
    load_results,
)


@dataclass
class ReportRequest:
    """What ``bleucli report`` was asked for, independent of click."""

    specs: list[str]
    fmt: str = "text"
    width: int | Precision = 1
    #: An AutoRank recipe (``wmt25``, ``wmt24``): a column combining every other, rows in
    #: its order.
    autorank: str | None = None


def _load(spec: str) -> tuple[str, list[ScoreRecord]]:
    from bleucli.io import split_named

    name, path = split_named(spec)
    return name or Path(path).stem, load_results(path)


def _column_signature(record: ScoreRecord) -> str:
    """The signature without test-set fields (the column says them)."""
    short_testset = {"t", "l", "o", "S"}
    return "|".join(
        part
        for part in record.signature.split("|")
        if part and part.split(":", 1)[0] not in (*TESTSET_KEYS, *short_testset)
    )


def _refuse_mixed_alignments(
    signatures: dict[tuple[str, str], set[str]], label: dict[tuple[str, str], str]
) -> None:
    """A resegmented score (``reseg:``) next to a line-aligned one, or one aligned another
    way, measures something else: such a column is an error, not a warning."""
    from bleucli.results import signature_fields

    for column, sigs in signatures.items():
        ways = {signature_fields(sig).get("reseg", "none (line-aligned)") for sig in sigs}
        if len(ways) > 1:
            raise InputError(
                f"{label[column]} mixes outputs aligned differently to the references "
                f"(reseg: {', '.join(sorted(ways))}); score every system the same way, "
                f"all with --resegment or none"
            )


def build_report(request: ReportRequest) -> str:
    """Render systems x (test set, metric) scores with one signature line per metric."""
    from bleucli.formats import signature_list, table

    systems: list[str] = []
    columns: list[tuple[str, str]] = []
    cells: dict[tuple[str, str, str], float] = {}
    signatures: dict[tuple[str, str], set[str]] = {}
    for spec in request.specs:
        file_system, records = _load(spec)
        names = {record.system for record in records}
        for record in records:
            system = file_system if len(names) == 1 else f"{file_system}: {record.system}"
            if system not in systems:
                if any(c[0] == system for c in cells):
                    raise InputError(f"system {system!r} appears twice; name them with name:path")
                systems.append(system)
            test = record.test or "-"
            column = (test, record.metric)
            if column not in columns:
                columns.append(column)
            if (system, test, record.metric) in cells:
                raise InputError(
                    f"system {system!r} has two {record.metric} results for "
                    f"{test}; name the files with name:path"
                )
            cells[(system, test, record.metric)] = record.score
            signature = _column_signature(record)
            if signature:
                signatures.setdefault(column, set()).add(signature)
    mixed_columns = [
        c for c, sigs in signatures.items() if len({comparable_signature(x) for x in sigs}) > 1
    ]
    label = {c: f"{c[1]} ({c[0]})" if c[0] != "-" else c[1] for c in columns}
    _refuse_mixed_alignments(signatures, label)
    for column in mixed_columns:  # comparable_signature: the version field aside
        logger.warning(
            f"{label[column]} mixes different signatures; those scores are not "
            f"comparable: {' vs '.join(sorted(signatures[column]))}"
        )
    ranks: dict[str, float] = {}
    ranked_by = ""
    if request.autorank:
        ranks, ranked_by = _autorank(request.autorank, systems, columns, cells, label)
        systems = sorted(systems, key=lambda s: (ranks[s], s))
    if request.fmt == "json":
        return json.dumps(
            {
                **({"autorank": ranked_by} if ranks else {}),
                "systems": [
                    {
                        "system": s,
                        **({"autorank": ranks[s]} if ranks else {}),
                        "scores": [
                            {"test": t, "metric": m, "score": cells[s, t, m]}
                            for t, m in columns
                            if (s, t, m) in cells
                        ],
                    }
                    for s in systems
                ],
                "signatures": [
                    {"test": t, "metric": m, "signatures": sorted(v)}
                    for (t, m), v in signatures.items()
                ],
            },
            indent=1,
            ensure_ascii=False,
        )
    # AutoRank first when asked for (one decimal, as WMT prints it); the rows are in its order
    ranked = ["AutoRank"] if ranks else []
    headers = ["System", *ranked, *[label[c] for c in columns]]
    # each metric at its own decimals (COMET 4, MetricX 2, BLEU/chrF/TER -w; bleucli.precision)
    digits = {(t, m): decimals(request.width, m) for t, m in columns}
    rows = [
        [
            s,
            *([shown(ranks[s], 1)] if ranks else []),
            *(
                shown(cells[s, t, m], digits[t, m]) if (s, t, m) in cells else "-"
                for t, m in columns
            ),
        ]
        for s in systems
    ]
    kinds = ["text", *(["number"] * (len(ranked) + len(columns)))]
    rendered = table(rows, headers, request.fmt, kinds, colalign=("left",))
    items = [f"AutoRank: {ranked_by}"] if ranks else []
    items += [
        f"{label[column]}: {sig}" for column, sigs in signatures.items() for sig in sorted(sigs)
    ]
    remarks = ["AutoRank: 1 is the best system; the rows are in its order."] if ranks else []
    if mixed_columns:
        remarks.append(
            f"Not comparable: {', '.join(label[c] for c in mixed_columns)} mix different signatures."
        )
    return rendered + "\n" + signature_list(items, request.fmt, remarks)


def _autorank(
    recipe: str,
    systems: list[str],
    columns: list[tuple[str, str]],
    cells: dict[tuple[str, str, str], float],
    label: dict[tuple[str, str], str],
) -> tuple[dict[str, float], str]:
    """Each system's AutoRank over every column (error rates turned: TER, MetricX...), and
    the AutoRank signature."""
    import numpy as np

    from bleucli.autoranking.compute import autorank
    from bleucli.autoranking.table import Metric, ScoreTable, lower_is_better_by_name

    for system in systems:
        for test, metric in columns:
            if (system, test, metric) not in cells:
                raise InputError(
                    f"--autorank combines every column: {system} has no {label[test, metric]} "
                    f"result"
                )
    table = ScoreTable(list(systems))
    for column in columns:
        table.add_metric(
            Metric(label[column], lower_is_better_by_name(column[1]), "result"),
            system_scores=np.array([cells[s, column[0], column[1]] for s in systems]),
        )
    result = autorank(table, recipe)
    return {s.name: s.autorank for s in result.systems}, result.signature
