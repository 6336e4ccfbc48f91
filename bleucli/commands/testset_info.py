"""The test-set commands of ``bleucli``: ``--list``, ``--echo``, ``--citation``,
``--download``, and the ``-d/--detail`` breakdown by origlang and subset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bleucli.commands.inputs import _check_testset_options, testsets_for
from bleucli.errors import ConfigError
from bleucli.log import logger
from bleucli.metrics.base import Metric

if TYPE_CHECKING:
    from bleucli.commands.request import Options


def subset_details(options: Options, metrics: dict[str, Metric], system: list[str]) -> str:
    """``-d/--detail``: the scores of every origlang and subset (:mod:`bleucli.testsets.views`)."""
    from bleucli.testsets.views import subset_details as details

    return details(
        testsets_for(options), options.test_set, options.language_pair or "", metrics, system,
        options.width, options.origlang, options.subset,
    )  # fmt: skip


def echo_fields(options: Options) -> str:
    """``--echo``: print fields of the test set(s), tab-separated, one segment per line."""
    from bleucli.testsets.views import echo_fields as fields

    _check_testset_options(options)
    return fields(
        testsets_for(options), options.test_set or "", options.language_pair or "",
        options.echo, options.origlang, options.subset,
    )  # fmt: skip


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
