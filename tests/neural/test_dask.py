"""A neural metric over a Dask cluster (``bleucli.distributed``, the dask extra): a
LocalCluster of 2 worker processes, each loading the model once, gives exactly the
single-process COMET and CometKiwi scores, for any partitioning."""

from __future__ import annotations

import pytest

import bleucli
from tests.neural_toy import ROOT

EXAMPLES = ROOT / "examples"


def lines(name: str) -> list[str]:
    return (EXAMPLES / name).read_text(encoding="utf-8").splitlines()


def test_local_cluster_equals_one_process(checked_toys) -> None:
    pytest.importorskip("dask.bag")
    distributed = pytest.importorskip("distributed")
    import dask.bag as db

    from bleucli.distributed import score_dask

    comet = str(checked_toys["regression"].parents[1])
    kiwi = str(checked_toys["referenceless"].parents[1])
    src, hyp, ref = lines("src.en"), lines("hyp.de"), lines("ref.de")
    expected_comet = bleucli.COMET(model=comet).corpus_score(hyp, [ref], sources=src).score
    expected_kiwi = bleucli.CometKiwi(model=kiwi).corpus_score(hyp, None, sources=src).score
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        for partitions in (1, 3, 7):
            bag = db.from_sequence(list(zip(src, hyp, ref)), npartitions=partitions)
            results = score_dask(bag, ["comet", "bleu"], {"comet": {"model": comet}},
                                 with_source=True)  # fmt: skip
            assert results["comet"][0].score == expected_comet, partitions
            assert results["bleu"][0].score == bleucli.BLEU().corpus_score(hyp, [ref]).score
            signature = str(results["comet"][1].get_signature())
            assert signature.startswith("nrefs:1|model:regression@")
        qe = score_dask(db.from_sequence(list(zip(src, hyp)), npartitions=4), ["cometkiwi"],
                        {"cometkiwi": {"model": kiwi}}, with_source=True)  # fmt: skip
        assert qe["cometkiwi"][0].score == expected_kiwi
        # a worker process loads each model once and keeps it for its later partitions
        loaded = client.run(lambda: len(__import__("bleucli.neural.load").neural.load._LOADED))
        assert all(n <= 2 for n in loaded.values()) and sum(loaded.values()) >= 2


def test_a_neural_metric_without_sources_is_one_clear_error(checked_toys) -> None:
    pytest.importorskip("dask.bag")
    import dask
    import dask.bag as db

    from bleucli.distributed import score_dask
    from bleucli.errors import ConfigError

    comet = str(checked_toys["regression"].parents[1])
    bag = db.from_sequence(list(zip(lines("hyp.de"), lines("ref.de"))), npartitions=2)
    with dask.config.set(scheduler="sync"), pytest.raises(ConfigError, match="with_source=True"):
        score_dask(bag, ["comet"], {"comet": {"model": comet}})
