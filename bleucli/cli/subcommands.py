"""The table of subcommands: where each one's click command is and its line in ``bleucli
--help``. Read by the launcher (which imports a subcommand's module only when it runs) and
by the scoring command's help; a module of its own so neither imports the other."""

from __future__ import annotations

from typing import NamedTuple


class Subcommand(NamedTuple):
    """A subcommand: where its click command is, and its line in ``bleucli --help``."""

    module: str
    attribute: str
    usage: str
    summary: str


#: Every subcommand, in the order ``bleucli --help`` lists them. Adding one is a click
#: command in its module and a line here (the top-level help is generated from this table;
#: ``python scripts/update_help.py`` stores it). ``bleucli stats`` is the scoring command's
#: own mode, listed for the help only.
COMMANDS: dict[str, Subcommand] = {
    "report": Subcommand("bleucli.cli.report", "report_command", "report RESULT.json...",
                         "one table from many results"),
    "gate": Subcommand("bleucli.cli.gate", "gate_command", "gate CURRENT.json --baseline BASE.json",
                       "CI regression gate"),
    "stats": Subcommand("bleucli.cli.main", "", "stats REFS -i HYP ... > shard.json",
                        "mergeable statistics"),
    "merge": Subcommand("bleucli.cli.merge", "merge_command", "merge shard*.json",
                        "their corpus score"),
    "analyze": Subcommand("bleucli.cli.analyze", "analyze_command",
                          "analyze REFS -i A B --html report.html", "where systems differ"),
    "plot": Subcommand("bleucli.cli.analyze", "plot_command", "plot scores REFS -i A B -o scores.pdf",
                       "figures for papers"),
    "mbr": Subcommand("bleucli.cli.mbr", "mbr_command", "mbr -i A B C > chosen.txt",
                      "MBR: pick per line"),
    "resegment": Subcommand("bleucli.cli.resegment", "resegment_command", "resegment REF -i unsegmented.txt",
                            "realign lines"),
    "server": Subcommand("bleucli.cli.server", "server_group",
                         "server init|add-testset|run ... --db task.db", "evaluation server"),
    "submit": Subcommand("bleucli.cli.server", "submit_command",
                         "submit --server URL -t SET -i HYP --wait", "submit; verify receipts"),
    "verify": Subcommand("bleucli.cli.server", "verify_command", "verify RECEIPT.json REFS -i HYP",
                         "recompute a receipt"),
    "meta-eval": Subcommand("bleucli.cli.metaeval", "meta_eval_command",
                            "meta-eval --mtme DIR -l PAIR", "metrics vs human judgements"),
    "autorank": Subcommand("bleucli.cli.autorank", "autorank_command",
                           "autorank --wmt-scores DIR -l PAIR", "WMT's AutoRank"),
    "models": Subcommand("bleucli.cli.models", "models_group", "models list|download|verify|path",
                         "pinned neural models"),
}  # fmt: skip


def subcommands_help() -> str:
    """The subcommand lines of ``bleucli --help``, from :data:`COMMANDS`."""
    width = max(len(entry.usage) for entry in COMMANDS.values())
    lines = [
        f"bleucli {entry.usage.ljust(width)}   ({entry.summary})" for entry in COMMANDS.values()
    ]
    return "Subcommands: " + "\n             ".join(lines) + "\n"
