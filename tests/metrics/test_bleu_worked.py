"""Worked examples from the BLEU literature, checked by hand."""

from __future__ import annotations

import math

import pytest

from bleucli import BLEU, corpus_bleu, sentence_bleu
from bleucli.metrics.bleu import closest_ref_len, compute_bleu


def bleu(hyps, refs, **kwargs):
    kwargs.setdefault("tokenize", "none")
    return BLEU(**kwargs).corpus_score(hyps, refs)


def test_clipped_unigram_precision_papineni() -> None:
    # Papineni et al. (2002), section 2.1: "the" may be counted at most twice.
    score = bleu(["the the the the the the the"], [["the cat is on the mat"]])
    assert score.counts[0] == 2
    assert score.totals[0] == 7
    assert score.precisions[0] == pytest.approx(100 * 2 / 7)


def test_clipping_uses_the_maximum_count_over_references() -> None:
    score = bleu(["the cat the cat"], [["the cat"], ["the the cat"]])
    assert score.counts[0] == 3  # min(2, max(1, 2)) for "the" + min(2, 1) for "cat"
    assert score.totals[0] == 4


def test_brevity_penalty_c3_r6_is_e_minus_1() -> None:
    score = bleu(["a b c"], [["a b c d e f"]], smooth_method="none", effective_order=True)
    assert score.bp == pytest.approx(math.exp(-1))
    assert score.sys_len == 3 and score.ref_len == 6
    # precisions 1/1/1 (no 4-grams): the score is the brevity penalty alone
    assert score.score == pytest.approx(100 * math.exp(-1))


def test_one_word_different() -> None:
    ref = "the quick brown fox jumps over the lazy dog"
    hyp = "the quick brown fox jumps over the lazy cat"
    score = bleu([hyp], [[ref]], smooth_method="none")
    assert score.counts == [8, 7, 6, 5]
    assert score.totals == [9, 8, 7, 6]
    expected = 100 * (8 / 9 * 7 / 8 * 6 / 7 * 5 / 6) ** 0.25
    assert score.score == pytest.approx(expected, abs=1e-12)


def test_word_order_swap_scores_zero_without_smoothing() -> None:
    score = bleu(["dog bites man"], [["man bites dog"]], smooth_method="none")
    assert score.counts[:3] == [3, 0, 0]
    assert score.score == 0.0
    smoothed = bleu(
        ["dog bites man"], [["man bites dog"]], smooth_method="exp", effective_order=True
    )
    assert smoothed.score > 0.0


def test_perfect_match_is_100() -> None:
    assert bleu(["a b c d e"], [["a b c d e"]]).score == pytest.approx(100.0)


def test_closest_reference_length_ties_go_to_the_shorter() -> None:
    assert closest_ref_len(5, [6, 4]) == 4
    assert closest_ref_len(5, [7, 3, 5]) == 5
    assert bleu(["a b c d e"], [["a b c d"], ["a b c d e f"]]).ref_len == 4


def test_exp_smoothing_halves_each_zero_precision() -> None:
    # counts [2, 0, 0, 0] of totals [4, 3, 2, 1]: p = 50, 100/(2*3), 100/(4*2), 100/(8*1)
    s = compute_bleu([2, 0, 0, 0], [4, 3, 2, 1], 4, 4, smooth_method="exp")
    assert s.precisions == pytest.approx([50.0, 100 / 6, 100 / 8, 100 / 8])


def test_floor_and_add_k_smoothing() -> None:
    floor = compute_bleu([2, 0, 0, 0], [4, 3, 2, 1], 4, 4, smooth_method="floor")
    assert floor.precisions == pytest.approx([50.0, 100 * 0.1 / 3, 100 * 0.1 / 2, 100 * 0.1])
    add_k = compute_bleu([2, 1, 0, 0], [4, 3, 2, 1], 4, 4, smooth_method="add-k", smooth_value=1)
    assert add_k.precisions == pytest.approx([50.0, 100 * 2 / 4, 100 * 1 / 3, 100 * 1 / 2])


def test_empty_hypothesis_scores_zero_with_zero_bp() -> None:
    score = bleu([""], [["a b c"]])
    assert score.score == 0.0 and score.bp == 0.0 and score.sys_len == 0


def test_lowercase_and_tokenisation_change_matches() -> None:
    assert bleu(["The Cat sat ."], [["the cat sat ."]], lowercase=True).score == pytest.approx(
        100.0
    )
    assert bleu(["The Cat sat ."], [["the cat sat ."]]).score < 100.0
    assert corpus_bleu(["Hello, big world!"], [["Hello , big world !"]]).score == pytest.approx(
        100.0
    )


def test_sentence_bleu_uses_effective_order() -> None:
    score = sentence_bleu("a b", ["a b"])
    assert score.score == pytest.approx(100.0)


def test_max_ngram_order_changes_the_mean() -> None:
    score = bleu(["a b x"], [["a b c"]], smooth_method="none", max_ngram_order=2)
    assert score.score == pytest.approx(100 * math.sqrt(2 / 3 * 1 / 2))
