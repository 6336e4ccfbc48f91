"""``bleucli report``: one table from many result files."""

from __future__ import annotations

from typing import Any

import click

from bleucli.cli.options import (
    OUTPUT_FORMATS,
    _pair,
    width_option,
)


@click.command(name="report", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("results", nargs=-1, required=True, metavar="[NAME=]RESULT.json...")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(OUTPUT_FORMATS),
    default="text",
    show_default=True,
    help="Table format (latex and markdown paste into papers).",
)
@width_option
@click.option(
    "--autorank",
    type=click.Choice(["wmt25", "wmt24"]),
    default=None,
    help="Add WMT's AutoRank over every column (that recipe) and order the rows by it.",
)
def report_command(
    results: tuple[str, ...], fmt: str, width: list[Any], autorank: str | None
) -> None:
    """One table, systems x (test set, metric), from result files of bleucli or SacreBLEU.

    Each file is any JSON that bleucli writes (one result, several metrics, several systems,
    paired tests) or SacreBLEU's. Rows are named after the file, or NAME in NAME=RESULT.json
    (or NAME:RESULT.json).
    Signatures are compared without their version field; a column that mixes signatures is
    reported on stderr.
    """
    from bleucli.commands.report import ReportRequest, build_report
    from bleucli.precision import Precision

    output = build_report(ReportRequest(list(results), fmt, Precision(*_pair(width)), autorank))
    if fmt == "html":
        from bleucli.analysis.page import output_page

        output = output_page("bleucli report", output)
    click.echo(output)
