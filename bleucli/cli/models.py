"""``bleucli models``: list, download, verify and locate the pinned neural models."""

from __future__ import annotations

import sys

import click

HELP = {"help_option_names": ["-h", "--help"]}


@click.group(name="models", context_settings=HELP)
def models_group() -> None:
    """The neural models COMET, CometKiwi and xCOMET score with: pinned by SHA-256,
    downloaded once from the hub (HF_ENDPOINT, HF_HOME, HF_HUB_OFFLINE) (docs/neural.md)."""


@models_group.command(name="list", context_settings=HELP)
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def list_command(fmt: str) -> None:
    """Every registered model: metric, class, repository, licence, pin."""
    from bleucli.commands.models import list_models

    click.echo(list_models(fmt))


@models_group.command(name="download", context_settings=HELP)
@click.argument("names", nargs=-1, metavar="NAME...")
@click.option("--force", is_flag=True, help="Download again, replacing what the cache holds.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
def download_command(names: tuple[str, ...], force: bool, quiet: bool) -> None:
    """Fetch models (and their encoders' tokenizer and configuration), checking hashes;
    prints NAME, folder and the checkpoint's SHA-256."""
    from bleucli.commands.models import download

    click.echo(download(names, force, show_progress=not quiet and sys.stderr.isatty()))


@models_group.command(name="verify", context_settings=HELP)
@click.argument("names", nargs=-1, metavar="[NAME...]")
def verify_command(names: tuple[str, ...]) -> None:
    """Recompute the SHA-256 of downloaded models' files; exit 1 on a mismatch."""
    from bleucli.commands.models import verify

    report, good = verify(names)
    click.echo(report)
    if not good:
        sys.exit(1)


@models_group.command(name="path", context_settings=HELP)
@click.argument("name")
def path_command(name: str) -> None:
    """The local folder of a downloaded model (for unbabel-comet or your own code)."""
    from bleucli.commands.models import path

    click.echo(path(name))
