"""Every human-score reader on real files (each agrees with the others on the same
judgements) and on malformed ones (one error naming the file and line); the MTME
directory's refusals."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from bleucli.errors import InputError, UsageError
from bleucli.metaeval import readers
from bleucli.metaeval.mtme import read_mtme

DATA = Path(__file__).resolve().parent.parent / "data" / "metaeval"
WMT22 = DATA / "wmt22"
N_RU_EN = 2016


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(((np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= 1e-12)).all())


@pytest.mark.parametrize(("field", "kind"), [("z", "wmt-z"), ("raw", "wmt-raw")])
def test_wmt_da_file_equals_the_mtme_release(field: str, kind: str) -> None:
    """WMT's raw DA file, with its numbered system names, gives the same matrix as the MTME
    layout's segment file."""
    da = readers.read_human(str(DATA / "ad-seg-scores-ru-en.csv"), "auto", N_RU_EN, field)
    mtme = readers.read_blocks(str(WMT22 / "human-scores" / f"ru-en.{kind}.seg.score"), N_RU_EN)
    matched = readers.match_systems(sorted(da.seg), sorted(mtme))
    assert sorted(matched.values()) == sorted(mtme)
    assert any(name != system for name, system in matched.items())  # Online-Y.3 -> Online-Y
    for name, system in matched.items():
        assert _same(da.seg[name], mtme[system]), system


def test_mqm_errors_average_to_googles_scores() -> None:
    """MQM's weights applied to the error rows reproduce Google's averaged file."""
    errors = readers.read_human(str(DATA / "mqm_ted_ende.first40.tsv"), "auto", 40)
    averaged = readers.read_human(str(DATA / "mqm_ted_ende.first40.avg_seg_scores.tsv"), "auto", 40)
    assert errors.name == averaged.name == "mqm"
    assert set(errors.seg) - {"ref"} == set(averaged.seg) - {"ref-A"}
    pairs = [(s, s) for s in errors.seg if s != "ref"] + [("ref", "ref-A")]
    compared = 0
    for ours, theirs in pairs:
        assert _same(errors.seg[ours], averaged.seg[theirs]), ours
        compared += int((~np.isnan(errors.seg[ours])).sum())
    assert compared > 500


def test_tsv_reads_what_it_is_given(tmp_path: Path) -> None:
    mtme = readers.read_blocks(str(WMT22 / "human-scores" / "ru-en.wmt-z.seg.score"), N_RU_EN)
    path = tmp_path / "human.tsv"
    with path.open("w", encoding="utf-8") as out:
        out.write("system\tsegment\tscore\n")
        for system, scores in mtme.items():
            for line, score in enumerate(scores, 1):
                if not math.isnan(score):
                    out.write(f"{system}\t{line}\t{float(score)!r}\n")
    human = readers.read_human(str(path), "auto", N_RU_EN)
    assert sorted(human.seg) == sorted(mtme)
    for system in mtme:
        assert _same(human.seg[system], mtme[system])


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        ("tsv", "A\t1\t0.5\nB\t2\n", ":2: expected system<TAB>segment<TAB>score"),
        ("tsv", "A\t1\tgood\n", ":1: score 'good' is not a number"),
        ("tsv", "A\t1\t0.5\nA\t9\t0.5\n", ":2: segment 9 is outside the 3 lines"),
        ("tsv", "A\t0\t0.5\n", ":1: segment 0 is outside"),
        ("tsv", "A\tx\t0.5\n", ":1: segment 'x' is not a whole number"),
        ("tsv", "A\t1\t0.5\nA\t1\t0.7\n", ":2: a second score for system 'A', segment 1"),
        ("tsv", "A\t1\tinf\n", ":1: score 'inf' is not finite"),
        ("wmt-da", "SYS SID RAW.SCR Z.SCR N\nA.1 1 50 0.1\n", ":2: expected 'SYS SID RAW.SCR Z.SCR N'"),
        ("wmt-da", "SYS SID RAW.SCR Z.SCR N\nA.1 4 50 0.1 1\n", ":2: segment 4 is outside"),
        ("wmt-da", "SYS SID RAW.SCR Z.SCR N\nA.1 1 50 zz 1\n", ":2: score 'zz' is not a number"),
        ("mqm", "system\tdoc\tseg_id\n", ":1: an MQM header needs the columns"),
        ("mqm", "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
                "A\td\t1\t1\tr1\ts\tt\tStyle\tCritical\n", ":2: unknown MQM severity 'Critical'"),
        ("mqm", "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
                "A\td\t1\t7\tr1\ts\tt\tStyle\tMinor\n", ":2: segment 7 is outside"),
        ("mqm", "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
                "A\td\t1\t1\n", ":2: 4 fields where the header has 9"),
        ("mqm-avg", "system mqm_avg_score seg_id\nA\t-1.0\n", ":2: expected 'system mqm_avg_score seg_id'"),
        ("mtme", "A\t0.1\nA\t0.2\nB\t0.3\n", ":1: system 'A' has 2 scores, the test set 3 segments"),
        ("auto", "a b c d e f g\n", ":1: cannot tell the format"),
    ],
)  # fmt: skip
def test_malformed_human_files_name_file_and_line(
    tmp_path: Path, fmt: str, text: str, message: str
) -> None:
    path = tmp_path / "human.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises((InputError, UsageError)) as err:
        readers.read_human(str(path), fmt, 3)
    assert str(err.value).startswith(str(path))
    assert message in str(err.value)


