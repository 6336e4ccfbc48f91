"""What the workers score with: a test set's stored scoring request (:mod:`bleucli.scoring`),
the library layer under the command line too, so a submission's result is byte for byte what
``bleucli REF -i HYPOTHESIS -m ... -f json`` prints, and its per-sentence statistics come
from the same pass (leaderboards and paired tests never score again)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bleucli.errors import InputError
from bleucli.results import result_entries

if TYPE_CHECKING:
    from bleucli.scoring import Scored, ScoringRequest


def hypothesis_lines(data: bytes, n_lines: int, max_chars: int | None = None) -> list[str]:
    """The uploaded file's lines, or the reason it is refused (not UTF-8, empty, wrong line
    count, a line longer than ``max_chars``), as the scoring command would refuse it."""
    from bleucli.io import decode_lines

    if not data.strip():
        raise InputError("the hypothesis file is empty")
    lines = decode_lines(data, "hypothesis", "utf-8")
    if len(lines) != n_lines:
        raise InputError(
            f"the hypothesis has {len(lines)} lines, but the test set has {n_lines}: "
            "one line per segment, in the test set's order"
        )
    if max_chars is not None:
        for number, line in enumerate(lines, 1):
            if len(line) > max_chars:
                raise InputError(
                    f"line {number}: {len(line):,} characters, over this test set's limit of "
                    f"{max_chars:,} per line"
                )
    return lines


def lines_bytes(lines: list[str]) -> bytes:
    """Lines as a UTF-8 file (what a subset of a submission is scored from)."""
    return "".join(line + "\n" for line in lines).encode("utf-8")


#: ``server worker --device cuda:0``: where this worker runs neural metrics (None: where
#: the test set's request says, CPU by default). Results say it: ``dev:cuda``.
_DEVICE: str | None = None


def use_device(device: str | None) -> None:
    """Run this process' neural metrics on ``device``, refused now if it is not there."""
    global _DEVICE
    if device is not None:
        from bleucli.neural.runtime import device as check

        check(device)
    _DEVICE = device


def on_worker_device(request: ScoringRequest) -> ScoringRequest:
    """``request`` with its neural metrics on this worker's device."""
    if _DEVICE is None or not request.uses_source:
        return request
    from dataclasses import replace

    from bleucli.metrics import metric_class
    from bleucli.scoring import MetricRequest

    metrics = tuple(
        MetricRequest(m.name, {**m.options, "device": _DEVICE})
        if metric_class(m.name).uses_source
        else m
        for m in request.metrics
    )
    return replace(request, metrics=metrics)


def score(
    references: list[list[str]],
    request: ScoringRequest,
    hypothesis: bytes,
    sources: list[str] | None = None,
) -> Scored:
    """Score ``hypothesis`` against ``references`` (and the test set's ``sources``, which
    neural metrics read) with the test set's request. The model of a neural metric is
    loaded once per worker process and kept (:mod:`bleucli.neural.load`), with the
    embeddings of the set's sources and references."""
    from bleucli.scoring import score as score_lines

    lines = hypothesis_lines(hypothesis, len(references[0]))
    request = on_worker_device(request)
    return score_lines(request, lines, references, metrics=request.build(references, sources))


def metrics_for(references: list[list[str]], request: ScoringRequest) -> dict[str, Any]:
    """The test set's metric objects (for ranking stored statistics)."""
    return dict(request.build(references))


def intervals(
    references: list[list[str]],
    request: ScoringRequest,
    stats: dict[str, list[list[float]]],
    previous: dict[str, list[list[float]]] | None = None,
    n_samples: int = 1000,
) -> dict[str, Any]:
    """What a series' trend page draws, from stored statistics: each metric's bootstrap
    mean and 95% half-width (``-ci``'s, seeded as it is), and with the previous run's
    statistics (same test set version) the paired bootstrap p-value of the step from it,
    per metric (``bleucli gate``'s test); and the resampled scores themselves, kept for the
    leaderboard (``"resampled"``)."""
    import base64

    from bleucli.stats.bootstrap import draw_resamples, seed_from_environment
    from bleucli.stats.paired import estimate_ci, paired_bootstrap

    label, seed = seed_from_environment()
    metrics = metrics_for(references, request)
    drawn = draw_resamples(len(references[0]), n_samples, seed)
    bands: dict[str, list[float]] = {}
    steps: dict[str, float | None] = {}
    kept: dict[str, Any] = {"seed": label, "n": n_samples, "scores": {}}
    for key, metric in metrics.items():
        name = metric.score_from_values(stats[key][0]).name
        scores = drawn.scores(metric, stats[key])
        kept["scores"][key] = base64.b64encode(scores.astype("float64").tobytes()).decode("ascii")
        mean, half = estimate_ci(scores)
        bands[name] = [float(mean), float(half)]
        if previous is not None:  # the same draws when seeded (seed 0: unseeded, as the gate)
            shared = (drawn, scores) if seed else (None, None)
            steps[name] = paired_bootstrap(
                metric, previous[key], stats[key], n_samples, seed or None, *shared
            ).p_value
    return {"ci": bands, "step_p": steps, "resampled": kept}


def first_metric_name(request: ScoringRequest, result: Any) -> str:
    """The name the test set's first metric (first of its ``-m``: what boards rank by) has
    in a result (``chrF2``, ``CER``): results list metrics by name, not in ``-m`` order."""
    from bleucli.signature import signature_of

    key = request.metrics[0].name
    for entry in result_entries(result):
        if signature_of(entry["name"], entry.get("signature", "")).metric == key:
            return str(entry["name"])
    raise InputError(f"the result has no {key} score")
