"""The Python API: SacreBLEU-compatible names, validation SacreBLEU lacks, mergeable stats."""

from __future__ import annotations

import pytest

import bleucli
from bleucli import BLEU, Stats
from bleucli.errors import ConfigError, InputError

HYPS = ["the cat sat on the mat", "a dog barked loudly"]
REFS = [["the cat is on the mat", "the dog barked loudly"]]


def test_public_names_are_sacrebleus() -> None:
    for name in ["BLEU", "corpus_bleu", "sentence_bleu", "raw_corpus_bleu", "__version__"]:
        assert hasattr(bleucli, name)
    score = BLEU(
        lowercase=False,
        force=False,
        tokenize=None,
        smooth_method="exp",
        smooth_value=None,
        max_ngram_order=4,
        effective_order=False,
        trg_lang="",
        references=None,
    ).corpus_score(HYPS, REFS)
    for attr in ["score", "counts", "totals", "precisions", "bp", "sys_len", "ref_len"]:
        assert hasattr(score, attr)
    assert score.format().startswith("BLEU = ")


def test_flat_reference_list_is_refused_not_truncated() -> None:
    with pytest.raises(InputError, match="flat list of 2 strings.*\\[references\\]"):
        BLEU().corpus_score(HYPS, REFS[0])


def test_reference_stream_of_wrong_length_is_refused() -> None:
    with pytest.raises(InputError, match="reference stream 1 has 1 lines but there are 2"):
        BLEU().corpus_score(HYPS, [REFS[0], ["only one"]])


@pytest.mark.parametrize(
    ("hyps", "refs", "error"),
    [
        ("a string", REFS, TypeError),
        ([], REFS, InputError),
        ([1, 2], REFS, TypeError),
        (HYPS, [[1, 2]], TypeError),
        (HYPS, [], InputError),
    ],
)
def test_bad_shapes_raise(hyps, refs, error) -> None:
    with pytest.raises(error):
        BLEU().corpus_score(hyps, refs)


def test_sentence_score_validates() -> None:
    with pytest.raises(TypeError):
        BLEU().sentence_score("hyp", "a reference string, not a list")
    with pytest.raises(InputError):
        BLEU().sentence_score("hyp", [])


def test_unknown_options_raise_config_errors() -> None:
    with pytest.raises(ConfigError, match="unknown smoothing method 'bogus'"):
        BLEU(smooth_method="bogus")
    with pytest.raises(ConfigError, match="unknown tokenizer"):
        BLEU(tokenize="bogus")


def test_signature_requires_a_score_first() -> None:
    with pytest.raises(InputError, match="number of references is unknown"):
        BLEU().get_signature()


def test_signature_fields_and_short_form() -> None:
    metric = BLEU(smooth_method="floor", lowercase=True, tokenize="intl")
    metric.corpus_score(HYPS, REFS)
    sig = metric.get_signature()
    assert str(sig) == (
        f"nrefs:1|case:lc|eff:no|tok:intl|smooth:floor[0.10]|version:bleucli-{bleucli.__version__}"
    )
    assert sig.format(short=True).startswith("#:1|c:lc|e:no|tok:intl|s:floor[0.10]|v:bleucli-")
    sig.update("test", "wmt14")
    sig.update("lang", "en-de")
    assert str(sig).startswith("nrefs:1|test:wmt14|lang:en-de|case:lc")


def test_trg_lang_picks_the_default_tokenizer() -> None:
    metric = BLEU(trg_lang="zh")
    metric.corpus_score(["我爱你"], [["我爱他"]])
    assert "tok:zh" in str(metric.get_signature())


def test_cached_references_score_like_explicit_ones() -> None:
    cached = BLEU(references=REFS)
    assert cached.corpus_score(HYPS, None).score == BLEU().corpus_score(HYPS, REFS).score
    with pytest.raises(InputError, match="3 hypotheses but the cached references have 2"):
        cached.corpus_score(HYPS + ["x"], None)


def test_stats_add_up_to_the_corpus() -> None:
    metric = BLEU()
    whole = metric.extract_stats(HYPS, REFS)
    first = metric.extract_stats(HYPS[:1], [REFS[0][:1]])
    second = metric.extract_stats(HYPS[1:], [REFS[0][1:]])
    merged = first + second
    assert merged.values == whole.values and merged.n_sentences == 2
    assert metric.score_from_stats(merged).score == metric.corpus_score(HYPS, REFS).score


def test_stats_of_different_configurations_do_not_add() -> None:
    a = BLEU().extract_stats(HYPS, REFS)
    b = BLEU(lowercase=True).extract_stats(HYPS, REFS)
    with pytest.raises(InputError, match="different configurations"):
        _ = a + b
    with pytest.raises(InputError):
        BLEU().score_from_stats(Stats(b.config, b.values))


def test_bootstrap_ci_matches_sacrebleu(monkeypatch: pytest.MonkeyPatch) -> None:
    import sacrebleu

    hyps = [f"sentence number {i} is here" for i in range(30)]
    refs = [[f"sentence {i} is here now" for i in range(30)]]
    ours = BLEU().corpus_score(hyps, refs, n_bootstrap=200)
    theirs = sacrebleu.BLEU().corpus_score(hyps, refs, n_bootstrap=200)
    assert ours.format(width=4) == theirs.format(width=4)
    assert (ours._mean, ours._ci) == pytest.approx((theirs._mean, theirs._ci), abs=1e-9)
