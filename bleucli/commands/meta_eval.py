"""``bleucli meta-eval``: how well metrics agree with human judgements.

Loads the systems, their human scores and the metrics (an MTME directory, or plain files),
scores bleucli's own metrics, reports how the human scores line up with the outputs, then
hands the table to :mod:`bleucli.metaeval`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bleucli.errors import ConfigError, InputError, UsageError
from bleucli.io import read_file
from bleucli.log import logger
from bleucli.metaeval import readers
from bleucli.metaeval.evaluate import DEFAULT_STATISTICS, evaluate, statistic
from bleucli.metaeval.render import Context, render
from bleucli.metaeval.significance import RNGS, TestSettings
from bleucli.metaeval.table import HumanScores, MetaEvalData, MetricScores

#: bleucli's metrics as meta-eval names them; TER is negated (higher is better), as WMT does.
OWN_METRICS = ("bleu", "chrf", "ter")
#: What tells bleucli's own metric from a directory's metric of the same name (WMT's BLEU).
OWN_SUFFIX = "[bleucli]"


@dataclass(frozen=True)
class MetaEvalRequest:
    refs: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    mtme: str | None = None
    pair: str | None = None
    human: str | None = None
    human_format: str = "auto"
    human_field: str = "z"
    human_name: str | None = None
    ref: str | None = None
    include_human: bool = False
    human_rows: bool = False  # --mtme: the other kinds of human score as rows
    metrics: tuple[str, ...] | None = None  # None: bleu chrf ter when there are references
    source: str | None = None  # plain files: the source sentences (neural metrics read them)
    options: dict[str, dict[str, Any]] = field(default_factory=dict)  # per metric
    segment_scores: tuple[str, ...] = ()
    statistics: tuple[str, ...] = ()
    settings: TestSettings = TestSettings()
    allow_missing: bool = False
    fmt: str = "text"
    width: int = 4
    explicit: frozenset[str] = frozenset()  # the options given on the command line


@dataclass
class Loaded:
    """Systems with their texts, references and human scores, before any metric."""

    systems: list[str]
    outputs: dict[str, list[str]]
    references: list[list[str]]
    n_segments: int
    human: HumanScores
    reference: str | None
    metrics: dict[str, MetricScores] = field(default_factory=dict)
    report: list[str] = field(default_factory=list)
    human_rows: dict[str, HumanScores] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)  # human translations not rated
    sources: list[str] | None = None


def _system_name(spec: str) -> tuple[str, str]:
    """``NAME=FILE``, ``NAME:FILE`` or ``FILE`` (named after the file, without its last
    extension)."""
    from bleucli.io import split_named

    name, path = split_named(spec)
    if name is not None:
        return name, path
    base = os.path.basename(path)
    return (base.rsplit(".", 1)[0] if "." in base.lstrip(".") else base), path


def _load_plain(request: MetaEvalRequest) -> Loaded:
    if not request.inputs:
        raise UsageError(
            "meta-eval: give the systems' outputs with -i (or a directory with --mtme)"
        )
    if not request.human:
        raise UsageError("meta-eval: give the human scores with --human FILE")
    references = [read_file(path).lines for path in request.refs]
    outputs: dict[str, list[str]] = {}
    n_segments = len(references[0]) if references else None
    for path, lines in zip(request.refs[1:], references[1:]):
        if len(lines) != n_segments:
            raise InputError(
                f"{path}: {len(lines):,} lines, but {request.refs[0]} has {n_segments:,}"
            )
    for spec in request.inputs:
        name, path = _system_name(spec)
        if name in outputs:
            raise UsageError(
                f"-i {spec}: a second system named {name!r}; name them with -i NAME=FILE"
            )
        lines = read_file(path).lines
        if n_segments is None:
            n_segments = len(lines)
        if len(lines) != n_segments:
            against = request.refs[0] if request.refs else "the first -i file"
            raise InputError(f"{path}: {len(lines):,} lines, but {against} has {n_segments:,}")
        outputs[name] = lines
    assert n_segments is not None
    human = readers.read_human(request.human, request.human_format, n_segments, request.human_field)
    loaded = Loaded(list(outputs), outputs, references, n_segments, human, None)
    if request.source is not None:
        loaded.sources = read_file(request.source).lines
        if len(loaded.sources) != n_segments:
            raise InputError(
                f"{request.source}: {len(loaded.sources):,} lines, but the systems have "
                f"{n_segments:,}"
            )
    return loaded


def _load_mtme(request: MetaEvalRequest) -> Loaded:
    from bleucli.metaeval.mtme import read_mtme

    if request.inputs or request.refs or request.human or request.source:
        raise UsageError("meta-eval: --mtme reads the outputs, references, sources and human "
                         "scores from the directory; leave out REFS, -i, --human and --source")  # fmt: skip
    if not request.pair:
        raise UsageError("meta-eval: --mtme needs the language pair: -l SRC-TRG")
    from bleucli.languages import check_pair

    check_pair(request.pair)
    found = read_mtme(request.mtme, request.pair, request.human_name, request.ref,  # type: ignore[arg-type]
                      request.include_human)  # fmt: skip
    reference = read_file(str(found.reference_path)).lines
    loaded = Loaded(list(found.outputs), found.outputs, [reference], found.n_segments, found.human,
                    found.reference, dict(found.metrics))  # fmt: skip
    loaded.sources = read_file(str(found.directory / "sources" / f"{found.pair}.txt")).lines
    if found.standard is not None:
        sys_kind, seg_kind = found.standard
        where = (
            f"{sys_kind} at system level, {seg_kind} at segment level"
            if sys_kind != seg_kind
            else f"{sys_kind} at both levels"
        )
        loaded.report.append(
            f"human scores: WMT's standard ones for {found.pair} (mt-metrics-eval's): {where}; "
            "--human-name picks another kind for both"
        )
    if request.human_rows:
        loaded.human_rows = found.other_human
    loaded.left_out = list(found.left_out)
    for name in found.human_translations:
        if name in found.left_out:
            loaded.report.append(
                f"{name} is a human translation: not rated as a system (--include-human rates it)"
            )
        else:
            loaded.report.append(
                f"{name} is a human translation: rated as a system (--include-human)"
            )
    return loaded


def _human_table(
    loaded: Loaded, allow_missing: bool, source: str
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Human scores in the systems' order; systems without any are refused or dropped."""
    human = loaded.human
    names = sorted(set(human.seg) | set(human.sys))
    matched = readers.match_systems(names, loaded.systems)
    by_system = {system: name for name, system in matched.items()}
    left_out = set(readers.match_systems(names, loaded.left_out))  # said already: not rated
    extra = [name for name in names if name not in matched and name not in left_out]
    if extra:
        loaded.report.append(
            f"human scores for {len(extra)} system(s) without an output, not used: {', '.join(extra)}"
        )

    def rated(system: str) -> bool:
        name = by_system.get(system)
        if name is None:
            return False
        seg = human.seg.get(name)
        return (seg is not None and bool((~np.isnan(seg)).any())) or not math.isnan(
            human.sys.get(name, math.nan)
        )

    missing = [s for s in loaded.systems if not rated(s)]
    if missing:
        if not allow_missing:
            raise InputError(
                f"{source}: no human score for system(s) {', '.join(missing)}; add them, or "
                f"leave them out with --allow-missing"
            )
        loaded.report.append(f"no human score, left out (--allow-missing): {', '.join(missing)}")
        loaded.systems = [s for s in loaded.systems if s not in missing]
    if len(loaded.systems) < 2:
        raise InputError(
            f"{source}: human scores for {len(loaded.systems)} system(s); at least 2 are needed"
        )
    seg = None
    if human.seg:
        seg = np.vstack([
            human.seg.get(by_system[s], np.full(loaded.n_segments, np.nan)) for s in loaded.systems
        ])  # fmt: skip
    sys = None
    if human.sys:
        sys = np.array([human.sys.get(by_system[s], math.nan) for s in loaded.systems])
    return seg, sys


