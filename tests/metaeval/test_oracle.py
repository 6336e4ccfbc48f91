"""Differential tests against mt-metrics-eval's own numbers (tests/data/metaeval/
mtme-oracle.json, computed by MTME's functions): random vectors with ties and Nones, its
rank assignment, and the real WMT22 pairs through the command line."""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from bleucli.metaeval import spa, ties
from bleucli.metaeval.groups import grouping
from bleucli.metaeval.significance import assign_ranks
from bleucli.metaeval.stats import Correlation
from bleucli.native import native
from tests.conftest import run_cli

DATA = Path(__file__).resolve().parent.parent / "data" / "metaeval"
WMT22 = DATA / "wmt22"


@cache
def oracle() -> dict:
    return json.loads((DATA / "mtme-oracle.json").read_text(encoding="utf-8"))


def _matrix(values: list, rows: int) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in values], dtype=float).reshape(rows, -1)


def _random_ids() -> list[int]:
    return [case["id"] for case in oracle()["random"]]


def _case(case_id: int) -> dict:
    return next(c for c in oracle()["random"] if c["id"] == case_id)


@pytest.mark.parametrize("case_id", _random_ids())
def test_random_case_equals_mtme(case_id: int) -> None:
    case = _case(case_id)
    expected = case["mtme"]
    gold = _matrix(case["gold_seg"], case["num_sys"])
    metric = _matrix(case["metric_seg"], case["num_sys"])
    gold_sys = _matrix(case["gold_sys"], 1)
    metric_sys = _matrix(case["metric_sys"], 1)

    system_groups = grouping(~np.isnan(gold_sys), "none")
    for kind in ("pearson", "spearman", "kendall", "accuracy"):
        value = Correlation(kind, system_groups, system_groups.take(gold_sys))(
            system_groups.take(metric_sys)
        )[0]
        assert value == pytest.approx(expected["sys"][kind], abs=1e-9), kind

    for kind in ("pearson", "kendall"):
        for by in ("none", "item", "sys"):
            groups = grouping(~np.isnan(gold), by)
            value = Correlation(kind, groups, groups.take(gold))(groups.take(metric))[0]
            assert value == pytest.approx(expected["seg"][kind][by], abs=1e-9), (kind, by)

    for by, want in expected["seg"]["acc-t"].items():
        groups = grouping(~np.isnan(gold), by)
        got = ties.calibrate(groups, groups.take(gold), groups.take(metric))
        assert got.accuracy == pytest.approx(want["tau"], abs=1e-9), by
        # MTME keeps the first maximum of a running float sum; several thresholds often
        # reach the same accuracy, and bleucli keeps the first exact maximum among them
        assert any(abs(got.epsilon - e) <= 1e-12 for e in want["epsilons_at_max"]), by
        assert got.epsilon == min(want["epsilons_at_max"]) or want["margin"] < 1e-9


def test_spa_equals_mtme_where_defined() -> None:
    """SPA is MTME's float32 permutation estimate with its seed: the same numbers, except
    where a float32 sum lands exactly on the observed difference and the BLAS's rounding
    decides (a few cases, by less than 1e-4)."""
    exact, compared = 0, 0
    for case in oracle()["random"]:
        if "spa" not in case["mtme"]["sys"]:
            continue
        gold = _matrix(case["gold_seg"], case["num_sys"])
        metric = _matrix(case["metric_seg"], case["num_sys"])
        rated = ~np.isnan(gold)
        spa.check_aligned(rated)
        columns = rated[0]
        got = float(spa.soft_pairwise_accuracy(gold[:, columns], metric[:, columns]))
        want = case["mtme"]["sys"]["spa"]
        compared += 1
        exact += got == pytest.approx(want, abs=1e-12)
        assert got == pytest.approx(want, abs=1e-3)
    assert compared == 166
    assert exact >= 0.95 * compared


def test_spa_refuses_unaligned_ratings() -> None:
    rated = np.array([[True, False, True], [True, True, False]])
    with pytest.raises(Exception, match="same segments"):
        spa.check_aligned(rated)


@pytest.mark.parametrize("index", range(54))
def test_assign_ranks_equals_mtme(index: int) -> None:
    case = oracle()["assign_ranks"][index]
    assert assign_ranks(np.array(case["pvalues"]), case["threshold"]) == case["ranks"]


# -- real data through the command line ------------------------------------------------------

#: The oracle's metric names -> bleucli meta-eval's.
NAMES = {"bleu": "BLEU", "chrf": "chrF2", "-ter": "-TER", "LenRatio": "LenRatio"}
SEG = {("pearson", by): f"seg-pearson-{by}" for by in ("none", "item", "sys")} | {
    ("kendall", by): f"seg-kendall-{by}" for by in ("none", "item", "sys")
}


