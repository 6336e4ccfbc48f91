"""``bleucli gate``: the CI regression gate."""

from __future__ import annotations

from typing import Any

import click

from bleucli.cli.options import (
    NEURAL_METRICS,
    deprecated,
    metric_options,
)


@click.command(
    name="gate",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 all checks passed, 3 a check failed, 1 unusable input, 2 usage error.",
)
@click.argument("current", metavar="CURRENT.json")
@click.argument("refs", nargs=-1, metavar="[REFS]...")
@click.option(
    "--baseline",
    "baseline_path",
    required=True,
    metavar="FILE",
    help="Baseline results (JSON written by bleucli).",
)
@click.option(
    "--tolerance",
    type=float,
    default=0.0,
    show_default=True,
    help="Allowed drop in absolute points for every metric.",
)
@click.option(
    "--tolerance-for",
    multiple=True,
    metavar="METRIC=POINTS",
    help="Per-metric tolerance, e.g. chrF2=0.5 (repeatable; names as in the results, any case).",
)
@click.option(
    "--min-score",
    multiple=True,
    metavar="METRIC=SCORE",
    help="Required score, e.g. BLEU=30 (for TER: the maximum).",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="Replace the baseline with the current results (atomically) and pass.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Report format on stdout.",
)
@click.option("--junit", metavar="FILE", help="Also write a JUnit XML report.")
@click.option(
    "--baseline-output",
    metavar="FILE",
    help="Statistical gate: the baseline system's translations. A drop then fails "
    "only if a paired bootstrap test finds it significant.",
)
@click.option(
    "-i",
    "--input",
    "current_output",
    metavar="FILE",
    help="Statistical gate: the current system's translations (the references follow "
    "CURRENT.json, as in the scoring command; default: the test set its signatures name).",
)
@click.option(
    "--output",
    "output_deprecated",
    metavar="FILE",
    hidden=True,
    callback=lambda c, p, v: deprecated(v, "gate --output", "-i/--input"),
)
@click.option("--refs", "refs_deprecated", multiple=True, metavar="FILE", hidden=True,
              callback=lambda c, p, v: deprecated(v, "gate --refs", "the references after CURRENT.json"))  # fmt: skip
@click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="Statistical gate: significance level.",
)
@click.option(
    "--paired-bs-n",
    type=int,
    default=1000,
    show_default=True,
    help="Statistical gate: bootstrap resamples (1-100000).",
)
@click.option(
    "--source",
    metavar="FILE",
    help="Statistical gate: the source sentences (neural metrics such as COMET read them).",
)
@metric_options(NEURAL_METRICS, only={m: ("model",) for m in NEURAL_METRICS})
@click.option("--model", "models_deprecated", multiple=True, metavar="DIR", hidden=True,
              callback=lambda c, p, v: deprecated(v, "gate --model", "--comet-model (or the metric's own --...-model)"))  # fmt: skip
def gate_command(current: str, baseline_path: str, **params: Any) -> None:
    """Compare CURRENT.json (bleucli's JSON output; - for stdin) with a baseline. The
    statistical gate (--baseline-output, -i) takes the references as the scoring command
    does: after CURRENT.json.

    \b
      bleucli gate current.json --baseline base.json --tolerance 0.5
      bleucli gate current.json ref.de --baseline base.json --baseline-output base.de -i new.de
    """
    from bleucli.commands.gate import GateRequest, run

    refs = tuple(params.pop("refs")) + tuple(params.pop("refs_deprecated"))
    output = params.pop("output_deprecated")
    if params["current_output"] is None:
        params["current_output"] = output
    models = tuple(params.pop("models_deprecated"))
    for name in NEURAL_METRICS:  # a neural metric's model folder, matched by its hash
        given = params.pop(f"{name.replace('-', '_')}_model", None)
        if given:
            models += (given,)
    outcome = run(GateRequest(current=current, baseline=baseline_path, refs=refs,
                              models=models, **params))  # fmt: skip
    click.echo(outcome.text)
    if outcome.annotations:
        click.echo(outcome.annotations, err=True)
    if outcome.exit_code:
        raise click.exceptions.Exit(outcome.exit_code)