def _alignment_report(loaded: Loaded, seg: np.ndarray | None) -> None:
    n, s = loaded.n_segments, len(loaded.systems)
    if seg is None:
        loaded.report.insert(0, f"{s} systems x {n:,} segments; system-level human scores only")
        return
    rated = ~np.isnan(seg)
    per_system = rated.sum(axis=1)
    loaded.report.insert(
        0,
        f"{s} systems x {n:,} segments; human scores ({loaded.human.name}) for "
        f"{int(rated.sum()):,} of {s * n:,} entries ({rated.mean():.1%}), "
        f"{int(per_system.min()):,}-{int(per_system.max()):,} segments per system",
    )
    never = np.flatnonzero(~rated.any(axis=0)) + 1
    if len(never):
        shown = ", ".join(str(x) for x in never[:10]) + (", ..." if len(never) > 10 else "")
        loaded.report.append(
            f"{len(never):,} segment(s) rated for no system, left out of segment-level "
            f"statistics: line(s) {shown}"
        )
    for system, count in zip(loaded.systems, per_system):
        if count == 0:
            loaded.report.append(f"{system}: no segment-level human score (system level only)")


def _own_metrics(request: MetaEvalRequest, loaded: Loaded) -> dict[str, tuple[MetricScores, str]]:
    """bleucli's metrics computed on the systems: ``label -> (scores, signature)``."""
    from bleucli.commands.request import unused_metric_options

    names = request.metrics if request.metrics is not None else (
        OWN_METRICS if loaded.references else ()
    )  # fmt: skip
    loaded.report += unused_metric_options(set(request.explicit), tuple(n.lower() for n in names))
    found: dict[str, tuple[MetricScores, str]] = {}
    for name in names:
        key = name.lower()
        if key not in meta_eval_metrics():
            raise UsageError(
                f"-m {name}: unknown metric; choose from {', '.join(meta_eval_metrics())}"
            )
        options = dict(request.options.get(key, {}))
        scores, signature = (_neural if _is_neural(key) else _string_metric)(key, options, loaded)
        found[scores.name] = (scores, signature)
    return found


