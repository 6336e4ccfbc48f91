"""The vectorised BLEU and chrF statistics equal the per-sentence ones, and SacreBLEU's."""

from __future__ import annotations

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

import bleucli
from bleucli.metrics.base import MIN_BATCH
from bleucli.metrics.bleu_batch import batch_bleu_stats
from tests.conftest import sentences

#: "\x00" is the separator the batch engine joins sentences with: a sentence holding it as
#: a token must take the exact per-sentence path.
small_vocab = st.lists(st.sampled_from(["a", "b", "c", "the", ",", ".", "\x00"]), max_size=12)


@given(data=st.data())
def test_batch_rows_equal_per_sentence_rows(data) -> None:
    n = data.draw(st.integers(1, 40))
    k = data.draw(st.integers(1, 3))
    order = data.draw(st.sampled_from([1, 2, 4, 5]))
    hyps = data.draw(st.lists(small_vocab, min_size=n, max_size=n))
    refs = [data.draw(st.lists(small_vocab | st.none(), min_size=n, max_size=n)) for _ in range(k)]
    metric = bleucli.BLEU(tokenize="none", max_ngram_order=order)
    expected = [
        metric.sentence_stats(" ".join(h), [r[i] for r in refs if r[i] is not None])
        for i, h in enumerate(hyps)
    ]
    texts = [None if r is None else " ".join(r) for r in refs[0]]
    assert (
        batch_bleu_stats(
            [[" ".join(h) for h in hyps]],
            [texts]
            + [[None if r is None else "\t ".join(r) for r in stream] for stream in refs[1:]],
            order,
        )[0].tolist()
        == expected
    )


@settings(max_examples=25)
@given(data=st.data())
def test_large_corpora_match_sacrebleu(data) -> None:
    n = data.draw(st.integers(MIN_BATCH, 2 * MIN_BATCH))
    k = data.draw(st.integers(1, 2))
    hyps = data.draw(st.lists(sentences, min_size=n, max_size=n))
    refs = [data.draw(st.lists(sentences, min_size=n, max_size=n)) for _ in range(k)]
    tokenize = data.draw(st.sampled_from(["13a", "intl", "zh", "char"]))
    ours = bleucli.BLEU(tokenize=tokenize).corpus_score(hyps, refs)
    theirs = sacrebleu.BLEU(tokenize=tokenize).corpus_score(hyps, refs)
    assert ours.score == pytest.approx(theirs.score, abs=1e-9)
    assert (ours.counts, ours.totals, ours.sys_len, ours.ref_len) == (
        theirs.counts,
        theirs.totals,
        theirs.sys_len,
        theirs.ref_len,
    )


chrf_options = st.fixed_dictionaries(
    {
        "char_order": st.sampled_from([1, 2, 6]),
        "word_order": st.sampled_from([0, 2]),
        "beta": st.sampled_from([1, 2]),
        "whitespace": st.booleans(),
        "eps_smoothing": st.booleans(),
        "lowercase": st.booleans(),
    }
)


@settings(max_examples=25)
@given(data=st.data(), opts=chrf_options)
def test_large_corpora_chrf_matches_sacrebleu(data, opts) -> None:
    """Big enough for the vectorised chrF engine, with several references and gaps."""
    n = data.draw(st.integers(MIN_BATCH, 2 * MIN_BATCH))
    k = data.draw(st.integers(1, 3))
    hyps = data.draw(st.lists(sentences, min_size=n, max_size=n))
    refs = [data.draw(st.lists(sentences, min_size=n, max_size=n))]
    refs += [
        data.draw(st.lists(sentences | st.none(), min_size=n, max_size=n)) for _ in range(k - 1)
    ]
    ours = bleucli.CHRF(**opts).corpus_score(hyps, refs)
    theirs = sacrebleu.CHRF(**opts).corpus_score(hyps, refs)
    assert ours.score == pytest.approx(theirs.score, abs=1e-9)
    rows = bleucli.CHRF(**opts).per_sentence_stats(hyps, refs)
    metric = bleucli.CHRF(**opts)
    loop = [
        metric.sentence_stats(
            metric.preprocess(h),
            metric.reference_info([metric.preprocess(r[i]) for r in refs if r[i] is not None]),
        )
        for i, h in enumerate(hyps)
    ]
    assert rows == loop


def test_short_runs_do_not_import_numpy() -> None:
    """Below the size where numpy pays for its import, a fresh process scores without it,
    and gets the numbers the vectorised engine gives."""
    import subprocess
    import sys

    code = (
        "import sys, bleucli\n"
        "hyps = ['the cat sat on a mat', 'a dog is here'] * 100\n"
        "refs = [['the cat is on the mat', 'there is a dog here'] * 100]\n"
        "print(bleucli.BLEU().corpus_score(hyps, refs).score, 'numpy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[1] == "False"
    hyps = ["the cat sat on a mat", "a dog is here"] * 100
    refs = [["the cat is on the mat", "there is a dog here"] * 100]
    import numpy  # noqa: F401  (loaded: the vectorised engine runs in this process)

    assert float(out[0]) == bleucli.BLEU().corpus_score(hyps, refs).score


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_several_systems_at_once_equal_one_by_one(data) -> None:
    """Paired tests extract all systems together (references counted once): same rows."""
    n = data.draw(st.integers(MIN_BATCH, MIN_BATCH + 20))
    refs = [data.draw(st.lists(sentences, min_size=n, max_size=n))]
    systems = [data.draw(st.lists(sentences, min_size=n, max_size=n)) for _ in range(3)]
    for metric in (
        bleucli.BLEU(references=refs),
        bleucli.CHRF(word_order=2, references=refs),
        bleucli.TER(references=refs),
    ):
        together = metric.per_sentence_stats_many(systems)
        assert together == [metric.per_sentence_stats(s, None) for s in systems]
