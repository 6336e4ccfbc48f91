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

import numpy as np

#: Below this many sentences the per-sentence loop is faster than array set-up.
MIN_BATCH = 64


class _Side:
    """One stream of tokenised sentences (the hypotheses or one reference stream)."""

    def __init__(self, sentences: Sequence[list[int] | None], n: int) -> None:
        present = np.array([s is not None for s in sentences], dtype=bool)
        self.lengths = np.array([len(s) if s is not None else 0 for s in sentences],
                                dtype=np.int64)
        self.present = present
        flat = [t for s in sentences if s is not None for t in s]
        self.ids = np.array(flat, dtype=np.int64)
        self.sentence = np.repeat(np.arange(n, dtype=np.int64), self.lengths)
        starts = np.cumsum(self.lengths) - self.lengths
        self.position = np.arange(len(flat), dtype=np.int64) - np.repeat(starts, self.lengths)
        self.gram = self.ids.copy()  # ids of the n-gram starting at each token, current order

    def valid(self, order: int):
        """Token positions where an n-gram of ``order`` starts."""
        return self.position + (order - 1) < self.lengths[self.sentence]


def _counts(side: _Side, order: int, n_grams: int):
    """Sorted unique (sentence, n-gram) keys of ``side`` and their counts."""
    mask = side.valid(order)
    keys = side.sentence[mask] * n_grams + side.gram[mask]
    return np.unique(keys, return_counts=True)


def batch_bleu_stats(hyps: Sequence[list[str]], refs: Sequence[Sequence[list[str] | None]],
                     max_order: int) -> np.ndarray:
    """Rows ``[hyp_len, closest_ref_len, matches_1..N, totals_1..N]`` for every sentence.

    ``refs[k][i]`` is the tokenised k-th reference of sentence i, or ``None`` if absent.
    """
    n = len(hyps)
    vocabulary: dict[str, int] = {}
    lookup = vocabulary.setdefault

    def to_ids(sentence: list[str] | None) -> list[int] | None:
        return None if sentence is None else [lookup(t, len(vocabulary)) for t in sentence]

    hyp = _Side([to_ids(s) for s in hyps], n)
    ref_sides = [_Side([to_ids(s) for s in stream], n) for stream in refs]
    sides = [hyp, *ref_sides]
    vocab_size = max(len(vocabulary), 1)

    rows = np.zeros((n, 2 + 2 * max_order), dtype=np.int64)
    rows[:, 0] = hyp.lengths
    rows[:, 1] = _closest_ref_lengths(hyp.lengths, ref_sides)
    n_grams = vocab_size
    for order in range(1, max_order + 1):
        if order > 1:
            # (id of the (m-1)-gram at i, id of word i+m-1) -> dense id of the m-gram at i
            masks = [side.valid(order) for side in sides]
            keys = [side.gram[mask] * vocab_size + side.ids[np.flatnonzero(mask) + order - 1]
                    for side, mask in zip(sides, masks)]
            if sum(len(k) for k in keys) == 0:
                break
            uniques, inverse = np.unique(np.concatenate(keys), return_inverse=True)
            n_grams = max(len(uniques), 1)
            offset = 0
            for side, mask, k in zip(sides, masks, keys):
                side.gram = np.full(len(side.ids), -1, dtype=np.int64)
                side.gram[mask] = inverse[offset:offset + len(k)]
                offset += len(k)
        hyp_keys, hyp_counts = _counts(hyp, order, n_grams)
        ref_keys, ref_counts = _max_counts([_counts(side, order, n_grams)
                                            for side in ref_sides])
        where = np.searchsorted(ref_keys, hyp_keys)
        where_clipped = np.minimum(where, max(len(ref_keys) - 1, 0))
        found = (where < len(ref_keys)) & (ref_keys[where_clipped] == hyp_keys) \
            if len(ref_keys) else np.zeros(len(hyp_keys), dtype=bool)
        clipped = np.where(found, np.minimum(hyp_counts, ref_counts[where_clipped]
                                             if len(ref_keys) else 0), 0)
        rows[:, 1 + order] = np.bincount(hyp_keys // n_grams, weights=clipped,
                                         minlength=n).astype(np.int64)
        rows[:, 1 + max_order + order] = np.maximum(hyp.lengths - order + 1, 0)
    return rows


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
