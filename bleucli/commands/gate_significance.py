"""``bleucli gate --baseline-output/-i``: the statistical gate
(:mod:`bleucli.gating.significance`) on translation files, with reference files (given after ``CURRENT.json``)
or from the test set the results' signatures name."""

from __future__ import annotations

from typing import Any

from bleucli.errors import ConfigError
from bleucli.gating.checks import Key
from bleucli.gating.significance import apply_significance, parsed_signature
from bleucli.results import Check, ScoreRecord


def significance_gate(
    checks: list[Check],
    baseline: dict[Key, ScoreRecord],
    current: dict[Key, ScoreRecord],
    request: Any,
) -> list[Check]:
    """``bleucli gate --baseline-output/-i``: keep failing only significant drops.

    References come from the reference files or from the test set that the results'
    signatures name (``test:``/``lang:``/``origlang:``/``subset:``), loaded as usual.
    ``request`` is the gate's request (:class:`bleucli.commands.gate.GateRequest`)."""
    from bleucli.commands.inputs import TESTSET_FIELDS, filter_systems, load_references
    from bleucli.commands.request import Options
    from bleucli.io import read_file, require_nonempty

    if not (request.baseline_output and request.current_output):
        raise ConfigError(
            "the statistical gate needs both --baseline-output and -i (the current output)"
        )
    outputs = []
    for path in (request.baseline_output, request.current_output):
        source = read_file(path, "utf-8")
        require_nonempty(source)
        outputs.append(source)
    loaded: dict[tuple, tuple] = {}

    def inputs_for(record: ScoreRecord) -> tuple:
        """References and both outputs, filtered like the references when the signature
        selects an origlang/subset and the outputs cover the whole test set."""
        if request.refs:
            key: tuple = ("files",)
        else:
            fields = parsed_signature(record).fields
            key = tuple(fields.get(k) for k in TESTSET_FIELDS)
            if key[0] is None:
                raise ConfigError(
                    f"result {record.label} names no test set: give the reference files after CURRENT.json"
                )
        if key not in loaded:
            if request.refs:
                options = Options(refs=request.refs)
            else:
                options = Options(
                    **{attribute: value for attribute, value in zip(TESTSET_FIELDS.values(), key)}
                )
            references = [source.lines for source in load_references(options)]
            selected = filter_systems(options, outputs, len(references[0]))
            loaded[key] = (references, *[(s.name, s.lines) for s in selected])
        return loaded[key]

    sources = read_file(request.source, "utf-8").lines if request.source else None
    return apply_significance(
        checks, baseline, current, inputs_for, request.alpha, request.paired_bs_n, sources,
        request.models,
    )  # fmt: skip
