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
- each candidate shift is scored only from the first matrix row where it differs from the
  current hypothesis (the rows before it are shared), by cost alone, and large rounds are
  scored as one numpy batch, row by row;
- the back-trace is built once per shift round, for the current hypothesis only.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
#: Batch the candidates with numpy when the plain loops would update more than this many
#: matrix cells per batched row (numpy's per-call overhead against Python's per-cell cost).
NUMPY_CELLS_PER_ROW = 400
INF = 10**16

# Edit operations, as they appear in a back-trace (hypothesis -> reference).
NOP, SUB, INS, DEL, UNDEF = 0, 1, 2, 3, 4


class BeamEditDistance:
    """Beam-restricted word edit distance to one reference, for hypotheses of one length.

    Candidate shifts are scored from the current hypothesis' matrix rows up to the point
    where they differ. Small rounds run as plain loops; large ones with numpy for all
    candidates at once: per row, substitutions and deletions are element-wise, and the chain
    of insertions along the row, ``c[j] = min(a[j], c[j-1] + 1)``, is
    ``j + cummin(a[k] - k)``. Integer arithmetic, so the values are exactly the sequential
    ones.
    """

    def __init__(self, ref: Sequence[int], hyp_len: int) -> None:
        n_ref = len(ref)
        self.n_ref = n_ref
        self.ref_list = list(ref)
        self._mismatch: dict[int, list[int]] = {}
        self._np = None
        ratio = n_ref / hyp_len if hyp_len else 1
        beam = math.ceil(ratio / 2 + BEAM_WIDTH) if ratio / 2 > BEAM_WIDTH else BEAM_WIDTH
        self.bounds = [(0, 0)]
        for i in range(1, hyp_len + 1):
            diagonal = math.floor(i * ratio)
            low, high = max(0, diagonal - beam), min(n_ref + 1, diagonal + beam)
            self.bounds.append((low, n_ref + 1 if i == hyp_len else high))
        self.first_row_list = list(range(n_ref + 1))

    @property
    def np(self):
        """numpy, imported and the reference converted only when a batch needs it."""
        if self._np is None:
            import numpy as np

            self._np = np
            self.ref = np.asarray(self.ref_list, dtype=np.int64)
        return self._np

    def _next_row(self, prev, words, i: int):
        """Row ``i`` for a batch: ``prev`` is (batch, n_ref+1), ``words`` the batch's word i-1."""
        np = self.np
        low, high = self.bounds[i]
        row = np.full_like(prev, INF)
        if low == 0:
            row[:, 0] = prev[:, 0] + 1
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
            row[:, low:high] = np.minimum(best, chained)
        return row

    def numpy_costs(self, candidates: list[list[int]], start: int,
                    prev_row: list[int]) -> list[int]:
        """Distances of ``candidates``, all equal to the hypothesis whose matrix row after
        ``start`` words is ``prev_row`` for their first ``start`` words, as one batch."""
        np = self.np
        candidates = np.array(candidates, dtype=np.int64)
        prev = np.repeat(np.array(prev_row, dtype=np.int64)[None, :], len(candidates), axis=0)
        for i in range(start + 1, candidates.shape[1] + 1):
            prev = self._next_row(prev, candidates[:, i - 1], i)
        return [int(v) for v in np.minimum(prev[:, -1], INF)]

    def _extend(self, words: Sequence[int], start: int, prev: list[int],
                keep: list[list[int]] | None = None) -> list[int]:
        """Cost rows ``start+1 .. len(words)`` after row ``prev``; the last row is returned
        and every row appended to ``keep`` if given. Out-of-beam cells are INF."""
        bounds = self.bounds
        width = self.n_ref + 1
        for i in range(start + 1, len(words) + 1):
            low, high = bounds[i]
            mismatch = self._mismatch_row(words[i - 1])
            if low == 0:
                left = prev[0] + 1
                computed = [left]
                low = 1
            else:
                left = INF
                computed = []
            append = computed.append
            for diagonal, up, cost in zip(prev[low - 1:high - 1], prev[low:high],
                                          mismatch[low:high]):
                best = diagonal + cost
                if up + 1 < best:
                    best = up + 1
                if left + 1 < best:
                    best = left + 1
                append(best)  # cells fed only by out-of-beam cells exceed INF: never used
                left = best
            prev = [INF] * bounds[i][0] + computed + [INF] * (width - high)
            if keep is not None:
                keep.append(prev)
        return prev

    def python_costs(self, candidates: list[list[int]], starts: list[int],
                     rows: list[list[int]]) -> list[int]:
        """Distances of ``candidates`` one by one; candidate k equals the hypothesis behind
        ``rows`` for its first ``starts[k]`` words, so its matrix starts from that row."""
        return [min(self._extend(words, start, rows[start])[-1], INF)
                for words, start in zip(candidates, starts)]

    def _mismatch_row(self, word: int) -> list[int]:
        """1 where the reference word differs from ``word``, 0 where it matches, indexed
        from 1 like matrix columns."""
        row = self._mismatch.get(word)
        if row is None:
            row = [1] + [0 if r == word else 1 for r in self.ref_list]
            self._mismatch[word] = row
        return row

    def cost_and_trace(self, hyp: Sequence[int], known: list[list[int]] | None = None,
                       same_prefix: int = 0) -> tuple[int, list[int], list[list[int]]]:
        """Distance, the edit operations of one optimal path (first to last) and all rows.

        ``known`` are the rows of a hypothesis that agrees with ``hyp`` on its first
        ``same_prefix`` words (the previous round's, before the chosen shift): those rows are
        reused. Only costs are stored; the operation of each cell on the path is decided
        again when tracing back, with tercom's preference: match/substitution, deletion,
        insertion.
        """
        if known is None:
            rows, same_prefix = [self.first_row_list], 0
        else:
            rows = known[:same_prefix + 1]
        self._extend(hyp, same_prefix, rows[-1], rows)
        ref = self.ref_list
        trace = []
        i, j = len(hyp), self.n_ref
        while i > 0 or j > 0:
            if i == 0:
                op = INS
            else:
                low, high = self.bounds[i]
                if not low <= j < high:
                    raise RuntimeError("TER back-trace left the beam")
                if j == 0:
                    op = DEL
                else:
                    best, op = INF, UNDEF
                    match = hyp[i - 1] == ref[j - 1]
                    substitution = rows[i - 1][j - 1] + (0 if match else 1)
                    if substitution < best:
                        best, op = substitution, (NOP if match else SUB)
                    if rows[i - 1][j] + 1 < best:
                        best, op = rows[i - 1][j] + 1, DEL
                    if rows[i][j - 1] + 1 < best:
                        op = INS
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
        return min(rows[-1][-1], INF), trace, rows


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
                ref_positions: dict[int, list[int]], checked: int,
                reuse: tuple[list[list[int]], int] | None = None):
    """The best-scoring shift of ``hyp``: (gain, shifted words, candidates checked so far,
    distance of ``hyp`` itself, and what the next round can reuse of ``hyp``'s rows).

    Which candidates are tried does not depend on their scores, so they are collected
    first (in tercom's order, up to the candidate limit) and scored in one batch.
    """
    pre_score, trace, rows = distance.cost_and_trace(hyp, *(reuse or (None, 0)))
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
        return 0, hyp, checked, pre_score, None
    starts = [min(start_h, target) for _, start_h, target, _ in candidates]
    words_list = [words for *_, words in candidates]
    first_change = min(starts)
    n_rows = len(hyp) - first_change
    band = min(distance.n_ref + 1, 2 * BEAM_WIDTH)
    python_cells = sum(len(hyp) - s for s in starts) * band
    if python_cells > NUMPY_CELLS_PER_ROW * n_rows:
        costs = distance.numpy_costs(words_list, first_change, rows[first_change])
    else:
        costs = distance.python_costs(words_list, starts, rows)
    best_key: tuple[int, int, int, int] | None = None
    best_words, best_start = hyp, 0
    for (length, start_h, target, words), cost, start in zip(candidates, costs, starts):
        key = (pre_score - cost, length, -start_h, -target)
        if best_key is None or key > best_key:  # equal keys mean the same shift
            best_key, best_words, best_start = key, words, start
    assert best_key is not None
    return best_key[0], best_words, checked, pre_score, (rows, best_start)


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
    reuse = None
    while True:
        gain, shifted, checked, distance_now, reuse = _best_shift(
            hyp, ref, distance, ref_positions, checked, reuse)
        if checked >= MAX_SHIFT_CANDIDATES or gain <= 0:
            break  # the last round scored the final hypothesis: its distance is known
        shifts += 1
        hyp = shifted
    return shifts + distance_now, n_ref
