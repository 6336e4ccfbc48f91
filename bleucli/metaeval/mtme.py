"""mt-metrics-eval's test-set directory, as WMT releases it (``--mtme DIR -l PAIR``)::

    sources/PAIR.txt                        one segment per line
    references/PAIR.REF.txt                 REF: refA, refB, ...
    system-outputs/PAIR/SYS.txt             an output named like a reference is that
                                            human translation, rated as a system
    human-scores/PAIR.NAME.{seg,sys}.score  NAME: wmt-z, mqm, ...; "SYS SCORE" lines,
                                            segment files one block per system
    metric-scores/PAIR/METRIC-REF.{seg,sys}.score

Metrics are read whose REF is the chosen reference or ``src`` (reference-free).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bleucli.errors import InputError, UsageError
from bleucli.io import read_file
from bleucli.metaeval import readers
from bleucli.metaeval.table import HumanScores, MetricScores


@dataclass
class MtmeSet:
    """What one language pair of an MTME directory holds, with the choices made."""

    directory: Path
    pair: str
    n_segments: int
    reference: str
    reference_path: Path
    outputs: dict[str, list[str]]  # the lines of the outputs rated as systems, by name
    human_translations: list[str]  # outputs named like a reference
    human: HumanScores
    metrics: dict[str, MetricScores] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)  # human translations not rated
    other_human: dict[str, HumanScores] = field(default_factory=dict)  # the other kinds
    standard: tuple[str, str] | None = None  # WMT's standard (sys, seg) kinds, when chosen


def _names(folder: Path, prefix: str, suffix: str) -> list[str]:
    if not folder.is_dir():
        return []
    return sorted(
        p.name[len(prefix) : len(p.name) - len(suffix)]
        for p in folder.iterdir()
        if p.name.startswith(prefix) and p.name.endswith(suffix) and p.is_file()
    )


def _pairs_in(directory: Path) -> list[str]:
    return _names(directory / "sources", "", ".txt")


def read_mtme(
    directory: str,
    pair: str,
    human_name: str | None = None,
    reference: str | None = None,
    include_human: bool = False,
) -> MtmeSet:
    root = Path(directory)
    if not root.is_dir():
        raise InputError(f"--mtme {directory}: no such directory")
    source = root / "sources" / f"{pair}.txt"
    if not source.is_file():
        pairs = _pairs_in(root)
        hint = (
            f"language pairs here: {', '.join(pairs)}"
            if pairs
            else (
                "is this an mt-metrics-eval test-set directory (sources/, references/, "
                "system-outputs/, human-scores/)?"
            )
        )
        raise InputError(f"--mtme {directory}: no sources/{pair}.txt; {hint}")
    n_segments = len(read_file(str(source)).lines)
    references = _names(root / "references", f"{pair}.", ".txt")
    if not references:
        raise InputError(f"{root / 'references'}: no {pair}.REF.txt reference")
    chosen = reference or references[0]
    if chosen not in references:
        raise UsageError(
            f"--ref {chosen}: not a reference of {pair} here ({', '.join(references)})"
        )
    kinds = sorted(
        set(_names(root / "human-scores", f"{pair}.", ".seg.score"))
        | set(_names(root / "human-scores", f"{pair}.", ".sys.score"))
    )
    if not kinds:
        raise InputError(f"{root / 'human-scores'}: no {pair}.NAME.seg.score or .sys.score")
    standard = None
    if human_name is None:
        if len(kinds) > 1:
            standard = standard_gold(root, pair, kinds)
            if standard is None:
                raise InputError(
                    f"--mtme {directory}: {pair} has several kinds of human scores "
                    f"({', '.join(kinds)}) and none is WMT's standard one; pick one with "
                    f"--human-name"
                )
            human_name = standard[0]
        else:
            human_name = kinds[0]
    elif human_name not in kinds:
        # a name the data does not have: exit 1, as an unknown test set or pair (docs/cli.md)
        raise InputError(f"--human-name {human_name}: not here for {pair} ({', '.join(kinds)})")
    outputs_dir = root / "system-outputs" / pair
    all_outputs = _names(outputs_dir, "", ".txt")
    if not all_outputs:
        raise InputError(f"{outputs_dir}: no system outputs")
    human_translations = [s for s in all_outputs if s in references and s != chosen]
    left_out = [s for s in human_translations if not include_human]
    outputs = {}
    for system in all_outputs:
        if system == chosen or system in left_out:
            continue
        path = outputs_dir / f"{system}.txt"
        outputs[system] = read_file(str(path)).lines
        if len(outputs[system]) != n_segments:
            raise InputError(
                f"{path}: {len(outputs[system]):,} lines, but sources/{pair}.txt has {n_segments:,}"
            )
    human = _human(root, pair, human_name, n_segments)
    if standard is not None and standard[0] != standard[1]:  # system and segment level apart
        human = _human(root, pair, standard[1], n_segments)
        human.sys = _human(root, pair, standard[0], n_segments).sys
        human.name = f"{standard[0]}/{standard[1]}"
        human.source = f"{root}/human-scores/{pair}.{{{standard[0]}.sys,{standard[1]}.seg}}.score"
    found = MtmeSet(
        root, pair, n_segments, chosen, root / "references" / f"{pair}.{chosen}.txt",
        outputs, human_translations, human, left_out=left_out,
    )  # fmt: skip
    found.standard = standard
    found.other_human = {
        kind: _human(root, pair, kind, n_segments)
        for kind in kinds
        if kind != human_name and (standard is None or kind not in standard)
    }
    found.metrics = _metrics(root / "metric-scores" / pair, chosen, n_segments, list(outputs))
    return found


#: mt-metrics-eval's standard human scores (its ``meta_info.std_gold``) by level, most
#: preferred first: MQM where WMT has it (WMT21's MQM pairs, WMT22 en-de, en-ru, zh-en),
#: then WMT22's Appraise DA+SQM, then WMT22's DA (``wmt``), then WMT19-21's DA: z-scores at
#: system level, raw scores at segment level.
STANDARD_GOLD = {
    "sys": ("mqm", "wmt-appraise", "wmt", "wmt-z"),
    "seg": ("mqm", "wmt-appraise", "wmt", "wmt-raw"),
}


def standard_gold(root: Path, pair: str, kinds: list[str]) -> tuple[str, str] | None:
    """The standard human scores of ``pair`` here: (system level, segment level), each the
    first of :data:`STANDARD_GOLD` with a file of its level; None when neither is here."""
    folder = root / "human-scores"
    picked = []
    for level in ("sys", "seg"):
        found = next(
            (k for k in STANDARD_GOLD[level] if k in kinds
             and (folder / f"{pair}.{k}.{level}.score").is_file()),
            None,
        )  # fmt: skip
        picked.append(found)
    sys_kind, seg_kind = picked
    if sys_kind is None and seg_kind is None:
        return None
    return (sys_kind or seg_kind or "", seg_kind or sys_kind or "")


def _human(root: Path, pair: str, name: str, n_segments: int) -> HumanScores:
    human = HumanScores(name, f"{root}/human-scores/{pair}.{name}.*.score")
    seg_path = root / "human-scores" / f"{pair}.{name}.seg.score"
    sys_path = root / "human-scores" / f"{pair}.{name}.sys.score"
    if seg_path.is_file():
        human.seg = readers.read_blocks(str(seg_path), n_segments)
    if sys_path.is_file():
        human.sys = readers.read_system_scores(str(sys_path))
    return human


def _metrics(
    folder: Path, reference: str, n_segments: int, systems: list[str]
) -> dict[str, MetricScores]:
    """Every metric scored with the chosen reference (or none), over the rated systems."""
    files: dict[str, dict[str, Path]] = {}
    for level in ("seg", "sys"):
        for full_name in _names(folder, "", f".{level}.score"):
            base, _, refs = full_name.rpartition("-")
            if base and refs in (reference, "src"):
                files.setdefault(full_name, {})[level] = folder / f"{full_name}.{level}.score"
    bases = [name.rpartition("-")[0] for name in files]
    metrics: dict[str, MetricScores] = {}
    for full_name, paths in sorted(files.items()):
        base = full_name.rpartition("-")[0]
        name = base if bases.count(base) == 1 else full_name
        scores = MetricScores(name, source=str(folder / full_name))
        if "seg" in paths:
            blocks = readers.read_blocks(str(paths["seg"]), n_segments, allow_none=False)
            scores.seg = np.vstack([_of(blocks, s, paths["seg"]) for s in systems])
        if "sys" in paths:
            table = readers.read_system_scores(str(paths["sys"]), allow_none=False)
            scores.sys = np.array([_of(table, s, paths["sys"]) for s in systems], dtype=float)
        metrics[name] = scores
    return metrics


def _of(table: dict, system: str, path: Path) -> Any:
    if system not in table:
        raise InputError(f"{path}: no scores for system {system!r}")
    return table[system]
