"""Chunked scoring of big files: bounded memory, ``--jobs``, same numbers as in one piece."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu

import bleucli.stream
from tests.conftest import EXAMPLES, run_cli

HYP, REF, REF2 = (str(EXAMPLES / n) for n in ("hyp.de", "ref.de", "ref2.de"))


def lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bleucli.stream, "CHUNK_LINES", 7)  # 30 lines -> 5 chunks


@pytest.mark.parametrize("extra", [[], ["-sl"]])
def test_jobs_1_and_2_give_identical_output(small_chunks, extra) -> None:
    args = [REF, REF2, "-i", HYP, "-m", "bleu", "chrf", "ter", "-w", "10", *extra]
    one = run_cli([*args, "--jobs", "1"])
    two = run_cli([*args, "--jobs", "2"])
    assert one.exit_code == 0, one.stderr
    assert one.stdout == two.stdout


def test_chunked_scores_equal_sacrebleu(small_chunks) -> None:
    result = run_cli([REF, REF2, "-i", HYP, "-m", "bleu", "chrf", "ter", "--jobs", "2"])
    records = json.loads(result.stdout)
    hyps, refs = lines(HYP), [lines(REF), lines(REF2)]
    expected = [
        m.corpus_score(hyps, refs) for m in (sacrebleu.BLEU(), sacrebleu.CHRF(), sacrebleu.TER())
    ]
    assert [r["score"] for r in records] == [round(e.score, 1) for e in expected]
    assert [r["nrefs"] for r in records] == ["2", "2", "2"]


def test_stream_errors_name_file_and_line(small_chunks, write) -> None:
    good = lines(HYP)
    bad = write("bad.de", "\n".join(good[:20]).encode() + b"\n\xff\xfe\n")
    result = run_cli([REF, "-i", bad])
    assert result.exit_code == 1 and f"{bad}: line 21: invalid utf-8" in result.stderr
    short = write("short.de", good[:12])
    result = run_cli([REF, "-i", short, "--jobs", "2"])
    assert f"line counts differ: {short} has 12 lines, {REF} has 30" in result.stderr


def test_tokenised_period_warning_counts_the_whole_corpus(small_chunks, write) -> None:
    hyp = write("tok.txt", ["a b ."] * 120)
    result = run_cli([hyp, "-i", hyp])
    assert result.stderr.count("100 lines that end in a tokenized period") == 1
    assert run_cli([hyp, "-i", hyp, "--force"]).stderr == ""
