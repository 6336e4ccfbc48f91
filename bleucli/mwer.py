"""Minimum-WER resegmentation: split unsegmented output into the reference's segments.

Speech translation systems segment audio themselves, and LLMs translating a document merge
or split sentences, so their lines do not match the reference lines. The standard fix
(mwerSegmenter; Matusov et al., 2005) cuts the output's words into as many segments as the
reference has lines, choosing the cut points that minimise the word error rate against the
reference. Its dynamic programme is mweralign's (the ``bleucli[reseg]`` extra); bleucli adds
the alignment tokenisation, document handling, bounds and the mapping back to the
hypothesis' own text:

- the words are tokenised for alignment only (``none``: whitespace, ``13a``: 13a's
  punctuation rules, ``char``: every character) and each token keeps its place in the text,
  so a segment is the hypothesis text from its first to its last token (line breaks become
  spaces) -- never re-tokenised text;
- tokens are compared case-insensitively as mwerSegmenter does (ASCII letters only), and
  passed to the engine as neutral ids, so a reference word such as ``###`` (mweralign's
  separator of alternative references) is just a word;
- the work is O(hypothesis words x reference words) and the memory O(hypothesis words x
  reference lines) per document: a document above either bound is refused before anything
  is allocated.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bleucli.errors import ConfigError, InputError, MissingExtraError

#: The engine's version the results are identical to (the extra pins it).
MWERALIGN_VERSION = "1.4.1"

#: Bytes of engine memory per (hypothesis token x reference line), measured on mweralign 1.4.1.
_BYTES_PER_CELL = 12
#: Default bounds of one document: engine memory, and hypothesis x reference tokens (about
#: 40 ns each, so the default is a few minutes of work).
DEFAULT_MAX_MEMORY = 2 * 1024**3
DEFAULT_MAX_CELLS = 4 * 10**9


# ---------------------------------------------------------------- alignment tokenisation

Span = tuple[int, int]


def _spans_none(text: str) -> list[Span]:
    """Whitespace-separated words."""
    return [m.span() for m in _WORD.finditer(text)]


def _spans_char(text: str) -> list[Span]:
    """Every character but whitespace (Chinese, Japanese and other scripts without spaces)."""
    return [(i, i + 1) for i, c in enumerate(text) if not c.isspace()]


def _spans_13a(text: str) -> list[Span]:
    """13a's punctuation rules (rule 3 of mteval-v13a) inside the text's own words: they only
    insert spaces, so the tokens, in order, are consecutive pieces of the original words."""
    from bleucli.tokenizers.mteval import split_western_punctuation

    spans: list[Span] = []
    position = 0
    for token in split_western_punctuation(f" {text} ").split():
        while text[position].isspace():
            position += 1
        spans.append((position, position + len(token)))
        position += len(token)
    return spans


_WORD = re.compile(r"\S+")

#: Alignment tokenisers (``--resegment-tokenize``): text -> token spans.
TOKENIZERS: dict[str, Callable[[str], list[Span]]] = {
    "none": _spans_none,
    "13a": _spans_13a,
    "char": _spans_char,
}

#: Target languages written without spaces between words.
_NO_SPACE_LANGUAGES = {"zh", "ja", "th", "lo", "km", "my", "bo"}
#: Scripts without spaces between words: Han, kana, Thai, Lao, Khmer, Myanmar, Tibetan.
_NO_SPACE_SCRIPT = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1780-\u17ff"
    r"\u1000-\u109f\u0f00-\u0fff]"
)


def default_tokenize(language: str | None, references: Sequence[str]) -> str:
    """``char`` for a target language (or, without one, reference text) written without
    spaces between words; ``13a`` otherwise."""
    if language:
        return "char" if language.split("-")[0].lower() in _NO_SPACE_LANGUAGES else "13a"
    sample = "".join(references[:200])
    letters = sum(1 for c in sample if not c.isspace())
    script = len(_NO_SPACE_SCRIPT.findall(sample))
    return "char" if letters and script / letters > 0.2 else "13a"


def check_tokenize(name: str) -> None:
    if name not in TOKENIZERS:
        raise ConfigError(
            f"unknown resegmentation tokenisation {name!r}; choose one of {', '.join(TOKENIZERS)}"
        )


def signature_value(tokenize: str) -> str:
    """The ``reseg`` signature field: how the hypothesis was aligned to the references."""
    return f"mwer-{tokenize}"


# ---------------------------------------------------------------- engine

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_engine_lock = threading.Lock()
_engine_class: Any = None


def _load_engine() -> Any:
    """mweralign's compiled segmenter, loaded without the package's ``__init__`` (which
    imports SentencePiece and configures the root logger of the caller's program)."""
    global _engine_class
    if _engine_class is not None:
        return _engine_class
    import importlib
    import importlib.util

    try:
        spec = importlib.util.find_spec("mweralign")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError("resegmentation (--resegment)", "reseg", "mweralign")
    module: Any = None
    for folder in spec.submodule_search_locations:
        for name in sorted(os.listdir(folder)):
            if name.startswith("_mweralign.") and name.endswith((".so", ".pyd")):
                path = os.path.join(folder, name)
                ext = importlib.util.spec_from_file_location("mweralign._mweralign", path)
                if ext is not None and ext.loader is not None:
                    module = importlib.util.module_from_spec(ext)
                    ext.loader.exec_module(module)
                    break
        if module is not None:
            break
    if module is None:  # an unusual layout: the package's own import path
        module = importlib.import_module("mweralign._mweralign")
    _check_version()
    _engine_class = module.MwerSegmenter
    return _engine_class


def _check_version() -> None:
    from importlib.metadata import PackageNotFoundError, version

    from bleucli.log import logger

    try:
        found = version("mweralign")
    except PackageNotFoundError:  # pragma: no cover - a source checkout on the path
        return
    if found != MWERALIGN_VERSION:
        logger.warning(
            f"mweralign {found} is installed; bleucli's resegmentation is tested against "
            f"{MWERALIGN_VERSION} (`pip install 'bleucli[reseg]'` installs it)"
        )


class _QuietStderr:
    """Silence the engine's progress lines, which it writes to file descriptor 2."""

    def __enter__(self) -> None:
        import sys

        with contextlib.suppress(AttributeError, ValueError, OSError):
            sys.stderr.flush()
        self.saved = os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)

    def __exit__(self, *exc: object) -> None:
        os.dup2(self.saved, 2)
        os.close(self.saved)


