"""Minimum-WER resegmentation: split unsegmented output into the reference's segments.

Speech translation systems segment audio themselves, and LLMs translating a document merge
or split sentences, so their lines do not match the reference lines. The standard fix
(mwerSegmenter; Matusov et al., 2005) cuts the output's words into as many segments as the
reference has lines, choosing the cut points that minimise the word error rate against the
reference. This module is that alignment, with segments identical to mweralign 1.4.1's on
the same tokens (its dynamic programme and tie-breaking; the compiled core runs it, the
Python engine below is the specification), plus:

- the words are tokenised for alignment only (``none``: whitespace, ``13a``: 13a's
  punctuation rules, ``char``: every character) and each token keeps its place in the text,
  so a segment is the hypothesis text from its first to its last token (line breaks become
  spaces) -- never re-tokenised text;
- tokens are compared case-insensitively as mwerSegmenter does (ASCII letters only), as
  ids, so no word is special (mweralign reads ``###`` as a separator of alternative
  references, and its boundary word ``</s>`` cannot be told from the text's);
- the work is O(hypothesis words x (reference words + lines)) and the memory
  O(hypothesis words x reference lines) per document: a document above either bound is
  refused before anything is allocated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from bleucli.errors import ConfigError, InputError
from bleucli.native import native as _NATIVE

#: The mweralign version whose segments these are identical to (tests/test_resegment.py).
MWERALIGN_VERSION = "1.4.1"

#: Bytes of table per (hypothesis token x reference line): one 32-bit start position.
_BYTES_PER_CELL = 4
#: Default bounds of one document: table memory, and hypothesis tokens x reference rows
#: (1-2 ns each in the compiled core, so the default is seconds of work there).
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


#: mweralign's words: what C++'s ``>>`` reads, split at ASCII whitespace only. A no-break
#: space (``820\xa0000``, French ``«\xa0»``) stays inside its word, as in mweralign; splitting
#: there too (``str.split``) changed the segments of 280 of WMT22's 89,812 system segments.
_MWER_WORD = re.compile(r"[^ \t\n\v\f\r]+")


def _words_none(text: str) -> list[str]:
    """Words between ASCII whitespace, as ``mweralign -m none`` reads them."""
    return _MWER_WORD.findall(text)


#: Alignment tokenisers (``--resegment-tokenize``): text -> its tokens, which are, in order,
#: consecutive non-space pieces of the text (so each keeps its place: :func:`spans`).
TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "none": _words_none,
    "13a": _words_13a,
    "char": _words_char,
}


def spans(text: str, tokens: Sequence[str], tokenize: str = "") -> list[Span]:
    """Where each token of ``text`` (by ``tokenize``, or any of them) starts and ends."""
    if tokenize == "none":
        return [m.span() for m in _MWER_WORD.finditer(text)]
    if tokenize == "char":
        return [(i, i + 1) for i, c in enumerate(text) if not c.isspace()]
    out: list[Span] = []
    position = 0
    for token in tokens:
        while not text.startswith(token, position):  # the separators before it
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

#: The boundary row's id (no word id is negative).
_BOUNDARY = -1


def word_ids(lines: Sequence[Sequence[str]]) -> list[list[int]]:
    """Token lines as ids, equal for tokens equal up to ASCII case (mwerSegmenter compares
    tokens lowercased byte by byte, so other letters keep their case)."""
    keys = [
        " ".join(tokens).encode("utf-8", "surrogatepass").lower().split(b" ") if tokens else []
        for tokens in lines
    ]
    vocabulary = {key: k for k, key in enumerate(dict.fromkeys(chain.from_iterable(keys)))}
    return [list(map(vocabulary.__getitem__, line)) for line in keys]


def segment_python(hyp: Sequence[int], lines: Sequence[Sequence[int]]) -> list[int]:
    """Words of ``hyp`` per line of ``lines`` (at least one word and one line), minimising
    the total edit distance: the specification of the compiled ``mwer_segment``.

    One Levenshtein column per hypothesis word runs down all lines at once, each line
    followed by a boundary row that closes it: the boundary's cost is the best cost of
    ending that line at this word, and the next line starts from it. Every cell carries the
    position where its line's segment started; boundary rows record it per (word, line),
    and the segments are read back from the end. Ties are broken as mwerSegmenter breaks
    them (a substitution only when strictly cheaper than both, then a deletion before an
    insertion), and the column before the first word counts boundary rows as deletions as
    mwerSegmenter's does, so that the segments are identical to mweralign 1.4.1's.
    """
    rows: list[int] = []
    for line in lines:
        rows.extend(line)
        rows.append(_BOUNDARY)
    n_rows, n_lines = len(rows), len(lines)
    cost = list(range(n_rows + 1))  # the previous column
    start = [0] * (n_rows + 1)
    starts: list[list[int]] = []  # per word: where each line's segment started
    for j, word in enumerate(hyp, start=1):
        ends: list[int] = []
        above_cost, above_start = j, 0  # this column, one row up
        cost[0], start[0] = j - 1, 0
        for i, ref in enumerate(rows, start=1):
            if ref == _BOUNDARY:
                ends.append(above_start)
                here_cost, here_start = above_cost, j
            else:
                deletion = above_cost + 1
                insertion = cost[i] + 1
                substitution = cost[i - 1] + (ref != word)
                if substitution < deletion and substitution < insertion:
                    here_cost, here_start = substitution, start[i - 1]
                elif substitution >= deletion and deletion <= insertion:
                    here_cost, here_start = deletion, above_start
                else:
                    here_cost, here_start = insertion, start[i]
            cost[i - 1], start[i - 1] = above_cost, above_start
            above_cost, above_start = here_cost, here_start
        cost[n_rows], start[n_rows] = above_cost, above_start
        starts.append(ends)
    counts = [0] * n_lines
    end = len(hyp)
    for s in range(n_lines - 1, 0, -1):
        begin = starts[end - 1][s]
        counts[s], end = end - begin, begin
        if end == 0:  # the earlier lines get nothing
            return counts
    counts[0] = end
    return counts


def _segment_native(hyp: Sequence[int], lines: Sequence[Sequence[int]]) -> list[int]:
    from array import array

    rows = array("i")
    for line in lines:
        rows.extend(line)
        rows.append(_BOUNDARY)
    assert _NATIVE is not None
    counts: list[int] = _NATIVE.mwer_segment(array("i", hyp).tobytes(), rows.tobytes(), len(lines))
    return counts


def _engine() -> Callable[[Sequence[int], Sequence[Sequence[int]]], list[int]]:
    return _segment_native if _NATIVE is not None else segment_python


def align_counts(hyp_tokens: Sequence[str], refs: Sequence[Sequence[str]]) -> list[int]:
    """How many of the hypothesis tokens go to each reference line (its tokens), by
    minimum-WER alignment."""
    # mweralign reads its references line by line, so trailing empty lines do not exist for
    # it: align to the lines up to the last one with words, and give the rest empty segments
    kept = max((k + 1 for k, tokens in enumerate(refs) if tokens), default=0)
    if kept == 0:  # no reference words: everything to the first line
        return [len(hyp_tokens)] + [0] * (len(refs) - 1)
    *lines, hyp = word_ids([*refs[:kept], hyp_tokens])
    return _engine()(hyp, lines) + [0] * (len(refs) - kept)


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
    work = n_tokens * (ref_tokens + len(document.lines))
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
    for document, hyp_tokens, ref_tokens in prepared:
        counts = align_counts(hyp_tokens, ref_tokens)
        places = spans(document.hypothesis, hyp_tokens, tokenize)
        position = 0
        for index, count in zip(document.lines, counts):
            if count:
                start, end = places[position][0], places[position + count - 1][1]
                piece = document.hypothesis[start:end]
                segments[index] = _LINE_BREAK.sub(" ", piece) if "\n" in piece else piece
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
