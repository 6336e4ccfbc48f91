"""chrF and TER equal SacreBLEU 2.x on generated corpora, for every option."""

from __future__ import annotations

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

import bleucli
from tests.conftest import corpora, sentences
from tests.metrics.test_bleu_differential import strip_version

chrf_options = st.fixed_dictionaries(
    {
        "char_order": st.sampled_from([1, 3, 6]),
        "word_order": st.sampled_from([0, 1, 2]),
        "beta": st.sampled_from([1, 2, 3]),
        "lowercase": st.booleans(),
        "whitespace": st.booleans(),
        "eps_smoothing": st.booleans(),
    }
)
ter_options = st.fixed_dictionaries(
    {
        "normalized": st.booleans(),
        "no_punct": st.booleans(),
        "asian_support": st.booleans(),
        "case_sensitive": st.booleans(),
    }
)


@given(data=corpora(), opts=chrf_options)
def test_chrf_matches(data, opts) -> None:
    hyps, refs = data
    ours, theirs = bleucli.CHRF(**opts), sacrebleu.CHRF(**opts)
    a, b = ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs)
    assert a.score == pytest.approx(b.score, abs=1e-9)
    assert a.format(width=4) == b.format(width=4)
    assert strip_version(str(ours.get_signature())) == strip_version(str(theirs.get_signature()))


@given(hyp=sentences, refs=st.lists(sentences, min_size=1, max_size=3), opts=chrf_options)
def test_sentence_chrf_matches(hyp, refs, opts) -> None:
    assert bleucli.CHRF(**opts).sentence_score(hyp, refs).score == pytest.approx(
        sacrebleu.CHRF(**opts).sentence_score(hyp, refs).score, abs=1e-9
    )


@given(data=corpora(), opts=ter_options)
def test_ter_matches(data, opts) -> None:
    hyps, refs = data
    ours, theirs = bleucli.TER(**opts), sacrebleu.TER(**opts)
    a, b = ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs)
    assert a.score == pytest.approx(b.score, abs=1e-9)
    assert (a.num_edits, a.ref_length) == (b.num_edits, pytest.approx(b.ref_length))
    assert strip_version(str(ours.get_signature())) == strip_version(str(theirs.get_signature()))


# Word sequences from a small vocabulary: many repeated words make many shift candidates,
# which is where the search heuristics (and their limits) decide the result.
small_vocab_words = st.lists(st.sampled_from("a b c d e f the cat on mat , .".split()), max_size=60)


@given(hyp=small_vocab_words, ref=small_vocab_words)
def test_ter_edit_search_matches_on_repetitive_text(hyp, ref) -> None:
    from sacrebleu.metrics.lib_ter import translation_edit_rate as theirs

    from bleucli.metrics.ter_edit import translation_edit_rate as ours

    assert ours(hyp, ref) == theirs(hyp, ref)


@settings(max_examples=3)
@given(data=st.data())
def test_ter_long_sentences_match(data) -> None:
    """200+ token sentences exercise the beam and the 1000-candidate limit."""
    vocab = [f"w{i}" for i in range(40)]
    words = st.lists(st.sampled_from(vocab), min_size=180, max_size=230)
    hyp, ref = " ".join(data.draw(words)), " ".join(data.draw(words))
    assert bleucli.TER().sentence_score(hyp, [ref]).score == pytest.approx(
        sacrebleu.TER().sentence_score(hyp, [ref]).score, abs=1e-9
    )


def test_ter_very_different_lengths_match() -> None:
    """A length ratio above twice the beam width widens the beam (SacreBLEU's rule)."""
    from sacrebleu.metrics.lib_ter import translation_edit_rate as theirs

    from bleucli.metrics.ter_edit import translation_edit_rate as ours

    long = [f"w{i % 7}" for i in range(160)]
    for short in (["w1"], ["w3", "w1"], []):
        assert ours(short, long) == theirs(short, long)
        assert ours(long, short) == theirs(long, short)


@given(data=corpora(max_lines=3, max_refs=2))
def test_function_api_matches(data) -> None:
    hyps, refs = data
    assert bleucli.corpus_chrf(hyps, refs).score == pytest.approx(
        sacrebleu.corpus_chrf(hyps, refs).score, abs=1e-9
    )
    assert bleucli.corpus_ter(hyps, refs).score == pytest.approx(
        sacrebleu.corpus_ter(hyps, refs).score, abs=1e-9
    )
    assert bleucli.sentence_chrf(
        hyps[0], [r[0] for r in refs], word_order=2
    ).score == pytest.approx(
        sacrebleu.sentence_chrf(hyps[0], [r[0] for r in refs], word_order=2).score, abs=1e-9
    )
    assert bleucli.sentence_ter(
        hyps[0], [r[0] for r in refs], normalized=True
    ).score == pytest.approx(
        sacrebleu.sentence_ter(hyps[0], [r[0] for r in refs], normalized=True).score, abs=1e-9
    )
