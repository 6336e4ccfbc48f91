"""The one result schema: what ``bleucli`` (and SacreBLEU) write as JSON, read back as data.

Every command that takes results as input (``report``, ``gate``) reads them here, so that
whatever one command writes the others read, and every file is validated once, with errors
that name the file, the item and the field. The layouts understood:

- one result object, or a list of them: ``{"name": "BLEU", "score": 38.2, "signature":
  ...}`` (the single-system output of both tools);
- a list of system rows: ``[{"system": "A", "BLEU": "38.2", "chrF2": ...}]`` (multi-system
  output) or ``[{"system": "A", "BLEU": {"score": ..., "p_value": ..., ...}}]`` (SacreBLEU's
  paired-test output);
- bleucli's paired-test document ``{"test": "bs", "systems": [...], "signatures": {...}}``;
- ``bleucli report -f json`` documents ``{"systems": [...], "signatures": [...]}``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from bleucli.errors import InputError, UsageError
from bleucli.io import read_json


def result_entries(result: Any) -> list[dict[str, Any]]:
    """A single-system result's entries, one per metric: the JSON (text or parsed) holds one
    object or a list of them (receipts, stored server results, ``-f json``)."""
    if not result:
        return []
    parsed = json.loads(result) if isinstance(result, str) else result
    return parsed if isinstance(parsed, list) else [parsed]


#: Metric names bleucli writes: BLEU, chrF<beta> with one ``+`` per word order, TER.
METRIC_NAME = re.compile(r"^(BLEU|chrF\d+\+*|TER)$")
#: What usage errors list when a name is unknown and the results give no better hint.
STANDARD_METRICS = ("BLEU", "chrF2", "chrF2++", "TER")
#: Metrics where a lower score is better.
LOWER_IS_BETTER = frozenset({"TER"})
#: Signature fields that name the data scored (the test set and its selection).
TESTSET_KEYS = ("test", "lang", "origlang", "subset")
_BASELINE_PREFIX = "Baseline: "


def signature_fields(signature: str) -> dict[str, str]:
    """``key:value`` fields of a signature (long or short keys as written)."""
    pairs = (part.split(":", 1) for part in signature.split("|") if ":" in part)
    return {key: value for key, value in pairs}


#: Signature fields that describe where a number came from, not how it was computed: the
#: tool's version, and the content hash of external segment scores (it differs whenever
#: the system output differs, which is what a gate or a report compares).
PROVENANCE_FIELDS = ("version", "v", "scores", "sc")


def comparable_signature(signature: str) -> str:
    """The signature without its provenance fields (``version``, and ``scores`` of
    external segment metrics): two results are comparable when these agree."""
    return "|".join(
        part for part in signature.split("|") if part.split(":", 1)[0] not in PROVENANCE_FIELDS
    )


@dataclass
class Result:
    """A score as a command computed it (with the metric's details for text output), before
    rendering; :meth:`record` is what any reader gets back from the rendered JSON."""

    system: str
    score: Any  # bleucli.metrics.base.Score
    signature: str
    short_signature: str

    def record(self) -> ScoreRecord:
        return ScoreRecord(self.score.name, float(self.score.score), self.signature, self.system)


@dataclass(frozen=True)
class ScoreRecord:
    """One metric's score for one system, as a result file states it."""

    metric: str
    score: float
    signature: str = ""
    system: str = ""
    p_value: float | None = None
    mean: float | None = None
    ci: float | None = None
    #: Where it was read from (``file.json: item 2``), for error messages.
    where: str = field(default="", compare=False)

    @property
    def test(self) -> str:
        """``wmt14/en-de`` (plus origlang/subset) when the signature names a test set."""
        fields = signature_fields(self.signature)
        long_keys = {"t": "test", "l": "lang", "o": "origlang", "S": "subset"}
        fields = {long_keys.get(k, k): v for k, v in fields.items()}
        return "/".join(fields[k] for k in TESTSET_KEYS if fields.get(k))

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.system, self.metric, self.test)

    @property
    def label(self) -> str:
        text = self.metric + (f" ({self.test})" if self.test else "")
        return f"{self.system}: {text}" if self.system else text

    @property
    def lower_is_better(self) -> bool:
        return self.metric in LOWER_IS_BETTER

    def as_record(self) -> dict[str, Any]:
        """The single-system JSON object for this score (what ``--update-baseline`` keeps)."""
        record: dict[str, Any] = {
            "name": self.metric,
            "score": self.score,
            "signature": self.signature,
        }
        if self.system:
            record["system"] = self.system
        record.update(signature_fields(self.signature))
        return record


