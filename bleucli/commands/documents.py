"""``--docids``: every metric's score per document (and per system), with signatures.

Document ids come from a file (one id per line, aligned with the references) or, with
``--docids testset``, from the named test set itself (sgm/xml/tsv sets carry them). A
document's score is its metric's corpus score over its own lines (statistics summed, not
sentence scores averaged), in the order the documents first appear.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bleucli.commands.inputs import signature_with_testset, testsets_for
from bleucli.errors import ConfigError, InputError
from bleucli.io import TextSource, read_file
from bleucli.metrics import output_order
from bleucli.metrics.base import Metric, sum_rows

if TYPE_CHECKING:
    from bleucli.commands.request import Options

#: ``--docids`` value that means "the test set's own document ids".
FROM_TESTSET = "testset"


def document_ids(options: Options, n_lines: int) -> list[str]:
    """One document id per line, validated against the references' ``n_lines``."""
    assert options.docids is not None
    if options.docids == FROM_TESTSET:
        if options.test_set is None:
            raise ConfigError(
                "--docids testset needs a test set (-t); for files give --docids FILE"
            )
        loaded = testsets_for(options).load(
            options.test_set, options.language_pair or "", options.origlang, options.subset
        )
        ids = loaded.fields.get("docid")
        if not ids or not any(ids):
            raise ConfigError(
                f"test set {options.test_set} has no document ids for "
                f"{options.language_pair}; give --docids FILE"
            )
        source = "the test set's document ids"
    else:
        ids = read_file(options.docids, options.encoding).lines
        source = options.docids
        for number, value in enumerate(ids, start=1):
            if not value.strip():
                raise InputError(f"{options.docids}:{number}: empty document id")
    if len(ids) != n_lines:
        raise InputError(f"{source}: {len(ids)} document ids for {n_lines} reference lines")
    return [value.strip() for value in ids]


def group(ids: list[str]) -> dict[str, list[int]]:
    """Line indices per document, documents in order of first appearance."""
    documents: dict[str, list[int]] = {}
    for index, doc in enumerate(ids):
        documents.setdefault(doc, []).append(index)
    return documents


def document_scores(
    metrics: dict[str, Metric], systems: list[TextSource], documents: dict[str, list[int]]
) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, str]]:
    """Score objects by document, system and metric display name; and the display name
    of every metric key."""
    table: dict[str, dict[str, dict[str, Any]]] = {doc: {} for doc in documents}
    names: dict[str, str] = {}
    for system in systems:
        for key, metric in output_order(metrics):
            rows = metric.per_sentence_stats(system.lines, None)
            for doc, indices in documents.items():
                score = metric.score_from_values(sum_rows([rows[i] for i in indices]))
                table[doc].setdefault(system.name, {})[score.name] = score
                names[key] = score.name
    return table, names


def by_document(
    options: Options,
    metrics: dict[str, Metric],
    systems: list[TextSource],
    testset_fields: dict[str, str | None],
    n_lines: int,
) -> str:
    from bleucli.display import rounded, shown
    from bleucli.formats import signature_list, table

    documents = group(document_ids(options, n_lines))
    scores, display = document_scores(metrics, systems, documents)
    signatures = {
        display[key]: signature_with_testset(metric, testset_fields).format(options.short)
        for key, metric in output_order(metrics)
    }
    names = list(signatures)
    precision = options.precision
    if options.fmt == "json":
        return json.dumps(
            {
                "signatures": signatures,
                "documents": [
                    {
                        "document": doc,
                        "lines": len(documents[doc]),
                        "first_line": documents[doc][0] + 1,
                        "systems": {
                            system: {
                                m: rounded(s.score, precision.decimals(m))
                                for m, s in per_metric.items()
                            }
                            for system, per_metric in per_system.items()
                        },
                    }
                    for doc, per_system in scores.items()
                ],
            },
            indent=1,
            ensure_ascii=False,
        )
    rows = [
        [
            doc,
            str(len(documents[doc])),
            system,
            *(shown(per_metric[m].score, precision.decimals(m)) for m in names),
        ]
        for doc, per_system in scores.items()
        for system, per_metric in per_system.items()
    ]
    headers = ["Document", "Lines", "System", *names]
    if options.fmt == "tsv":
        comments = [f"# {name}: {sig}" for name, sig in signatures.items()]
        return "\n".join([*comments, "\t".join(headers), *("\t".join(row) for row in rows)])
    rendered = table(rows, headers, options.fmt, colalign=("left", "right", "left"))
    items = [f"{name}: {sig}" for name, sig in signatures.items()]
    return (
        rendered
        + "\n"
        + signature_list(
            items, options.fmt, ["Scores per document: each document's lines scored as a corpus."]
        )
    )
