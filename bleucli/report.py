"""``bleucli report``: one table from many result files, e.g. a paper's main table.

Each input is the JSON bleucli (or SacreBLEU) prints for one system: one result object or a
list of them. Rows are systems (named after the file, or ``name:path``), columns are
(test set, metric) pairs, and each metric's signature is listed once below the table, with
the test-set fields left out because the columns say them; a column whose results disagree
on the signature is flagged, because its numbers are not comparable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bleucli.errors import InputError
from bleucli.io import result_records

_TESTSET_KEYS = ("test", "lang", "origlang", "subset")


def _load(spec: str) -> tuple[str, list[dict[str, Any]]]:
    name, sep, path = spec.partition(":")
    if not sep or Path(spec).exists():
        name, path = Path(spec).stem, spec
    return name, result_records(path)


def build_report(specs: list[str], fmt: str = "text", width: int = 1) -> str:
    """Render systems x (test set, metric) scores with one signature line per metric."""
    from tabulate import tabulate

    from bleucli.formats import TABLE_FORMATS

    systems: list[str] = []
    columns: list[tuple[str, str]] = []
    cells: dict[tuple[str, str, str], float] = {}
    signatures: dict[tuple[str, str], set[str]] = {}
    for spec in specs:
        system, records = _load(spec)
        if system in systems:
            raise InputError(f"system {system!r} appears twice; name them with name:path")
        systems.append(system)
        for record in records:
            test = "/".join(str(record[k]) for k in ("test", "lang") if record.get(k)) or "-"
            column = (test, record["name"])
            if column not in columns:
                columns.append(column)
            cells[(system, test, record["name"])] = float(record["score"])
            signature = "|".join(f for f in str(record.get("signature", "")).split("|")
                                 if f.split(":", 1)[0] not in _TESTSET_KEYS)
            signatures.setdefault(column, set()).add(signature)
    if fmt == "json":
        return json.dumps({"systems": [
            {"system": s, "scores": [{"test": t, "metric": m, "score": cells[s, t, m]}
                                     for t, m in columns if (s, t, m) in cells]}
            for s in systems],
            "signatures": [{"test": t, "metric": m, "signatures": sorted(v)}
                           for (t, m), v in signatures.items()]},
            indent=1, ensure_ascii=False)
    label = {c: f"{c[1]} ({c[0]})" if c[0] != "-" else c[1] for c in columns}
    headers = ["System", *[label[c] for c in columns]]
    rows = [[s, *(f"{cells[s, t, m]:.{width}f}" if (s, t, m) in cells else "-"
                  for t, m in columns)] for s in systems]
    table = tabulate(rows, headers=headers, tablefmt=TABLE_FORMATS.get(fmt, "fancy_grid"),
                     colalign=("left",), disable_numparse=True)
    legend = ["", "Signatures:"]
    for column, sigs in signatures.items():
        legend += [f" - {label[column]}: {sig}" for sig in sorted(sigs)]
    mixed = [label[c] for c, sigs in signatures.items() if len(sigs) > 1]
    if mixed:
        legend.append(f"Warning: {', '.join(mixed)} mixes different signatures; those "
                      f"scores are not comparable.")
    if fmt == "latex":
        legend = ["% " + line if line else "%" for line in legend]
    return table + "\n" + "\n".join(legend)
