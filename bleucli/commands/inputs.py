"""What a scoring run reads: hypotheses, references (files or a named test set), and the
test-set selection (``--origlang``/``--subset``) applied to both."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from bleucli.errors import ConfigError, InputError, UsageError
from bleucli.io import (
    TextSource,
    read_file,
    read_file_or_stdin,
    require_nonempty,
    split_multi_references,
)
from bleucli.metrics.base import Metric, Signature

if TYPE_CHECKING:
    from bleucli.commands.request import Options
    from bleucli.testsets import TestSets


#: Signature fields that select the test set -> the option they set.
TESTSET_FIELDS = {
    "test": "test_set",
    "lang": "language_pair",
    "origlang": "origlang",
    "subset": "subset",
}


def testsets_for(options: Options) -> TestSets:
    from bleucli.testsets import TestSets

    show = sys.stderr is not None and sys.stderr.isatty() and not options.quiet
    return TestSets(options.testsets_files, offline=options.offline or None, show_progress=show)


def load_references(options: Options) -> list[TextSource]:
    """Reference streams from a named test set or from files (``--num-refs`` splits on tabs)."""
    if options.test_set is not None:
        return load_testset_references(options)
    if not options.refs and options.source and _reference_free(options.metrics):
        # quality estimation (CometKiwi, MetricX-24-QE): the source lines stand in, unread
        stand_in = read_file(options.source, options.encoding)
        require_nonempty(stand_in)
        return [TextSource("(no reference: quality estimation)", stand_in.lines)]
    if not options.refs:
        raise ConfigError(
            "no references: give reference files before -i, e.g. `bleucli ref.txt -i hyp.txt`"
        )
    _file_reference_count(options)
    sources = [read_file(path, options.encoding) for path in options.refs]
    for source in sources:
        require_nonempty(source)
    if options.num_refs == 1:
        return sources
    (source,) = sources
    streams = split_multi_references(source, options.num_refs)
    return [TextSource(f"{source.name} (reference {k + 1})", s) for k, s in enumerate(streams)]


def _reference_free(metrics: tuple[str, ...]) -> bool:
    """Whether every requested metric scores without a reference (quality estimation)."""
    from bleucli.metrics import metric_class

    return bool(metrics) and all(getattr(metric_class(m), "reference_free", False) for m in metrics)


def _check_testset_options(options: Options) -> None:
    if options.refs:
        raise ConfigError("give either a test set (-t) or reference files, not both")
    if options.num_refs != 1:
        raise ConfigError("--num-refs is for reference files; a test set brings its own")
    if options.language_pair is None:
        from bleucli.testsets.views import require_pair

        require_pair(testsets_for(options), options.test_set, options.language_pair)


def load_testset_references(options: Options) -> list[TextSource]:
    _check_testset_options(options)
    data = testsets_for(options).load(
        options.test_set or "", options.language_pair or "", options.origlang, options.subset
    )
    if len(data) == 0:
        what = " ".join(
            f"{k}={v}" for k, v in (("origlang", options.origlang), ("subset", options.subset)) if v
        )
        raise InputError(f"test set {options.test_set} has no sentence with {what}")
    label = f"test set {options.test_set}/{options.language_pair}"
    return [
        TextSource(f"{label} ({name})", stream)
        for name, stream in zip(data.reference_fields, data.reference_streams)
    ]


def load_sources(options: Options, selected: int) -> list[str] | None:
    """The source sentences: ``--source FILE`` (filtered like a system output under
    ``--origlang``/``--subset``), else the test set's; None when neither is given."""
    if options.source is not None:
        source = read_file(options.source, options.encoding)
        (source,) = filter_systems(options, [source], selected)
        if len(source.lines) != selected:
            raise InputError(
                f"{options.source}: {len(source.lines)} source lines but the references "
                f"have {selected}"
            )
        return source.lines
    if options.test_set is not None:
        data = testsets_for(options).load(
            options.test_set, options.language_pair or "", options.origlang, options.subset
        )
        return data.source
    return None


def filter_systems(options: Options, systems: list[TextSource], selected: int) -> list[TextSource]:
    """``--origlang``/``--subset`` as SacreBLEU applies them: a system output covering the
    whole test set is filtered like the references. An output that already holds just the
    ``selected`` sentences is taken as it is."""
    if options.test_set is None or (options.origlang is None and options.subset is None):
        return systems
    mask = testsets_for(options).keep_mask(
        options.test_set, options.language_pair or "", options.origlang, options.subset
    )
    if len(mask) == selected:
        return systems  # the filter keeps everything
    return [
        TextSource(
            system.name, [line for line, keep in zip(system.lines, mask) if keep], system.named
        )
        if len(system.lines) == len(mask)
        else system
        for system in systems
    ]


def load_systems(options: Options) -> list[TextSource]:
    """Hypothesis streams: one per ``-i`` file, or tab-separated columns of standard input."""
    if options.inputs:
        from bleucli.io import split_named

        systems: list[TextSource] = []
        for spec in options.inputs:
            given, path = split_named(spec)  # NAME=FILE or NAME:FILE names a system
            name = given or path
            if name in (s.name for s in systems):
                raise ConfigError(f"{name!r} is given twice as a system")
            source = read_file(path, options.encoding)
            require_nonempty(source)
            systems.append(TextSource(name, source.lines, named=name != path))
        return systems
    if sys.stdin is None or sys.stdin.isatty():
        raise ConfigError("no hypotheses: pass -i FILE or pipe them on standard input")
    stdin = read_file_or_stdin("-", options.encoding)
    lines = stdin.lines
    require_nonempty(stdin)
    width = len(lines[0].split("\t"))
    if width == 1:
        return [stdin]
    columns: list[list[str]] = [[] for _ in range(width)]
    for line_no, line in enumerate(lines, 1):
        fields = line.split("\t")
        if len(fields) != width:
            raise InputError(
                f"<stdin>: line {line_no}: {len(fields)} tab-separated systems, "
                f"but line 1 has {width}"
            )
        for column, value in zip(columns, fields):
            column.append(value.rstrip())
    return [TextSource(f"System {k + 1}", c) for k, c in enumerate(columns)]


def _file_reference_count(options: Options) -> int:
    """Reference streams given as files: one per file, or ``--num-refs`` columns of one."""
    if options.num_refs < 1:
        raise UsageError(f"--num-refs must be at least 1, got {options.num_refs}")
    if options.num_refs > 1 and len(options.refs) > 1:
        raise ConfigError(
            "--num-refs splits one tab-separated reference file; "
            "it cannot be combined with several reference files"
        )
    return len(options.refs) if options.num_refs == 1 else options.num_refs


def testset_signature_fields(options: Options) -> dict[str, str | None]:
    """The test-set fields a result's signature records (None where not applicable)."""
    return {
        "test": options.test_set,
        "lang": options.language_pair if options.test_set else None,
        "origlang": options.origlang,
        "subset": options.subset,
    }


def signature_with_testset(metric: Metric, testset_fields: dict[str, str | None]) -> Signature:
    signature = metric.get_signature()
    for key, value in testset_fields.items():
        if value is not None:
            signature.update(key, value)
    return signature