def _token_ids(texts: Sequence[str], spans: Sequence[Sequence[Span]], ids: dict[str, str]) -> str:
    """The texts' tokens as neutral engine words (equal case-folded tokens, equal words),
    one line per text."""
    lines = []
    for text, text_spans in zip(texts, spans):
        words = []
        for start, end in text_spans:
            key = text[start:end].translate(_ASCII_LOWER)
            word = ids.get(key)
            if word is None:
                word = ids[key] = f"w{len(ids):x}"
            words.append(word)
        lines.append(" ".join(words))
    return "\n".join(lines)


def align_counts(hyp: str, hyp_spans: list[Span], refs: Sequence[str], tokenize: str) -> list[int]:
    """Tokens of ``hyp`` that go to each reference line, by minimum-WER alignment."""
    ref_spans = ref_spans_all = [TOKENIZERS[tokenize](line) for line in refs]
    # The engine reads its references line by line, so trailing empty lines do not exist
    # for it: align to the lines up to the last one with words (at least one line), and
    # give the rest empty segments.
    kept = max((k + 1 for k, spans in enumerate(ref_spans) if spans), default=0)
    if kept == 0:  # no reference words (mweralign 1.4.1 crashes on an empty reference)
        return [len(hyp_spans)] + [0] * (len(refs) - 1)
    refs, ref_spans = refs[:kept], ref_spans[:kept]
    ids: dict[str, str] = {}
    ref_text = _token_ids(refs, ref_spans, ids)
    hyp_text = _token_ids([hyp], [hyp_spans], ids)
    segmenter_class = _load_engine()
    with _engine_lock, _QuietStderr():
        segmenter = segmenter_class()
        segmenter.set_tokenized(False)
        result = segmenter.mwerAlign(ref_text, hyp_text)
    counts = [len(line.split()) for line in result.split("\n")][:kept]
    if len(counts) != kept or sum(counts) != len(hyp_spans):
        raise RuntimeError(  # never expected: the engine returned another segmentation
            f"the resegmentation engine returned {len(counts)} segments of {sum(counts)} "
            f"tokens for {kept} reference lines and {len(hyp_spans)} tokens"
        )
    return counts + [0] * (len(ref_spans_all) - kept)


# ---------------------------------------------------------------- documents


@dataclass
class Document:
    """One unit of alignment: the hypothesis text and the reference lines it covers."""

    docid: str
    hypothesis: str
    lines: list[int]  # indices of the reference lines
    where: str  # how error messages name it (file and line)


