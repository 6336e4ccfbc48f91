"""``--resegment`` and ``bleucli resegment``: realign system outputs whose lines do not
match the references (speech translation, document-level LLM output) before scoring.

Each system is cut into one segment per line of the first reference stream by minimum-WER
alignment (:mod:`bleucli.mwer`), per document when document ids are known; the metrics'
signatures then carry ``reseg:mwer-TOKENIZE`` so that a resegmented score is never taken
for a line-aligned one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bleucli.errors import ConfigError

if TYPE_CHECKING:
    from bleucli.commands.request import Options
    from bleucli.io import TextSource


def alignment_tokenize(options: Options, references: list[str]) -> str:
    """The ``--resegment-tokenize`` choice, or the default for the target language."""
    from bleucli.mwer import check_tokenize, default_tokenize

    if options.resegment_tokenize:
        check_tokenize(options.resegment_tokenize)
        return options.resegment_tokenize
    target = options.language_pair.split("-")[-1] if options.language_pair else None
    return default_tokenize(target, references)


def check_options(options: Options) -> None:
    """Combinations ``--resegment`` cannot honour, refused before any file is read."""
    if not options.resegment:
        for attribute, flag in (
            ("resegment_tokenize", "--resegment-tokenize"),
            ("resegment_output", "--resegment-output"),
        ):
            if getattr(options, attribute):
                raise ConfigError(f"{flag} needs --resegment")
        return
    if options.origlang or options.subset:
        raise ConfigError(
            "--resegment aligns the whole output to the whole test set; it cannot be combined "
            "with --origlang/--subset (run `bleucli resegment` first, then score the "
            "resegmented file with the filter)"
        )
    if options.segment_scores:
        raise ConfigError(
            "--segment-scores are scores of the output's own lines; they cannot be "
            "combined with --resegment, which changes the lines"
        )
    if options.resegment_output and len(options.inputs) > 1:
        raise ConfigError(
            "--resegment-output writes one system's resegmented output; give one -i file "
            "(or run `bleucli resegment` for each system)"
        )


def resegment_systems(
    options: Options, systems: list[TextSource], references: list[TextSource]
) -> tuple[list[TextSource], str]:
    """Every system realigned to the first reference stream, and the signature value."""
    from bleucli.io import TextSource, write_atomic
    from bleucli.log import logger
    from bleucli.mwer import plan_documents, resegment_documents, signature_value

    ref_lines = references[0].lines
    if len(references) > 1:
        logger.info(f"resegmenting against the first reference ({references[0].name})")
    docids = None
    if options.docids is not None:
        from bleucli.commands.documents import document_ids

        docids = document_ids(options, len(ref_lines))
    tokenize = alignment_tokenize(options, ref_lines)
    plans = [plan_documents(s.lines, len(ref_lines), docids, s.name) for s in systems]
    resegmented = []
    for system, documents in zip(systems, plans):
        lines = resegment_documents(documents, ref_lines, tokenize)
        resegmented.append(TextSource(system.name, lines, system.named))
    if options.resegment_output:
        write_atomic(
            options.resegment_output, "".join(f"{line}\n" for line in resegmented[0].lines)
        )
    return resegmented, signature_value(tokenize)


def mark(metrics: dict[str, Any], value: str) -> None:
    """Record the alignment in every metric's signature."""
    for metric in metrics.values():
        if hasattr(metric, "signature_extras"):
            metric.signature_extras = {**metric.signature_extras, "reseg": value}


def run(options: Options) -> str:
    """``bleucli resegment``: the realigned output, one line per reference line (written to
    ``options.resegment_output`` when given, else returned for standard output)."""
    from bleucli.commands.inputs import load_references, load_systems
    from bleucli.log import logger

    if options.test_set is None and len(options.refs) != 1:
        raise ConfigError(
            "give one reference file (or -t/-l): `bleucli resegment ref.txt -i output.txt`"
        )
    from dataclasses import replace

    target = options.resegment_output
    options = replace(options, resegment_output=None)
    references = load_references(options)
    (system,) = load_systems(options)
    (segmented,), alignment = resegment_systems(options, [system], references)
    text = "".join(f"{line}\n" for line in segmented.lines)
    logger.info(
        f"{system.name}: {len(system.lines)} line(s) realigned to "
        f"{len(segmented.lines)} reference lines (reseg:{alignment})"
    )
    if target:
        from bleucli.io import write_atomic

        write_atomic(target, text)
        return ""
    return text
