"""BLEU sufficient statistics for many sentences at once, on integer n-gram ids with numpy.

Same numbers as :meth:`bleucli.metrics.bleu.BLEU.sentence_stats`, computed differently:
tokens become integer ids; an n-gram of order m is identified by the pair (id of its first
m-1 words as an (m-1)-gram, id of its last word), made dense with ``np.unique``; counts per
(sentence, n-gram) come from sorting, the clipping maximum over references from a grouped
maximum, and matches per sentence from a ``searchsorted`` join. Python touches each token
once, to look up its id.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np


class _Side:
    """One stream of tokenised sentences (the hypotheses or one reference stream), as
    flat integer ids with per-token sentence numbers and positions."""

    def __init__(self, ids, lengths, present) -> None:
        self.ids = ids
        self.lengths = lengths
        self.present = present
        n = len(lengths)
        self.sentence = np.repeat(np.arange(n, dtype=np.int64), lengths)
        starts = np.cumsum(lengths) - lengths
        self.position = np.arange(len(ids), dtype=np.int64) - np.repeat(starts, lengths)
        self.gram = self.ids.copy()  # ids of the n-gram starting at each token, current order

    @classmethod
    def from_tokens(
        cls, sentences: Sequence[list[str] | None], vocabulary: dict[str, int]
    ) -> _Side:
        """Token lists (``None``: no sentence) as ids from ``vocabulary``, which grows by
        the tokens it has not seen. The loops over tokens run in C (``dict.fromkeys``,
        ``map``); Python only visits each new word type once."""
        present = np.array([s is not None for s in sentences], dtype=bool)
        lengths = np.fromiter(
            (0 if s is None else len(s) for s in sentences), dtype=np.int64, count=len(sentences)
        )
        flat = list(chain.from_iterable(s for s in sentences if s is not None))
        unseen = [token for token in dict.fromkeys(flat) if token not in vocabulary]
        vocabulary.update(zip(unseen, range(len(vocabulary), len(vocabulary) + len(unseen))))
        ids = np.fromiter(map(vocabulary.__getitem__, flat), dtype=np.int64, count=len(flat))
        return cls(ids, lengths, present)

    @classmethod
    def from_texts(cls, streams: Sequence[Sequence[str | None]]) -> list[_Side]:
        """Sides for streams of whitespace-separated strings, with one vocabulary, and
        without a token list per sentence: one ``split`` of the joined text gives every
        token (a space between sentences cannot join two tokens), per-sentence splits only
        their counts; ids come from one ``dict.fromkeys`` over all tokens (C loops)."""
        flats, present, counts = [], [], []
        for texts in streams:
            present.append(np.array([t is not None for t in texts], dtype=bool))
            strings = [t or "" for t in texts]
            counts.append(len(strings))
            # sentences joined around a separator token: one split for the whole stream
            flats.append(_SEPARATED.join(strings).split())
        vocabulary = dict.fromkeys(chain.from_iterable(flats))
        vocabulary.update(zip(vocabulary, range(len(vocabulary))))
        separator = vocabulary.get(_SEPARATOR, -1)
        sides = []
        for flat, mask, count, texts in zip(flats, present, counts, streams):
            ids = np.fromiter(map(vocabulary.__getitem__, flat), dtype=np.int64, count=len(flat))
            cuts = np.flatnonzero(ids == separator)
            if len(cuts) == max(count - 1, 0):
                lengths = (
                    np.diff(np.concatenate(([-1], cuts, [len(ids)]))) - 1
                    if count
                    else np.zeros(0, dtype=np.int64)
                )
                ids = np.delete(ids, cuts)
            else:  # a sentence holds the separator as a token: count them one by one
                lengths = np.fromiter(
                    (len(t.split()) if t else 0 for t in texts), dtype=np.int64, count=count
                )
                tokens = [token for t in texts if t for token in t.split()]
                ids = np.fromiter(
                    map(vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens)
                )
            sides.append(cls(ids, lengths, mask))
        return sides

    def valid(self, order: int):
        """Token positions where an n-gram of ``order`` starts."""
        return self.position + (order - 1) < self.lengths[self.sentence]


#: The token placed between sentences when a stream is split in one call; a sentence that
#: contains it as a token of its own (a lone NUL) takes the slow, exact path.
_SEPARATOR = "\x00"
_SEPARATED = f" {_SEPARATOR} "

#: Polynomial n-gram ids are used while ``sentences * n_grams`` stays below this.
_KEY_LIMIT = 1 << 62


def next_order_ids(sides: list[_Side], order: int, vocab_size: int) -> int:
    """Give every side the ids of its n-grams of ``order`` (built from those of
    ``order - 1``); returns an upper bound on the ids (at least 1).

    While the key space is small enough for ``sentence * n_grams + id`` to fit in int64,
    an id is simply ``previous id * vocab_size + last word`` (no sorting); beyond that the
    ids are made dense with ``np.unique``.
    """
    masks = [side.valid(order) for side in sides]
    previous = max((int(side.gram.max()) + 1 for side in sides if len(side.gram)), default=1)
    keys = [
        side.gram[mask] * vocab_size + side.ids[np.flatnonzero(mask) + order - 1]
        for side, mask in zip(sides, masks)
    ]
    if sum(len(k) for k in keys) == 0:
        for side in sides:
            side.gram = np.full(len(side.ids), -1, dtype=np.int64)
        return 1
    sentences = max(len(side.lengths) for side in sides)
    if max(previous, 1) * vocab_size * max(sentences, 1) < _KEY_LIMIT:
        for side, mask, k in zip(sides, masks, keys):
            side.gram = np.full(len(side.ids), -1, dtype=np.int64)
            side.gram[mask] = k
        return max(previous, 1) * vocab_size
    uniques, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    offset = 0
    for side, mask, k in zip(sides, masks, keys):
        side.gram = np.full(len(side.ids), -1, dtype=np.int64)
        side.gram[mask] = inverse[offset : offset + len(k)]
        offset += len(k)
    return max(len(uniques), 1)


def clipped_per_sentence(hyp_keys, hyp_counts, ref_keys, ref_counts, n_grams: int, n: int):
    """Per sentence, the sum over shared n-grams of min(hypothesis count, reference count)."""
    if len(ref_keys) == 0 or len(hyp_keys) == 0:
        return np.zeros(n, dtype=np.int64)
    where = np.searchsorted(ref_keys, hyp_keys)
    clipped_where = np.minimum(where, len(ref_keys) - 1)
    found = (where < len(ref_keys)) & (ref_keys[clipped_where] == hyp_keys)
    clipped = np.where(found, np.minimum(hyp_counts, ref_counts[clipped_where]), 0)
    return np.bincount(hyp_keys // n_grams, weights=clipped, minlength=n).astype(np.int64)


def _counts(side: _Side, order: int, n_grams: int):
    """Sorted unique (sentence, n-gram) keys of ``side`` and their counts."""
    mask = side.valid(order)
    keys = side.sentence[mask] * n_grams + side.gram[mask]
    return np.unique(keys, return_counts=True)


def batch_bleu_stats(
    hyp_streams: Sequence[Sequence[str]], refs: Sequence[Sequence[str | None]], max_order: int
) -> list[np.ndarray]:
    """Per hypothesis stream (one per system), rows ``[hyp_len, closest_ref_len,
    matches_1..N, totals_1..N]`` for every sentence; the references' n-grams are counted once
    for all streams.

    Sentences are preprocessed strings (tokens separated by whitespace); ``refs[k][i]`` is
    the k-th reference of sentence i, or ``None`` if absent.
    """
    sides = _Side.from_texts([*hyp_streams, *refs])
    hyp_sides, ref_sides = sides[: len(hyp_streams)], sides[len(hyp_streams) :]
    vocab_size = max((int(side.ids.max()) + 1 for side in sides if len(side.ids)), default=1)
    n = len(hyp_sides[0].lengths) if hyp_sides else 0
    results = []
    for hyp in hyp_sides:
        rows = np.zeros((n, 2 + 2 * max_order), dtype=np.int64)
        rows[:, 0] = hyp.lengths
        rows[:, 1] = _closest_ref_lengths(hyp.lengths, ref_sides)
        results.append(rows)
    n_grams = vocab_size
    for order in range(1, max_order + 1):
        if order > 1:
            n_grams = next_order_ids(sides, order, vocab_size)
        ref_keys, ref_counts = _max_counts([_counts(side, order, n_grams) for side in ref_sides])
        for hyp, rows in zip(hyp_sides, results):
            hyp_keys, hyp_counts = _counts(hyp, order, n_grams)
            rows[:, 1 + order] = clipped_per_sentence(
                hyp_keys, hyp_counts, ref_keys, ref_counts, n_grams, n
            )
            rows[:, 1 + max_order + order] = np.maximum(hyp.lengths - order + 1, 0)
    return results


def _max_counts(per_stream):
    """Merge (keys, counts) of several reference streams, keeping each key's maximum count."""
    if len(per_stream) == 1:
        return per_stream[0]
    keys = np.concatenate([k for k, _ in per_stream])
    counts = np.concatenate([c for _, c in per_stream])
    if len(keys) == 0:
        return keys, counts
    order = np.argsort(keys, kind="stable")
    keys, counts = keys[order], counts[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[starts], np.maximum.reduceat(counts, starts)


def _closest_ref_lengths(hyp_lengths, ref_sides: list[_Side]):
    """Per sentence, the reference length nearest the hypothesis length (ties: shorter);
    -1 when a sentence has no reference, as the per-sentence code gives."""
    if not ref_sides:
        return np.full(len(hyp_lengths), -1, dtype=np.int64)
    lengths = np.stack([side.lengths for side in ref_sides])
    present = np.stack([side.present for side in ref_sides])
    big = np.int64(1) << 40
    score = np.abs(hyp_lengths[None, :] - lengths) * big + lengths
    score = np.where(present, score, np.iinfo(np.int64).max)
    best = np.argmin(score, axis=0)
    closest = lengths[best, np.arange(len(hyp_lengths))]
    return np.where(present.any(axis=0), closest, -1)
