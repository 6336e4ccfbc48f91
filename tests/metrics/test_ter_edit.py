"""The TER search's two edit-distance engines agree where the bit-parallel one claims to be
exact, and the beam bound it relies on is a true lower bound."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bleucli.metrics.ter_edit import INF, BeamEditDistance, Evaluated, _alignment


def levenshtein(a: list[int], b: list[int]) -> int:
    """Plain unit-cost edit distance, the textbook dynamic programme."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j - 1] + (x != y), previous[j] + 1, current[j - 1] + 1))
        previous = current
    return previous[-1]


def cells_outside_beam(distance: BeamEditDistance, m: int):
    n = distance.n_ref
    for i in range(1, m + 1):
        low, high = distance.bounds[i]
        for j in list(range(0, low)) + list(range(high, n + 1)):
            yield i, j


# Lengths beyond the beam width (25) and a small vocabulary, so that some pairs are far
# apart (beam matters) and some close (bit-parallel engine exact).
words = st.lists(st.integers(0, 5), max_size=90)


@settings(max_examples=150, deadline=None)
@given(hyp=words, ref=words)
def test_bit_parallel_distance_is_levenshtein(hyp, ref) -> None:
    if not ref:
        return
    distance = BeamEditDistance(ref, len(hyp))
    states: list = [distance.first_state]
    distance.columns(hyp, 0, states[0], states)
    assert states[-1][2] == levenshtein(hyp, ref)
    for i in range(len(hyp) + 1):  # every prefix's column, too
        assert states[i][2] == levenshtein(hyp[:i], ref)


@settings(max_examples=150, deadline=None)
@given(hyp=words, ref=words)
def test_beam_bound_and_exactness(hyp, ref) -> None:
    if not ref:
        return
    distance = BeamEditDistance(ref, len(hyp))
    m, n = len(hyp), len(ref)
    # safe_below is the cheapest path through any out-of-beam cell (brute force).
    brute = min(
        (abs(i - j) + abs((m - i) - (n - j)) for i, j in cells_outside_beam(distance, m)),
        default=INF,
    )
    assert distance.safe_below == brute
    beam = min(distance.beam_rows(hyp)[-1][-1], INF)
    unrestricted = levenshtein(hyp, ref)
    assert beam >= unrestricted
    if unrestricted < distance.safe_below:
        assert beam == unrestricted


@settings(max_examples=150, deadline=None)
@given(hyp=words, ref=words)
def test_alignments_agree_when_exact(hyp, ref) -> None:
    """The alignment read off the bit vectors equals the one from the beam matrix's
    back-trace."""
    if not ref:
        return
    distance = BeamEditDistance(ref, len(hyp))
    evaluated = Evaluated(distance, hyp)
    rows = distance.beam_rows(hyp)
    assert evaluated.cost == min(rows[-1][-1], INF)
    assert evaluated.alignment() == _alignment(distance.trace(hyp, lambda i, j: rows[i][j]))


def test_far_apart_sentences_use_the_beam() -> None:
    """A distance at or above the bound falls back to the beam matrix (and says so)."""
    ref = [k % 7 for k in range(80)]
    hyp = [7 + k % 5 for k in range(80)]  # no word in common: 80 substitutions
    evaluated = Evaluated(BeamEditDistance(ref, len(hyp)), hyp)
    assert not evaluated.exact
    assert evaluated.cost == 80


def test_shift_candidates_resume_from_shared_prefix() -> None:
    """Candidate costs computed from a prefix state equal costs computed from scratch."""
    ref = [1, 2, 3, 4, 5, 6, 7, 8]
    hyp = [1, 2, 6, 7, 3, 4, 5, 8]
    distance = BeamEditDistance(ref, len(hyp))
    current = Evaluated(distance, hyp)
    candidates = [[1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 6, 7, 5, 8], [6, 7, 1, 2, 3, 4, 5, 8]]
    starts = [next(k for k, (a, b) in enumerate(zip(c, hyp)) if a != b) for c in candidates]
    assert starts == [2, 2, 0]
    assert current.candidate_costs(candidates, starts) == [levenshtein(c, ref) for c in candidates]