def _number(value: Any, where: str, what: str, optional: bool = False) -> float | None:
    """A finite number (numbers written as strings, as multi-system tables do, are read)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(
            f"{where}: {what} should be a number, got "
            f"{'null' if value is None else type(value).__name__}"
        )
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"{where}: {what} should be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise InputError(f"{where}: {what} is {value}, not a finite number")
    return number


def _text(value: Any, where: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        got = (
            "null"
            if value is None
            else (repr(value) if isinstance(value, str) else type(value).__name__)
        )
        raise InputError(f"{where}: {what} should be a non-empty string, got {got}")
    return value


def _from_object(item: dict[str, Any], where: str, system: str = "") -> ScoreRecord:
    """``{"name", "score", "signature", ...}``: a single-system result."""
    signature = item.get("signature", "")
    if signature is None:
        signature = ""
    if not isinstance(signature, str):
        raise InputError(f"{where}: 'signature' should be a string, got {type(signature).__name__}")
    mean = item.get("confidence_mean")
    ci = item.get("confidence_var")
    return ScoreRecord(
        metric=_text(item["name"], where, "'name'"),
        score=_number(item["score"], where, "'score'"),  # type: ignore[arg-type]
        signature=signature,
        system=_text(item["system"], where, "'system'") if "system" in item else system,
        mean=_number(mean, where, "'confidence_mean'", optional=True),
        ci=_number(ci, where, "'confidence_var'", optional=True),
        where=where,
    )


def _from_row(row: dict[str, Any], where: str, signatures: dict[str, str]) -> list[ScoreRecord]:
    """``{"system": "A", "BLEU": "38.2" | {"score": ..., "p_value": ...}}``."""
    system = _text(row["system"], where, "'system'")
    if system.startswith(_BASELINE_PREFIX):
        system = system[len(_BASELINE_PREFIX) :]
    records = []
    for metric, cell in row.items():
        if metric == "system":
            continue
        cell_where = f"{where}, {metric}"
        if isinstance(cell, dict):
            if "score" not in cell:
                raise InputError(f"{cell_where}: needs a 'score'")
            records.append(
                ScoreRecord(
                    metric=metric,
                    score=_number(cell["score"], cell_where, "'score'"),  # type: ignore[arg-type]
                    signature=signatures.get(metric, ""),
                    system=system,
                    p_value=_number(cell.get("p_value"), cell_where, "'p_value'", optional=True),
                    mean=_number(cell.get("mean"), cell_where, "'mean'", optional=True),
                    ci=_number(cell.get("ci"), cell_where, "'ci'", optional=True),
                    where=cell_where,
                )
            )
        else:
            records.append(
                ScoreRecord(
                    metric,
                    _number(cell, cell_where, "the score"),  # type: ignore[arg-type]
                    signatures.get(metric, ""),
                    system,
                    where=cell_where,
                )
            )
    return records


def _from_ranking(data: dict[str, Any], path: str) -> list[ScoreRecord]:
    """``bleucli --rank -f json``: per metric, its signature and each system's score and
    interval."""
    records = []
    for metric, entry in data["metrics"].items():
        where = f"{path}: {metric}"
        if not isinstance(entry, dict):
            raise InputError(f"{where}: should be an object with 'signature' and 'systems'")
        signature = _text(entry.get("signature", ""), where, "'signature'")
        for k, row in enumerate(_list(entry.get("systems"), where, "'systems'"), 1):
            row_where = f"{where}, system {k}"
            if not isinstance(row, dict) or "system" not in row or "score" not in row:
                raise InputError(f"{row_where}: needs 'system' and 'score'")
            records.append(
                ScoreRecord(
                    metric=metric,
                    score=_number(row["score"], row_where, "'score'"),  # type: ignore[arg-type]
                    signature=signature,
                    system=_text(row["system"], row_where, "'system'"),
                    mean=_number(row.get("mean"), row_where, "'mean'", optional=True),
                    ci=_number(row.get("ci"), row_where, "'ci'", optional=True),
                    where=row_where,
                )
            )
    return records


def _from_report(data: dict[str, Any], path: str) -> list[ScoreRecord]:
    """``bleucli report -f json``: systems with (test, metric, score) and signatures."""
    signatures: dict[tuple[str, str], str] = {}
    for k, entry in enumerate(_list(data.get("signatures", []), path, "'signatures'"), 1):
        where = f"{path}: signatures item {k}"
        if not isinstance(entry, dict) or not isinstance(entry.get("signatures"), list):
            raise InputError(f"{where}: should be {{'test', 'metric', 'signatures': [...]}}")
        if len(entry["signatures"]) == 1:
            signatures[(entry.get("test", "-"), entry.get("metric", ""))] = _text(
                entry["signatures"][0], where, "the signature"
            )
    records = []
    for i, system in enumerate(_list(data["systems"], path, "'systems'"), 1):
        where = f"{path}: system {i}"
        if not isinstance(system, dict) or not isinstance(system.get("scores"), list):
            raise InputError(f"{where}: should be {{'system': NAME, 'scores': [...]}}")
        name = _text(system.get("system"), where, "'system'")
        for j, score in enumerate(system["scores"], 1):
            score_where = f"{where}, score {j}"
            if not isinstance(score, dict) or "metric" not in score or "score" not in score:
                raise InputError(f"{score_where}: should be {{'test', 'metric', 'score'}}")
            metric = _text(score["metric"], score_where, "'metric'")
            test = score.get("test", "-")
            signature = signatures.get((test, metric), "")
            if not signature and test not in ("-", None):
                parts = str(test).split("/")
                signature = "|".join(f"{k}:{v}" for k, v in zip(TESTSET_KEYS, parts))
            records.append(
                ScoreRecord(
                    metric,
                    _number(score["score"], score_where, "'score'"),  # type: ignore[arg-type]
                    signature,
                    name,
                    where=score_where,
                )
            )
    return records


def _list(value: Any, path: str, what: str) -> list:
    if not isinstance(value, list):
        raise InputError(f"{path}: {what} should be a list, got {type(value).__name__}")
    return value


def parse_results(data: Any, path: str) -> list[ScoreRecord]:
    """Validate a parsed JSON result document into score records (see the module doc)."""
    hint = "write one with `bleucli REF -i HYP` (JSON is the default format)"
    if (
        isinstance(data, dict)
        and isinstance(data.get("metrics"), dict)
        and data.get("correction") is not None
    ):
        records = _from_ranking(data, path)
    elif isinstance(data, dict) and isinstance(data.get("systems"), list):
        if "samples" in data or isinstance(data.get("signatures"), dict):  # paired tests
            signatures = data.get("signatures") or {}
            if not isinstance(signatures, dict) or not all(
                isinstance(v, str) for v in signatures.values()
            ):
                raise InputError(f"{path}: 'signatures' should map metric names to strings")
            records = []
            for i, row in enumerate(data["systems"], 1):
                if not isinstance(row, dict) or "system" not in row:
                    raise InputError(f"{path}: system {i} should be an object with 'system'")
                records += _from_row(row, f"{path}: system {i}", signatures)
        else:
            records = _from_report(data, path)
    else:
        items = data if isinstance(data, list) else [data]
        if not items:
            raise InputError(f"{path}: holds no result ({hint})")
        records = []
        for i, item in enumerate(items, 1):
            where = f"{path}: item {i}" if isinstance(data, list) else path
            if isinstance(item, dict) and "name" in item and "score" in item:
                records.append(_from_object(item, where))
            elif isinstance(item, dict) and "system" in item:
                records += _from_row(item, where, {})
            else:
                raise InputError(
                    f"{where}: not a bleucli JSON result (needs 'name' and "
                    f"'score', or 'system' and metric columns); {hint}"
                )
    if not records:
        raise InputError(f"{path}: holds no score ({hint})")
    seen: dict[tuple[str, str, str], ScoreRecord] = {}
    for record in records:
        if record.key in seen:
            raise InputError(
                f"{record.where}: {record.label} appears twice in {path} "
                f"(first at {seen[record.key].where}); keep one per file"
            )
        seen[record.key] = record
    return records


def load_results(path: str) -> list[ScoreRecord]:
    """Read and validate one result file (``-``: standard input)."""
    return parse_results(read_json(path, "a bleucli JSON result"), path)


def match_metric(name: str, known: list[str], option: str) -> str:
    """The metric ``name`` denotes among ``known`` (case-insensitive; ``chrf`` alone also
    matches the one chrF variant present). Anything else is a usage error listing names."""
    by_lower = {k.lower(): k for k in known}
    if name.lower() in by_lower:
        return by_lower[name.lower()]
    family = [k for k in known if k.lower().rstrip("+").rstrip("0123456789") == name.lower()]
    if len(family) == 1:
        return family[0]
    choices = ", ".join(known or STANDARD_METRICS)
    raise UsageError(f"{option} {name!r}: no such metric in the results; known: {choices}")


#: The checks of ``bleucli gate``, each reported and counted on its own for every result.
GATE_CHECKS = ("missing", "signature", "drop", "min-score")


@dataclass
class Check:
    """One verdict of ``bleucli gate``: one check (``GATE_CHECKS``) of one result (what its
    text, JSON and JUnit show). A statistical pass of the drop check is that check's own
    verdict: it never touches the floor or the signature."""

    metric: str
    test: str
    status: str  # "pass" or "fail"
    reason: str  # ok, new, missing, signature, drop, min-score, not-significant
    baseline: float | None
    current: float | None
    delta: float | None
    detail: str = ""
    system: str = ""
    check: str = "drop"  # one of GATE_CHECKS

    @property
    def label(self) -> str:
        text = f"{self.metric} ({self.test})" if self.test else self.metric
        return f"{self.system}: {text}" if self.system else text

    @property
    def name(self) -> str:
        """The result and the check (a JUnit case name: unique in one gate run)."""
        return f"{self.label} {self.check}"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.system, self.metric, self.test)
