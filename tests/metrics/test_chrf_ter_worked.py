"""Worked chrF and TER examples, checked by hand."""

from __future__ import annotations

import pytest

from bleucli import CHRF, TER, corpus_chrf, corpus_ter, sentence_chrf, sentence_ter
from bleucli.metrics.chrf import char_ngram_counts, split_word_punctuation
from bleucli.metrics.ter_edit import translation_edit_rate


def test_chrf_small_example_by_hand() -> None:
    # unigrams: {a,b,c} vs {a,b,d}: P = R = 2/3; bigrams {ab,bc} vs {ab,bd}: P = R = 1/2
    # averaged: P = R = 7/12, so F1 = 7/12
    score = CHRF(char_order=2, beta=1).sentence_score("abc", ["abd"])
    assert score.score == pytest.approx(100 * 7 / 12)


def test_chrf_beta_weights_recall() -> None:
    # hyp "ab" vs ref "abcd": unigram P = 1, R = 1/2; bigram P = 1, R = 1/3
    p, r = 1.0, (1 / 2 + 1 / 3) / 2
    for beta in (1, 2, 3):
        expected = 100 * (1 + beta**2) * p * r / (beta**2 * p + r)
        assert CHRF(char_order=2, beta=beta).sentence_score("ab", ["abcd"]).score == pytest.approx(
            expected
        )


def test_chrf_ignores_spaces_unless_asked() -> None:
    assert sentence_chrf("a b c", ["abc"]).score == pytest.approx(100.0)
    assert CHRF(whitespace=True).sentence_score("a b c", ["abc"]).score < 100.0
    assert char_ngram_counts("a b", 2, include_whitespace=False)[1] == {"ab": 1}


def test_chrf_plus_plus_splits_edge_punctuation() -> None:
    # only one mark per word, the final one first: "(x)" keeps its opening bracket
    assert split_word_punctuation("Hello, world! (x) 'tis a") == [
        "Hello",
        ",",
        "world",
        "!",
        "(x",
        ")",
        "'",
        "tis",
        "a",
    ]
    assert CHRF(word_order=2).corpus_score(["a b ."], [["a b ."]]).name == "chrF2++"


def test_chrf_identical_and_disjoint() -> None:
    assert corpus_chrf(["the cat"], [["the cat"]]).score == pytest.approx(100.0)
    assert corpus_chrf(["xyz"], [["abc"]]).score == 0.0


def test_chrf_picks_the_best_reference() -> None:
    best = CHRF().sentence_score("the cat sat", ["a dog ran", "the cat sat"])
    assert best.score == pytest.approx(100.0)


def test_chrf_lowercase_and_eps_smoothing() -> None:
    assert CHRF(lowercase=True).sentence_score("ABC", ["abc"]).score == pytest.approx(100.0)
    # 'ab' vs 'ab': orders 3..6 have no n-grams; effective order ignores them, eps does not
    assert CHRF().sentence_score("ab", ["ab"]).score == pytest.approx(100.0)
    assert CHRF(eps_smoothing=True).sentence_score("ab", ["ab"]).score == pytest.approx(
        100 * 2 / 6, abs=1e-9
    )


def test_ter_identity_substitution_and_shift() -> None:
    ref = "the cat sat on the mat"
    assert sentence_ter(ref, [ref]).score == 0.0
    assert sentence_ter("the dog sat on the mat", [ref]).score == pytest.approx(100 / 6)
    # moving the block "on the mat" is one edit (a shift), not six
    assert sentence_ter("on the mat the cat sat", [ref]).score == pytest.approx(100 / 6)
    assert translation_edit_rate("on the mat the cat sat".split(), ref.split()) == (1, 6)


def test_ter_empty_sides() -> None:
    assert sentence_ter("", ["a b c"]).score == pytest.approx(100.0)  # three deletions... of 3
    assert corpus_ter(["a b"], [[""]]).score == pytest.approx(100.0)  # edits over empty refs
    assert corpus_ter([""], [[""]]).score == 0.0


def test_ter_multi_reference_best_edits_average_length() -> None:
    score = TER().corpus_score(["a b c"], [["a b c"], ["x y z w v"]])
    assert score.num_edits == 0
    assert score.ref_length == pytest.approx((3 + 5) / 2)


def test_ter_normalisation_options() -> None:
    assert sentence_ter("Hello", ["hello"]).score == 0.0
    assert sentence_ter("Hello", ["hello"], case_sensitive=True).score == pytest.approx(100.0)
    assert sentence_ter("hello, world", ["hello world"], no_punct=True).score == 0.0
    assert sentence_ter("hello,world", ["hello , world"], normalized=True).score == 0.0
    assert sentence_ter("我爱你", ["我 爱 你"], normalized=True, asian_support=True).score == 0.0


def test_signatures() -> None:
    chrf = CHRF(word_order=2, lowercase=True)
    chrf.corpus_score(["a"], [["a"]])
    assert str(chrf.get_signature()).startswith("nrefs:1|case:lc|eff:yes|nc:6|nw:2|space:no|")
    ter = TER(normalized=True)
    ter.corpus_score(["a"], [["a"]])
    assert (
        ter.get_signature()
        .format(short=True)
        .startswith("#:1|c:lc|t:tercom|nr:yes|pn:yes|as:no|v:bleucli-")
    )
