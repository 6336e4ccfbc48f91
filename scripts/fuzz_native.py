"""Coverage-guided fuzzing of the compiled core with atheris (``pip install atheris``).

Every input (13a and zh tokenisation, BLEU and chrF statistics, TER edit counts, statistic
sums, minimum-WER segmentation, the batch engine's aligned and pairwise sentence scores
on 1-3 threads, and meta-evaluation's Kendall pair counts) is fed to
both engines; a crash, or any difference from the pure-Python engine (the specification), is
a finding. Runs for a bounded number of inputs:

    python scripts/fuzz_native.py -atheris_runs=200000
"""

from __future__ import annotations

import sys

import atheris
import numpy as np

with atheris.instrument_imports():
    from bleucli import _native, batch, mwer
    from bleucli.metaeval import stats as metaeval_stats
    from bleucli.metaeval.groups import grouping
    from bleucli.metrics.bleu import BLEU
    from bleucli.metrics.chrf import CHRF
    from bleucli.metrics.ter_edit import translation_edit_rate
    from bleucli.tokenizers.mteval import tokenize_13a_python
    from bleucli.tokenizers.zh import tokenize_zh_python

_METRICS = {order: BLEU(tokenize="none", max_ngram_order=order) for order in range(1, 7)}


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    line = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 300))
    assert _native.tokenize_13a(line) == tokenize_13a_python(line), repr(line)
    zh = _native.tokenize_zh(line)
    assert zh is None or zh == tokenize_zh_python(line), repr(line)
    order = fdp.ConsumeIntInRange(1, 6)
    n_refs = fdp.ConsumeIntInRange(1, 4)
    hyp = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 120))
    refs = [fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 120)) for _ in range(n_refs)]
    expected = _METRICS[order].sentence_stats(hyp, [ref.split() for ref in refs])
    assert _native.bleu_stats([hyp], [refs], order) == [expected], (hyp, refs, order)
    char_order, word_order = fdp.ConsumeIntInRange(0, 7), fdp.ConsumeIntInRange(0, 3)
    whitespace = fdp.ConsumeBool()
    if char_order + word_order:
        chrf = CHRF(char_order=char_order, word_order=word_order, whitespace=whitespace)
        expected = [chrf.sentence_stats(hyp, chrf.reference_info([ref])) for ref in refs]
        got = _native.chrf_stats([hyp], [refs], char_order, word_order, whitespace)
        assert got == [expected], (hyp, refs, char_order, word_order, whitespace)
    vocabulary = fdp.ConsumeIntInRange(1, 8)
    ref_ids = [
        fdp.ConsumeIntInRange(0, vocabulary - 1) for _ in range(fdp.ConsumeIntInRange(1, 140))
    ]
    hyp_ids = [fdp.ConsumeIntInRange(0, vocabulary) for _ in range(fdp.ConsumeIntInRange(0, 140))]
    expected_edits = translation_edit_rate([str(i) for i in hyp_ids], [str(i) for i in ref_ids])
    assert _native.ter_edits(hyp_ids, ref_ids) == expected_edits[0], (hyp_ids, ref_ids)
    if hyp_ids:
        lines, position = [], 0
        while position < len(ref_ids):
            size = fdp.ConsumeIntInRange(0, 12)
            lines.append(ref_ids[position : position + size])
            position += max(size, 1)
        expected_counts = mwer.segment_python(hyp_ids, lines)
        assert mwer._segment_native(hyp_ids, lines) == expected_counts, (hyp_ids, lines)
    rows = [[fdp.ConsumeIntInRange(0, 2**40) for _ in range(3)] for _ in range(4)]
    assert _native.sum_int_rows(rows) == [sum(column) for column in zip(*rows)]
    fuzz_batch(fdp, [hyp, line, *refs])
    fuzz_kendall(fdp)


