"""What the command line does, without click: load inputs, build metrics, score, format.

Kept apart from :mod:`bleucli.cli` so it can be called and tested as plain Python.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from bleucli.errors import ConfigError, InputError, UsageError
from bleucli.formats import Result, multi_system, single_system
from bleucli.io import (
    TextSource,
    check_same_length,
    decode_lines,
    read_file,
    require_nonempty,
    split_multi_references,
)
from bleucli.metrics import metric_class
from bleucli.metrics.base import Metric, Signature

if TYPE_CHECKING:
    from bleucli.request import Options
    from bleucli.testsets import TestSets

logger = logging.getLogger("bleucli")

#: Per metric: CLI option -> the signature field it conflicts with under --from-signature.
_SIGNATURE_OPTIONS = {
    "bleu": {"tokenize": "tok", "lowercase": "case", "smooth_method": "smooth",
             "smooth_value": "smooth"},
    "chrf": {"chrf_char_order": "nc", "chrf_word_order": "nw", "chrf_whitespace": "space",
             "chrf_lowercase": "case", "chrf_eps_smoothing": "eff"},
    "ter": {"ter_case_sensitive": "case", "ter_asian_support": "asian",
            "ter_no_punct": "punct", "ter_normalized": "norm"},
}
#: Signature fields that need features this version does not have.
_UNSUPPORTED_FIELDS = {"ar": "approximate randomisation tests"}
#: Signature fields that select the test set -> the option they set.
TESTSET_FIELDS = {"test": "test_set", "lang": "language_pair", "origlang": "origlang",
                   "subset": "subset"}


def apply_signatures(options: Options) -> dict[str, int]:
    """Set metric options from ``--from-signature``; returns the reference count each demands."""
    from bleucli.signature import parse_signature

    parsed_all = [parse_signature(text) for text in options.from_signature]
    metrics = [p.metric for p in parsed_all]
    if len(set(metrics)) != len(metrics):
        raise ConfigError("give one --from-signature per metric")
    if "metrics" in options.explicit and set(options.metrics) != set(metrics):
        raise ConfigError(f"--metrics conflicts with the signatures' metrics "
                          f"({', '.join(metrics)})")
    options.metrics = tuple(metrics)
    expected: dict[str, int] = {}
    for parsed in parsed_all:
        for key, value in parsed.fields.items():
            if key in _UNSUPPORTED_FIELDS:
                raise ConfigError(f"signature field {key}:{value} needs "
                                  f"{_UNSUPPORTED_FIELDS[key]}, which bleucli cannot apply here")
        for name, sig_key in _SIGNATURE_OPTIONS[parsed.metric].items():
            if name in options.explicit and sig_key in parsed.fields:
                raise ConfigError(
                    f"--{name.replace('_', '-')} conflicts with --from-signature, "
                    f"which sets {sig_key}:{parsed.fields[sig_key]}")
        if "bs" in parsed.fields:
            options.confidence = True
            try:
                options.confidence_n = int(parsed.fields["bs"])
            except ValueError:
                raise UsageError(f"signature field bs:{parsed.fields['bs']} is not a "
                                 f"number of resamples") from None
        if "seed" in parsed.fields:
            import os

            seed = parsed.fields["seed"]
            current = os.environ.get("BLEUCLI_SEED", "12345").lower()
            if seed != current:
                raise ConfigError(f"the signature was made with seed:{seed}; "
                                  f"set BLEUCLI_SEED={seed} to reproduce it")
        for key, attribute in TESTSET_FIELDS.items():
            if key in parsed.fields:
                given = getattr(options, attribute)
                if given is not None and given != parsed.fields[key]:
                    raise ConfigError(
                        f"--{attribute.replace('_', '-')} {given} conflicts with "
                        f"--from-signature, which sets {key}:{parsed.fields[key]}")
                setattr(options, attribute, parsed.fields[key])
        getattr(options, parsed.metric).update(parsed.metric_options())
        if parsed.metric == "bleu" and parsed.fields.get("eff") == "no" and \
                options.sentence_level:
            raise ConfigError("the signature says eff:no, but --sentence-level needs "
                              "effective order")
        version = parsed.fields.get("version")
        if version:
            logger.info(f"reproducing a {parsed.name} signature from version {version} "
                        f"with the SacreBLEU 2.x rules")
        nrefs = parsed.fields.get("nrefs")
        if nrefs is not None and nrefs != "var":
            try:
                expected[parsed.metric] = int(nrefs)
            except ValueError:
                raise UsageError(f"signature field nrefs:{nrefs} is not a number") from None
    return expected


def testsets_for(options: Options) -> TestSets:
    from bleucli.testsets import TestSets

    show = sys.stderr is not None and sys.stderr.isatty() and not options.quiet
    return TestSets(options.testsets_files, offline=options.offline or None, show_progress=show)


def load_references(options: Options) -> list[TextSource]:
    """Reference streams from a named test set or from files (``--num-refs`` splits on tabs)."""
    if options.test_set is not None:
        return load_testset_references(options)
    if not options.refs:
        raise ConfigError("no references: give reference files before -i, e.g. "
                          "`bleucli ref.txt -i hyp.txt`")
    _file_reference_count(options)
    sources = [read_file(path, options.encoding) for path in options.refs]
    for source in sources:
        require_nonempty(source)
    if options.num_refs == 1:
        return sources
    (source,) = sources
    streams = split_multi_references(source, options.num_refs)
    return [TextSource(f"{source.name} (reference {k + 1})", s) for k, s in enumerate(streams)]


def _check_testset_options(options: Options) -> None:
    if options.refs:
        raise ConfigError("give either a test set (-t) or reference files, not both")
    if options.num_refs != 1:
        raise ConfigError("--num-refs is for reference files; a test set brings its own")
    if options.language_pair is None:
        names = options.test_set.split(",") if options.test_set else []
        pairs = ""
        if len(names) == 1:
            registry = testsets_for(options).registry
            pairs = "; available: " + ", ".join(sorted(registry.get(names[0]).langpairs))
        raise ConfigError(f"a test set needs a language pair (-l){pairs}")


def load_testset_references(options: Options) -> list[TextSource]:
    _check_testset_options(options)
    data = testsets_for(options).load(options.test_set or "", options.language_pair or "",
                                      options.origlang, options.subset)
    if len(data) == 0:
        what = " ".join(f"{k}={v}" for k, v in
                        (("origlang", options.origlang), ("subset", options.subset)) if v)
        raise InputError(f"test set {options.test_set} has no sentence with {what}")
    label = f"test set {options.test_set}/{options.language_pair}"
    return [TextSource(f"{label} ({name})", stream)
            for name, stream in zip(data.reference_fields, data.reference_streams)]


def filter_systems(options: Options, systems: list[TextSource],
                   selected: int) -> list[TextSource]:
    """``--origlang``/``--subset`` as SacreBLEU applies them: a system output covering the
    whole test set is filtered like the references. An output that already holds just the
    ``selected`` sentences is taken as it is."""
    if options.test_set is None or (options.origlang is None and options.subset is None):
        return systems
    mask = testsets_for(options).keep_mask(options.test_set, options.language_pair or "",
                                           options.origlang, options.subset)
    if len(mask) == selected:
        return systems  # the filter keeps everything
    return [TextSource(system.name, [line for line, keep in zip(system.lines, mask) if keep])
            if len(system.lines) == len(mask) else system for system in systems]


def subset_details(options: Options, metrics: dict[str, Metric], system: list[str]) -> str:
    """``-d/--detail``: the scores of every origlang of the test set, on all its documents and
    on each subset (domain or country), one line per metric, in SacreBLEU's layout.

    ``system`` is the output for the whole test set. Unlike SacreBLEU 2.6 (which crashes
    there), ``--origlang X`` limits the breakdown to X."""
    if options.test_set is None:
        return "No subset information found. Consider using --origlang argument."
    sets = testsets_for(options)
    pair = options.language_pair or ""
    origlangs = [options.origlang] if options.origlang else \
        sets.available_origlangs(options.test_set, pair)
    if not origlangs:
        return "No subset information found. Consider using --origlang argument."
    references = sets.load(options.test_set, pair).reference_streams
    if len(system) != len(references[0]):
        raise InputError(f"--detail needs the output for the whole test set "
                         f"({len(references[0])} lines), got {len(system)}")
    subsets = [options.subset] if options.subset is not None else \
        sets.available_subsets(options.test_set, pair)
    results: dict[str, list[tuple[int, Any]]] = {}
    for origlang in origlangs:
        for subset in [None, *subsets]:
            mask = sets.keep_mask(options.test_set, pair, origlang, subset)
            selected = [line for line, keep in zip(system, mask) if keep]
            if not selected:
                continue
            refs = [[line for line, keep in zip(stream, mask) if keep] for stream in references]
            key = f"origlang={origlang}"
            if subset is None:
                key += " domain=ALL"
            elif subset.startswith("country:"):
                key += f" country={subset[len('country:'):]}"
            else:
                key += f" domain={subset}"
            results[key] = [(len(selected), metric.corpus_score(selected, refs))
                            for metric in metrics.values()]
    if not results:
        return ""
    left = max(len(key) for key in results) + 1
    name_width = max(len(score.name) for _, score in next(iter(results.values())))
    return "\n".join(f"{key:<{left}}: sentences={n:<6} {score.name:<{name_width}} = "
                     f"{score.score:.{options.width}f}"
                     for key, scores in results.items() for n, score in scores)


def echo_fields(options: Options) -> str:
    """``--echo``: print fields of the test set(s), tab-separated, one segment per line."""
    _check_testset_options(options)
    sets = testsets_for(options)
    out: list[str] = []
    for name in (options.test_set or "").split(","):
        available = sets.fieldnames(name, options.language_pair or "")
        data = sets.load(name, options.language_pair or "", options.origlang, options.subset)
        available = list(dict.fromkeys([*available, *data.fields]))
        requested = list(options.echo)
        if "all" in requested:
            if len(requested) != 1:
                raise ConfigError("--echo all cannot be combined with other fields")
            requested = [f for f in available if f in data.fields]
        if "ref" in requested and "ref" not in data.fields:
            first = data.reference_fields[0]  # "ref" means the first reference
            requested = [first if f == "ref" else f for f in requested]
        for field_name in requested:
            if field_name not in data.fields:
                raise ConfigError(f"no field {field_name!r} in {name}/{options.language_pair}; "
                                  f"available: {', '.join(available)}")
        columns = [data.fields[f] for f in requested]
        out.extend("\t".join(v.rstrip() for v in row) for row in zip(*columns))
    return "\n".join(out)


def list_testsets(options: Options) -> str:
    sets = testsets_for(options)
    if options.test_set:
        lines = []
        for name in options.test_set.split(","):
            testset = sets.get(name)
            pairs = [options.language_pair] if options.language_pair else list(testset.langpairs)
            lines += [f"{pair}: {', '.join(sets.fieldnames(name, pair))}" for pair in pairs]
        return "\n".join(lines)
    registry = sets.registry
    if options.language_pair:
        names = registry.for_langpair(options.language_pair)
        header = f"The available test sets for {options.language_pair} are:"
    else:
        names, header = registry.names(), "The available test sets are:"
    width = max((len(n) for n in names), default=0)
    return "\n".join([header] + [f"{n:<{width}} : {registry.sets[n].description}"
                                  for n in sorted(names)])


def citations(options: Options) -> str:
    if not options.test_set:
        raise ConfigError("--citation needs a test set (-t)")
    sets = testsets_for(options)
    out = []
    for name in options.test_set.split(","):
        citation = sets.get(name).citation.strip()
        if citation:
            out.append(citation)
        else:
            logger.warning(f"no citation recorded for {name}")
    return "\n".join(out)


def download(options: Options) -> str:
    sets = testsets_for(options)
    for name in (options.download or "").split(","):
        sets.download(name, options.language_pair)
        logger.info(f"{name} is ready in {sets.store_dir(name)}")
    return ""


def load_systems(options: Options) -> list[TextSource]:
    """Hypothesis streams: one per ``-i`` file, or tab-separated columns of standard input."""
    if options.inputs:
        import os

        systems = []
        for spec in options.inputs:
            name, sep, path = spec.partition(":")
            if not sep or os.path.exists(spec):  # "name:path" names a system
                name = path = spec
            if name in (s.name for s in systems):
                raise ConfigError(f"{name!r} is given twice as a system")
            source = read_file(path, options.encoding)
            require_nonempty(source)
            systems.append(TextSource(name, source.lines))
        return systems
    if sys.stdin is None or sys.stdin.isatty():
        raise ConfigError("no hypotheses: pass -i FILE or pipe them on standard input")
    lines = decode_lines(sys.stdin.buffer.read(), "<stdin>", options.encoding)
    stdin = TextSource("<stdin>", lines)
    require_nonempty(stdin)
    width = len(lines[0].split("\t"))
    if width == 1:
        return [stdin]
    columns: list[list[str]] = [[] for _ in range(width)]
    for line_no, line in enumerate(lines, 1):
        fields = line.split("\t")
        if len(fields) != width:
            raise InputError(f"<stdin>: line {line_no}: {len(fields)} tab-separated systems, "
                             f"but line 1 has {width}")
        for column, value in zip(columns, fields):
            column.append(value.rstrip())
    return [TextSource(f"System {k + 1}", c) for k, c in enumerate(columns)]


def metric_specs(options: Options) -> dict[str, tuple[type[Metric], dict[str, Any]]]:
    """Class and keyword arguments of every requested metric."""
    specs: dict[str, tuple[type[Metric], dict[str, Any]]] = {}
    trg_lang = options.language_pair.split("-")[-1] if options.language_pair else ""
    for name in options.metrics:
        kwargs: dict[str, Any] = dict(getattr(options, name))
        if name == "bleu":
            kwargs["trg_lang"] = trg_lang
            if options.sentence_level:
                kwargs["effective_order"] = True
        specs[name] = (metric_class(name), kwargs)
    return specs


def build_metrics(options: Options, references: list[list[str]]) -> dict[str, Metric]:
    """Instantiate every requested metric with the references pre-processed once."""
    return {name: cls(**kwargs, references=references)
            for name, (cls, kwargs) in metric_specs(options).items()}


def can_stream(options: Options) -> bool:
    """One system file against reference files: score in bounded memory, chunk by chunk
    (resampling needs every sentence's statistics, so ``--confidence`` does not stream)."""
    import os

    return (options.test_set is None and len(options.inputs) == 1 and bool(options.refs)
            and os.path.exists(options.inputs[0]) and not options.confidence
            and not (options.paired_bs or options.paired_ar) and not options.detail)


def run_streaming(options: Options) -> str:
    """Score a single system file without loading the corpus (``--jobs`` for parallelism)."""
    import os

    import click

    from bleucli.metrics.bleu import count_tokenised_periods, warn_if_tokenised
    from bleucli.stream import score_stream

    n_refs = _file_reference_count(options)
    specs = metric_specs(options)
    check_tokenised = "bleu" in specs and not specs["bleu"][1].get("force")
    if "bleu" in specs:
        specs["bleu"][1]["force"] = True  # counted here, over the whole corpus
    tokenised = [0]
    from bleucli.shards import ContentDigest

    digest = ContentDigest()

    def on_hypotheses(lines: list[str], references: list[list[str]]) -> None:
        if check_tokenised:
            tokenised[0] += count_tokenised_periods(lines)
        if options.emit_stats:
            digest.update(lines, references)

    signatures: dict[str, str] = {}

    fmt = sentence_format(options)
    printed = [0]

    def print_rows(chunk: dict[str, list]) -> None:
        from bleucli.formats import sentence_header, sentence_rows

        scores = {name: [metrics_holder[name].score_from_values(row) for row in chunk[name]]
                  for name in sorted(chunk)}
        if fmt == "tsv" and printed[0] == 0:
            click.echo(sentence_header([s[0].name for s in scores.values() if s], signatures,
                                       fmt))
        click.echo(sentence_rows(scores, signatures, fmt, options.width, options.score_only,
                                 printed[0] + 1, options.inputs[0]))
        printed[0] += len(next(iter(chunk.values()), []))

    metrics_holder = {name: cls(**kwargs) for name, (cls, kwargs) in specs.items()}
    for name, metric in metrics_holder.items():
        metric.num_refs = n_refs
        signatures[name] = metric.get_signature().format(options.short)
    metrics, totals, count = score_stream(
        specs, options.inputs[0], list(options.refs), options.num_refs, options.encoding,
        jobs=options.jobs or automatic_jobs(os.cpu_count() or 1),
        keep_rows=options.sentence_level,
        on_rows=print_rows if options.sentence_level else None, on_hypotheses=on_hypotheses,
        metrics=metrics_holder)
    if count == 0:
        raise InputError(f"{options.inputs[0]}: empty file, nothing to score")
    warn_if_tokenised(tokenised[0])
    if options.emit_stats:
        from bleucli.shards import stats_document

        for metric in metrics.values():
            metric.num_refs = n_refs
        return stats_document(metrics, specs, totals, count, {}, digest.hexdigest())
    if options.sentence_level:
        return ""
    results = []
    for name in sorted(metrics):
        metric = metrics[name]
        metric.num_refs = n_refs
        signature = metric.get_signature()
        results.append(Result(options.inputs[0], metric.score_from_values(totals[name]),
                              str(signature), signature.format(short=True)))
    return single_system(results, options.fmt, options.width, options.score_only,
                         options.short)


def _check_signature_nrefs(expected: dict[str, int], given: int) -> None:
    for wanted in expected.values():
        if wanted != given:
            raise ConfigError(f"the signature says nrefs:{wanted} but {given} reference "
                              f"stream(s) were given")


def _file_reference_count(options: Options) -> int:
    """Reference streams given as files: one per file, or ``--num-refs`` columns of one."""
    if options.num_refs < 1:
        raise UsageError(f"--num-refs must be at least 1, got {options.num_refs}")
    if options.num_refs > 1 and len(options.refs) > 1:
        raise ConfigError("--num-refs splits one tab-separated reference file; "
                          "it cannot be combined with several reference files")
    return len(options.refs) if options.num_refs == 1 else options.num_refs


def run(options: Options) -> str:
    """Everything the main command does; returns the text to print on standard output."""
    if options.download:
        return download(options)
    if options.list_sets:
        return list_testsets(options)
    if options.citation:
        return citations(options)
    if options.echo:
        return echo_fields(options)
    if options.test_set is None and (options.origlang or options.subset):
        raise ConfigError("--origlang and --subset need a test set (-t)")
    expected_refs = apply_signatures(options) if options.from_signature else {}
    from bleucli.request import validate

    validate(options)
    for name in options.metrics:
        metric_class(name)  # fail on an unknown metric before reading any file
    if options.language_pair is not None and "-" not in options.language_pair:
        raise UsageError(f"language pair {options.language_pair!r} is not of the form src-trg")
    if can_stream(options):
        _check_signature_nrefs(expected_refs, _file_reference_count(options))
        return run_streaming(options)
    ref_sources = load_references(options)
    _check_signature_nrefs(expected_refs, len(ref_sources))
    full_systems = load_systems(options)
    systems = filter_systems(options, full_systems, len(ref_sources[0].lines))
    for system in systems:
        check_same_length(system, ref_sources)
    if options.test_set is not None and options.bleu.get("tokenize") == "none":
        logger.warning("You are turning off BLEU's internal tokenizer presumably to supply "
                       "your own tokenized files.")
        logger.warning("Published numbers will not be comparable to other papers.")
    metrics = build_metrics(options, [s.lines for s in ref_sources])
    testset_fields = {"test": options.test_set, "lang": options.language_pair
                      if options.test_set else None,
                      "origlang": options.origlang, "subset": options.subset}
    if options.sentence_level and not options.emit_stats:
        if options.confidence:
            raise ConfigError("confidence intervals are unavailable with --sentence-level")
        return sentence_level(options, metrics, systems, testset_fields)
    if options.paired_bs or options.paired_ar:
        return paired(options, metrics, systems)
    if options.emit_stats:
        from bleucli.metrics.base import sum_rows
        from bleucli.shards import stats_document

        if len(systems) > 1:
            raise ConfigError("bleucli stats writes the statistics of one system")
        totals = {name: sum_rows(metric.per_sentence_stats(systems[0].lines, None))
                  for name, metric in metrics.items()}
        from bleucli.shards import ContentDigest

        digest = ContentDigest()
        digest.update(systems[0].lines, [source.lines for source in ref_sources])
        return stats_document(metrics, metric_specs(options), totals, len(systems[0].lines),
                              testset_fields, digest.hexdigest())
    if options.confidence and len(systems) > 1:
        raise ConfigError("--confidence scores one system; compare several with paired tests")
    n_bootstrap = options.confidence_n if options.confidence else 1
    from bleucli.progress import stage

    results = []
    label = "scoring" + (f" with {n_bootstrap} bootstrap resamples" if n_bootstrap > 1 else "")
    with stage(label, len(systems) * len(metrics)) as advance:
        for system in systems:
            for _name, metric in sorted(metrics.items()):
                score, sig = _corpus(metric, system, testset_fields, n_bootstrap)
                results.append(Result(system.name, score, str(sig), sig.format(short=True)))
                advance(1)
    if len(systems) == 1:
        if options.detail:  # as SacreBLEU: the per-subset lines are text, so is the result
            fmt = "text" if options.fmt == "json" else options.fmt
            return single_system(results, fmt, options.width, options.score_only,
                                 options.short) + "\n" + subset_details(
                options, metrics, full_systems[0].lines)
        return single_system(results, options.fmt, options.width, options.score_only,
                             options.short)
    logger.info(f"Found {len(systems)} systems.")
    return multi_system(results, options.fmt, options.width, options.short)


def _signature(metric: Metric, testset_fields: dict[str, str | None]) -> Signature:
    signature = metric.get_signature()
    for key, value in testset_fields.items():
        if value is not None:
            signature.update(key, value)
    return signature


def _corpus(metric: Metric, system: TextSource, testset_fields: dict[str, str | None],
            n_bootstrap: int = 1) -> tuple[Any, Any]:
    score = metric.corpus_score(system.lines, None, n_bootstrap=n_bootstrap)
    return score, _signature(metric, testset_fields)


def paired(options: Options, metrics: dict[str, Metric], systems: list[TextSource]) -> str:
    """``--paired-bs`` / ``--paired-ar``: every system against the first one."""
    from bleucli.formats import paired_table
    from bleucli.paired import run_paired

    if options.paired_bs and options.paired_ar:
        raise ConfigError("choose one of --paired-bs and --paired-ar")
    if len(systems) < 2:
        raise ConfigError("paired tests need several systems: -i baseline.txt system.txt ...")
    test = "bs" if options.paired_bs else "ar"
    n_samples = options.paired_bs_n if test == "bs" else options.paired_ar_n
    results, signatures = run_paired(test, dict(sorted(metrics.items())),
                                     [(s.name, s.lines) for s in systems], n_samples,
                                     jobs=options.paired_jobs or automatic_jobs(len(systems)))
    return paired_table([s.name for s in systems], results,
                        {k: v.format(options.short) for k, v in signatures.items()},
                        options.fmt, options.width, test, n_samples)


def automatic_jobs(n_systems: int) -> int:
    """``-j 0``, as SacreBLEU decides it: a worker per system, but no more than half the
    CPUs (hyper-threads do not count), and at least one."""
    import os

    return max(1, min((os.cpu_count() or 1) // 2, n_systems))


def sentence_format(options: Options) -> str:
    """``-sl`` prints SacreBLEU's text lines unless ``-f json`` (JSON lines) or ``-f tsv`` is
    asked for explicitly (JSON is only the default for corpus scores)."""
    return options.fmt if "fmt" in options.explicit and options.fmt in ("json", "tsv") \
        else "text"


def sentence_level(options: Options, metrics: dict[str, Metric], systems: list[TextSource],
                   testset_fields: dict[str, str | None]) -> str:
    """One line per sentence (and system); statistics come from the cached references and
    each sentence's row is scored on its own."""
    from bleucli.formats import sentence_header, sentence_rows

    signatures = {name: _signature(metric, testset_fields).format(options.short)
                  for name, metric in sorted(metrics.items())}
    fmt = sentence_format(options)
    parts = []
    for system in systems:
        scores = {}
        for name, metric in sorted(metrics.items()):
            rows = metric.per_sentence_stats(system.lines, None)
            scores[name] = [metric.score_from_values(row) for row in rows]
        if not parts and fmt == "tsv":
            parts.append(sentence_header([s[0].name for s in scores.values() if s],
                                         signatures, fmt))
        parts.append(sentence_rows(scores, signatures, fmt, options.width, options.score_only,
                                   1, system.name, numbered=len(systems) > 1))
    return "\n".join(parts)
