"""The test-set commands of ``bleucli``: ``--list``, ``--echo``, ``--citation``,
``--download``, and the ``-d/--detail`` breakdown by origlang and subset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bleucli.commands.inputs import _check_testset_options, testsets_for
from bleucli.errors import ConfigError, InputError
from bleucli.log import logger
from bleucli.metrics.base import Metric

if TYPE_CHECKING:
    from bleucli.commands.request import Options


def subset_details(options: Options, metrics: dict[str, Metric], system: list[str]) -> str:
    """``-d/--detail``: the scores of every origlang of the test set, on all its documents and
    on each subset (domain or country), one line per metric, in SacreBLEU's layout.

    ``system`` is the output for the whole test set. Unlike SacreBLEU 2.6 (which crashes
    there), ``--origlang X`` limits the breakdown to X."""
    if options.test_set is None:
        return "No subset information found. Consider using --origlang argument."
    sets = testsets_for(options)
    pair = options.language_pair or ""
    origlangs = (
        [options.origlang] if options.origlang else sets.available_origlangs(options.test_set, pair)
    )
    if not origlangs:
        return "No subset information found. Consider using --origlang argument."
    references = sets.load(options.test_set, pair).reference_streams
    if len(system) != len(references[0]):
        raise InputError(
            f"--detail needs the output for the whole test set "
            f"({len(references[0])} lines), got {len(system)}"
        )
    subsets = (
        [options.subset]
        if options.subset is not None
        else sets.available_subsets(options.test_set, pair)
    )
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
                key += f" country={subset[len('country:') :]}"
            else:
                key += f" domain={subset}"
            results[key] = [
                (len(selected), metric.corpus_score(selected, refs)) for metric in metrics.values()
            ]
    if not results:
        return ""
    left = max(len(key) for key in results) + 1
    name_width = max(len(score.name) for _, score in next(iter(results.values())))
    return "\n".join(
        f"{key:<{left}}: sentences={n:<6} {score.name:<{name_width}} = "
        f"{score.score:.{options.width}f}"
        for key, scores in results.items()
        for n, score in scores
    )


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
                raise ConfigError(
                    f"no field {field_name!r} in {name}/{options.language_pair}; "
                    f"available: {', '.join(available)}"
                )
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
            for pair in pairs:
                fields = sets.fieldnames(name, pair)
                line = f"{pair}: {', '.join(fields)}"
                if testset.langpair(pair).format == "xml":
                    line += "; " + _xml_systems(sets, name, pair, fields)
                lines.append(line)
        return "\n".join(lines)
    registry = sets.registry
    if options.language_pair:
        names = registry.for_langpair(options.language_pair)
        header = f"The available test sets for {options.language_pair} are:"
    else:
        names, header = registry.names(), "The available test sets are:"
    width = max((len(n) for n in names), default=0)
    return "\n".join(
        [header] + [f"{n:<{width}} : {registry.sets[n].description}" for n in sorted(names)]
    )


def _xml_systems(sets: Any, name: str, pair: str, known: list[str]) -> str:
    """The systems a WMT XML set holds (``--echo NAME`` prints one): read from the cached
    file, as SacreBLEU reads them; offline and not cached, what to do instead."""
    from bleucli.errors import BleucliError

    try:
        fields = sets.segments(name, pair).fields
    except BleucliError:
        return f"systems (for --echo NAME): download the set to list them (--download {name})"
    systems = [field for field in fields if field not in known and field != "domain"]
    return f"systems (for --echo NAME): {', '.join(systems) if systems else 'none'}"


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
