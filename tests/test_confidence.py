"""Bootstrap confidence intervals: SacreBLEU's numbers for the same seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

import bleucli
from tests.conftest import EXAMPLES, corpora, run_cli

HYP, REF, REF2 = (str(EXAMPLES / n) for n in ("hyp.de", "ref.de", "ref2.de"))


def lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


@settings(max_examples=20)
@given(data=corpora(max_lines=12, max_refs=3), n=st.sampled_from([2, 50, 101]))
def test_api_intervals_match_sacrebleu(data, n) -> None:
    hyps, refs = data
    for ours, theirs in [
        (bleucli.BLEU(), sacrebleu.BLEU()),
        (bleucli.CHRF(), sacrebleu.CHRF()),
        (bleucli.TER(), sacrebleu.TER()),
    ]:  # TER: float32 sums of 1/3s
        a = ours.corpus_score(hyps, refs, n_bootstrap=n)
        try:
            b = theirs.corpus_score(hyps, refs, n_bootstrap=n)
        except TypeError:  # SacreBLEU cannot average a mix of float and float32 scores
            continue
        assert (a._mean, a._ci) == pytest.approx((b._mean, b._ci), abs=1e-9)


def test_cli_interval_text_and_json_like_sacrebleu(monkeypatch) -> None:
    args = [REF, REF2, "-i", HYP, "-m", "bleu", "ter", "-ci", "-cin", "200", "-w", "3"]
    text = run_cli([*args, "-f", "text"]).stdout.splitlines()
    hyps, refs = lines(HYP), [lines(REF), lines(REF2)]
    for line, metric in zip(text, (sacrebleu.BLEU(), sacrebleu.TER())):
        expected = metric.corpus_score(hyps, refs, n_bootstrap=200)
        assert line.split(" = ", 1)[1] == expected.format(width=3).split(" = ", 1)[1]
        assert "|bs:200|seed:12345|" in line
    records = json.loads(run_cli(args).stdout)
    assert {"confidence_mean", "confidence_var", "confidence"} <= set(records[0])


def test_seed_from_environment(monkeypatch) -> None:
    base = [REF, "-i", HYP, "-ci", "-cin", "100", "-f", "text", "-w", "4"]
    default = run_cli(base).stdout
    monkeypatch.setenv("BLEUCLI_SEED", "7")
    seven = run_cli(base).stdout
    assert "seed:7" in seven and seven != default
    monkeypatch.setenv("BLEUCLI_SEED", "none")
    assert "seed:none" in run_cli(base).stdout
    monkeypatch.setenv("BLEUCLI_SEED", "abc")
    assert "BLEUCLI_SEED must be a whole number >= 0" in run_cli(base).stderr
    monkeypatch.setenv("BLEUCLI_SEED", "-1")  # numpy refuses negative seeds
    negative = run_cli(base)
    assert negative.exit_code == 2 and "got '-1'" in negative.stderr


def test_confidence_refuses_several_systems_and_sentence_level() -> None:
    several = run_cli([REF, "-i", HYP, REF2, "-ci"])
    assert several.exit_code == 1 and "scores one system; for several, --rank" in several.stderr
    assert "unavailable with --sentence-level" in run_cli([REF, "-i", HYP, "-ci", "-sl"]).stderr


def test_from_signature_with_bootstrap_fields() -> None:
    sig = "BLEU|nrefs:1|bs:150|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0"
    out = run_cli([REF, "-i", HYP, "--from-signature", sig, "-f", "text"]).stdout
    assert "|bs:150|seed:12345|" in out and "μ = " in out
    wrong = sig.replace("seed:12345", "seed:99")
    assert "set BLEUCLI_SEED=99" in run_cli([REF, "-i", HYP, "--from-signature", wrong]).stderr


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_resampled_sums_equal_sacrebleus_gather_and_sum(data) -> None:
    """The draw-count product (integer statistics, small sums) and the gathered fallback
    (fractions, or sums past float32's exact range) both give SacreBLEU's float32 sums."""
    import numpy as np

    from bleucli.stats.bootstrap import draw_resamples

    n = data.draw(st.integers(1, 300))
    k = data.draw(st.integers(1, 6))
    top = data.draw(st.sampled_from([3, 1000, 10**6]))
    stats = np.array(
        data.draw(
            st.lists(st.lists(st.integers(-1, top), min_size=k, max_size=k), min_size=n, max_size=n)
        ),
        dtype="float32",
    )
    if data.draw(st.booleans()):
        stats[0, 0] += 0.5  # a fraction, as multi-reference TER lengths have
    resamples = draw_resamples(n, data.draw(st.integers(1, 50)), 12345)
    expected = np.stack([drawn.sum(0) for drawn in stats[resamples.indices]])  # SacreBLEU's
    got = resamples.sums(stats)
    assert got.dtype == np.float32 and np.array_equal(got, expected)
    assert np.array_equal(resamples.sums(stats), expected)  # the kept counts, reused


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_vectorised_chrf_resample_scores_equal_row_by_row(data) -> None:
    """chrF scores every resample at once with the float32 operations ``f_score`` performs
    row by row (the paired tests' and intervals' inputs): identical values and dtype,
    including the rows (zero counts) that make it fall back."""
    import numpy as np

    metric = bleucli.CHRF(
        char_order=data.draw(st.integers(1, 6)),
        word_order=data.draw(st.integers(0, 2)),
        beta=data.draw(st.integers(0, 4)),
        eps_smoothing=data.draw(st.booleans()),
    )
    rows = data.draw(st.integers(1, 40))
    low = data.draw(st.sampled_from([0, 1]))
    sums = np.array(
        data.draw(
            st.lists(
                st.lists(
                    st.integers(low, 10**6), min_size=3 * metric.order, max_size=3 * metric.order
                ),
                min_size=rows,
                max_size=rows,
            )
        ),
        dtype="float32",
    )
    sums[:, 2::3] = np.minimum(sums[:, 2::3], np.minimum(sums[:, 0::3], sums[:, 1::3]))
    expected = np.array([metric.score_from_values(row).score for row in sums])
    got = metric.resample_scores(sums)
    assert got.dtype == expected.dtype
    assert np.array_equal(got, expected)
