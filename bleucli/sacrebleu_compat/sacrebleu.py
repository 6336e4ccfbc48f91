"""``sacrebleu.sacrebleu``: the command-line entry point, running bleucli's command with
SacreBLEU's flags (``python -m sacrebleu ...`` under the alias)."""

from __future__ import annotations

import logging
import sys

from bleucli.sacrebleu_compat.dataset import DATASETS
from bleucli.sacrebleu_compat.metrics import METRICS
from bleucli.sacrebleu_compat.utils import (  # noqa: E402,F401
    args_to_dict,
    download_test_set,
    filter_subset,
    get_available_testsets,
    get_available_testsets_for_langpair,
    get_langpairs_for_testset,
    get_reference_files,
    get_source_file,
    print_results_table,
    print_single_results,
    print_subset_results,
    print_test_set,
    sanity_check_lengths,
    smart_open,
)
from bleucli.sacrebleu_compat.version import __version__ as VERSION  # noqa: N812

sacrelogger = logging.getLogger("sacrebleu")


def parse_args(argv: list[str] | None = None):
    """The command line as an ``argparse.Namespace`` of bleucli's option names."""
    from argparse import Namespace

    from bleucli.cli.main import command
    from bleucli.cli.options import (
        expand_prefixes,
        expand_variadic,
        variadic_flags,
        with_plugin_options,
    )

    args = list(sys.argv[1:] if argv is None else argv)
    selected = with_plugin_options(command, args)  # a metric plugin's flags, when asked for
    expanded = expand_variadic(expand_prefixes(args, selected), variadic_flags(selected))
    context = selected.make_context("sacrebleu", expanded)
    return Namespace(**context.params)


def main(argv: list[str] | None = None) -> None:
    """Run the command (exits, as SacreBLEU's ``main`` does)."""
    from bleucli.cli.main import main as bleucli_main

    bleucli_main(list(sys.argv[1:] if argv is None else argv))


__all__ = ["main", "parse_args", "DATASETS", "METRICS", "VERSION", "sacrelogger"]
