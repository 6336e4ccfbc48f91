"""Click commands of the evaluation server: ``bleucli server ...``, ``bleucli submit`` and
``bleucli verify``. Thin like the rest of the command line: parse, call
:mod:`bleucli.commands.server` / ``submit`` / ``verify``, print."""

from __future__ import annotations

import sys
from typing import Any

import click

DB_OPTION = click.option(
    "--db", "url", required=True, metavar="URL",
    help="Database: sqlite:///PATH, a file path (SQLite) or postgresql://USER@HOST/NAME.",
)  # fmt: skip
HELP = {"help_option_names": ["-h", "--help"]}


@click.group(name="server", context_settings=HELP)
def server_group() -> None:
    """A shared evaluation server: blind test sets, leaderboards with significance
    clusters, signed receipts, on SQLite or PostgreSQL (docs/server.md)."""


@server_group.command(name="init", context_settings=HELP)
@DB_OPTION
@click.option("--name", default=None, help="The server's name in receipts.")
def init_command(url: str, name: str | None) -> None:
    """Create or migrate the schema and the signing key (idempotent)."""
    from bleucli.commands.server import init

    click.echo(init(url, name))


def _settings_options(function: Any) -> Any:
    """The settings add-testset and edit-testset share (declared once)."""
    options = [
        click.option("--visibility", type=click.Choice(["blind", "public", "private"]), default=None,
                     help="blind (default): scores only until revealed; public; private (one team's)."),
        click.option("--owner", default=None, metavar="TEAM", help="The team a private set belongs to."),
        click.option("--public-badge/--no-public-badge", default=None,
                     help="A private set's series badges without a token."),
        click.option("--opens", default=None, metavar="ISO", help="Submissions open (UTC unless given)."),
        click.option("--closes", default=None, metavar="ISO",
                     help="Submissions close; primaries freeze then."),
        click.option("--limit-per-day", type=click.IntRange(1), default=None, help="Per team (default 5)."),
        click.option("--limit-total", type=click.IntRange(1), default=None, help="Per team (default 100)."),
        click.option("--limit-failures-per-day", type=click.IntRange(1), default=None,
                     help="Refused files a day, per team (default 20)."),
        click.option("--max-line-chars", type=click.IntRange(1), default=None,
                     help="Longest hypothesis line, characters (default 5000)."),
        click.option("--max-resamples", type=click.IntRange(1, 100_000), default=None,
                     help="Most bootstrap resamples a gate may ask for (default 1000)."),
        click.option("--max-scoring-seconds", type=click.IntRange(1), default=None,
                     help="Most worker time one run may take (default 600)."),
        click.option("--max-neural-tokens", type=click.IntRange(1), default=None,
                     help="Most tokens neural metrics read from one run (default: 128 a line)."),
        click.option("--limit-scoring-seconds-per-day", type=click.IntRange(1), default=None,
                     help="Worker time a team's runs may take a day (default 1800)."),
        click.option("--rank-by", type=click.Choice(["first-metric", "autorank", "autorank-wmt24"]),
                     default=None, help="What the leaderboard ranks by: the first metric "
                     "(default), or WMT's AutoRank over the metrics (WMT25's or WMT24's recipe)."),
    ]  # fmt: skip
    for option in reversed(options):
        function = option(function)
    return function


def _settings(params: dict[str, Any]) -> dict[str, Any]:
    from bleucli.commands.server import parse_time

    return {
        "visibility": params["visibility"],
        "owner": params["owner"],
        "public_badge": params["public_badge"],
        "opens_at": parse_time(params["opens"], "--opens"),
        "closes_at": parse_time(params["closes"], "--closes"),
        "limit_per_day": params["limit_per_day"],
        "limit_total": params["limit_total"],
        "limit_failures_per_day": params["limit_failures_per_day"],
        "max_line_chars": params["max_line_chars"],
        "max_resamples": params["max_resamples"],
        "max_scoring_seconds": params["max_scoring_seconds"],
        "max_neural_tokens": params["max_neural_tokens"],
        "limit_scoring_seconds_per_day": params["limit_scoring_seconds_per_day"],
        "rank_by": params["rank_by"],
    }


