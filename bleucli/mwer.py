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
from itertools import chain
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


def _words_char(text: str) -> list[str]:
    """Every character but whitespace (Chinese, Japanese and other scripts without spaces)."""
    return [c for c in text if not c.isspace()]


def _words_13a(text: str) -> list[str]:
    """13a's punctuation rules (rule 3 of mteval-v13a) inside the text's own words: they only
    insert spaces, so the tokens, in order, are consecutive pieces of the original words."""
    from bleucli.tokenizers.mteval import split_western_punctuation

    return split_western_punctuation(f" {text} ").split()


#: Alignment tokenisers (``--resegment-tokenize``): text -> its tokens, which are, in order,
#: consecutive non-space pieces of the text (so each keeps its place: :func:`spans`).
TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "none": str.split,
    "13a": _words_13a,
    "char": _words_char,
}


_NON_SPACE = re.compile(r"\S+")


def spans(text: str, tokens: Sequence[str], tokenize: str = "") -> list[Span]:
    """Where each token of ``text`` (by ``tokenize``, or any of them) starts and ends."""
    if tokenize == "none":
        return [m.span() for m in _NON_SPACE.finditer(text)]
    if tokenize == "char":
        return [(i, i + 1) for i, c in enumerate(text) if not c.isspace()]
    out: list[Span] = []
    position = 0
    for token in tokens:
        while text[position].isspace():
            position += 1
        out.append((position, position + len(token)))
        position += len(token)
    return out


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
    folders = list(spec.submodule_search_locations)
    for folder in folders:
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
    _check_version(folders[0])
    _engine_class = module.MwerSegmenter
    return _engine_class


def _check_version(folder: str) -> None:
    """Warn when the engine is not the version the results are identical to (read from the
    installed distribution's folder name: importlib.metadata costs a tenth of a second)."""
    from bleucli.log import logger

    parent = os.path.dirname(folder.rstrip(os.sep))
    found = [
        name[len("mweralign-") : -len(".dist-info")]
        for name in os.listdir(parent)
        if name.startswith("mweralign-") and name.endswith(".dist-info")
    ]
    if found and MWERALIGN_VERSION not in found:
        logger.warning(
            f"mweralign {found[0]} is installed; bleucli's resegmentation is tested against "
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


def _engine_texts(lines: Sequence[Sequence[str]]) -> list[str]:
    """Token lines as neutral engine words: tokens equal up to ASCII case (as mwerSegmenter
    compares them) get the same name, and no name is special to the engine."""
    # bytes.lower() folds A-Z only, like the engine; tokens hold no whitespace
    keys = [
        " ".join(tokens).encode("utf-8", "surrogatepass").lower().split(b" ") if tokens else []
        for tokens in lines
    ]
    vocabulary = dict.fromkeys(chain.from_iterable(keys))
    names = {key: f"w{k:x}" for k, key in enumerate(vocabulary)}
    return [" ".join(map(names.__getitem__, line)) for line in keys]


def align_counts(hyp_tokens: Sequence[str], refs: Sequence[Sequence[str]]) -> list[int]:
    """How many of the hypothesis tokens go to each reference line (its tokens), by
    minimum-WER alignment."""
    # The engine reads its references line by line, so trailing empty lines do not exist
    # for it: align to the lines up to the last one with words, and give the rest empty
    # segments.
    kept = max((k + 1 for k, tokens in enumerate(refs) if tokens), default=0)
    if kept == 0:  # no reference words (mweralign 1.4.1 crashes on an empty reference)
        return [len(hyp_tokens)] + [0] * (len(refs) - 1)
    *ref_lines, hyp_text = _engine_texts([*refs[:kept], hyp_tokens])
    ref_text = "\n".join(ref_lines)
    segmenter_class = _load_engine()
    with _engine_lock:
        segmenter = segmenter_class()
        segmenter.set_tokenized(False)
        result = segmenter.mwerAlign(ref_text, hyp_text)
    counts = [len(line.split()) for line in result.split("\n")][:kept]
    if len(counts) != kept or sum(counts) != len(hyp_tokens):
        raise RuntimeError(  # never expected: the engine returned another segmentation
            f"the resegmentation engine returned {len(counts)} segments of {sum(counts)} "
            f"tokens for {kept} reference lines and {len(hyp_tokens)} tokens"
        )
    return counts + [0] * (len(refs) - kept)


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
    jobs: int = 1,
) -> list[str]:
    """One hypothesis segment per reference line; every document is checked before any is
    aligned. ``jobs``: worker processes for many documents (0: one per CPU)."""
    if jobs == 0:
        jobs = os.cpu_count() or 1
    check_tokenize(tokenize)
    tokens_of = TOKENIZERS[tokenize]
    prepared = []
    for document in documents:
        hyp_tokens = tokens_of(document.hypothesis)
        if not hyp_tokens:
            raise InputError(
                f"{document.where}: no words to resegment; every document needs its "
                f"translation (an empty output cannot be aligned)"
            )
        ref_tokens = [tokens_of(references[i]) for i in document.lines]
        check_size(document, len(hyp_tokens), sum(map(len, ref_tokens)), limits)
        prepared.append((document, hyp_tokens, ref_tokens))
    segments = [""] * len(references)
    work = [(hyp_tokens, ref_tokens) for _, hyp_tokens, ref_tokens in prepared]
    for (document, hyp_tokens, _), counts in zip(prepared, _align_all(work, jobs)):
        places = spans(document.hypothesis, hyp_tokens, tokenize)
        position = 0
        for index, count in zip(document.lines, counts):
            if count:
                start, end = places[position][0], places[position + count - 1][1]
                piece = document.hypothesis[start:end]
                segments[index] = _LINE_BREAK.sub(" ", piece) if "\n" in piece else piece
            position += count
    return segments


