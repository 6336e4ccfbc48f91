"""``bleucli mbr``: minimum Bayes risk selection from the command line. The candidates of
each source come from several systems' line-aligned outputs (system combination) or from
a JSON Lines file of samples (what sampling-based decoders write); the chosen line of each
source is printed, or with ``-f json`` the choices with every candidate's utility."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bleucli.errors import InputError, UsageError
from bleucli.log import logger


@dataclass
class MBRRequest:
    """What ``bleucli mbr`` was asked for, independent of click."""

    inputs: list[str] = field(default_factory=list)
    samples: str | None = None
    samples_field: str = "samples"
    pseudo_field: str | None = None
    metric: str = "chrf"
    options: dict[str, Any] = field(default_factory=dict)
    threads: int = 0
    fmt: str = "text"
    encoding: str = "utf-8"
    source: str | None = None  # source sentences, one per group (neural metrics)


def _samples_file(
    path: str, name: str, pseudo: str | None, encoding: str
) -> tuple[list[list[str]], list[list[str]] | None]:
    """Per source (one JSON value a line): the samples, a list of strings (the object's
    ``name`` field, or the line itself when it is a list), and the pseudo-references of the
    ``pseudo`` field if one is named."""
    from bleucli.io import read_file_or_stdin

    groups: list[list[str]] = []
    references: list[list[str]] = []
    source = read_file_or_stdin(path, encoding)
    path = source.name
    for number, line in enumerate(source.lines, 1):
        if not line.strip():
            raise InputError(
                f"{path}: line {number}: empty line; every line is one source's "
                f"samples (a JSON list or an object with {name!r})"
            )
        try:
            value = json.loads(line)
        except ValueError as err:
            raise InputError(f"{path}: line {number}: not JSON ({err})") from None
        for key, target in ((name, groups), (pseudo, references)):
            if key is None:
                continue
            items = (
                value
                if isinstance(value, list) and key == name
                else (value.get(key) if isinstance(value, dict) else None)
            )
            if not isinstance(items, list) or not items:
                raise InputError(
                    f"{path}: line {number}: no {key!r} list of strings (a JSON "
                    f"object with a non-empty {key!r} list, or a JSON list)"
                )
            for k, item in enumerate(items):
                if not isinstance(item, str):
                    raise InputError(
                        f"{path}: line {number}: {key}[{k}] is {type(item).__name__}, not a string"
                    )
            target.append(items)
    if not groups:
        raise InputError(f"{path}: empty file, no samples to choose from")
    return groups, references if pseudo else None


def system_names(specs: list[str]) -> tuple[list[str], list[str]]:
    """(names, paths) of ``-i`` systems given as ``NAME=FILE``, ``NAME:FILE`` or ``FILE``."""
    from bleucli.io import split_named

    names, paths = [], []
    for spec in specs:
        name, path = split_named(spec)
        names.append(name or path)
        paths.append(path)
    return names, paths


def _system_outputs(paths: list[str], encoding: str) -> list[list[str]]:
    """Per line, the outputs of every system: line-aligned files, equally long."""
    from bleucli.io import read_file_or_stdin

    if len(paths) < 2:
        raise UsageError(
            "bleucli mbr chooses among candidates: give two or more systems "
            "(-i A B ...) or --samples FILE"
        )
    if paths.count("-") > 1:
        raise UsageError("-i: standard input (-) can be only one of the systems")
    sources = [read_file_or_stdin(path, encoding) for path in paths]
    lengths = {len(source.lines) for source in sources}
    if len(lengths) != 1:
        counts = ", ".join(f"{s.name}: {len(s.lines)}" for s in sources)
        raise InputError(
            f"the systems' outputs differ in length ({counts}); they must be "
            f"line-aligned, one line per source"
        )
    if lengths == {0}:
        raise InputError(f"{paths[0]}: empty file, nothing to choose from")
    return [list(candidates) for candidates in zip(*(s.lines for s in sources))]


def run(request: MBRRequest) -> str:
    from bleucli.batch import mbr

    if bool(request.inputs) == bool(request.samples):
        raise UsageError(
            "give the candidates either as systems (-i A B ...) or as --samples FILE.jsonl"
        )
    if request.pseudo_field and not request.samples:
        raise UsageError("--pseudo-field reads pseudo-references from --samples")
    names: list[str] | None = None
    if request.samples:
        groups, pseudo = _samples_file(
            request.samples, request.samples_field, request.pseudo_field, request.encoding
        )
    else:
        names, paths = system_names(request.inputs)
        groups, pseudo = _system_outputs(paths, request.encoding), None
    options = dict(request.options)
    if request.source is not None:
        from bleucli.io import read_file

        sources = read_file(request.source, request.encoding).lines
        if len(sources) != len(groups):
            raise InputError(
                f"{request.source}: {len(sources)} source lines but {len(groups)} candidate groups"
            )
        options["sources"] = sources
    result = mbr(
        groups, request.metric, pseudo_references=pseudo, threads=request.threads, **options
    )
    if request.fmt == "json":
        utilities = result.utilities
        choices = [  # lines and candidates counted from 1, as everywhere in bleucli's output
            {
                "line": i + 1,
                "candidate": k + 1,
                "system": names[k] if names is not None else None,
                "output": text,
                "utilities": [None if u != u else float(u) for u in utilities[i]],
            }
            for i, (k, text) in enumerate(zip(result.best, result.chosen))
        ]
        return json.dumps(
            {
                "signature": result.signature,
                "lower_is_better": not result.higher_is_better,
                "choices": choices,
            },
            ensure_ascii=False,
            indent=1,
        )
    logger.info(result.signature)
    return "\n".join(result.chosen)