@server_group.command(
    name="add-testset",
    context_settings={**HELP, "ignore_unknown_options": True, "allow_extra_args": True},
)
@DB_OPTION
@click.argument("name")
@click.option("-l", "--language-pair", "pair", required=True, metavar="SRC-TRG")
@click.option(
    "--ref", "refs", multiple=True, metavar="FILE", help="A reference (repeat for several)."
)
@click.option("--source", default=None, metavar="FILE")
@click.option("--docids", default=None, metavar="FILE")
@click.option("-lc", "--lowercase", is_flag=True, hidden=True)  # the scoring option, not -l c
@click.option(
    "--public-fraction",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=None,
    metavar="F",
    help="Blind sets: rank on a fixed, seeded share F of the lines until the deadline, "
    "on the rest after it.",
)
@_settings_options
@click.pass_context
def add_testset_command(ctx: click.Context, url: str, name: str, pair: str, refs: tuple[str, ...],
                        source: str | None, docids: str | None, lowercase: bool,
                        public_fraction: float | None, **params: Any) -> None:  # fmt: skip
    """Register a test set, or give it a new version for later submissions. Metric options
    follow as the scoring command takes them: -m bleu chrf ter, -tok intl, -cw 2, ... They
    are checked before anything is stored. The same references and options keep the version
    (only the settings change; edit-testset is the command for that).

    \b
      bleucli server add-testset --db task.db news -l en-de --ref ref.de -m bleu chrf ter
    """
    from bleucli.commands.server import add_testset

    args = list(ctx.args) + (["-lc"] if lowercase else [])
    if not any(arg in ("-m", "--metrics") for arg in args):
        args = ["-m", "bleu", "chrf", "ter", *args]
    click.echo(
        add_testset(url, name, pair, refs, source, docids, args, _settings(params), public_fraction)
    )


@server_group.command(name="edit-testset", context_settings=HELP)
@DB_OPTION
@click.argument("name")
@_settings_options
def edit_testset_command(url: str, name: str, **params: Any) -> None:
    """Change a test set's window, limits, caps or visibility without a new version (its
    leaderboard stays as it is).

    \b
      bleucli server edit-testset --db task.db news --closes 2030-06-08T12:00Z
    """
    from bleucli.commands.server import edit_testset

    click.echo(edit_testset(url, name, _settings(params)))


@server_group.command(name="add-team", context_settings=HELP)
@DB_OPTION
@click.argument("name")
def add_team_command(url: str, name: str) -> None:
    """Create a team; its token is printed once, alone on the last line."""
    from bleucli.commands.server import add_team

    click.echo(add_team(url, name))


@server_group.command(name="admin-token", context_settings=HELP)
@DB_OPTION
def admin_token_command(url: str) -> None:
    """Create an admin token (sees every submission); printed once, on the last line."""
    from bleucli.commands.server import admin_token

    click.echo(admin_token(url))


