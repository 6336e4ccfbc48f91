"""Translation edit rate with shifts: the search SacreBLEU's TER performs, made faster.

The algorithm (after tercom, as SacreBLEU implements it) is fixed because scores must be
identical: greedily apply the block shift that lowers the word edit distance most (ties:
longer block, earlier block, earlier target), blocks of at most 10 words that move at most
50 positions, at most 1000 evaluated shift candidates per sentence; the edit distance is a
Levenshtein distance restricted to a beam of 25 cells around the length-scaled diagonal, with
tercom's preference order (match/substitution, then deletion, then insertion).

What is different is the work done, never the result:

- costs come from Myers' bit-parallel edit distance (one machine-word operation per
  hypothesis word instead of one Python step per matrix cell) whenever a cheap bound proves
  the beam cannot matter: any path through a cell outside the beam costs at least
  ``|i - j| + |(m - i) - (n - j)|``, so a distance below the smallest such bound is the beam
  distance too, and an optimal path (with the same tie-breaking) never leaves the beam;
  otherwise the exact beam matrix is computed;
- words are integer ids, and only hypothesis/reference positions whose first words match
  are visited when looking for shiftable blocks;
- error counts over a block come from prefix sums instead of slicing and summing;
- each candidate shift is scored only from the first column (bit-parallel) or row (beam
  matrix) where it differs from the current hypothesis, by cost alone; large rounds on the
  beam matrix are scored as one numpy batch, row by row;
- the back-trace is followed once per shift round, for the current hypothesis only, and
  writes the alignment the search needs directly.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import Any

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


@functools.lru_cache(maxsize=4096)
def _beam_geometry(n_ref: int, hyp_len: int) -> tuple[tuple[tuple[int, int], ...], int]:
    """The beam's column range per matrix row, and a lower bound on the cost of any full
    path through a cell outside it.

    A path through out-of-beam cell (i, j) needs at least ``|i - j|`` edits to get there and
    ``|(m - i) - (n - j)|`` to finish. That bound is convex in ``j`` with its minimum at
    ``j = i``, so per row only the out-of-beam cell nearest to ``i`` on each side counts.
    Both depend on the two lengths only, which repeat across a corpus.
    """
    ratio = n_ref / hyp_len if hyp_len else 1
    beam = math.ceil(ratio / 2 + BEAM_WIDTH) if ratio / 2 > BEAM_WIDTH else BEAM_WIDTH
    bounds = [(0, n_ref + 1)]
    cheapest = INF
    for i in range(1, hyp_len + 1):
        diagonal = math.floor(i * ratio)
        low = max(0, diagonal - beam)
        high = n_ref + 1 if i == hyp_len else min(n_ref + 1, diagonal + beam)
        bounds.append((low, high))
        outside = ([min(i, low - 1)] if low > 0 else []) + (
            [min(max(i, high), n_ref)] if high <= n_ref else []
        )
        for j in outside:
            cheapest = min(cheapest, abs(i - j) + abs((hyp_len - i) - (n_ref - j)))
    return tuple(bounds), cheapest


class BeamEditDistance:
    """Beam-restricted word edit distance to one reference, for hypotheses of one length.

    Two engines give the same numbers. The bit-parallel one (Myers 1999, in Hyyrö's
    formulation for global distance) keeps, per hypothesis prefix, the column of vertical
    differences as two integers over the reference positions, so one hypothesis word costs a
    couple of dozen integer operations; it is exact whenever its distance is below
    ``safe_below`` (see the module docstring). The beam matrix is the fallback: small rounds
    as plain loops, large ones with numpy for all candidates at once (per row, substitutions
    and deletions are element-wise, and the chain of insertions along the row,
    ``c[j] = min(a[j], c[j-1] + 1)``, is ``j + cummin(a[k] - k)``).
    """

    def __init__(self, ref: Sequence[int], hyp_len: int) -> None:
        n_ref = len(ref)
        self.n_ref = n_ref
        self.ref_list = list(ref)
        self._mismatch: dict[int, list[int]] = {}
        self._np = None
        self.bounds, self.safe_below = _beam_geometry(n_ref, hyp_len)
        self.first_row_list = list(range(n_ref + 1))
        self.mask = (1 << n_ref) - 1
        self.top = 1 << (n_ref - 1) if n_ref else 0
        self.peq: dict[int, int] = {}
        for position, word in enumerate(self.ref_list):
            self.peq[word] = self.peq.get(word, 0) | (1 << position)
        self.first_state = (self.mask, 0, n_ref, 0, 0)

    def columns(
        self, words: Sequence[int], start: int, state: tuple, keep: list | None = None
    ) -> tuple:
        """Myers' state after all of ``words``, from ``state`` after the first ``start`` of
        them: ``(positive, negative vertical differences, distance, positive, negative
        horizontal differences)`` of the last column, as bit sets over reference positions.
        Every intermediate state is appended to ``keep`` if given. Unrestricted (beam-free)
        Levenshtein distance."""
        peq, mask, top = self.peq.get, self.mask, self.top
        pv, mv, score, ph, mh = state
        for word in words[start:]:
            eq = peq(word, 0)
            xv = eq | mv
            xh = (((eq & pv) + pv) ^ pv) | eq
            ph = mv | (~(xh | pv) & mask)
            mh = pv & xh
            if ph & top:
                score += 1
            elif mh & top:
                score -= 1
            shifted_ph = ((ph << 1) | 1) & mask
            pv = ((mh << 1) & mask) | (~(xv | shifted_ph) & mask)
            mv = shifted_ph & xv
            if keep is not None:
                keep.append((pv, mv, score, ph, mh))
        return pv, mv, score, ph, mh

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
            same = words[:, None] == self.ref[None, low - 1 : high - 1]
            substitution = prev[:, low - 1 : high - 1] + (~same)
            deletion = prev[:, low:high] + 1
            best = np.minimum(np.minimum(substitution, deletion), INF)
            left = row[:, low - 1 : low]  # the cell before the band (INF, or column 0)
            chained = js + np.minimum(np.minimum.accumulate(best - js, axis=1), left - (low - 1))
            row[:, low:high] = np.minimum(best, chained)
        return row

    def numpy_costs(
        self, candidates: list[list[int]], start: int, prev_row: list[int]
    ) -> list[int]:
        """Distances of ``candidates``, all equal to the hypothesis whose matrix row after
        ``start`` words is ``prev_row`` for their first ``start`` words, as one batch."""
        np = self.np
        batch = np.array(candidates, dtype=np.int64)
        prev = np.repeat(np.array(prev_row, dtype=np.int64)[None, :], len(batch), axis=0)
        for i in range(start + 1, batch.shape[1] + 1):
            prev = self._next_row(prev, batch[:, i - 1], i)
        return [int(v) for v in np.minimum(prev[:, -1], INF)]

    def _extend(
        self, words: Sequence[int], start: int, prev: list[int], keep: list[list[int]] | None = None
    ) -> list[int]:
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
            for diagonal, up, cost in zip(
                prev[low - 1 : high - 1], prev[low:high], mismatch[low:high]
            ):
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

    def python_costs(
        self, candidates: list[list[int]], starts: list[int], rows: list[list[int]]
    ) -> list[int]:
        """Distances of ``candidates`` one by one; candidate k equals the hypothesis behind
        ``rows`` for its first ``starts[k]`` words, so its matrix starts from that row."""
        return [
            min(self._extend(words, start, rows[start])[-1], INF)
            for words, start in zip(candidates, starts)
        ]

    def _mismatch_row(self, word: int) -> list[int]:
        """1 where the reference word differs from ``word``, 0 where it matches, indexed
        from 1 like matrix columns."""
        row = self._mismatch.get(word)
        if row is None:
            row = [1] + [0 if r == word else 1 for r in self.ref_list]
            self._mismatch[word] = row
        return row

    def beam_rows(
        self, hyp: Sequence[int], known: list[list[int]] | None = None, same_prefix: int = 0
    ) -> list[list[int]]:
        """Every row of the beam matrix of ``hyp``, reusing the first ``same_prefix + 1``
        rows of ``known`` (a hypothesis with the same first ``same_prefix`` words)."""
        rows = known[: same_prefix + 1] if known else [self.first_row_list]
        self._extend(hyp, len(rows) - 1, rows[-1], rows)
        return rows

    def trace(self, hyp: Sequence[int], value) -> list[int]:
        """The edit operations of one optimal path (first to last), from the cell values
        ``value(i, j)``: at each cell tercom's preference decides, match/substitution, then
        deletion, then insertion."""
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
                    substitution = value(i - 1, j - 1) + (0 if match else 1)
                    if substitution < best:
                        best, op = substitution, (NOP if match else SUB)
                    if value(i - 1, j) + 1 < best:
                        best, op = value(i - 1, j) + 1, DEL
                    if value(i, j - 1) + 1 < best:
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
        return trace


class Evaluated:
    """One hypothesis with its Myers states (always) and its beam rows (only once needed),
    so that the next round can reuse both for the shared prefix."""

    def __init__(
        self,
        distance: BeamEditDistance,
        hyp: list[int],
        previous: Evaluated | None = None,
        same_prefix: int = 0,
    ) -> None:
        self.distance, self.hyp = distance, hyp
        if previous is None:
            same_prefix = 0
        self.states: list[Any] = (
            previous.states[: same_prefix + 1] if previous else [distance.first_state]
        )
        distance.columns(hyp, same_prefix, self.states[-1], self.states)
        self._previous_rows = previous._rows if previous else None
        self._same_prefix = same_prefix
        self._rows: list[list[int]] | None = None
        self.cost = self.states[-1][2]
        self.exact = self.cost < distance.safe_below
        if not self.exact:
            self.cost = min(self.rows[-1][-1], INF)

    @property
    def rows(self) -> list[list[int]]:
        if self._rows is None:
            self._rows = self.distance.beam_rows(self.hyp, self._previous_rows, self._same_prefix)
            self._previous_rows = None
        return self._rows

    def alignment(self) -> tuple[list[int], list[int], list[int]]:
        """What the shift search needs of one optimal path (see :func:`_alignment`), with
        tercom's tie-breaking (see ``BeamEditDistance.trace``). When exact, the path is
        followed backwards on the bit vectors, each neighbour's value read off one
        horizontal or vertical difference, and the alignment written as it goes."""
        if not self.exact:
            rows = self.rows
            return _alignment(self.distance.trace(self.hyp, lambda i, j: rows[i][j]))
        states, hyp, ref = self.states, self.hyp, self.distance.ref_list
        i, j, here = len(hyp), len(ref), self.cost
        align = [0] * j
        hyp_err, ref_err = [0] * i, [0] * j
        pv, mv, _, ph, mh = states[i]
        pv_before, mv_before = states[i - 1][:2] if i else (0, 0)
        while i > 0 and j > 0:
            bit = 1 << (j - 1)
            up = here - (1 if ph & bit else -1 if mh & bit else 0)
            diagonal = up - (1 if pv_before & bit else -1 if mv_before & bit else 0)
            left = here - (1 if pv & bit else -1 if mv & bit else 0)
            if hyp[i - 1] == ref[j - 1]:
                best, op, here = diagonal, NOP, diagonal
            else:
                best, op, here = diagonal + 1, SUB, diagonal
            if up + 1 < best:
                best, op, here = up + 1, DEL, up
            if left + 1 < best:
                op, here = INS, left
            if op == INS:
                j -= 1
                align[j] = i - 1
                ref_err[j] = 1
                continue
            i -= 1
            if op == DEL:
                hyp_err[i] = 1
            else:
                j -= 1
                align[j] = i
                if op == SUB:
                    hyp_err[i] = ref_err[j] = 1
            pv, mv, _, ph, mh = states[i]
            pv_before, mv_before = states[i - 1][:2] if i else (0, 0)
        hyp_err[:i] = [1] * i  # the path's start: deletions ...
        ref_err[:j] = [1] * j  # ... or insertions before the first hypothesis word
        align[:j] = [-1] * j
        return align, [0, *accumulate(hyp_err)], [0, *accumulate(ref_err)]

    def candidate_costs(self, candidates: list[list[int]], starts: list[int]) -> list[int]:
        """Beam distances of shifted copies of this hypothesis; candidate k keeps its first
        ``starts[k]`` words. Bit-parallel first; the few it cannot vouch for on the beam,
        unless even its bit-parallel distance (a lower bound: the beam only takes paths
        away) loses to a candidate it vouches for: that bound is its cost then, and it
        loses either way."""
        distance = self.distance
        safe_below = distance.safe_below
        costs = [
            distance.columns(words, start, self.states[start])[2]
            for words, start in zip(candidates, starts)
        ]
        unsure = [k for k, cost in enumerate(costs) if cost >= safe_below]
        sure = [cost for cost in costs if cost < safe_below]
        if unsure and sure:
            lowest = min(sure)
            unsure = [k for k in unsure if costs[k] <= lowest]
        if unsure:
            words_list = [candidates[k] for k in unsure]
            unsure_starts = [starts[k] for k in unsure]
            for k, cost in zip(unsure, self._beam_costs(words_list, unsure_starts)):
                costs[k] = cost
        return costs

    def _beam_costs(self, candidates: list[list[int]], starts: list[int]) -> list[int]:
        distance, rows = self.distance, self.rows
        first_change = min(starts)
        n_rows = len(self.hyp) - first_change
        band = min(distance.n_ref + 1, 2 * BEAM_WIDTH)
        python_cells = sum(len(self.hyp) - s for s in starts) * band
        if python_cells > NUMPY_CELLS_PER_ROW * n_rows:
            return distance.numpy_costs(candidates, first_change, rows[first_change])
        return distance.python_costs(candidates, starts, rows)


def _alignment(trace: list[int]) -> tuple[list[int], list[int], list[int]]:
    """Per reference position, the hypothesis position aligned to it (or just before it),
    and prefix sums of the error flags of hypothesis and reference positions."""
    align: list[int] = []
    hyp_sums, ref_sums = [0], [0]
    pos_hyp = hyp_errors = ref_errors = 0
    for op in trace:
        if op == NOP:
            align.append(pos_hyp)
            pos_hyp += 1
            hyp_sums.append(hyp_errors)
            ref_sums.append(ref_errors)
        elif op == SUB:
            align.append(pos_hyp)
            pos_hyp += 1
            hyp_errors += 1
            ref_errors += 1
            hyp_sums.append(hyp_errors)
            ref_sums.append(ref_errors)
        elif op == DEL:  # a hypothesis word without counterpart
            pos_hyp += 1
            hyp_errors += 1
            hyp_sums.append(hyp_errors)
        else:  # INS: a reference word without counterpart
            align.append(pos_hyp - 1)
            ref_errors += 1
            ref_sums.append(ref_errors)
    return align, hyp_sums, ref_sums


def _shiftable_blocks(
    hyp: Sequence[int],
    ref: Sequence[int],
    ref_positions: dict[int, list[int]],
    align: list[int],
    hyp_sums: list[int],
    ref_sums: list[int],
) -> Iterator[tuple[int, int, int]]:
    """(hyp start, ref start, length) of equal word blocks worth shifting, in tercom's
    enumeration order: the block must contain a hypothesis error, cover a reference error
    and not already be aligned to its own reference position."""
    n_hyp, n_ref = len(hyp), len(ref)
    for start_h in range(n_hyp):
        for start_r in ref_positions.get(hyp[start_h], ()):
            if abs(start_r - start_h) > MAX_SHIFT_DIST:
                continue
            aligned_to = align[start_r]
            if aligned_to == start_h:
                continue  # already aligned here: every block would shift within itself
            length = 0
            while length < MAX_SHIFT_SIZE and hyp[start_h + length] == ref[start_r + length]:
                length += 1
                if start_h <= aligned_to < start_h + length:
                    break  # would shift within itself, and so would every longer block
                if (
                    hyp_sums[start_h + length] != hyp_sums[start_h]
                    and ref_sums[start_r + length] != ref_sums[start_r]
                ):
                    yield start_h, start_r, length
                if start_h + length == n_hyp or start_r + length == n_ref:
                    break


def _shifted(words: list[int], start: int, length: int, target: int) -> list[int]:
    """Move ``words[start:start+length]`` so that it begins before position ``target``."""
    if target < start:
        return (
            words[:target]
            + words[start : start + length]
            + words[target:start]
            + words[start + length :]
        )
    if target > start + length:
        return (
            words[:start]
            + words[start + length : target]
            + words[start : start + length]
            + words[target:]
        )
    return (
        words[:start]
        + words[start + length : length + target]
        + words[start : start + length]
        + words[length + target :]
    )


def _best_shift(
    current: Evaluated, ref: Sequence[int], ref_positions: dict[int, list[int]], checked: int
):
    """The best-scoring shift of the current hypothesis: (gain, shifted words, candidates
    checked so far, the first position where the shifted words differ).

    Which candidates are tried does not depend on their scores, so they are collected
    first (in tercom's order, up to the candidate limit) and scored in one batch.
    """
    hyp = current.hyp
    align, hyp_sums, ref_sums = current.alignment()
    candidates: list[tuple[int, int, int, list[int]]] = []
    for start_h, start_r, length in _shiftable_blocks(
        hyp, ref, ref_positions, align, hyp_sums, ref_sums
    ):
        previous_target = -1
        for offset in range(-1, length):
            target = 0 if start_r + offset == -1 else align[start_r + offset] + 1
            if target == previous_target:
                continue
            previous_target = target
            candidates.append((length, start_h, target, _shifted(hyp, start_h, length, target)))
            checked += 1
        if checked >= MAX_SHIFT_CANDIDATES:
            break
    if not candidates:
        return 0, hyp, checked, 0
    starts = [min(start_h, target) for _, start_h, target, _ in candidates]
    costs = current.candidate_costs([words for *_, words in candidates], starts)
    best_key: tuple[int, int, int, int] | None = None
    best_words, best_start = hyp, 0
    for (length, start_h, target, words), cost, start in zip(candidates, costs, starts):
        key = (current.cost - cost, length, -start_h, -target)
        if best_key is None or key > best_key:  # equal keys mean the same shift
            best_key, best_words, best_start = key, words, start
    assert best_key is not None
    return best_key[0], best_words, checked, best_start


def translation_edit_rate(hyp_words: Sequence[str], ref_words: Sequence[str]) -> tuple[int, int]:
    """(number of edits including shifts, reference length) of one hypothesis/reference pair."""
    n_ref = len(ref_words)
    if n_ref == 0:
        return len(hyp_words), 0
    vocabulary: dict[str, int] = {}
    ref = [vocabulary.setdefault(w, len(vocabulary)) for w in ref_words]
    hyp = [vocabulary.setdefault(w, len(vocabulary)) for w in hyp_words]
    if hyp == ref:
        return 0, n_ref
    ref_positions: dict[int, list[int]] = {}
    for position, word in enumerate(ref):
        ref_positions.setdefault(word, []).append(position)
    distance = BeamEditDistance(ref, len(hyp))
    current = Evaluated(distance, hyp)
    shifts = 0
    checked = 0
    while True:
        gain, shifted, checked, same_prefix = _best_shift(current, ref, ref_positions, checked)
        if checked >= MAX_SHIFT_CANDIDATES or gain <= 0:
            break  # the last round scored the final hypothesis: its distance is known
        shifts += 1
        current = Evaluated(distance, shifted, current, same_prefix)
    return shifts + current.cost, n_ref
