"""``bleucli merge``: shards' statistics to a corpus score."""

from __future__ import annotations

from typing import Any

import click

from bleucli.cli.options import (
    _pair,
    width_option,
)


@click.command(name="merge", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("shards", nargs=-1, required=True, metavar="SHARD.json...")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["json", "text"]),
    default=None,
    help="Output format (default json; env BLEUCLI_FORMAT).",
)
@width_option
@click.option("-b", "--score-only", is_flag=True, help="Print only the score.")
@click.option("-sh", "--short", is_flag=True, help="Abbreviated signature.")
def merge_command(
    shards: tuple[str, ...], fmt: str | None, width: list[Any], score_only: bool, short: bool
) -> None:
    """Add statistics written by `bleucli stats` (one shard per part of a corpus) and print
    the corpus score, identical to scoring the whole corpus at once.

    Shards must come from the same metric options and from distinct, non-overlapping parts
    of the data: a shard given twice, or with negative or impossible counts, is refused.
    """
    from bleucli.commands.merge import MergeRequest, run
    from bleucli.precision import Precision

    click.echo(run(MergeRequest(list(shards), fmt, Precision(*_pair(width)), score_only, short)))
