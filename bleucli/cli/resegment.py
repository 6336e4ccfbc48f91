"""``bleucli resegment``: realign an unsegmented output to the references."""

from __future__ import annotations

from typing import Any

import click

from bleucli.cli.options import encoding_option
from bleucli.cli.run import configure_logging


@click.command(name="resegment", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("refs", nargs=-1, metavar="[REF]...")
@click.option("-i", "--input", "hypothesis", metavar="FILE", help="The output to realign.")
@click.option("-t", "--test-set", metavar="NAME", help="Take the reference from a test set.")
@click.option("-l", "--language-pair", metavar="SRC-TRG", help="The test set's language pair.")
@click.option(
    "--docids",
    metavar="FILE|testset",
    help="Document id of every reference line: the output then has one line per "
    "document (or one per reference line), each aligned within its document.",
)
@click.option(
    "--tokenize",
    "resegment_tokenize",
    type=click.Choice(["none", "13a", "char"]),
    help="Alignment tokenisation (default: char for zh/ja and other scripts without "
    "spaces, else 13a).",
)
@click.option("-o", "--output", metavar="FILE", help="Write the segments here (default: stdout).")
@encoding_option
@click.option("--offline", is_flag=True, help="Never use the network.")
@click.option("-q", "--quiet", is_flag=True, help="No summary line on stderr.")
def resegment_command(
    refs: tuple[str, ...],
    hypothesis: str | None,
    output: str | None,
    quiet: bool,
    **params: Any,
) -> None:
    """Cut an output whose lines do not match the reference into one segment per
    reference line (minimum-WER alignment, identical to mweralign 1.4.1).

    \b
      bleucli resegment ref.de -i unsegmented.de > resegmented.de
      bleucli resegment ref.de -i per-document.de --docids docids.txt -o resegmented.de
    """
    from bleucli.commands.request import Options
    from bleucli.commands.resegment import run

    configure_logging(quiet)
    options = Options(
        refs=refs,
        inputs=(hypothesis,) if hypothesis else (),
        resegment=True,
        resegment_output=output,
        quiet=quiet,
        **params,
    )
    text = run(options)
    if text:
        click.echo(text, nl=False)
