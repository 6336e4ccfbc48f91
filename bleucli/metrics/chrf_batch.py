"""chrF statistics for many sentences at once, with numpy (same numbers as the loop).

Characters are code points (one ``utf-32`` encoding of the whole corpus), words get integer
ids; n-grams of each order get dense ids as for BLEU (see :mod:`bleu_batch`). For every
reference stream the per-sentence ``[hyp, ref, match]`` triples are computed at once; with
several references the best one per sentence is chosen by the same F-score, evaluated with
the same floating-point operations in the same order, so ties and choices are identical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from bleucli.metrics.bleu_batch import _counts, _Side, clipped_per_sentence, next_order_ids


def _char_side(texts: Sequence[str | None]) -> _Side:
    present = np.array([t is not None for t in texts], dtype=bool)
    strings = [t or "" for t in texts]
    lengths = np.array([len(t) for t in strings], dtype=np.int64)
    ids = np.frombuffer("".join(strings).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    return _Side(ids, lengths, present)


def _dense_characters(sides: list[_Side]) -> int:
    """Renumber code points 0..k-1 in place (k distinct characters; returned, at least 1),
    so that n-gram ids built as numbers in base k stay small."""
    max_code = max((int(side.ids.max()) for side in sides if len(side.ids)), default=0)
    seen = np.zeros(max_code + 1, dtype=bool)
    for side in sides:
        seen[side.ids] = True
    dense = np.cumsum(seen) - 1
    for side in sides:
        side.ids = dense[side.ids]
        side.gram = side.ids.copy()
    return max(int(seen.sum()), 1)


def _order_stats(sides: list[_Side], n_hyp: int, max_order: int, vocab_size: int, n: int):
    """Per order, per hypothesis stream (the first ``n_hyp`` sides), per reference stream:
    (hyp totals, ref totals, matches) per sentence. Reference n-grams are counted once."""
    hyps, refs = sides[:n_hyp], sides[n_hyp:]
    out = []
    n_grams = vocab_size
    for order in range(1, max_order + 1):
        if order > 1:
            n_grams = next_order_ids(sides, order, vocab_size)
        ref_counted = [
            (_counts(ref, order, n_grams), np.maximum(ref.lengths - order + 1, 0)) for ref in refs
        ]
        per_hyp = []
        for hyp in hyps:
            hyp_keys, hyp_counts = _counts(hyp, order, n_grams)
            hyp_total = np.maximum(hyp.lengths - order + 1, 0)
            per_hyp.append(
                [
                    (
                        np.where(ref_total > 0, hyp_total, 0),
                        ref_total,
                        clipped_per_sentence(
                            hyp_keys, hyp_counts, ref_keys, ref_counts, n_grams, n
                        ),
                    )
                    for (ref_keys, ref_counts), ref_total in ref_counted
                ]
            )
        out.append(per_hyp)
    return out


def batch_chrf_stats(
    hyp_streams: Sequence[Sequence[str]],
    refs: Sequence[Sequence[str | None]],
    char_order: int,
    word_order: int,
    whitespace: bool,
    words: Callable[[str], list[str]],
    f_score: Callable,
) -> list[np.ndarray]:
    """Per hypothesis stream (one per system), rows of ``[hyp, ref, match] * (char_order +
    word_order)`` with the best reference; the references' side is built once for all.

    ``refs[k][i]`` is the k-th (preprocessed) reference of sentence i or ``None``;
    ``f_score`` is the metric's vectorised-safe F-score (works on numpy columns).
    """
    n = len(refs[0]) if refs else 0
    n_hyp = len(hyp_streams)
    strip = (lambda t: t) if whitespace else (lambda t: "".join(t.split()))
    char_sides = [_char_side([strip(h) for h in hyps]) for hyps in hyp_streams] + [
        _char_side([None if r is None else strip(r) for r in stream]) for stream in refs
    ]
    alphabet = _dense_characters(char_sides)
    per_order = _order_stats(char_sides, n_hyp, char_order, alphabet, n) if char_order else []
    if word_order:
        vocabulary: dict[str, int] = {}
        word_sides = [
            _Side.from_tokens([words(h) for h in hyps], vocabulary) for hyps in hyp_streams
        ] + [
            _Side.from_tokens([None if r is None else words(r) for r in stream], vocabulary)
            for stream in refs
        ]
        per_order += _order_stats(word_sides, n_hyp, word_order, max(len(vocabulary), 1), n)
    order = len(per_order)
    present = [np.array([r is not None for r in stream], dtype=bool) for stream in refs]
    results = []
    for h in range(n_hyp):
        best = np.zeros((n, 3 * order), dtype=np.int64)
        best_f = np.full(n, -1.0)
        for k in range(len(refs)):
            stats = np.zeros((n, 3 * order), dtype=np.int64)
            for i in range(order):
                stats[:, 3 * i : 3 * i + 3] = np.stack(per_order[i][h][k], axis=1)
            scores = f_score(stats.T)
            better = present[k] & (scores > best_f)
            best[better] = stats[better]
            best_f = np.where(better, scores, best_f)
        results.append(best)
    return results
