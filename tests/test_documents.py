"""--docids FILE: per-document scores of every metric and system, in every format, each
document's score computed as the corpus score of its own lines."""

from __future__ import annotations

import json

import pytest

import bleucli
from tests.conftest import EXAMPLES, run_cli

REF = str(EXAMPLES / "ref.de")
HYP = str(EXAMPLES / "hyp.de")
REFS = (EXAMPLES / "ref.de").read_text(encoding="utf-8").splitlines()
HYPS = (EXAMPLES / "hyp.de").read_text(encoding="utf-8").splitlines()


def test_document_scores_equal_corpus_scores_of_their_lines(write) -> None:
    # interleaved documents: a document's lines need not be contiguous
    ids = [f"d{(i * 7) % 4}" for i in range(len(REFS))]
    docids = write("docs.txt", ids)
    other = write("other.de", [line.replace("der", "die") for line in HYPS])
    result = run_cli(
        [
            REF,
            "-i",
            HYP,
            other,
            "-m",
            "bleu",
            "chrf",
            "ter",
            "--docids",
            docids,
            "-f",
            "json",
            "-w",
            "8",
        ]
    )
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert set(document["signatures"]) == {"BLEU", "chrF2", "TER"}
    assert [d["document"] for d in document["documents"]] == list(dict.fromkeys(ids))
    systems = {
        HYP: HYPS,
        other: (EXAMPLES / "hyp.de").read_text(encoding="utf-8").replace("der", "die").splitlines(),
    }
    for entry in document["documents"]:
        lines = [i for i, doc in enumerate(ids) if doc == entry["document"]]
        assert entry["lines"] == len(lines) and entry["first_line"] == lines[0] + 1
        for name, hyps in systems.items():
            picked = [hyps[i] for i in lines]
            refs = [[REFS[i] for i in lines]]
            for metric in (bleucli.BLEU(), bleucli.CHRF(), bleucli.TER()):
                expected = metric.corpus_score(picked, refs)
                assert entry["systems"][name][expected.name] == round(expected.score, 8)


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex", "html", "tsv"])
def test_document_tables(write, fmt) -> None:
    docids = write("docs.txt", [f"doc{i // 10}" for i in range(len(REFS))])
    result = run_cli([REF, "-i", HYP, "--docids", docids, "-f", fmt, "-d"])
    assert result.exit_code == 0, result.stderr
    assert "doc0" in result.stdout and "doc2" in result.stdout
    # (LaTeX: a signature in typewriter may break after each |)
    assert "nrefs:1|case:mixed" in result.stdout.replace("\\allowbreak{}", "")
    if fmt == "tsv":
        lines = result.stdout.splitlines()
        assert lines[0].startswith("# BLEU: ") and lines[1] == "Document\tLines\tSystem\tBLEU"
        assert len(lines) == 2 + 3


@pytest.mark.parametrize(
    "content, message",
    [
        (["a"] * 3, "3 document ids for 30 reference lines"),
        (["a"] * 10 + [""] + ["b"] * 19, ":11: empty document id"),
    ],
)
def test_bad_docids(write, content, message) -> None:
    path = write("docs.txt", content)
    result = run_cli([REF, "-i", HYP, "--docids", path])
    assert result.exit_code == 1 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