def meta_eval_metrics() -> tuple[str, ...]:
    """What ``-m`` takes: the string metrics and every built-in neural metric."""
    from bleucli.metrics import builtin_names

    return OWN_METRICS + tuple(n for n in builtin_names() if _is_neural(n))


def _is_neural(key: str) -> bool:
    from bleucli.metrics import builtin_names, uses_source

    return key in builtin_names() and uses_source(key)


def _sign(higher_is_better: bool) -> float:
    """Error rates (TER, MetricX) are negated so higher is better, as WMT does."""
    return 1.0 if higher_is_better else -1.0


def _string_metric(key: str, options: dict[str, Any], loaded: Loaded) -> tuple[MetricScores, str]:
    """BLEU, chrF or TER: sentence scores and corpus scores from the references."""
    from bleucli.batch import scorer, sentence_scores
    from bleucli.metrics import metric_class

    streams = loaded.references
    if not streams:
        raise UsageError(f"-m {key}: this metric needs references (REFS)")
    corpus_metric = metric_class(key)(**options)
    sign = _sign(corpus_metric.higher_is_better)
    seg = np.vstack([
        sign * sentence_scores(key, loaded.outputs[s], streams, **options) for s in loaded.systems
    ])  # fmt: skip
    corpus = [corpus_metric.corpus_score(loaded.outputs[s], streams) for s in loaded.systems]
    label = ("-" if sign < 0 else "") + corpus[0].name
    sys_scores = np.array([sign * c.score for c in corpus])
    signature = str(corpus_metric.get_signature())
    sentence_metric = scorer(key, dict(options))
    sentence_metric.num_refs = len(streams)
    segments = str(sentence_metric.get_signature())
    if segments != signature:  # sentence BLEU: SacreBLEU's effective order
        signature = f"systems {signature}; segments {segments}"
    return MetricScores(label, seg, sys_scores, "bleucli"), signature