def fuzz_kendall(fdp: atheris.FuzzedDataProvider) -> None:
    """Kendall pair counts of every grouping against the numpy specification (ties, NaN
    gaps in the gold scores, several draws, 1-3 threads)."""
    n_sys, n_items = fdp.ConsumeIntInRange(1, 5), fdp.ConsumeIntInRange(1, 12)
    levels = fdp.ConsumeIntInRange(1, 6)
    cells = n_sys * n_items
    gold = np.array([fdp.ConsumeIntInRange(-1, levels) for _ in range(cells)], dtype=float)
    gold[gold < 0] = np.nan
    draws = fdp.ConsumeIntInRange(1, 4)
    metric = np.array([fdp.ConsumeIntInRange(0, levels) for _ in range(draws * cells)], float)
    for by in ("none", "item", "sys"):
        groups = grouping(~np.isnan(gold.reshape(n_sys, n_items)), by)
        if groups.count == 0:
            continue
        gold_vector = groups.take(gold.reshape(n_sys, n_items))
        stack = groups.take(metric.reshape(draws, n_sys, n_items))
        kendall = metaeval_stats.Kendall(groups, gold_vector)
        got = kendall._native_counts(stack, fdp.ConsumeIntInRange(1, 3))
        g = groups.count
        owner = (np.arange(draws)[:, None] * g + groups.ids[None, :]).ravel()
        spec = metaeval_stats.sorted_counts(
            owner, np.tile(gold_vector, draws), stack.ravel(), draws * g
        )
        for name in ("x_ties", "y_ties", "both_ties", "discordant"):
            value = np.broadcast_to(getattr(got, name), (draws, g)).ravel()
            assert (value == getattr(spec, name)).all(), (by, name, gold, metric)


def fuzz_batch(fdp: atheris.FuzzedDataProvider, texts: list[str]) -> None:
    """The batch engine against the metrics' own sentence scores, the aligned engine in
    each of its three ways (common runs, n-gram tables, the per-call statistics)."""
    name = fdp.PickValueInList(["bleu", "chrf", "ter"])
    options = {
        "bleu": {
            "tokenize": fdp.PickValueInList(["13a", "none"]),
            "max_ngram_order": fdp.ConsumeIntInRange(1, 6),
        },
        "chrf": {
            "word_order": fdp.ConsumeIntInRange(0, 2),
            "char_order": fdp.ConsumeIntInRange(1, 8),
            "lowercase": fdp.ConsumeBool(),
        },
        "ter": {"case_sensitive": fdp.ConsumeBool()},
    }[name]
    threads = fdp.ConsumeIntInRange(1, 3)
    hyps = [fdp.PickValueInList(texts) for _ in range(fdp.ConsumeIntInRange(1, 4))]
    refs = [fdp.PickValueInList(texts) for _ in range(len(hyps))]
    more = [fdp.PickValueInList([*texts, None]) for _ in range(len(hyps))]
    metric = batch.scorer(name, dict(options))
    got = batch.sentence_scores(name, hyps, [refs], threads=threads, **options).tolist()
    assert got == [metric.sentence_score(h, [r]).score for h, r in zip(hyps, refs)], (
        name,
        options,
        hyps,
        refs,
    )
    expected = [
        metric.sentence_score(h, [r for r in (r1, r2) if r is not None]).score
        for h, r1, r2 in zip(hyps, refs, more)
    ]
    metric.num_refs = 2
    spec = batch._native_spec(metric)
    if spec is not None:
        streams, flags = batch._for_engine(metric, [hyps, refs, more], lowers=True)
        for way in (0, 4, 8, 16):  # match sets, tables, per-call statistics, plain sets
            out = np.empty(len(hyps))
            _native.batch_aligned(
                spec[0], streams[0], streams[1:], spec[1], flags | way, threads, out
            )
            assert out.tolist() == expected, (name, options, hyps, refs, more, way)
    cells = batch.pairwise(name, [hyps], [refs], threads=threads, **options)[0].tolist()
    assert cells == [[metric.sentence_score(h, [r]).score for r in refs] for h in hyps]


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