def test_mqm_weights() -> None:
    assert readers.mqm_weight("Minor", "Fluency/Punctuation", "f", 1) == 0.1
    assert readers.mqm_weight("Major", "Non-translation!", "f", 1) == 25
    assert readers.mqm_weight("Major", "Accuracy/Mistranslation", "f", 1) == 5
    assert readers.mqm_weight("Minor", "Style/Awkward", "f", 1) == 1
    assert readers.mqm_weight("No-error", "No-error", "f", 1) == 0
    assert readers.mqm_weight("Neutral", "Other", "f", 1) == 0


def test_metric_blocks_may_not_leave_segments_unscored(tmp_path: Path) -> None:
    path = tmp_path / "m.seg.score"
    path.write_text("A\t0.1\nA\tNone\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"m.seg.score:2: metric score 'None'"):
        readers.read_blocks(str(path), 2, allow_none=False)


def test_system_names_match_with_and_without_wmt_suffixes() -> None:
    matched = readers.match_systems(
        ["Online-Y.3", "HUMAN-B", "Lan-Bridge"], ["Online-Y", "Lan-Bridge", "X"]
    )
    assert matched == {"Online-Y.3": "Online-Y", "Lan-Bridge": "Lan-Bridge"}


# -- the MTME directory ------------------------------------------------------------------------


def test_mtme_directory_reads_pair_reference_and_metrics() -> None:
    found = read_mtme(str(WMT22), "de-en", "wmt-z")
    assert found.reference == "refA" and found.n_segments == 1984
    assert "refB" not in found.outputs and found.left_out == ["refB"]
    assert set(found.metrics) == {"LenRatio"}
    assert found.metrics["LenRatio"].seg.shape == (9, 1984)
    with_human = read_mtme(str(WMT22), "de-en", "wmt-z", include_human=True)
    assert "refB" in with_human.outputs and with_human.left_out == []
    other_ref = read_mtme(str(WMT22), "de-en", "wmt-z", reference="refB", include_human=True)
    # the chosen reference is never a system; refA has no output file to rate
    assert "refB" not in other_ref.outputs and "refA" not in other_ref.outputs
    assert other_ref.metrics == {}  # LenRatio was computed against refA


@pytest.mark.parametrize(
    ("change", "args", "message"),
    [
        (None, ("xx-yy", "wmt-z"), "no sources/xx-yy.txt; language pairs here: de-en, ru-en"),
        (
            "unknown-kinds",
            ("ru-en", None),
            "several kinds of human scores (a, b) and none is WMT's standard one; pick one "
            "with --human-name",
        ),
        (None, ("ru-en", "mqm"), "--human-name mqm: not here for ru-en (wmt-raw, wmt-z)"),
        (
            "short-output",
            ("ru-en", "wmt-z"),
            "Online-A.txt: 2,015 lines, but sources/ru-en.txt has 2,016",
        ),
        ("metric-missing-system", ("ru-en", "wmt-z"), "no scores for system 'SRPOL'"),
    ],
)
def test_mtme_directory_refusals(tmp_path: Path, change, args, message) -> None:
    root = tmp_path / "wmt22"
    shutil.copytree(WMT22, root)
    if change == "short-output":
        path = root / "system-outputs" / "ru-en" / "Online-A.txt"
        path.write_text("\n".join(path.read_text(encoding="utf-8").split("\n")[:2015]) + "\n")
    if change == "unknown-kinds":  # two kinds, neither one mt-metrics-eval's standard
        for kind, new in (("wmt-raw", "a"), ("wmt-z", "b")):
            for level in ("seg", "sys"):
                old = root / "human-scores" / f"ru-en.{kind}.{level}.score"
                old.rename(old.with_name(f"ru-en.{new}.{level}.score"))
    if change == "metric-missing-system":
        path = root / "metric-scores" / "ru-en" / "LenRatio-refA.sys.score"
        path.write_text("".join(line for line in path.open() if not line.startswith("SRPOL")))
    pair, human = args
    with pytest.raises((InputError, UsageError)) as err:
        read_mtme(str(root), pair, human)
    assert message in str(err.value)


def test_mtme_directory_that_is_not_one(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such directory"):
        read_mtme(str(tmp_path / "missing"), "ru-en")
    with pytest.raises(InputError, match="is this an mt-metrics-eval test-set directory"):
        read_mtme(str(tmp_path), "ru-en")