def plan_documents(
    hypothesis: Sequence[str], n_refs: int, docids: Sequence[str] | None, name: str
) -> list[Document]:
    """Which hypothesis text aligns to which reference lines.

    Without document ids the whole output is one document. With them the hypothesis has
    one line per document, in the order the documents first appear; or exactly one line per
    reference line, and then each document's lines are joined and realigned within it.
    """
    if docids is None:
        return [Document("", "\n".join(hypothesis), list(range(n_refs)), name)]
    if len(docids) != n_refs:
        raise InputError(f"{len(docids)} document ids for {n_refs} reference lines")
    groups: dict[str, list[int]] = {}
    for index, doc in enumerate(docids):
        groups.setdefault(doc, []).append(index)
    if len(hypothesis) == len(groups):
        return [
            Document(doc, text, lines, f"{name}: line {k + 1} (document {doc})")
            for k, ((doc, lines), text) in enumerate(zip(groups.items(), hypothesis))
        ]
    if len(hypothesis) == n_refs:
        return [
            Document(
                doc,
                "\n".join(hypothesis[i] for i in lines),
                lines,
                f"{name}: document {doc} (lines {lines[0] + 1}-{lines[-1] + 1})",
            )
            for doc, lines in groups.items()
        ]
    raise InputError(
        f"{name} has {len(hypothesis)} lines; with document ids it needs one line per "
        f"document ({len(groups)}, in the order the documents first appear) or one line per "
        f"reference line ({n_refs})"
    )


def check_size(document: Document, n_tokens: int, ref_tokens: int, limits: tuple[int, int]) -> None:
    """Refuse a document whose alignment would exceed the memory or work bound."""
    max_memory, max_cells = limits
    memory = n_tokens * len(document.lines) * _BYTES_PER_CELL
    work = n_tokens * ref_tokens
    if memory > max_memory or work > max_cells:
        what = "one document" if not document.docid else f"document {document.docid}"
        raise InputError(
            f"{document.where}: too large to resegment as {what}: {n_tokens:,} hypothesis "
            f"tokens x {len(document.lines):,} reference lines (~{memory / 1024**3:.1f} GiB, "
            f"{work:.2g} alignment steps; limits {max_memory / 1024**3:.1f} GiB and "
            f"{max_cells:.2g}); give document ids (--docids) so that each document is "
            f"aligned on its own"
        )


def resegment_documents(
    documents: list[Document],
    references: Sequence[str],
    tokenize: str,
    limits: tuple[int, int] = (DEFAULT_MAX_MEMORY, DEFAULT_MAX_CELLS),
) -> list[str]:
    """One hypothesis segment per reference line; every document is checked before any is
    aligned."""
    check_tokenize(tokenize)
    spans_of = TOKENIZERS[tokenize]
    prepared = []
    for document in documents:
        spans = spans_of(document.hypothesis)
        if not spans:
            raise InputError(
                f"{document.where}: no words to resegment; every document needs its "
                f"translation (an empty output cannot be aligned)"
            )
        ref_tokens = sum(len(spans_of(references[i])) for i in document.lines)
        check_size(document, len(spans), ref_tokens, limits)
        prepared.append((document, spans))
    segments = [""] * len(references)
    for document, spans in prepared:
        counts = align_counts(
            document.hypothesis, spans, [references[i] for i in document.lines], tokenize
        )
        position = 0
        for index, count in zip(document.lines, counts):
            if count:
                start, end = spans[position][0], spans[position + count - 1][1]
                segments[index] = _LINE_BREAK.sub(" ", document.hypothesis[start:end])
            position += count
    return segments


_LINE_BREAK = re.compile(r"\s*\n\s*")


def resegment(
    hypothesis: str | Sequence[str],
    references: Sequence[str],
    *,
    docids: Sequence[str] | None = None,
    tokenize: str | None = None,
    language: str | None = None,
    max_memory: int = DEFAULT_MAX_MEMORY,
    max_cells: int = DEFAULT_MAX_CELLS,
) -> list[str]:
    """Split ``hypothesis`` into one segment per reference line (minimum-WER alignment).

    ``hypothesis`` is the whole output (a string, or its lines); with ``docids`` (one per
    reference line) it has one line per document in the order the documents first appear,
    or one line per reference line. ``tokenize`` is the alignment tokenisation (``none``,
    ``13a``, ``char``; default: ``char`` for ``language`` zh/ja and other scripts without
    spaces, else ``13a``). Identical to mweralign 1.4.1 on the same tokens.
    """
    if isinstance(hypothesis, str):
        hyp_lines = hypothesis.split("\n") if docids is not None else [hypothesis]
    else:
        hyp_lines = _strings(hypothesis, "hypothesis")
    refs = _strings(references, "references")
    if not refs:
        raise InputError("references: no reference lines to align to")
    ids = None if docids is None else [str(d) for d in _strings(docids, "docids")]
    if tokenize is None:
        tokenize = default_tokenize(language, refs)
    check_tokenize(tokenize)
    documents = plan_documents(hyp_lines, len(refs), ids, "hypothesis")
    return resegment_documents(documents, refs, tokenize, (max_memory, max_cells))


def _strings(values: Any, argument: str) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InputError(f"{argument}: expected a list of strings, got {type(values).__name__}")
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise InputError(f"{argument}[{index}]: expected a string, got {type(value).__name__}")
    return list(values)
