"""Translation edit rate with shifts: the search SacreBLEU's TER performs, made faster.

The algorithm (after tercom, as SacreBLEU implements it) is fixed because scores must be
identical: greedily apply the block shift that lowers the word edit distance most (ties:
longer block, earlier block, earlier target), blocks of at most 10 words that move at most
50 positions, at most 1000 evaluated shift candidates per sentence; the edit distance is a
Levenshtein distance restricted to a beam of 25 cells around the length-scaled diagonal, with
tercom's preference order (match/substitution, then deletion, then insertion).

What is different is the work done, never the result:

- words are integer ids, and only hypothesis/reference positions whose first words match
  are visited when looking for shiftable blocks;
- error counts over a block come from prefix sums instead of slicing and summing;
- the candidate shifts of a round are scored together, row by row over a numpy batch, and
  only from the first row where some candidate differs from the current hypothesis (rows
  before it are shared);
- the back-trace is built once per shift round, for the current hypothesis only.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
MAX_CACHE_NODES = 10000
INF = 10**16

# Edit operations, as they appear in a back-trace (hypothesis -> reference).
NOP, SUB, INS, DEL, UNDEF = 0, 1, 2, 3, 4


class BeamEditDistance:
    """Beam-restricted word edit distance to one reference, for hypotheses of one length.

    Rows of the distance matrix are computed with numpy for many hypotheses at once: per
    row, substitutions and deletions are element-wise, and the chain of insertions along
    the row, ``c[j] = min(a[j], c[j-1] + 1)``, is ``j + cummin(a[k] - k)``. Integer
    arithmetic, so the values are exactly the sequential ones.
    """

    def __init__(self, ref: Sequence[int], hyp_len: int) -> None:
        import numpy as np

        self.np = np
        n_ref = len(ref)
        self.n_ref = n_ref
        self.ref = np.asarray(ref, dtype=np.int64)
        ratio = n_ref / hyp_len if hyp_len else 1
        beam = math.ceil(ratio / 2 + BEAM_WIDTH) if ratio / 2 > BEAM_WIDTH else BEAM_WIDTH
        self.bounds = [(0, 0)]
        for i in range(1, hyp_len + 1):
            diagonal = math.floor(i * ratio)
            low, high = max(0, diagonal - beam), min(n_ref + 1, diagonal + beam)
            self.bounds.append((low, n_ref + 1 if i == hyp_len else high))
        self.first_row = np.arange(n_ref + 1, dtype=np.int64)

    def _next_row(self, prev, words, i: int, with_ops: bool = False):
        """Row ``i`` for a batch: ``prev`` is (batch, n_ref+1), ``words`` the batch's word i-1."""
        np = self.np
        low, high = self.bounds[i]
        row = np.full_like(prev, INF)
        ops = np.full(prev.shape, UNDEF, dtype=np.int8) if with_ops else None
        if low == 0:
            row[:, 0] = prev[:, 0] + 1
            if ops is not None:
                ops[:, 0] = DEL
            low = 1
        if low < high:
            js = np.arange(low, high)
            same = words[:, None] == self.ref[None, low - 1:high - 1]
            substitution = prev[:, low - 1:high - 1] + (~same)
            deletion = prev[:, low:high] + 1
            best = np.minimum(np.minimum(substitution, deletion), INF)
            left = row[:, low - 1:low]  # the cell before the band (INF, or column 0)
            chained = js + np.minimum(np.minimum.accumulate(best - js, axis=1),
                                      left - (low - 1))
            values = np.minimum(best, chained)
            row[:, low:high] = values
            if ops is not None:
                op = np.where(same, NOP, SUB)
                op = np.where(substitution >= INF, UNDEF, op)
                op = np.where(deletion < np.minimum(substitution, INF), DEL, op)
                op = np.where(values < best, INS, op)
                ops[:, low:high] = op
        return row, ops

    def costs(self, candidates, start: int, prev_row) -> list[int]:
        """Distances of each row of ``candidates`` (batch, hyp_len), which all agree with
        the hypothesis whose matrix row after ``start`` words is ``prev_row``."""
        np = self.np
        prev = np.repeat(prev_row[None, :], len(candidates), axis=0)
        for i in range(start + 1, candidates.shape[1] + 1):
            prev, _ = self._next_row(prev, candidates[:, i - 1], i)
        return [int(v) for v in np.minimum(prev[:, -1], INF)]

    def cost_and_trace(self, hyp: Sequence[int]):
        """Distance, the edit operations of one optimal path (first to last) and all rows.

        Ties follow tercom's preference: match/substitution, then deletion, then insertion.
        """
        np = self.np
        words = np.asarray(hyp, dtype=np.int64)[:, None]
        rows = [self.first_row]
        ops = [np.full(self.n_ref + 1, INS, dtype=np.int8)]
        prev = self.first_row[None, :]
        for i in range(1, len(hyp) + 1):
            prev, row_ops = self._next_row(prev, words[i - 1], i, with_ops=True)
            rows.append(prev[0])
            ops.append(row_ops[0])
        trace = []
        i, j = len(hyp), self.n_ref
        while i > 0 or j > 0:
            op = int(ops[i][j])
            trace.append(op)
            if op in (NOP, SUB):
                i -= 1
                j -= 1
            elif op == INS:
                j -= 1
            elif op == DEL:
                i -= 1
            else:
                raise RuntimeError("TER back-trace left the beam")
        trace.reverse()
        return int(min(rows[-1][-1], INF)), trace, rows