@server_group.command(name="reveal", context_settings=HELP)
@DB_OPTION
@click.argument("name")
@click.option("--force", is_flag=True, help="Close a set that is still open, then reveal it.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def reveal_command(url: str, name: str, force: bool, yes: bool) -> None:
    """Reveal a blind test set after its deadline: per-sentence scores, series and reports
    appear, and its receipts' key is published. Cannot be undone; asks first."""
    from bleucli.commands.server import reveal
    from bleucli.errors import UsageError

    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("reveal cannot be undone: confirm in a terminal, or add --yes")
        if not click.confirm(
            f"Reveal {name}? Participants will see per-sentence scores and reports; this "
            "cannot be undone",
            default=False,
        ):
            click.echo(f"{name} not revealed", err=True)
            sys.exit(1)
    click.echo(reveal(url, name, force))


@server_group.command(name="teams", context_settings=HELP)
@DB_OPTION
def teams_command(url: str) -> None:
    """List the teams: submissions, the latest, live tokens."""
    from bleucli.commands.server import teams

    click.echo(teams(url))


@server_group.command(name="rotate-token", context_settings=HELP)
@DB_OPTION
@click.argument("team")
def rotate_token_command(url: str, team: str) -> None:
    """Give a team a new token: the old one and its web sessions stop working at once. The
    new token is printed once, alone on the last line."""
    from bleucli.commands.server import rotate_token

    click.echo(rotate_token(url, team))


@server_group.command(name="queue", context_settings=HELP)
@DB_OPTION
@click.option(
    "-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def queue_command(url: str, fmt: str) -> None:
    """Submissions and jobs waiting, running (worker, lease) and failed (with messages)."""
    from bleucli.commands.server import queue

    click.echo(queue(url, fmt))


@server_group.command(name="backup", context_settings=HELP)
@DB_OPTION
@click.argument("target")
def backup_command(url: str, target: str) -> None:
    """Copy a SQLite database consistently while the server runs."""
    from bleucli.commands.server import backup

    click.echo(backup(url, target))


@server_group.command(name="run", context_settings=HELP)
@DB_OPTION
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
@click.option(
    "--workers",
    type=click.IntRange(0),
    default=1,
    show_default=True,
    help="Workers beside the web process (0: web only; run `server worker` elsewhere).",
)
@click.option(
    "--max-upload",
    type=click.IntRange(1),
    default=20 * 1024 * 1024,
    show_default=True,
    help="Bytes.",
)
def run_command(url: str, host: str, port: int, workers: int, max_upload: int) -> None:
    """Serve the web app and API with scoring workers beside it."""
    from bleucli.commands.server import run

    run(url, host, port, workers, max_upload)


@server_group.command(name="worker", context_settings=HELP)
@DB_OPTION
@click.option("--once", is_flag=True, help="Stop when the queue is empty.")
@click.option("--parent-fd", type=int, default=None, hidden=True)  # server run's pipe
@click.option(
    "--device",
    metavar="cpu|cuda[:N]",
    default=None,
    help="Where this worker runs neural metrics (default: the test set's setting, cpu); "
    "results say it (dev:cuda).",
)
def worker_command(url: str, once: bool, parent_fd: int | None, device: str | None) -> None:
    """A worker alone (on this machine or another that reaches the database): scores
    submissions, runs gates and reports, re-ranks leaderboards."""
    from bleucli.commands.server import worker

    click.echo(worker(url, once, parent_fd, device), err=True)


@click.command(name="submit", context_settings=HELP)
@click.option("--server", required=True, metavar="URL")
@click.option("--token-file", required=True, metavar="FILE")
@click.option("-t", "--test-set", "testset", required=True, metavar="NAME")
@click.option("-i", "--input", "hypothesis", required=True, metavar="HYP")
@click.option("--name", default=None, help="The run's name (default: the file name).")
@click.option("--wait", is_flag=True, help="Wait for the score and print the result JSON.")
@click.option(
    "-o",
    "--receipt",
    default=None,
    metavar="RECEIPT.json",
    help="Write the signed receipt (waits).",
)
@click.option(
    "--series", default=None, metavar="NAME", help="Add the run to a series (its history)."
)
@click.option(
    "--label", "labels", multiple=True, metavar="KEY=VALUE", help="Label the run (repeat)."
)
@click.option(
    "--gate", "gated", is_flag=True, help="Wait, then gate the run against its series' baseline."
)
@click.option(
    "--against",
    default=None,
    metavar="last|best|ID",
    help="The gate's baseline (default: the last promoted run, else the first).",
)
@click.option("--tolerance", type=float, default=0.0, show_default=True)
@click.option("--tolerance-for", multiple=True, metavar="METRIC=POINTS")
@click.option("--min-score", multiple=True, metavar="METRIC=SCORE")
@click.option("--alpha", type=float, default=0.05, show_default=True)
@click.option("--paired-bs-n", type=int, default=1000, show_default=True)
@click.option("--promote", is_flag=True, help="A passing run becomes the series' baseline.")
@click.option("--junit", default=None, metavar="FILE")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default=None,
    help="The result (--wait) as JSON (default) or text lines; the gate's verdict as text "
    "(default) or JSON.",
)
def submit_command(server: str, token_file: str, testset: str, hypothesis: str, name: str | None,
                   wait: bool, receipt: str | None, series: str | None, labels: tuple[str, ...],
                   gated: bool, against: str | None, tolerance: float, tolerance_for: tuple[str, ...],
                   min_score: tuple[str, ...], alpha: float, paired_bs_n: int, promote: bool,
                   junit: str | None, fmt: str) -> None:  # fmt: skip
    """Submit an output to a bleucli server; with --series and --gate, a CI regression gate
    on the server's history (exit 3 when a check fails, as `bleucli gate`).

    \b
      bleucli submit --server URL --token-file T -t news -i hyp.de --wait -o receipt.json
      bleucli submit --server URL --token-file T -t news -i hyp.de --series main \\
          --label commit=3fc9bf1 --gate --tolerance 0.5 --min-score BLEU=25 --promote
    """
    from bleucli.commands.submit import gate, submit

    if gated and not series:
        raise click.UsageError("--gate compares runs of a series: give --series NAME")
    text, state = submit(
        server, token_file, testset, hypothesis, name, wait or gated, receipt, series, labels,
        fmt=fmt or "json",
    )  # fmt: skip
    if not gated:
        click.echo(text)
        return
    options = {
        "against": against, "tolerance": tolerance, "tolerance_for": list(tolerance_for),
        "min_score": list(min_score), "alpha": alpha, "paired_bs_n": paired_bs_n, "promote": promote,
    }  # fmt: skip
    verdict, code, annotations = gate(
        server, token_file, state["id"], options, fmt or "text", junit
    )
    click.echo(verdict)
    if annotations:  # GitHub's runner reads workflow commands from stderr too
        click.echo(annotations, err=True)
    if code:
        sys.exit(code)


@click.command(name="verify", context_settings=HELP)
@click.argument("receipt")
@click.argument("refs", nargs=-1)
@click.option("--key", default=None, metavar="FILE", help="The server's public key (PEM).")
@click.option("--server", default=None, metavar="URL", help="Fetch the key from the server.")
@click.option("-i", "--input", "hypothesis", default=None, metavar="HYP")
@click.option("-t", "--test-set", default=None)
@click.option("-l", "--language-pair", default=None)
@click.option(
    "--reference-key",
    default=None,
    metavar="HEX",
    help="A revealed blind set's key (else fetched with --server).",
)
@click.option(
    "--partial", is_flag=True, help="Exit 0 when no check fails, even if some were left unchecked."
)
@click.option(
    "--source",
    default=None,
    metavar="FILE",
    help="The source sentences (neural metrics read them).",
)
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="DIR",
    help="A neural model's folder, used for the signature whose hash its weights have "
    "(else the registered model of the signature's name). Repeatable.",
)
def verify_command(receipt: str, refs: tuple[str, ...], key: str | None, server: str | None,
                   hypothesis: str | None, test_set: str | None, language_pair: str | None,
                   reference_key: str | None, partial: bool, source: str | None,
                   models: tuple[str, ...]) -> None:  # fmt: skip
    """Check a receipt: its signature, the hypothesis' hash, the references' hashes and
    every score, recomputed. Exit 0 when every check passed and none was left unchecked,
    1 otherwise (--partial: 0 unless a check failed); the last line says which."""
    from bleucli.commands.verify import verify

    text, ok = verify(
        receipt, key, server, hypothesis, refs, test_set, language_pair, reference_key, partial,
        source, models,
    )  # fmt: skip
    click.echo(text)
    if not ok:
        sys.exit(1)
