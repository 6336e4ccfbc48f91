"""What the worker runs: the scoring command's own code path on the submitted file.

A test set keeps the scoring command's metric arguments (``-m bleu chrf -tok intl -cw 2``);
a submission is scored as ``bleucli REF... -i HYPOTHESIS ARGS -f json`` would score it
(the same parser, the same :func:`bleucli.commands.score.run`), so its result is byte for
byte what that command prints. The per-sentence statistics are kept too, from the same
metric objects, so leaderboards and paired tests never score again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any

from bleucli.errors import ConfigError, InputError, UsageError

#: Scoring-command parameters a test set may set: the metrics, their options, decimals.
METRIC_PARAMETERS = frozenset(
    {
        "metrics", "tokenize", "lowercase", "smooth_method", "smooth_value", "force",
        "chrf_char_order", "chrf_word_order", "chrf_beta", "chrf_whitespace", "chrf_lowercase",
        "chrf_eps_smoothing", "ter_case_sensitive", "ter_asian_support", "ter_no_punct",
        "ter_normalized", "width",
    }
)  # fmt: skip


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_arguments(args: list[str], references: list[list[str]] | None = None) -> list[str]:
    """``args`` if they are metric options of the scoring command (``-m``, ``-tok``, ``-cw``,
    ...) that it accepts: anything else (files, test sets, formats) is refused with its
    name, and with ``references`` the metrics are built as the scoring command builds them,
    so an unknown metric or tokeniser is refused here, not by every submission."""
    from bleucli.cli import scoring_options
    from bleucli.commands.score import build_metrics

    options = scoring_options(["REF", "-i", "HYP", *args])
    others = sorted(options.explicit - METRIC_PARAMETERS - {"refs", "inputs"})
    if others:
        raise UsageError(
            f"add-testset takes metric options only (-m, -tok, -lc, -cw, ...); not {', '.join(others)}"
        )
    if references is not None:
        build_metrics(options, references)
    return list(args)


def decimals(args: list[str]) -> int:
    """The decimals a test set's scores are printed with (``-w``)."""
    from bleucli.cli import scoring_options

    return int(scoring_options(["REF", "-i", "HYP", *args]).width)


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


def write_inputs(
    folder: str, references: list[list[str]], hypothesis: bytes
) -> tuple[list[str], str]:
    """The references (one file each) and the uploaded bytes as files in ``folder``, for the
    command line's own readers: (reference paths, hypothesis path)."""
    paths = []
    for k, reference in enumerate(references):
        path = os.path.join(folder, f"reference{k + 1}")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in reference))
        paths.append(path)
    hyp = os.path.join(folder, "hypothesis")
    with open(hyp, "wb") as handle:
        handle.write(hypothesis)
    return paths, hyp


@dataclass
class Scored:
    result: str  # the JSON text the scoring command prints
    scores: dict[str, float]  # metric name -> score
    stats: dict[str, list[list[float]]]  # metric key -> per-sentence statistics


def score(references: list[list[str]], args: list[str], hypothesis: bytes) -> Scored:
    """Score ``hypothesis`` against ``references`` with the test set's ``args``."""
    from bleucli.cli import scoring_options
    from bleucli.commands.score import build_metrics, run

    lines = hypothesis_lines(hypothesis, len(references[0]))
    with tempfile.TemporaryDirectory(prefix="bleucli-score-") as folder:
        paths, hyp = write_inputs(folder, references, hypothesis)
        options = scoring_options([*paths, "-i", hyp, *args, "-f", "json", "-q"])
        try:
            text = run(options)
        except (InputError, ConfigError) as err:  # never a temporary path in a message
            raise type(err)(str(err).replace(folder + os.sep, "")) from None
        metrics = build_metrics(options, references)
    stats = {key: metric.per_sentence_stats(lines, None) for key, metric in metrics.items()}
    document = json.loads(text)
    entries = document if isinstance(document, list) else [document]
    scores = {entry["name"]: float(entry["score"]) for entry in entries}
    return Scored(text, scores, {k: [list(row) for row in rows] for k, rows in stats.items()})


def metrics_for(references: list[list[str]], args: list[str]) -> dict[str, Any]:
    """The test set's metric objects (for ranking stored statistics)."""
    from bleucli.cli import scoring_options
    from bleucli.commands.score import build_metrics

    options = scoring_options(["REF", "-i", "HYP", *args])
    return dict(build_metrics(options, references))


def intervals(
    references: list[list[str]],
    args: list[str],
    stats: dict[str, list[list[float]]],
    previous: dict[str, list[list[float]]] | None = None,
    n_samples: int = 1000,
) -> dict[str, Any]:
    """What a series' trend page draws, from stored statistics: each metric's bootstrap
    mean and 95% half-width (``-ci``'s, seeded as it is), and with the previous run's
    statistics (same test set version) the paired bootstrap p-value of the step from it,
    per metric (``bleucli gate``'s test); and the resampled scores themselves, kept for the
    leaderboard (``"resampled"``)."""
    from bleucli.paired import estimate_ci, paired_bootstrap
    from bleucli.significance import draw_resamples, seed_from_environment

    _, seed = seed_from_environment()
    metrics = metrics_for(references, args)
    drawn = draw_resamples(len(references[0]), n_samples, seed)
    import base64

    label, _ = seed_from_environment()
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