def _alignment(trace: list[int]) -> tuple[dict[int, int], list[int], list[int]]:
    """Reference position -> hypothesis position, and per-position error flags."""
    pos_hyp = pos_ref = -1
    align: dict[int, int] = {}
    ref_err: list[int] = []
    hyp_err: list[int] = []
    for op in trace:
        if op in (NOP, SUB):
            pos_hyp += 1
            pos_ref += 1
            align[pos_ref] = pos_hyp
            flag = 0 if op == NOP else 1
            hyp_err.append(flag)
            ref_err.append(flag)
        elif op == DEL:  # a hypothesis word without counterpart
            pos_hyp += 1
            hyp_err.append(1)
        else:  # INS: a reference word without counterpart
            pos_ref += 1
            align[pos_ref] = pos_hyp
            ref_err.append(1)
    return align, ref_err, hyp_err


def _prefix_sums(flags: list[int]) -> list[int]:
    sums = [0]
    for flag in flags:
        sums.append(sums[-1] + flag)
    return sums


def _matching_blocks(hyp: Sequence[int], ref: Sequence[int],
                     ref_positions: dict[int, list[int]]) -> Iterator[tuple[int, int, int]]:
    """(hyp start, ref start, length) of equal word blocks, in tercom's enumeration order."""
    n_hyp, n_ref = len(hyp), len(ref)
    for start_h in range(n_hyp):
        for start_r in ref_positions.get(hyp[start_h], ()):
            if abs(start_r - start_h) > MAX_SHIFT_DIST:
                continue
            length = 0
            while length < MAX_SHIFT_SIZE and hyp[start_h + length] == ref[start_r + length]:
                length += 1
                yield start_h, start_r, length
                if start_h + length == n_hyp or start_r + length == n_ref:
                    break


def _shifted(words: list[int], start: int, length: int, target: int) -> list[int]:
    """Move ``words[start:start+length]`` so that it begins before position ``target``."""
    if target < start:
        return words[:target] + words[start:start + length] + words[target:start] + \
            words[start + length:]
    if target > start + length:
        return words[:start] + words[start + length:target] + words[start:start + length] + \
            words[target:]
    return words[:start] + words[start + length:length + target] + \
        words[start:start + length] + words[length + target:]


def _best_shift(hyp: list[int], ref: Sequence[int], distance: BeamEditDistance,
                ref_positions: dict[int, list[int]],
                checked: int) -> tuple[int, list[int], int]:
    """The best-scoring shift of ``hyp`` (gain, shifted words, candidates checked so far).

    Which candidates are tried does not depend on their scores, so they are collected
    first (in tercom's order, up to the candidate limit) and scored in one batch.
    """
    pre_score, trace, rows = distance.cost_and_trace(hyp)
    align, ref_err, hyp_err = _alignment(trace)
    ref_sums, hyp_sums = _prefix_sums(ref_err), _prefix_sums(hyp_err)
    candidates: list[tuple[int, int, int, list[int]]] = []
    for start_h, start_r, length in _matching_blocks(hyp, ref, ref_positions):
        if hyp_sums[start_h + length] == hyp_sums[start_h]:
            continue  # the block is already correct where it is
        if ref_sums[start_r + length] == ref_sums[start_r]:
            continue  # the reference there is already matched
        if start_h <= align[start_r] < start_h + length:
            continue  # would shift within itself
        previous_target = -1
        for offset in range(-1, length):
            if start_r + offset == -1:
                target = 0
            elif start_r + offset in align:
                target = align[start_r + offset] + 1
            else:
                break
            if target == previous_target:
                continue
            previous_target = target
            candidates.append((length, start_h, target,
                               _shifted(hyp, start_h, length, target)))
            checked += 1
        if checked >= MAX_SHIFT_CANDIDATES:
            break
    if not candidates:
        return 0, hyp, checked
    np = distance.np
    first_change = min(min(start_h, target) for _, start_h, target, _ in candidates)
    matrix = np.array([words for *_, words in candidates], dtype=np.int64)
    costs = distance.costs(matrix, first_change, rows[first_change])
    best_key: tuple[int, int, int, int] | None = None
    best_words = hyp
    for (length, start_h, target, words), cost in zip(candidates, costs):
        key = (pre_score - cost, length, -start_h, -target)
        if best_key is None or key > best_key:  # equal keys mean the same shift
            best_key, best_words = key, words
    assert best_key is not None
    return best_key[0], best_words, checked


def translation_edit_rate(hyp_words: Sequence[str], ref_words: Sequence[str]) -> tuple[int, int]:
    """(number of edits including shifts, reference length) of one hypothesis/reference pair."""
    n_ref = len(ref_words)
    if n_ref == 0:
        return len(hyp_words), 0
    vocabulary: dict[str, int] = {}
    ref = [vocabulary.setdefault(w, len(vocabulary)) for w in ref_words]
    hyp = [vocabulary.setdefault(w, len(vocabulary)) for w in hyp_words]
    ref_positions: dict[int, list[int]] = {}
    for position, word in enumerate(ref):
        ref_positions.setdefault(word, []).append(position)
    distance = BeamEditDistance(ref, len(hyp))
    shifts = 0
    checked = 0
    while True:
        gain, shifted, checked = _best_shift(hyp, ref, distance, ref_positions, checked)
        if checked >= MAX_SHIFT_CANDIDATES or gain <= 0:
            break
        shifts += 1
        hyp = shifted
    return shifts + distance.cost_and_trace(hyp)[0], n_ref