#: Below this many alignment steps in all (about 50 ns each), worker processes cost more
#: than they save.
_PARALLEL_CELLS = 2_000_000


def _align_all(work: list[tuple[list[str], list[list[str]]]], jobs: int) -> list[list[int]]:
    """:func:`align_counts` of every document, on ``jobs`` forked worker processes when the
    work is worth it (the engine holds the GIL, so threads would not help), the documents
    shared out so that the workers finish together. Same results for any ``jobs``."""
    _load_engine()  # a missing extra is the caller's error, not a worker's
    cells = [len(hyp) * sum(map(len, refs)) for hyp, refs in work]
    jobs = min(jobs, len(work), os.cpu_count() or 1)
    with _QuietStderr():
        if jobs <= 1 or sum(cells) < _PARALLEL_CELLS or not hasattr(os, "fork"):
            return [align_counts(hyp, refs) for hyp, refs in work]
        import multiprocessing

        # largest first, each to the least loaded worker: one task per worker
        bins: list[list[int]] = [[] for _ in range(jobs)]
        loads = [0] * jobs
        for k in sorted(range(len(work)), key=cells.__getitem__, reverse=True):
            lightest = loads.index(min(loads))
            bins[lightest].append(k)
            loads[lightest] += cells[k] + 10_000  # and a little per call
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.map(_align_many, [[work[k] for k in b] for b in bins])
    out: list[list[int]] = [[] for _ in work]
    for indices, counts_list in zip(bins, results):
        for k, counts in zip(indices, counts_list):
            out[k] = counts
    return out


def _align_many(work: list[tuple[list[str], list[list[str]]]]) -> list[list[int]]:
    return [align_counts(hyp, refs) for hyp, refs in work]


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
    jobs: int = 1,
) -> list[str]:
    """Split ``hypothesis`` into one segment per reference line (minimum-WER alignment).

    ``hypothesis`` is the whole output (a string, or its lines); with ``docids`` (one per
    reference line) it has one line per document in the order the documents first appear,
    or one line per reference line. ``tokenize`` is the alignment tokenisation (``none``,
    ``13a``, ``char``; default: ``char`` for ``language`` zh/ja and other scripts without
    spaces, else ``13a``). ``jobs`` > 1 aligns documents in that many forked processes
    (0: one per CPU). Identical to mweralign 1.4.1 on the same tokens.
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
    return resegment_documents(documents, refs, tokenize, (max_memory, max_cells), jobs)


def _strings(values: Any, argument: str) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InputError(f"{argument}: expected a list of strings, got {type(values).__name__}")
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise InputError(f"{argument}[{index}]: expected a string, got {type(value).__name__}")
    return list(values)
