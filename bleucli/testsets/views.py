"""What the test-set front ends print about a loaded set, below them all: its fields
(``--echo``) and the scores per origlang and subset (``-d/--detail``). The scoring command
and the SacreBLEU layer both call these, so neither imports the other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bleucli.errors import ConfigError, InputError
from bleucli.precision import decimals, shown

if TYPE_CHECKING:
    from bleucli.metrics.base import Metric
    from bleucli.testsets.loader import TestSets


def require_pair(sets: TestSets, test_set: str | None, pair: str | None) -> None:
    """A test set needs a language pair; the error lists a single set's pairs."""
    if pair is not None:
        return
    names = test_set.split(",") if test_set else []
    pairs = ""
    if len(names) == 1:
        pairs = "; available: " + ", ".join(sorted(sets.registry.get(names[0]).langpairs))
    raise ConfigError(f"a test set needs a language pair (-l){pairs}")


def echo_fields(
    sets: TestSets,
    test_set: str,
    pair: str,
    requested_fields: Sequence[str],
    origlang: str | None = None,
    subset: str | None = None,
) -> str:
    """Fields of the test set(s), tab-separated, one segment per line."""
    out: list[str] = []
    for name in test_set.split(","):
        available = sets.fieldnames(name, pair)
        data = sets.load(name, pair, origlang, subset)
        available = list(dict.fromkeys([*available, *data.fields]))
        requested = list(requested_fields)
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
                    f"no field {field_name!r} in {name}/{pair}; available: {', '.join(available)}"
                )
        columns = [data.fields[f] for f in requested]
        out.extend("\t".join(v.rstrip() for v in row) for row in zip(*columns))
    return "\n".join(out)


def subset_details(
    sets: TestSets,
    test_set: str | None,
    pair: str,
    metrics: dict[str, Metric],
    system: list[str],
    width: int,
    origlang: str | None = None,
    subset: str | None = None,
) -> str:
    """The scores of every origlang of the test set, on all its documents and on each subset
    (domain or country), one line per metric, in SacreBLEU's layout.

    ``system`` is the output for the whole test set. Unlike SacreBLEU 2.6 (which crashes
    there), ``origlang`` limits the breakdown to that origlang."""
    if test_set is None:
        return "No subset information found. Consider using --origlang argument."
    origlangs = [origlang] if origlang else sets.available_origlangs(test_set, pair)
    if not origlangs:
        return "No subset information found. Consider using --origlang argument."
    references = sets.load(test_set, pair).reference_streams
    if len(system) != len(references[0]):
        raise InputError(
            f"--detail needs the output for the whole test set "
            f"({len(references[0])} lines), got {len(system)}"
        )
    subsets = [subset] if subset is not None else sets.available_subsets(test_set, pair)
    results: dict[str, list[tuple[int, Any]]] = {}
    for language in origlangs:
        for part in [None, *subsets]:
            mask = sets.keep_mask(test_set, pair, language, part)
            selected = [line for line, keep in zip(system, mask) if keep]
            if not selected:
                continue
            refs = [[line for line, keep in zip(stream, mask) if keep] for stream in references]
            key = f"origlang={language}"
            if part is None:
                key += " domain=ALL"
            elif part.startswith("country:"):
                key += f" country={part[len('country:') :]}"
            else:
                key += f" domain={part}"
            results[key] = [
                (len(selected), metric.corpus_score(selected, refs)) for metric in metrics.values()
            ]
    if not results:
        return ""
    left = max(len(key) for key in results) + 1
    name_width = max(len(score.name) for _, score in next(iter(results.values())))
    return "\n".join(
        f"{key:<{left}}: sentences={n:<6} {score.name:<{name_width}} = "
        f"{shown(score.score, decimals(width, score.name))}"
        for key, scores in results.items()
        for n, score in scores
    )
