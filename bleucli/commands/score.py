"""The scoring command (``bleucli REFS -i HYP ...``) without click: resolve the request,
load inputs, build metrics, score, format. The other modes it dispatches to live next to it
(test-set commands, sentence level, paired tests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bleucli.errors import ConfigError, InputError, UsageError
from bleucli.log import logger
from bleucli.metrics import metric_class, output_order

if TYPE_CHECKING:
    from bleucli.commands.request import Options
    from bleucli.io import TextSource
    from bleucli.metrics.base import Metric

# Each mode imports what it needs when it runs: scoring a file loads no test-set, download,
# paired-test or shard code (tests/test_startup.py holds the line).


def _signature_options(metric: str) -> dict[str, str]:
    """A metric's command-line parameters -> the signature field each conflicts with under
    --from-signature (from the declarations)."""
    from bleucli.metrics import metric_class

    return {o.param: o.signature for o in metric_class(metric).OPTIONS if o.signature}


#: Signature fields that need features this version does not have.
_UNSUPPORTED_FIELDS = {"ar": "approximate randomisation tests"}


#: Options that make the main command print something other than one result; `bleucli
#: stats` must write a JSON shard that `bleucli merge` reads, so it refuses them.
_NOT_WITH_STATS = {
    "sentence_level": "-sl/--sentence-level",
    "rank": "--rank",
    "docids": "--docids",
    "paired_bs": "-pbs/--paired-bs",
    "paired_ar": "-par/--paired-ar",
    "detail": "-d/--detail",
    "score_only": "-b/--score-only",
    "confidence": "-ci/--confidence",
}


def _check_stats_options(options: Options) -> None:
    for attribute, flag in _NOT_WITH_STATS.items():
        value = getattr(options, attribute)
        if attribute == "confidence":  # a signature's bs: field sets it without asking
            value = value and "confidence" in options.explicit
        if value:
            raise UsageError(
                f"bleucli stats writes one JSON shard of summed statistics for "
                f"`bleucli merge`; {flag} cannot be combined with it (run "
                f"`bleucli` itself for that)"
            )


def _check_signature_ranges(parsed: Any, given: Mapping[str, Any], confidence_n: int) -> None:
    """The values a signature brings in (``given``: its metric's options, ``confidence_n``:
    the resamples), checked by their options' declarations; the error names the signature's
    field (the user typed no option) and the option it sets."""
    from bleucli.commands.request import command_option
    from bleucli.metrics import metric_class

    fields = parsed.fields
    if "bs" in fields:
        declared = command_option("confidence_n")
        declared.check(confidence_n, f"--from-signature: bs:{fields['bs']} ({declared.label})")
    for option in metric_class(parsed.metric).OPTIONS:
        field = option.signature or ""
        if option.keyword not in given or (field and field not in fields):
            continue
        text = f"{field}:{fields[field]}" if field else parsed.name
        option.check(given[option.keyword], f"--from-signature: {text} ({option.label})")


def apply_signatures(options: Options) -> tuple[Options, dict[str, int], list[str]]:
    """The request with the options ``--from-signature`` sets, the values it brings in
    checked; the reference count each signature demands; the notices to give once every
    option has been checked. The one place signatures merge into a request."""
    from dataclasses import replace

    from bleucli.commands.inputs import TESTSET_FIELDS
    from bleucli.signature import parse_signature

    parsed_all = [parse_signature(text) for text in options.from_signature]
    metrics = [p.metric for p in parsed_all]
    if len(set(metrics)) != len(metrics):
        raise ConfigError("give one --from-signature per metric")
    if "metrics" in options.explicit and set(options.metrics) != set(metrics):
        raise ConfigError(
            f"--metrics conflicts with the signatures' metrics ({', '.join(metrics)})"
        )
    changes: dict[str, Any] = {"metrics": tuple(metrics)}
    metric_options = {name: dict(given) for name, given in options.metric_options.items()}
    expected: dict[str, int] = {}
    notices: list[str] = []
    for parsed in parsed_all:
        for key, value in parsed.fields.items():
            if key in _UNSUPPORTED_FIELDS:
                raise ConfigError(
                    f"signature field {key}:{value} needs "
                    f"{_UNSUPPORTED_FIELDS[key]}, which bleucli cannot apply here"
                )
        given = metric_options.setdefault(parsed.metric, {})
        local_model = None  # a neural model's own files: checked against the signature's hash
        for name, sig_key in _signature_options(parsed.metric).items():
            if name in options.explicit and sig_key in parsed.fields:
                if sig_key == "model":
                    local_model = given.get("model")
                    continue
                raise ConfigError(
                    f"--{name.replace('_', '-')} conflicts with --from-signature, "
                    f"which sets {sig_key}:{parsed.fields[sig_key]}"
                )
        if "bs" in parsed.fields:
            changes["confidence"] = True
            try:
                changes["confidence_n"] = int(parsed.fields["bs"])
            except ValueError:
                raise UsageError(
                    f"signature field bs:{parsed.fields['bs']} is not a number of resamples"
                ) from None
        if "seed" in parsed.fields:
            import os

            seed = parsed.fields["seed"]
            current = os.environ.get("BLEUCLI_SEED", "12345").lower()
            if seed != current:
                raise ConfigError(
                    f"the signature was made with seed:{seed}; "
                    f"set BLEUCLI_SEED={seed} to reproduce it"
                )
        if "reseg" in parsed.fields:
            changes.update(_resegment_field(parsed.fields["reseg"], options))
        for key, attribute in TESTSET_FIELDS.items():
            if key in parsed.fields:
                current_value = getattr(options, attribute)
                if current_value is not None and current_value != parsed.fields[key]:
                    raise ConfigError(
                        f"--{attribute.replace('_', '-')} {current_value} conflicts with "
                        f"--from-signature, which sets {key}:{parsed.fields[key]}"
                    )
                changes[attribute] = parsed.fields[key]
        given.update(parsed.metric_options())
        if local_model is not None:
            digest = parsed.fields["model"].rpartition("@")[2]
            pinned = "@" in local_model or not digest
            given["model"] = local_model if pinned else f"{local_model}@{digest}"
        _check_signature_ranges(parsed, given, changes.get("confidence_n", options.confidence_n))
        if parsed.metric == "bleu" and parsed.fields.get("eff") == "no" and options.sentence_level:
            raise ConfigError(
                "the signature says eff:no, but --sentence-level needs effective order"
            )
        version = parsed.fields.get("version")
        if version and parsed.metric in ("bleu", "chrf", "ter"):
            notices.append(
                f"reproducing a {parsed.name} signature from version {version} "
                f"with the SacreBLEU 2.x rules"
            )
        nrefs = parsed.fields.get("nrefs")
        if nrefs is not None and nrefs != "var":
            try:
                expected[parsed.metric] = int(nrefs)
            except ValueError:
                raise UsageError(f"signature field nrefs:{nrefs} is not a number") from None
    return replace(options, **changes, metric_options=metric_options), expected, notices


def _resegment_field(value: str, options: Options) -> dict[str, Any]:
    """``reseg:mwer-TOKENIZE``: the output was realigned, with that tokenisation."""
    from bleucli.mwer import TOKENIZERS

    method, _, tokenize = value.partition("-")
    if method != "mwer" or tokenize not in TOKENIZERS:
        raise UsageError(
            f"--from-signature: reseg:{value} is not a resegmentation bleucli knows "
            f"(mwer-{'|mwer-'.join(TOKENIZERS)})"
        )
    given = options.resegment_tokenize
    if given is not None and given != tokenize:
        raise ConfigError(
            f"--resegment-tokenize {given} conflicts with --from-signature, which sets "
            f"reseg:{value}"
        )
    return {"resegment": True, "resegment_tokenize": tokenize}


def metric_specs(options: Options) -> dict[str, tuple[type[Metric], dict[str, Any]]]:
    """Class and keyword arguments of every requested metric."""
    return options.scoring().metric_kwargs()


def build_metrics(
    options: Options, references: list[list[str]], sources: list[str] | None = None
) -> dict[str, Metric]:
    """Instantiate every requested metric with the references pre-processed once."""
    return options.scoring().build(references, sources)


def uses_source(options: Options) -> bool:
    """Whether a requested metric reads the source sentences (COMET and its kin)."""
    return any(metric_class(name).uses_source for name in options.metrics)


def can_stream(options: Options) -> bool:
    """One system file against reference files: score in bounded memory, chunk by chunk
    (resampling needs every sentence's statistics, so ``--confidence`` does not stream)."""
    import os

    return (
        options.test_set is None
        and len(options.inputs) == 1
        and bool(options.refs)
        and os.path.exists(options.inputs[0])
        and not options.confidence
        and not (options.paired_bs or options.paired_ar)
        and not options.detail
        and not options.segment_scores
        and not options.rank
        and options.docids is None
        and not options.resegment
        and not uses_source(options)
    )


def run_streaming(options: Options) -> str:
    """Score a single system file without loading the corpus (``--jobs`` for parallelism)."""
    import os

    import click

    from bleucli.commands.inputs import _file_reference_count
    from bleucli.commands.sentence import sentence_format
    from bleucli.formats import single_system
    from bleucli.metrics.bleu import count_tokenised_periods, warn_if_tokenised
    from bleucli.stream import score_stream

    n_refs = _file_reference_count(options)
    specs = metric_specs(options)
    check_tokenised = "bleu" in specs and not specs["bleu"][1].get("force")
    if "bleu" in specs:
        specs["bleu"][1]["force"] = True  # counted here, over the whole corpus
    tokenised = [0]
    digest: Any = None
    if options.emit_stats:
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

        scores = {
            name: [metrics_holder[name].score_from_values(row) for row in chunk[name]]
            for name, _ in output_order(chunk)
        }
        if fmt == "tsv" and printed[0] == 0:
            click.echo(sentence_header([s[0].name for s in scores.values() if s], signatures, fmt))
        click.echo(
            sentence_rows(
                scores,
                signatures,
                fmt,
                options.precision,
                options.score_only,
                printed[0] + 1,
                options.inputs[0],
            )
        )
        printed[0] += len(next(iter(chunk.values()), []))

    metrics_holder = {name: cls(**kwargs) for name, (cls, kwargs) in specs.items()}
    for name, metric in metrics_holder.items():
        metric.num_refs = n_refs
        signatures[name] = metric.get_signature().format(options.short)
    from bleucli.progress import stage

    path = options.inputs[0]
    size = os.path.getsize(path) if not path.endswith(".gz") else 0
    with stage(f"scoring {os.path.basename(path)}", size) as advance:
        done = [0]

        def on_progress(read: int) -> None:
            advance(min(read, size) - done[0])
            done[0] = min(read, size)

        metrics, totals, count = score_stream(
            specs,
            path,
            list(options.refs),
            options.num_refs,
            options.encoding,
            jobs=options.jobs or _automatic_jobs(),
            keep_rows=options.sentence_level,
            on_rows=print_rows if options.sentence_level else None,
            on_hypotheses=on_hypotheses,
            on_progress=on_progress,
            metrics=metrics_holder,
        )
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
    from bleucli.scoring import score_totals

    for metric in metrics.values():
        metric.num_refs = n_refs
    results = score_totals(metrics, totals, options.inputs[0])
    return single_system(results, options.fmt, options.precision, options.score_only, options.short)


def _automatic_jobs() -> int:
    import os

    from bleucli.commands.paired import automatic_jobs

    return automatic_jobs(os.cpu_count() or 1)


def _check_signature_nrefs(expected: dict[str, int], given: int) -> None:
    for wanted in expected.values():
        if wanted != given:
            raise ConfigError(
                f"the signature says nrefs:{wanted} but {given} reference stream(s) were given"
            )


def run(options: Options) -> str:
    """Everything the main command does; returns the text to print on standard output."""
    if options.download or options.list_sets or options.citation or options.echo:
        from bleucli.commands import testset_info

        if options.download:
            return testset_info.download(options)
        if options.list_sets:
            return testset_info.list_testsets(options)
        if options.citation:
            return testset_info.citations(options)
        return testset_info.echo_fields(options)
    if options.test_set is None and (options.origlang or options.subset):
        raise ConfigError("--origlang and --subset need a test set (-t)")
    expected_refs: dict[str, int] = {}
    notices: list[str] = []
    if options.from_signature:
        options, expected_refs, notices = apply_signatures(options)
    from bleucli.commands.request import validate

    options = validate(options)
    if options.emit_stats:
        _check_stats_options(options)
    for name in options.metrics:
        metric_class(name)  # fail on an unknown metric before reading any file
    from bleucli.neural.preflight import check_sources

    check_sources(
        options.metrics, bool(options.source or options.test_set),
        bool(options.refs or options.test_set),
    )  # fmt: skip
    for notice in notices:  # said once the options are known to be usable
        logger.info(notice)
    from bleucli.commands.resegment import check_options

    check_options(options)
    _check_widths(options)
    _warn_cjk(options)
    _warn_ter_cjk(options)
    if can_stream(options):
        from bleucli.commands.inputs import _file_reference_count

        _check_signature_nrefs(expected_refs, _file_reference_count(options))
        return run_streaming(options)
    return run_in_memory(options, expected_refs)


def _check_widths(options: Options) -> None:
    """``-w METRIC=N`` names a metric of the run (``-m`` or ``--segment-scores``)."""
    from bleucli.metrics.segment import parse_option

    named = {*options.metrics, *(parse_option(v)[0].lower() for v in options.segment_scores)}
    for key in options.widths:
        if key not in named and metric_class_name(key) not in named:
            raise UsageError(
                f"-w {key}={options.widths[key]}: {key} is not a metric of this run "
                f"({', '.join(sorted(named))})"
            )


def metric_class_name(name: str) -> str | None:
    """The ``-m`` name of a metric's display name (``chrF2`` -> ``chrf``), if any."""
    from bleucli.precision import metric_key

    return metric_key(name)


def _warn_ter_cjk(options: Options) -> None:
    """TER on Chinese, Japanese or Korean without ``--ter-normalized --ter-asian-support``:
    it splits words at spaces only, so an unspaced sentence is one word and TER lands near
    100 (97 on WMT22 en-zh). SacreBLEU's default, so kept; said."""
    target = (options.language_pair or "").split("-")[-1]
    if "ter" not in options.metrics or target not in ("zh", "ja", "ko"):
        return
    if options.ter.get("asian_support") and options.ter.get("normalized"):
        return
    logger.warning(
        f"TER splits words at spaces only: on unspaced {target} text each sentence is one "
        f"word and TER is near 100; add --ter-normalized --ter-asian-support to split CJK "
        f"characters (as in SacreBLEU, the asian support works within the normalisation)"
    )


def _warn_cjk(options: Options) -> None:
    """``-l en-zh`` on references without a Chinese character: BLEU would switch to tok:zh
    silently; say it (the first lines of each reference file tell)."""
    if "bleu" not in options.metrics or "tokenize" in options.explicit or not options.refs:
        return
    if not options.language_pair or options.language_pair.split("-")[-1] not in ("zh", "ja", "ko"):
        return
    from itertools import islice

    from bleucli.io import open_binary
    from bleucli.languages import cjk_warning

    heads = []
    for path in options.refs:
        try:
            with open_binary(path) as handle:
                lines = [raw.decode(options.encoding, "replace") for raw in islice(handle, 200)]
        except (OSError, InputError):
            return  # reading it properly says what is wrong
        heads.append(lines)
    warning = cjk_warning(options.language_pair, heads)
    if warning:
        logger.warning(warning)


def run_in_memory(options: Options, expected_refs: dict[str, int]) -> str:
    """The modes that hold every line: test sets, several systems, resampling, rankings,
    per-document and sentence-level scores."""
    from bleucli.commands.inputs import (
        filter_systems,
        load_references,
        load_systems,
        testset_signature_fields,
    )
    from bleucli.formats import multi_system, single_system
    from bleucli.io import check_same_length

    ref_sources = load_references(options)
    _check_signature_nrefs(expected_refs, len(ref_sources))
    full_systems = load_systems(options)
    alignment = None
    if options.resegment:
        from bleucli.commands.resegment import resegment_systems

        full_systems, alignment = resegment_systems(options, full_systems, ref_sources)
    systems = filter_systems(options, full_systems, len(ref_sources[0].lines))
    for system in systems:
        check_same_length(system, ref_sources)
    if options.test_set is not None and options.bleu.get("tokenize") == "none":
        logger.warning(
            "You are turning off BLEU's internal tokenizer presumably to supply "
            "your own tokenized files."
        )
        logger.warning("Published numbers will not be comparable to other papers.")
    sources = None
    if uses_source(options) or options.source:
        from bleucli.commands.inputs import load_sources

        sources = load_sources(options, len(ref_sources[0].lines))
        from bleucli.neural.preflight import check_models

        check_models(options.metrics, options.metric_options)  # before torch, before a download
    metrics: dict[str, Metric] = build_metrics(options, [s.lines for s in ref_sources], sources)
    if options.segment_scores:
        metrics.update(_segment_metrics(options, systems, len(ref_sources)))
    if alignment is not None:
        from bleucli.commands.resegment import mark

        mark(metrics, alignment)
    testset_fields = testset_signature_fields(options)
    # With --resegment the document ids say what to align; per-document scores need -d.
    by_documents = options.docids is not None and (not options.resegment or options.detail)
    modes = [
        name
        for name, on in (
            ("--sentence-level", options.sentence_level),
            ("--rank", options.rank),
            ("--docids", by_documents),
            (
                "--paired-bs/--paired-ar",
                (options.paired_bs or options.paired_ar) and not options.rank,
            ),
        )
        if on
    ]
    if len(modes) > 1:
        raise ConfigError(f"{' and '.join(modes)} are separate modes; run them one at a time")
    if options.sentence_level and not options.emit_stats:
        if options.confidence:
            raise ConfigError("confidence intervals are unavailable with --sentence-level")
        from bleucli.commands.sentence import sentence_level

        return sentence_level(options, metrics, systems, testset_fields)
    if by_documents:
        from bleucli.commands.documents import by_document

        return by_document(options, metrics, systems, testset_fields, len(ref_sources[0].lines))
    if options.rank:
        from bleucli.commands.rank import rank

        return rank(options, metrics, systems)
    if options.paired_bs or options.paired_ar:
        from bleucli.commands.paired import paired

        return paired(options, metrics, systems)
    if options.emit_stats:
        from bleucli.metrics.base import sum_rows
        from bleucli.shards import stats_document

        if len(systems) > 1:
            raise ConfigError("bleucli stats writes the statistics of one system")
        totals = {
            name: sum_rows(metric.per_sentence_stats(systems[0].lines, None))
            for name, metric in metrics.items()
        }
        from bleucli.shards import ContentDigest

        digest = ContentDigest()
        digest.update(systems[0].lines, [source.lines for source in ref_sources])
        return stats_document(
            metrics,
            metric_specs(options),
            totals,
            len(systems[0].lines),
            testset_fields,
            digest.hexdigest(),
        )
    if options.confidence and len(systems) > 1:
        raise ConfigError(
            "--confidence scores one system; for several, --rank gives each one's 95% "
            "interval, rank range and significance cluster (or --paired-bs against the first)"
        )
    n_bootstrap = options.confidence_n if options.confidence else 1
    from bleucli.progress import stage
    from bleucli.scoring import score

    request = options.scoring()
    results = []
    label = "scoring" + (f" with {n_bootstrap} bootstrap resamples" if n_bootstrap > 1 else "")
    with stage(label, len(systems) * len(metrics)) as advance:
        for system in systems:
            scored = score(
                request, system.lines, [s.lines for s in ref_sources], system.name, metrics,
                n_bootstrap=n_bootstrap, signature_fields=testset_fields, keep_stats=False,
                progress=advance,
            )  # fmt: skip
            results += scored.results
    if len(systems) == 1:
        if options.detail:  # as SacreBLEU: the per-subset lines are text, so is the result
            from bleucli.commands.testset_info import subset_details

            fmt = "text" if options.fmt == "json" else options.fmt
            return (
                single_system(results, fmt, options.precision, options.score_only, options.short)
                + "\n"
                + subset_details(options, metrics, full_systems[0].lines)
            )
        named = systems[0].name if systems[0].named else None  # -i NAME=FILE keeps its name
        return single_system(
            results, options.fmt, options.precision, options.score_only, options.short, named
        )
    logger.info(f"Found {len(systems)} systems.")
    return multi_system(results, options.fmt, options.precision, options.short)


def _segment_metrics(
    options: Options, systems: list[TextSource], num_refs: int
) -> dict[str, Metric]:
    """``--segment-scores``: external per-segment scores as metrics, bound to the systems."""
    from bleucli.metrics import segment

    if options.origlang or options.subset:
        raise ConfigError(
            "--segment-scores cannot be combined with --origlang/--subset: "
            "filter the score files like the outputs, or score the whole set"
        )
    if options.emit_stats:
        raise ConfigError(
            "bleucli stats writes BLEU/chrF/TER statistics; segment scores "
            "need no shards (their mean is their corpus score)"
        )
    return segment.build(options.segment_scores, systems, num_refs)  # type: ignore[return-value]
