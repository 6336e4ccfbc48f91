"""``-t/-l`` and friends on the command line, offline (sample and local custom registries)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu

from tests.conftest import EXAMPLES, ROOT, run_cli
from tests.testsets.conftest import (
    DOCS,
    HYPOTHESIS,
    REFERENCE,
    SOURCE,
    make_tgz,
    md5,
    sgm,
    write_registry,
)

HYP = str(EXAMPLES / "hyp.de")


def lines(path: Path | str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def test_sample_scores_offline_like_sacrebleu_with_both_references(cache, monkeypatch) -> None:
    monkeypatch.setenv("BLEUCLI_OFFLINE", "1")
    result = run_cli(["-t", "sample", "-l", "en-de", "-i", HYP])
    assert result.exit_code == 0, result.stderr
    record = json.loads(result.stdout)
    expected = sacrebleu.BLEU().corpus_score(
        lines(HYP), [lines(EXAMPLES / "ref.de"), lines(EXAMPLES / "ref2.de")]
    )
    assert record["score"] == round(expected.score, 1)
    assert record["signature"].startswith("nrefs:2|test:sample|lang:en-de|case:mixed|")
    assert record["test"] == "sample" and record["lang"] == "en-de"


@pytest.fixture
def two_sets(cache, tmp_path) -> Path:
    """Two sgm test sets 'a' and 'b' in one local registry."""
    archive = make_tgz({"s.sgm": sgm(SOURCE, DOCS), "r.sgm": sgm(REFERENCE, DOCS, "refset")})
    (tmp_path / "a.tgz").write_bytes(archive)
    half = len(SOURCE) // 2
    other = make_tgz(
        {
            "s.sgm": sgm(SOURCE[:half], [("x", "en", "news", half)]),
            "r.sgm": sgm(REFERENCE[:half], [("x", "en", "news", half)], "refset"),
        }
    )
    (tmp_path / "b.tgz").write_bytes(other)
    pair = {"de-en": {"format": "sgm", "source": "s.sgm", "references": ["r.sgm"]}}
    registry = {
        "a": {
            "description": "set a",
            "citation": "@misc{a}",
            "data": [{"url": "a.tgz", "md5": md5(archive)}],
            "langpairs": pair,
        },
        "b": {
            "description": "set b",
            "citation": "",
            "data": [{"url": "b.tgz", "md5": md5(other)}],
            "langpairs": pair,
        },
    }
    path = tmp_path / "sets.json"
    path.write_text(json.dumps(registry))
    return path


def test_comma_separated_sets_concatenate_references(two_sets, tmp_path) -> None:
    half = len(SOURCE) // 2
    hyp = tmp_path / "hyp"
    hyp.write_text("\n".join(HYPOTHESIS + HYPOTHESIS[:half]) + "\n")
    result = run_cli(
        [
            "-t",
            "a,b",
            "-l",
            "de-en",
            "-i",
            str(hyp),
            "--testsets-file",
            str(two_sets),
            "-f",
            "text",
            "-w",
            "6",
        ]
    )
    assert result.exit_code == 0, result.stderr
    expected = sacrebleu.BLEU().corpus_score(
        HYPOTHESIS + HYPOTHESIS[:half], [REFERENCE + REFERENCE[:half]]
    )
    assert f"= {expected.score:.6f} " in result.stdout
    assert "|test:a,b|lang:de-en|" in result.stdout


def test_hypothesis_count_mismatch_names_both_counts(two_sets, tmp_path) -> None:
    hyp = tmp_path / "short"
    hyp.write_text("one line\n")
    result = run_cli(["-t", "a", "-l", "de-en", "-i", str(hyp), "--testsets-file", str(two_sets)])
    assert result.exit_code == 1
    assert f"{hyp} has 1 lines, test set a/de-en (ref) has {len(SOURCE)}" in result.stderr


def test_origlang_filter_and_signature(two_sets, tmp_path) -> None:
    keep = [i for i, (_, lang, _, n) in enumerate(DOCS) for _ in range(n)]
    de_rows = [k for k, doc in enumerate(keep) if DOCS[doc][1] == "de"]
    hyp = tmp_path / "hyp"
    hyp.write_text("\n".join(HYPOTHESIS[k] for k in de_rows) + "\n")
    result = run_cli(
        [
            "-t",
            "a",
            "-l",
            "de-en",
            "-ol",
            "de",
            "-i",
            str(hyp),
            "-f",
            "text",
            "-w",
            "6",
            "--testsets-file",
            str(two_sets),
        ]
    )
    assert result.exit_code == 0, result.stderr
    expected = sacrebleu.BLEU().corpus_score(
        [HYPOTHESIS[k] for k in de_rows], [[REFERENCE[k] for k in de_rows]]
    )
    assert f"= {expected.score:.6f} " in result.stdout
    assert "|test:a|lang:de-en|origlang:de|" in result.stdout
    empty = run_cli(
        ["-t", "a", "-l", "de-en", "-ol", "fr", "-i", str(hyp), "--testsets-file", str(two_sets)]
    )
    assert empty.exit_code == 1 and "no sentence with origlang=fr" in empty.stderr


@pytest.mark.parametrize("origlang", ["de", "non-de"])
def test_origlang_filters_a_whole_test_set_output_like_sacrebleu(
    two_sets, tmp_path, origlang
) -> None:
    """SacreBLEU's way: the system file covers the whole test set and is filtered with the
    references (and every metric sees the same selection)."""
    keep = [i for i, (_, lang, _, n) in enumerate(DOCS) for _ in range(n)]
    rows = [k for k, doc in enumerate(keep) if (DOCS[doc][1] == "de") == (origlang == "de")]
    hyp = tmp_path / "hyp"
    hyp.write_text("\n".join(HYPOTHESIS) + "\n")  # every sentence of the test set
    result = run_cli(
        [
            "-t",
            "a",
            "-l",
            "de-en",
            "-ol",
            origlang,
            "-i",
            str(hyp),
            "-m",
            "bleu",
            "chrf",
            "-f",
            "text",
            "-w",
            "6",
            "--testsets-file",
            str(two_sets),
        ]
    )
    assert result.exit_code == 0, result.stderr
    selected = [HYPOTHESIS[k] for k in rows], [[REFERENCE[k] for k in rows]]
    assert f"= {sacrebleu.BLEU().corpus_score(*selected).score:.6f} " in result.stdout
    assert f"= {sacrebleu.CHRF().corpus_score(*selected).score:.6f}" in result.stdout
    assert f"|origlang:{origlang}|" in result.stdout


def test_echo_fields(two_sets) -> None:
    base = ["-t", "a", "-l", "de-en", "--testsets-file", str(two_sets)]
    out = run_cli([*base, "--echo", "src", "ref", "docid"]).stdout.splitlines()
    assert out[0] == f"{SOURCE[0]}\t{REFERENCE[0]}\tdoc1"
    assert len(out) == len(SOURCE)
    everything = run_cli([*base, "--echo", "all"]).stdout.splitlines()
    assert everything[0].split("\t") == [SOURCE[0], REFERENCE[0], "doc1", "news", "de"]
    bad = run_cli([*base, "--echo", "nope"])
    assert bad.exit_code == 1 and "no field 'nope'" in bad.stderr and "available: src" in bad.stderr


def test_list_and_citation(two_sets) -> None:
    listing = run_cli(["--list", "--testsets-file", str(two_sets)]).stdout
    assert "The available test sets are:" in listing and "wmt14" in listing
    assert any(line.startswith("a ") and "set a" in line for line in listing.splitlines())
    pairs = run_cli(["--list", "-t", "wmt20"]).stdout.splitlines()
    assert "en-de: src, ref, docid, genre, origlang" in pairs
    by_pair = run_cli(["--list", "-l", "en-liv"]).stdout
    assert "wmt22" in by_pair and "wmt14" not in by_pair
    cite = run_cli(["-t", "a,b", "--citation", "--testsets-file", str(two_sets)])
    assert cite.stdout.strip() == "@misc{a}" and "no citation recorded for b" in cite.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-t", "sample", "-l", "en-de", str(EXAMPLES / "ref.de"), "-i", HYP],
            "either a test set (-t) or reference files",
        ),
        (["-t", "sample", "-i", HYP], "needs a language pair (-l); available: en-de"),
        (["-t", "sample", "-l", "en-fr", "-i", HYP], "no language pair 'en-fr'; available: en-de"),
        (["-t", "nope", "-l", "en-de", "-i", HYP], "unknown test set 'nope'; available:"),
        ([str(EXAMPLES / "ref.de"), "-ol", "de", "-i", HYP], "need a test set (-t)"),
        (
            ["-t", "sample", "-l", "en-de", "--origlang", "de", "-i", HYP],
            "need a WMT .sgm or .xml test set",
        ),
    ],
)
def test_test_set_errors(cache, args, message) -> None:
    result = run_cli(args)
    assert result.exit_code == 1
    assert message in result.stderr
    assert result.stderr.count("\n") == 1


def test_from_signature_selects_the_test_set(cache) -> None:
    sig = "BLEU+case.mixed+lang.en-de+numrefs.2+smooth.exp+test.sample+tok.13a+version.1.4.14"
    result = run_cli(["--from-signature", sig, "-i", HYP, "-f", "text"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("BLEU|nrefs:2|test:sample|lang:en-de|")


def test_progress_bar_only_on_a_terminal(http_server, cache, tmp_path) -> None:
    body = make_tgz({"s.sgm": sgm(SOURCE, DOCS), "r.sgm": sgm(REFERENCE, DOCS, "refset")})
    url = http_server.serve("/tty/test.tgz", body)
    registry = write_registry(
        tmp_path / "r.json",
        "tty",
        [{"url": url, "md5": md5(body)}],
        {"de-en": {"format": "sgm", "source": "s.sgm", "references": ["r.sgm"]}},
    )
    env = {**os.environ, "BLEUCLI_CACHE": str(cache), "BLEUCLI_TESTSETS": str(registry)}
    primary, secondary = pty.openpty()
    proc = subprocess.run(
        [sys.executable, "-m", "bleucli", "--download", "tty"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=secondary,
        timeout=60,
    )
    os.close(secondary)
    shown = b""
    try:
        while chunk := os.read(primary, 4096):
            shown += chunk
    except OSError:
        pass
    os.close(primary)
    assert proc.returncode == 0
    assert b"downloading test.tgz" in shown  # the progress bar's label
    piped = subprocess.run(
        [sys.executable, "-m", "bleucli", "--download", "tty"],
        cwd=ROOT,
        env={**env, "BLEUCLI_CACHE": str(tmp_path / "other")},
        capture_output=True,
        timeout=60,
    )
    assert b"downloading test.tgz" not in piped.stderr and b"%" not in piped.stderr


def test_detail_without_document_metadata_says_so(cache, monkeypatch) -> None:
    monkeypatch.setenv("BLEUCLI_OFFLINE", "1")
    result = run_cli(["-t", "sample", "-l", "en-de", "-i", HYP, "--detail"])
    assert result.exit_code == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0].startswith("BLEU|nrefs:2|test:sample|")  # text output, as SacreBLEU
    assert out[-1] == "No subset information found. Consider using --origlang argument."
    plain = run_cli([str(EXAMPLES / "ref.de"), "-i", HYP, "-d"])
    assert plain.stdout.splitlines()[-1].startswith("No subset information found.")


def test_detail_needs_the_whole_test_set_output(two_sets, tmp_path) -> None:
    keep = [i for i, (_, lang, _, n) in enumerate(DOCS) for _ in range(n)]
    hyp = tmp_path / "hyp"
    hyp.write_text(
        "\n".join(HYPOTHESIS[k] for k, doc in enumerate(keep) if DOCS[doc][1] == "de") + "\n"
    )
    result = run_cli(
        [
            "-t",
            "a",
            "-l",
            "de-en",
            "-ol",
            "de",
            "-i",
            str(hyp),
            "--detail",
            "--testsets-file",
            str(two_sets),
        ]
    )
    assert result.exit_code == 1
    assert "--detail needs the output for the whole test set" in result.stderr
    whole = tmp_path / "whole"
    whole.write_text("\n".join(HYPOTHESIS) + "\n")
    ok = run_cli(
        [
            "-t",
            "a",
            "-l",
            "de-en",
            "-ol",
            "de",
            "-i",
            str(whole),
            "--detail",
            "--testsets-file",
            str(two_sets),
        ]
    )
    assert ok.exit_code == 0, ok.stderr
    assert [line.split(":")[0] for line in ok.stdout.splitlines()[1:]] == [
        "origlang=de domain=ALL "
    ]


def test_statistical_gate_filters_whole_outputs_by_the_signature_origlang(
    two_sets, tmp_path, monkeypatch
) -> None:
    """Results scored with -ol on whole-test-set outputs; the gate selects the same
    sentences from the two outputs (references from the signature's test set)."""
    monkeypatch.setenv("BLEUCLI_TESTSETS", str(two_sets))
    base, now = tmp_path / "base.txt", tmp_path / "now.txt"
    base.write_text("\n".join(HYPOTHESIS) + "\n")
    now.write_text("\n".join(HYPOTHESIS[:-1] + ["nothing alike"]) + "\n")
    results = {}
    for name, path in (("base", base), ("now", now)):
        scored = run_cli(["-t", "a", "-l", "de-en", "-ol", "de", "-i", str(path), "-w", "4"])
        assert scored.exit_code == 0, scored.stderr
        results[name] = tmp_path / f"{name}.json"
        results[name].write_text(scored.stdout)
    gate = run_cli(
        [
            "gate",
            str(results["now"]),
            "--baseline",
            str(results["base"]),
            "--baseline-output",
            str(base),
            "--output",
            str(now),
        ]
    )
    assert "BLEU" in gate.stdout and "p = " in gate.stdout, gate.stdout + gate.stderr
    assert gate.exit_code in (0, 3)


def test_docids_testset_scores_each_document(two_sets, tmp_path) -> None:
    """--docids testset: the sgm set's own document ids; each document's score is the
    corpus score of its lines (brute force with SacreBLEU)."""
    hyp = tmp_path / "hyp"
    hyp.write_text("\n".join(HYPOTHESIS) + "\n")
    result = run_cli(
        [
            "-t",
            "a",
            "-l",
            "de-en",
            "-i",
            str(hyp),
            "--docids",
            "testset",
            "-m",
            "bleu",
            "chrf",
            "--testsets-file",
            str(two_sets),
            "-f",
            "json",
            "-w",
            "6",
        ]
    )
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert "|test:a|lang:de-en|" in document["signatures"]["BLEU"]
    start = 0
    for (docid, _, _, count), entry in zip(DOCS, document["documents"]):
        lines = slice(start, start + count)
        start += count
        assert entry["document"] == docid and entry["lines"] == count
        scores = entry["systems"][str(hyp)]
        assert scores["BLEU"] == round(
            sacrebleu.BLEU().corpus_score(HYPOTHESIS[lines], [REFERENCE[lines]]).score, 6
        )
        assert scores["chrF2"] == round(
            sacrebleu.CHRF().corpus_score(HYPOTHESIS[lines], [REFERENCE[lines]]).score, 6
        )
    plain = run_cli(
        [str(EXAMPLES / "ref.de"), "-i", str(EXAMPLES / "hyp.de"), "--docids", "testset"]
    )
    assert plain.exit_code == 1 and "needs a test set" in plain.stderr


def test_analyze_on_a_test_set_has_origlang_and_document_tables(two_sets, tmp_path) -> None:
    hyp = tmp_path / "hyp"
    hyp.write_text("\n".join(HYPOTHESIS) + "\n")
    result = run_cli(
        [
            "analyze",
            "-t",
            "a",
            "-l",
            "de-en",
            "-i",
            str(hyp),
            "--docids",
            "testset",
            "--testsets-file",
            str(two_sets),
            "-m",
            "bleu",
            "-f",
            "json",
        ]
    )
    assert result.exit_code == 0, result.stderr
    tables = {t["key"]: t for t in json.loads(result.stdout)["tables"]}
    keep = [doc for doc, (_, _, _, n) in enumerate(DOCS) for _ in range(n)]
    for lang in ("de", "en"):
        lines = [i for i, doc in enumerate(keep) if DOCS[doc][1] == lang]
        row = next(r for r in tables["origlang"]["rows"] if r[0] == lang)
        expected = sacrebleu.BLEU().corpus_score(
            [HYPOTHESIS[i] for i in lines], [[REFERENCE[i] for i in lines]]
        )
        assert row[1] == len(lines) and row[2] == pytest.approx(expected.score)
    assert [r[0] for r in tables["documents"]["rows"]] == [d[0] for d in DOCS]
    assert "|test:a|lang:de-en|" in tables["overview"]["signatures"][0]
