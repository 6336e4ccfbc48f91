"""Mergeable statistics: shards, ``bleucli stats``/``merge`` and Dask give the one-piece score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bleucli
from tests.conftest import EXAMPLES, corpora, run_cli

HYP, REF, REF2 = (str(EXAMPLES / n) for n in ("hyp.de", "ref.de", "ref2.de"))


def lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


@given(data=corpora(max_lines=10, max_refs=1), cuts=st.lists(st.integers(0, 10), max_size=4))
def test_random_split_points_give_identical_scores(data, cuts) -> None:
    hyps, refs = data
    points = sorted({0, len(hyps), *(c for c in cuts if c <= len(hyps))})
    for metric in (bleucli.BLEU(), bleucli.CHRF(word_order=2), bleucli.TER()):
        whole = metric.corpus_score(hyps, refs)
        shards = [
            metric.extract_stats(hyps[a:b], [r[a:b] for r in refs])
            for a, b in zip(points, points[1:])
            if b > a
        ]
        total = shards[0]
        for shard in shards[1:]:
            total = total + shard
        assert metric.score_from_stats(total).score == whole.score  # exactly


@settings(max_examples=30)
@given(data=corpora(max_lines=8, max_refs=3), cut=st.integers(1, 7))
def test_multi_reference_ter_merges_to_within_float_rounding(data, cut) -> None:
    hyps, refs = data
    cut = min(cut, len(hyps))
    metric = bleucli.TER()
    merged = metric.extract_stats(hyps[:cut], [r[:cut] for r in refs])
    if cut < len(hyps):
        merged = merged + metric.extract_stats(hyps[cut:], [r[cut:] for r in refs])
    assert metric.score_from_stats(merged).score == pytest.approx(
        metric.corpus_score(hyps, refs).score, abs=1e-9
    )


def test_cli_stats_and_merge(write) -> None:
    hyp, ref, ref2 = lines(HYP), lines(REF), lines(REF2)
    shards = []
    for k, (a, b) in enumerate([(0, 11), (11, 19), (19, 30)]):
        h, r1, r2 = (write(f"{n}{k}", x[a:b]) for n, x in (("h", hyp), ("r", ref), ("s", ref2)))
        out = run_cli(["stats", r1, r2, "-i", h, "-m", "bleu", "chrf", "ter"])
        assert out.exit_code == 0, out.stderr
        shards.append(write(f"shard{k}.json", out.stdout))
    merged = run_cli(["merge", *shards, "-w", "8", "-f", "text"]).stdout.splitlines()
    whole = run_cli(
        [REF, REF2, "-i", HYP, "-m", "bleu", "chrf", "ter", "-w", "8", "-f", "text"]
    ).stdout.splitlines()
    assert merged == whole
    document = json.loads(Path(shards[0]).read_text())
    assert document["format"] == "bleucli-stats" and document["metrics"][0]["sentences"] == 11


def test_merge_refuses_mismatched_options(write) -> None:
    a = write("a.json", run_cli(["stats", REF, "-i", HYP]).stdout)
    b = write("b.json", run_cli(["stats", REF, "-i", HYP, "-tok", "intl"]).stdout)
    c = write("c.json", run_cli(["stats", REF, "-i", HYP, "-m", "chrf"]).stdout)
    result = run_cli(["merge", a, b])
    assert result.exit_code == 1 and "cannot be merged" in result.stderr
    assert "has metrics chrf" in run_cli(["merge", a, c]).stderr
    bad = write("bad.json", '{"format": "other"}')
    assert "not a bleucli stats file" in run_cli(["merge", bad]).stderr


def test_stats_from_a_test_set_carry_its_fields(write, cache_dir) -> None:
    out = run_cli(["stats", "-t", "sample", "-l", "en-de", "-i", HYP])
    document = json.loads(out.stdout)
    assert "|test:sample|lang:en-de|" in document["metrics"][0]["signature"]


def test_sentence_level_json_lines_and_tsv() -> None:
    jsonl = run_cli([REF, "-i", HYP, "-sl", "-m", "bleu", "ter", "-f", "json", "-w", "3"])
    records = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert [r["line"] for r in records] == list(range(1, 31))
    expected = bleucli.BLEU(effective_order=True).sentence_score(lines(HYP)[4], [lines(REF)[4]])
    assert records[4]["BLEU"] == round(expected.score, 3)
    metric = bleucli.BLEU(effective_order=True)
    metric.corpus_score(lines(HYP), [lines(REF)])
    signature = str(metric.get_signature())
    assert records[4]["signatures"]["BLEU"] == signature and records[4]["system"] == HYP
    tsv = run_cli([REF, "-i", HYP, "-sl", "-m", "bleu", "ter", "-f", "tsv"]).stdout.splitlines()
    assert tsv[0] == f"# BLEU: {signature}" and tsv[1].startswith("# TER: nrefs:1|")
    assert tsv[2] == "line\tsystem\tBLEU\tTER" and len(tsv) == 33
    assert tsv[3].split("\t")[:2] == ["1", HYP]


def test_sentence_level_several_systems_in_every_format() -> None:
    """Several systems: every row names its system and line, and carries the signature."""
    args = [REF, "-i", HYP, REF2, "-sl", "-m", "bleu", "chrf"]
    records = [json.loads(line) for line in run_cli([*args, "-f", "json"]).stdout.splitlines()]
    assert [(r["system"], r["line"]) for r in records] == [(HYP, k) for k in range(1, 31)] + [
        (REF2, k) for k in range(1, 31)
    ]
    expected = bleucli.CHRF().sentence_score(lines(REF2)[6], [lines(REF)[6]])
    assert records[36]["chrF2"] == round(expected.score, 1)
    tsv = run_cli([*args, "-f", "tsv"]).stdout.splitlines()
    assert tsv[2] == "line\tsystem\tBLEU\tchrF2" and len(tsv) == 63
    assert tsv[-1].split("\t")[:2] == ["30", REF2]
    text = run_cli(args).stdout.splitlines()
    assert len(text) == 60 and text[30].startswith(f"{REF2}\t1\tBLEU|nrefs:1|")


def test_dask_local_cluster_equals_single_process() -> None:
    pytest.importorskip("dask.bag")
    distributed = pytest.importorskip("distributed")
    import dask.bag as db
    import dask.dataframe as dd
    import pandas as pd

    from bleucli.distributed import score_dask

    hyp, ref, ref2 = lines(HYP), lines(REF), lines(REF2)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        bag = db.from_sequence(list(zip(hyp, ref, ref2)), npartitions=4)
        results = score_dask(bag, ["bleu", "chrf", "ter"], {"chrf": {"word_order": 2}})
        frame = dd.from_pandas(pd.DataFrame({"hyp": hyp, "ref": ref}), npartitions=3)
        single = score_dask(frame, ["bleu"])
    assert results["bleu"][0].score == bleucli.BLEU().corpus_score(hyp, [ref, ref2]).score
    assert (
        results["chrf"][0].score == bleucli.CHRF(word_order=2).corpus_score(hyp, [ref, ref2]).score
    )
    assert results["ter"][0].score == pytest.approx(
        bleucli.TER().corpus_score(hyp, [ref, ref2]).score, abs=1e-9
    )
    assert str(results["bleu"][1].get_signature()).startswith("nrefs:2|")
    assert single["bleu"][0].score == bleucli.BLEU().corpus_score(hyp, [ref]).score


def test_a_shard_is_the_same_read_whole_or_streamed() -> None:
    """``bleucli stats`` on standard input scores in memory (through ``scoring.score``),
    with ``-i FILE`` it streams in chunks: the shard is the same bytes."""
    ref, hyp = str(EXAMPLES / "ref.de"), EXAMPLES / "hyp.de"
    args = ["stats", ref, "-m", "bleu", "chrf", "ter", "-cw", "2"]
    whole = run_cli(args, input=hyp.read_bytes())
    streamed = run_cli([*args, "-i", str(hyp)])
    assert whole.exit_code == streamed.exit_code == 0, whole.stderr + streamed.stderr
    assert whole.stdout == streamed.stdout
    assert [entry["metric"] for entry in json.loads(whole.stdout)["metrics"]] == [
        "bleu", "chrf", "ter",
    ]  # fmt: skip