def _neural(key: str, options: dict[str, Any], loaded: Loaded) -> tuple[MetricScores, str]:
    """A neural metric's segment scores from the model (sources and references encoded once
    for all systems, and cached across runs); the system score is their mean, as COMET's."""
    from bleucli.metrics import metric_class

    metric: Any = metric_class(key)(**options)
    if loaded.sources is not None:
        metric.bind_sources(loaded.sources)
    streams = loaded.references[:1] or None
    rows = [
        [float(stats[0]) for stats in metric.per_sentence_stats(loaded.outputs[s], streams)]
        for s in loaded.systems
    ]
    sign = _sign(metric.higher_is_better)
    seg = sign * np.array(rows, dtype=float).reshape(len(loaded.systems), loaded.n_segments)
    label = ("-" if sign < 0 else "") + metric.name
    return MetricScores(label, seg, seg.mean(axis=1), "bleucli"), str(metric.get_signature())


def _segment_score_metrics(request: MetaEvalRequest, loaded: Loaded) -> dict[str, MetricScores]:
    from bleucli.metrics.segment import parse_option, read_scores, split_spec

    found: dict[str, MetricScores] = {}
    for value in request.segment_scores:
        name, files = parse_option(value)
        if name in found:
            raise UsageError(f"--segment-scores {name}: given twice")
        if len(files) == 1 and files[0].endswith(".score"):  # MTME's blocks, by system name
            blocks = readers.read_blocks(files[0], loaded.n_segments, allow_none=False)
            missing = [s for s in loaded.systems if s not in blocks]
            if missing:
                raise InputError(f"{files[0]}: no scores for system(s) {', '.join(missing)}")
            rows = [blocks[s] for s in loaded.systems]
        else:
            if len(files) != len(loaded.outputs):
                raise UsageError(
                    f"--segment-scores {name}: {len(files)} file(s) for {len(loaded.outputs)} "
                    f"system(s); give one per system, in the order of -i (or one MTME .seg.score file)"
                )
            by_system = dict(zip(loaded.outputs, files))
            rows = []
            for system in loaded.systems:
                scores = read_scores(by_system[system])
                if len(scores) != loaded.n_segments:
                    raise InputError(
                        f"{split_spec(by_system[system])[0]}: {len(scores):,} scores for "
                        f"{loaded.n_segments:,} segments"
                    )
                rows.append(np.array(scores, dtype=float))
        seg = np.vstack(rows)
        found[name] = MetricScores(name, seg, seg.mean(axis=1), ",".join(files))
    return found


def _human_row(other: HumanScores, loaded: Loaded, gold: np.ndarray | None) -> MetricScores:
    """Another kind of human score as a row: how far metrics are from the agreement of two
    human scorings. It must score every entry the gold scores rate."""
    matched = {s: n for n, s in readers.match_systems(sorted(set(other.seg) | set(other.sys)),
                                                        loaded.systems).items()}  # fmt: skip
    seg = None
    if other.seg and gold is not None:
        rows = []
        for k, system in enumerate(loaded.systems):
            values = other.seg.get(matched.get(system, ""), np.full(loaded.n_segments, np.nan))
            missing = np.flatnonzero(~np.isnan(gold[k]) & np.isnan(values))
            if len(missing):
                raise InputError(
                    f"--human-rows: {other.name} has no score for {system}, line {missing[0] + 1}, "
                    f"which {loaded.human.name} rates; it cannot be a row"
                )
            rows.append(np.where(np.isnan(values), 0.0, values))
        seg = np.vstack(rows)
    sys = None
    if other.sys and all(s in matched and matched[s] in other.sys for s in loaded.systems):
        sys = np.array([other.sys[matched[s]] for s in loaded.systems], dtype=float)
    elif seg is not None and other.seg:
        sys = np.array([np.nanmean(other.seg[matched[s]]) for s in loaded.systems])
    return MetricScores(f"human:{other.name}", seg, sys, other.source)


def _select_metrics(loaded: Loaded, systems_before: list[str]) -> None:
    """Keep the rows of the systems still rated (``--allow-missing`` may drop some)."""
    keep = [systems_before.index(s) for s in loaded.systems]
    for scores in loaded.metrics.values():
        if scores.seg is not None:
            scores.seg = scores.seg[keep]
        if scores.sys is not None:
            scores.sys = scores.sys[keep]