def _cli(pair: str, human: str, *extra: str) -> dict:
    result = run_cli(
        ["meta-eval", "--mtme", str(WMT22), "-l", pair, "--human-name", human, "-f", "json",
         "-q", *extra]
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _values(document: dict) -> dict[str, dict[str, dict]]:
    return {
        s["statistic"]: {row["metric"]: row for row in s["rows"]} for s in document["statistics"]
    }


#: The pure-Python engine scores TER slowly: it checks one real case (its own sentence
#: scores and Kendall counts on real data); the compiled engine checks all six, and the
#: significance replays (numpy code shared by both engines).
SLOW = pytest.mark.skipif(native is None, reason="covered by the other cases on the pure engine")
REPLAY = pytest.mark.skipif(
    native is None, reason="the draws and tests are the same numpy code on both engines"
)
REAL = [
    ("ru-en", "wmt-z", "mt"),
    pytest.param("ru-en", "wmt-raw", "mt", marks=SLOW),
    pytest.param("de-en", "wmt-z", "mt", marks=SLOW),
    pytest.param("de-en", "wmt-raw", "mt", marks=SLOW),
    pytest.param("de-en", "wmt-z", "with_human", marks=SLOW),
    pytest.param("de-en", "wmt-raw", "with_human", marks=SLOW),
]


@pytest.mark.parametrize(("pair", "human", "systems"), REAL)
def test_real_statistics_equal_mtme(pair: str, human: str, systems: str) -> None:
    """Every deterministic statistic on WMT22 DA, with bleucli's own BLEU, chrF and TER
    (sentence scores bit-identical to SacreBLEU's, or Kendall's ties would differ) and the
    directory's external metric, equals MTME's to 1e-9."""
    expected = oracle()["real"][pair]["human"][human]["stats"][systems]
    extra = ["--include-human"] if systems == "with_human" else []
    document = _cli(pair, human, "-k", "0", "--stat", "sys-pearson", "sys-spearman",
                    "sys-kendall", "sys-accuracy", *SEG.values(), "seg-acc-t-item", *extra)  # fmt: skip
    assert document["systems"] == expected["systems"]
    values = _values(document)
    for oracle_name, ours in NAMES.items():
        stats = expected[oracle_name]
        for kind in ("pearson", "spearman", "kendall", "accuracy"):
            got = values[f"sys-{kind}"][ours]["value"]
            assert got == pytest.approx(stats["sys"][kind], abs=1e-9), (kind, ours)
        for (kind, by), name in SEG.items():
            got = values[name][ours]["value"]
            assert got == pytest.approx(stats["seg"][kind][by], abs=1e-9), (name, ours)
        acc_t = stats["seg"]["acc-t"]["item"]
        row = values["seg-acc-t-item"][ours]
        assert row["value"] == pytest.approx(acc_t["tau"], abs=1e-9), ours
        assert any(abs(row["epsilon"] - e) <= 1e-12 for e in acc_t["epsilons_at_max"])


@pytest.mark.parametrize(
    ("pair", "human", "systems"),
    [
        pytest.param("ru-en", "wmt-z", "mt", marks=REPLAY),
        pytest.param("de-en", "wmt-raw", "mt", marks=REPLAY),
    ],
)
def test_real_significance_replays_mtme(pair: str, human: str, systems: str) -> None:
    """With MTME's own draws (--rng mtme --seed 1) every p-value and cluster is MTME's."""
    expected = oracle()["real"][pair]["human"][human]["stats"][systems]["significance"]
    extra = ["--include-human"] if systems == "with_human" else []
    statistics = {"sys/pearson": "sys-pearson", "sys/kendall": "sys-kendall",
                  "sys/accuracy": "sys-accuracy", "seg/pearson/none": "seg-pearson-none"}  # fmt: skip
    document = _cli(pair, human, "--rng", "mtme", "--seed", "1", "--stat",
                    *statistics.values(), *extra)  # fmt: skip
    ours = {s["statistic"]: s for s in document["statistics"]}
    for key, name in statistics.items():
        want, got = expected[key], ours[name]
        assert [row["metric"] for row in got["rows"]] == [NAMES[m] for m in want["order"]]
        assert {row["metric"]: row["cluster"] for row in got["rows"]} == {
            NAMES[m]: c for m, c in want["cluster"].items()
        }
        for a, row in want["p"].items():
            for b, p in row.items():
                assert got["p_values"][NAMES[a]][NAMES[b]] == p, (key, a, b)
