"""BLEU equals SacreBLEU 2.x on generated and adversarial corpora, for every option."""

from __future__ import annotations

import pytest
import sacrebleu
from hypothesis import given
from hypothesis import strategies as st

import bleucli
from tests.conftest import corpora, sentences

TOKENIZERS = ["13a", "intl", "char", "zh", "none"]
SMOOTHING = [
    ("exp", None),
    ("floor", None),
    ("floor", 0.01),
    ("add-k", None),
    ("add-k", 2),
    ("none", None),
]


def strip_version(signature: str) -> str:
    return "|".join(f for f in signature.split("|") if not f.startswith(("version:", "v:")))


def assert_same(ours, theirs) -> None:
    assert ours.score == pytest.approx(theirs.score, abs=1e-9)
    assert list(ours.counts) == list(theirs.counts)
    assert list(ours.totals) == list(theirs.totals)
    assert ours.precisions == pytest.approx(theirs.precisions, abs=1e-9)
    assert ours.bp == pytest.approx(theirs.bp, abs=1e-12)
    assert (ours.sys_len, ours.ref_len) == (theirs.sys_len, theirs.ref_len)
    assert ours.format(width=3) == theirs.format(width=3)


options = st.fixed_dictionaries(
    {
        "tokenize": st.sampled_from(TOKENIZERS),
        "smooth": st.sampled_from(SMOOTHING),
        "lowercase": st.booleans(),
        "effective_order": st.booleans(),
        "max_ngram_order": st.sampled_from([1, 2, 4, 6]),
    }
)


def make(module, opts):
    method, value = opts["smooth"]
    return module.BLEU(
        tokenize=opts["tokenize"],
        smooth_method=method,
        smooth_value=value,
        lowercase=opts["lowercase"],
        effective_order=opts["effective_order"],
        max_ngram_order=opts["max_ngram_order"],
    )


@given(data=corpora(), opts=options)
def test_corpus_bleu_matches(data, opts) -> None:
    hyps, refs = data
    ours, theirs = make(bleucli, opts), make(sacrebleu, opts)
    assert_same(ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs))
    assert strip_version(str(ours.get_signature())) == strip_version(str(theirs.get_signature()))
    short = ours.get_signature().format(short=True)
    assert strip_version(short) == strip_version(theirs.get_signature().format(short=True))


@given(data=corpora(allow_none=True))
def test_variable_reference_counts_match(data) -> None:
    hyps, refs = data
    ours, theirs = bleucli.BLEU(), sacrebleu.BLEU()
    if any(all(ref is None for ref in sentence_refs) for sentence_refs in zip(*refs)):
        # SacreBLEU crashes on such a sentence (or, for an empty hypothesis, scores it by
        # accident); bleucli says which sentence has no reference
        with pytest.raises(bleucli.InputError, match="has no reference"):
            ours.corpus_score(hyps, refs)
        return
    assert_same(ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs))
    assert strip_version(str(ours.get_signature())) == strip_version(str(theirs.get_signature()))


@given(hyp=sentences, refs=st.lists(sentences, min_size=1, max_size=3), opts=options)
def test_sentence_bleu_matches(hyp, refs, opts) -> None:
    assert_same(
        make(bleucli, opts).sentence_score(hyp, refs),
        make(sacrebleu, opts).sentence_score(hyp, refs),
    )


@given(data=corpora(max_lines=4, max_refs=2))
def test_function_api_matches(data) -> None:
    hyps, refs = data
    assert_same(bleucli.corpus_bleu(hyps, refs), sacrebleu.corpus_bleu(hyps, refs))
    assert_same(bleucli.raw_corpus_bleu(hyps, refs), sacrebleu.raw_corpus_bleu(hyps, refs))
    assert_same(
        bleucli.sentence_bleu(hyps[0], [r[0] for r in refs]),
        sacrebleu.sentence_bleu(hyps[0], [r[0] for r in refs]),
    )


def test_tokenised_period_warning_like_sacrebleu(caplog: pytest.LogCaptureFixture) -> None:
    hyps = ["a tokenised sentence ."] * 100
    with caplog.at_level("WARNING", logger="bleucli"):
        bleucli.BLEU().corpus_score(hyps, [hyps])
    assert "100 lines that end in a tokenized period" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="bleucli"):
        bleucli.BLEU(force=True).corpus_score(hyps, [hyps])
    assert caplog.text == ""