@dataclass
class Prepared:
    """The table to evaluate, with what the output names about it."""

    data: MetaEvalData
    reference: str | None
    signatures: dict[str, str]  # metric -> its signature or score source


def load(request: MetaEvalRequest, report: Callable[[str], None] | None = None) -> Prepared:
    """Systems, human scores and every metric's scores, aligned; ``report(line)`` receives
    the alignment report."""
    loaded = _load_mtme(request) if request.mtme else _load_plain(request)
    source = request.mtme or request.human or ""
    all_systems = list(loaded.systems)
    signatures: dict[str, str] = {name: scores.source for name, scores in loaded.metrics.items()}
    for label, (scores, sig) in _own_metrics(request, loaded).items():
        if label in loaded.metrics:  # WMT's own BLEU-refA beside bleucli's: both, named apart
            loaded.report.append(
                f"{label}: the directory's scores ({loaded.metrics[label].source}) and "
                f"bleucli's own ({label}{OWN_SUFFIX}) are evaluated side by side"
            )
            label = f"{label}{OWN_SUFFIX}"
            scores.name = label
        _add(loaded, label, scores)
        signatures[label] = sig
    for label, scores in _segment_score_metrics(request, loaded).items():
        _add(loaded, label, scores)
        signatures[label] = f"segment scores from {scores.source}"
    if not loaded.metrics:
        raise UsageError("meta-eval: no metric to evaluate: give references (for -m bleu chrf ter), "
                         "--segment-scores, or a directory with metric-scores/")  # fmt: skip
    seg, sys = _human_table(loaded, request.allow_missing, source)
    _select_metrics(loaded, all_systems)
    for name, other in loaded.human_rows.items():
        _add(loaded, f"human:{name}", _human_row(other, loaded, seg))
        signatures[f"human:{name}"] = f"human scores {other.source}"
    _alignment_report(loaded, seg)
    for line in loaded.report:
        if report is not None:
            report(line)
    data = MetaEvalData(loaded.systems, loaded.n_segments, loaded.human.name,
                        loaded.human.source, seg, sys, loaded.metrics)  # fmt: skip
    return Prepared(data, loaded.reference, signatures)


def _said_when_piped() -> Callable[[str, float], None] | None:
    """Where no progress bar shows (stderr not a terminal: a CI log, a pipe), a line per
    finished statistic, so a long run is not minutes of silence."""
    import sys

    if sys.stderr is None or sys.stderr.isatty():
        return None

    def done(label: str, seconds: float) -> None:
        logger.info(f"meta-eval: {label} done in {seconds:.1f} s")

    return done


def run(request: MetaEvalRequest, report: Callable[[str], None] | None = None) -> str:
    """The rendered tables; ``report(line)`` receives the alignment report."""
    if request.settings.rng not in RNGS:
        raise UsageError(f"--rng: {request.settings.rng!r} is not one of {', '.join(RNGS)}")
    names = request.statistics or DEFAULT_STATISTICS
    for name in names:
        statistic(name)
    prepared = load(request, report)
    data = prepared.data
    optional = frozenset(DEFAULT_STATISTICS) if not request.statistics else frozenset()
    results, notes = evaluate(data, names, request.settings, optional, _said_when_piped())
    if not results:
        raise ConfigError("meta-eval: none of the statistics can be computed on these scores")
    context = Context(data.human_name, data.human_source, data.systems, data.n_segments,
                      prepared.reference, request.settings, prepared.signatures, notes)  # fmt: skip
    if any(name.startswith("-") for name in data.metrics):
        context.notes.append("metrics named -NAME are error rates, negated so higher is better")
    return render(results, context, request.fmt, request.width)


def _add(loaded: Loaded, label: str, scores: MetricScores) -> None:
    if label in loaded.metrics:
        raise UsageError(f"meta-eval: two metrics named {label!r}")
    loaded.metrics[label] = scores
