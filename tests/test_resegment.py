"""Minimum-WER resegmentation (--resegment, bleucli resegment, bleucli.resegment): identical
to mweralign 1.4.1 on the same tokens, realigns as a person would, is recorded in the
signature, and refuses what it cannot align with one clear line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bleucli
from bleucli import mwer
from bleucli.errors import ConfigError, InputError
from tests.conftest import EXAMPLES, run_cli


def oracle():
    """mweralign, the reference implementation (a test dependency; bleucli does not need it)."""
    return pytest.importorskip("mweralign", reason="mweralign (the test oracle) is not installed")


REF = str(EXAMPLES / "ref.de")
HYP = str(EXAMPLES / "hyp.de")
DOCIDS = str(EXAMPLES / "docids.txt")
UNSEGMENTED = str(EXAMPLES / "unsegmented.de")
PER_DOCUMENT = str(EXAMPLES / "hyp.doc.de")
REFS = (EXAMPLES / "ref.de").read_text(encoding="utf-8").splitlines()
HYPS = (EXAMPLES / "hyp.de").read_text(encoding="utf-8").splitlines()

# words that collide case-insensitively, punctuation 13a splits, digits, CJK characters
VOCABULARY = [
    "a",
    "A",
    "b",
    "the",
    "The",
    "cat.",
    "1.5",
    "x,y",
    "(z)",
    "dog",
    "Öl",
    "öl",
    "猫",
    "犬",
]
words = st.sampled_from(VOCABULARY)
lines = st.lists(words, min_size=0, max_size=6).map(" ".join)


def engine_counts(refs: list[str], hyp_tokens: list[str]) -> list[int]:
    """mweralign's own segmentation of the tokens, as segment lengths."""
    out = oracle().align_texts("\n".join(refs), " ".join(hyp_tokens), is_tokenized=False)
    return [len(mwer.TOKENIZERS["none"](line)) for line in out.split("\n")]  # its words


def tokens(text: str, tokenize: str) -> list[str]:
    return mwer.TOKENIZERS[tokenize](text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    refs=st.lists(lines, min_size=1, max_size=6).filter(lambda r: bool(r[-1].strip())),
    hyp=st.lists(words, min_size=1, max_size=30),
    tokenize=st.sampled_from(["none", "13a", "char"]),
)
def test_segments_are_mwerealigns_on_the_same_tokens(
    refs: list[str], hyp: list[str], tokenize: str
) -> None:
    text = " ".join(hyp)
    segments = mwer.resegment(text, refs, tokenize=tokenize)
    assert len(segments) == len(refs)
    ref_tokens = [" ".join(tokens(line, tokenize)) for line in refs]
    hyp_tokens = tokens(text, tokenize)
    expected = engine_counts(ref_tokens, hyp_tokens)
    got = [len(tokens(s, tokenize)) for s in segments]
    assert got == expected
    assert sum((tokens(s, tokenize) for s in segments), []) == hyp_tokens  # nothing lost


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.tuples(
            st.lists(lines, min_size=1, max_size=4).filter(lambda r: bool(r[-1].strip())),
            st.lists(words, min_size=1, max_size=12).map(" ".join),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_documents_align_on_their_own_like_mweralign_with_docids(docs) -> None:
    refs = [line for ref_lines, _ in docs for line in ref_lines]
    ids = [f"d{k}" for k, (ref_lines, _) in enumerate(docs) for _ in ref_lines]
    hyps = [hyp for _, hyp in docs]
    segments = mwer.resegment(hyps, refs, docids=ids, tokenize="none")
    expected = []
    for ref_lines, hyp in docs:
        counts = engine_counts(ref_lines, hyp.split())
        position, words_ = 0, hyp.split()
        for count in counts:
            expected.append(" ".join(words_[position : position + count]))
            position += count
    assert segments == expected


@pytest.mark.skipif(shutil.which("mweralign") is None, reason="the mweralign CLI is not on PATH")
def test_the_command_matches_the_mweralign_cli_with_document_ids(tmp_path) -> None:
    out = tmp_path / "mw.txt"
    subprocess.run(
        ["mweralign", "-r", REF, "-t", PER_DOCUMENT, "-d", DOCIDS, "-m", "none", "-o", str(out)],
        check=True,
        capture_output=True,
    )
    result = run_cli(
        ["resegment", REF, "-i", PER_DOCUMENT, "--docids", DOCIDS, "--tokenize", "none"]
    )
    assert result.exit_code == 0, result.stderr
    theirs = out.read_text(encoding="utf-8").splitlines()
    assert [line.split() for line in result.stdout.splitlines()] == [t.split() for t in theirs]


#: Eight WMT22 documents (uk-en ALMAnaCH-Inria, en-hr Lan-Bridge; tests/data/reseg-wmt22/
#: README.md) whose segments once differed from mweralign's, with its own output per
#: tokenisation (``mweralign -m none`` on the text, and on the 13a and char tokens).
WMT22 = Path(__file__).parent / "data" / "reseg-wmt22"


def _lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


@pytest.mark.parametrize("tokenize", ["none", "13a", "char"])
def test_real_documents_segment_as_mweralign(tokenize: str) -> None:
    """Long real documents with no-break spaces inside numbers (``820\xa0000``), which
    mweralign keeps inside a word, and many equal-cost boundaries: the same tokens in every
    segment as mweralign 1.4.1's stored output."""
    refs, ids = _lines(WMT22 / "ref.txt"), _lines(WMT22 / "docids.txt")
    hyps = _lines(WMT22 / "hyp.doc.txt")
    theirs = [
        line.split(" ") if line else [] for line in _lines(WMT22 / f"mweralign-{tokenize}.txt")
    ]
    split = mwer.TOKENIZERS[tokenize]
    ours: list[list[str]] = []
    for document, hyp in zip(dict.fromkeys(ids), hyps):
        lines = [r for r, d in zip(refs, ids) if d == document]
        tokens_ = split(hyp)
        position = 0
        for count in mwer.align_counts(tokens_, [split(line) for line in lines]):
            ours.append(tokens_[position : position + count])
            position += count
    assert [[w for w in line if w] for line in theirs] == ours
    if tokenize != "13a":  # 13a's rules read context: a segment alone can tokenise otherwise
        segments = mwer.resegment(hyps, refs, docids=ids, tokenize=tokenize)
        assert [split(segment) for segment in segments] == ours


@pytest.mark.skipif(shutil.which("mweralign") is None, reason="the mweralign CLI is not on PATH")
def test_the_stored_real_sample_is_what_mweralign_prints(tmp_path) -> None:
    """The stored oracle is mweralign's own output (and the command's output equals it)."""
    out = tmp_path / "mw.txt"
    args = ["-r", WMT22 / "ref.txt", "-t", WMT22 / "hyp.doc.txt", "-d", WMT22 / "docids.txt"]
    subprocess.run(
        ["mweralign", *map(str, args), "-m", "none", "-o", str(out)],
        check=True,
        capture_output=True,
    )
    assert out.read_text(encoding="utf-8") == (WMT22 / "mweralign-none.txt").read_text(
        encoding="utf-8"
    )
    result = run_cli(["resegment", *map(str, args[1::2][:1]), "-i", str(WMT22 / "hyp.doc.txt"),
                      "--docids", str(WMT22 / "docids.txt"), "--tokenize", "none"])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [line.rstrip(" ") for line in _lines(out)]


def test_a_no_break_space_stays_inside_a_word_as_in_mweralign() -> None:
    assert mwer.TOKENIZERS["none"]("820\xa0000 ljudi\u3000x\ty") == [
        "820\xa0000",
        "ljudi\u3000x",
        "y",
    ]
    assert mwer.TOKENIZERS["13a"]("820\xa0000 ljudi") == ["820", "000", "ljudi"]


#: Words the references never hold: what a system adds at a boundary is a tie between the
#: end of one segment and the start of the next.
JUNK = st.sampled_from(["zz", "qq", "Zz", "x\xa0y", "7"])


@st.composite
def tied_documents(draw):
    """A long document: 15-40 reference lines from a tiny vocabulary (repeated words make
    equal-cost alignments everywhere) and a hypothesis that copies them with words dropped,
    changed and added, most of all around the line boundaries."""
    vocabulary = st.sampled_from(["a", "b", "the", "The", "cat.", "1.5", "x,y", "Öl", "猫"])
    refs = draw(st.lists(st.lists(vocabulary, min_size=1, max_size=8), min_size=15, max_size=40))
    hyp: list[str] = []
    for line in refs:
        for word in line:
            action = draw(st.sampled_from(["keep"] * 5 + ["drop", "change", "add"]))
            if action == "keep":
                hyp.append(word)
            elif action == "change":
                hyp.append(draw(vocabulary))
            elif action == "add":
                hyp.extend([word, draw(JUNK)])
        hyp.extend(draw(st.lists(JUNK, max_size=3)))  # at the boundary
    return [" ".join(line) for line in refs], hyp or ["zz"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=tied_documents(), tokenize=st.sampled_from(["none", "13a", "char"]))
def test_long_documents_full_of_boundary_ties_segment_as_mweralign(document, tokenize) -> None:
    refs, hyp = document
    split = mwer.TOKENIZERS[tokenize]
    hyp_tokens = split(" ".join(hyp))
    expected = engine_counts([" ".join(split(line)) for line in refs], hyp_tokens)
    assert mwer.align_counts(hyp_tokens, [split(line) for line in refs]) == expected


@settings(max_examples=80, deadline=None)
@given(
    refs=st.lists(st.lists(words, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=8),
    tokenize=st.sampled_from(["none", "13a", "char"]),
)
def test_the_references_joined_come_back_as_the_reference_lines(refs, tokenize) -> None:
    assert mwer.resegment(" ".join(refs), refs, tokenize=tokenize) == refs
    assert mwer.resegment("\n".join(refs), refs, tokenize=tokenize) == refs


def test_merged_and_split_sentences_realign_as_a_person_would() -> None:
    refs = ["The cat sat on the mat.", "It was happy.", "Then it slept all day.", "Good night."]
    # an LLM merged the first two sentences and split the third
    llm = ["the cat sat on the mat, it was so happy.", "Then it slept", "all day.", "Good night!"]
    segments = mwer.resegment(llm, refs, docids=["d"] * 4)
    assert segments == [
        "the cat sat on the mat,",
        "it was so happy.",
        "Then it slept all day.",
        "Good night!",
    ]
    # a speech system's own segmentation, one document, no punctuation
    asr = "the cat sat on the mat it was happy then\nit slept all day good night"
    assert mwer.resegment(asr, refs, tokenize="13a") == [
        "the cat sat on the mat",
        "it was happy",
        "then it slept all day",
        "good night",
    ]


def test_chinese_defaults_to_character_alignment_and_keeps_the_text() -> None:
    refs = ["我们今天去公园。", "明天下雨。"]
    assert mwer.default_tokenize(None, refs) == "char"
    assert mwer.default_tokenize("zh", ["ascii only"]) == "char"
    assert mwer.default_tokenize("de", refs) == "13a"
    assert mwer.resegment("我们今天去了公园。明天会下雨。", refs) == [
        "我们今天去了公园。",
        "明天会下雨。",
    ]


def test_trailing_and_all_empty_reference_lines_get_empty_segments() -> None:
    # the engine drops trailing empty lines and crashes on an empty reference: never passed
    assert mwer.resegment("a b", ["a", "b", "", ""], tokenize="none") == ["a", "b", "", ""]
    assert mwer.resegment("a b", ["", ""], tokenize="none") == ["a b", ""]


def test_a_reference_word_that_is_mwerealigns_separator_is_just_a_word() -> None:
    assert mwer.resegment("a ### b c", ["a ### b", "c"], tokenize="none") == ["a ### b", "c"]


def test_the_engine_prints_nothing_and_the_caller_logging_is_untouched(capfd) -> None:
    import logging

    handlers = list(logging.getLogger().handlers)
    mwer.resegment("a b c", ["a b", "c"])
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""
    assert logging.getLogger().handlers == handlers


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab1.,-(' \n\u00a0\u3000猫", max_size=40))
def test_every_tokeniser_keeps_each_token_in_its_place(text: str) -> None:
    for name, tokenize in mwer.TOKENIZERS.items():
        words = tokenize(text)
        assert [text[a:b] for a, b in mwer.spans(text, words)] == words, name
        assert mwer.spans(text, words, name) == mwer.spans(text, words), name
    # 13a here is 13a: the scoring tokeniser's tokens (on text without line breaks, which
    # it joins, and entities, which it unescapes)
    from bleucli.tokenizers.mteval import tokenize_13a_python

    line = text.replace("\n", " ")
    assert mwer.TOKENIZERS["13a"](line) == tokenize_13a_python(line).split()


# ---------------------------------------------------------------- command line


def test_score_with_resegment_records_it_in_the_signature() -> None:
    result = run_cli([REF, "-i", UNSEGMENTED, "--resegment", "-m", "bleu", "chrf", "-f", "json"])
    assert result.exit_code == 0, result.stderr
    scores = json.loads(result.stdout)
    aligned = run_cli([REF, "-i", HYP, "-m", "bleu", "chrf", "-f", "json"])
    for got, want in zip(scores, json.loads(aligned.stdout)):
        assert got["score"] == want["score"]  # the example realigns to its own lines
        assert got["reseg"] == "mwer-13a" and "|reseg:mwer-13a|" in got["signature"]
    short = run_cli([REF, "-i", UNSEGMENTED, "--resegment", "-f", "text", "-sh"])
    assert "|reseg:mwer-13a|" in short.stdout


def test_per_document_output_and_resegment_output_file(tmp_path) -> None:
    out = tmp_path / "reseg.de"
    result = run_cli(
        [REF, "-i", PER_DOCUMENT, "--docids", DOCIDS, "--resegment", "--resegment-output", str(out)]
    )
    assert result.exit_code == 0, result.stderr
    assert out.read_text(encoding="utf-8").splitlines() == HYPS
    # the file it wrote is what the line-aligned scorer reads
    again = run_cli([REF, "-i", str(out), "-b"])
    assert again.stdout.strip() == run_cli([REF, "-i", HYP, "-b"]).stdout.strip()
    # with -d, document ids also give per-document scores
    detail = run_cli(
        [REF, "-i", PER_DOCUMENT, "--docids", DOCIDS, "--resegment", "-d", "-f", "json"]
    )
    assert [d["document"] for d in json.loads(detail.stdout)["documents"]] == [
        "news-1",
        "news-2",
        "news-3",
    ]


def test_the_resegment_command_writes_lines_and_tells_how() -> None:
    result = run_cli(["resegment", REF, "-i", UNSEGMENTED])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == HYPS
    assert "reseg:mwer-13a" in result.stderr and "loading reference" not in result.stderr


@pytest.mark.parametrize(
    "extra",
    [
        ["-sl"],
        ["--paired-bs", "-pbsn", "50", "--json-layout", "bleucli"],
        ["--rank", "-pbsn", "50"],
        ["--confidence"],
    ],
)
def test_resegment_works_with_the_other_modes(extra: list[str]) -> None:
    inputs = [UNSEGMENTED] if extra[0] in ("-sl", "--confidence") else [PER_DOCUMENT, HYP]
    args = [REF, "-i", *inputs, "--resegment", "-f", "json", *extra]
    if len(inputs) > 1:
        args += ["--docids", DOCIDS]
    result = run_cli(args)
    assert result.exit_code == 0, result.stderr
    assert "reseg:mwer-13a" in result.stdout


def test_analyze_resegments_too() -> None:
    result = run_cli(["analyze", REF, "-i", UNSEGMENTED, "--resegment", "-f", "json"])
    assert result.exit_code == 0, result.stderr
    assert "reseg:mwer-13a" in result.stdout


def test_from_signature_brings_the_alignment_back() -> None:
    args = [REF, "-i", UNSEGMENTED, "--resegment", "--resegment-tokenize", "none"]
    first = json.loads(run_cli(args).stdout)
    signature = "BLEU|" + first["signature"]
    again = run_cli([REF, "-i", UNSEGMENTED, "--from-signature", signature, "-q"])
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["signature"] == first["signature"]
    assert json.loads(again.stdout)["score"] == first["score"]
    bad = run_cli([REF, "-i", UNSEGMENTED, "--from-signature", "BLEU|nrefs:1|reseg:dtw-x"])
    assert bad.exit_code == 2 and "reseg:dtw-x" in bad.stderr


def test_report_refuses_and_gate_fails_mixed_alignments(tmp_path) -> None:
    reseg, aligned = tmp_path / "reseg.json", tmp_path / "aligned.json"
    reseg.write_text(run_cli([REF, "-i", UNSEGMENTED, "--resegment"]).stdout, encoding="utf-8")
    aligned.write_text(run_cli([REF, "-i", HYP]).stdout, encoding="utf-8")
    report = run_cli(["report", str(reseg), str(aligned)])
    assert report.exit_code == 1
    assert "aligned differently" in report.stderr and "--resegment" in report.stderr
    gate = run_cli(["gate", str(reseg), "--baseline", str(aligned), "-f", "text"])
    assert gate.exit_code == 3 and "reseg" in gate.stdout


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "args, message",
    [
        (["--docids", DOCIDS, "--resegment", "-i", HYP + "x"], "no such file"),
        (["-i", UNSEGMENTED, "--docids", DOCIDS, "--resegment"], "one line per document (3"),
        (
            ["-i", UNSEGMENTED, "--resegment-output", "x.txt"],
            "--resegment-output needs --resegment",
        ),
        (["-i", UNSEGMENTED, "--resegment", "--resegment-tokenize", "spm"], "spm"),
        (["-i", UNSEGMENTED, HYP, "--resegment", "--resegment-output", "x"], "one -i file"),
        (["-i", UNSEGMENTED], "add --resegment"),
    ],
)
def test_bad_command_lines_get_one_line(args: list[str], message: str) -> None:
    result = run_cli([REF, *args])
    assert result.exit_code in (1, 2)
    assert message in result.stderr and "Traceback" not in result.stderr


def test_an_empty_document_and_an_output_without_words_are_refused(write) -> None:
    docs = write("docs.de", ["Der Zug fährt.", "", "Danke."])
    result = run_cli([REF, "-i", docs, "--docids", DOCIDS, "--resegment"])
    assert result.exit_code == 1
    assert "line 2 (document news-2)" in result.stderr and "no words" in result.stderr
    blank = write("blank.de", ["", " "])
    result = run_cli([REF, "-i", blank, "--resegment"])
    assert result.exit_code == 1 and "no words to resegment" in result.stderr


def test_a_huge_document_is_refused_before_any_alignment(write) -> None:
    # 200k words x 3000 lines: 2.4 GB of alignment table, 6.6e9 steps
    huge = write("huge.de", ["wort " * 200_000])
    refs = write("refs.de", [" ".join(["ein"] * 10)] * 3000)
    result = run_cli([refs, "-i", huge, "--resegment", "--resegment-tokenize", "none"])
    assert result.exit_code == 1
    assert "too large to resegment" in result.stderr and "--docids" in result.stderr
    with pytest.raises(InputError, match="too large"):
        mwer.resegment("a b c d", ["a b", "c d"], max_cells=4)


def test_the_python_api_validates_its_arguments() -> None:
    with pytest.raises(InputError, match=r"references\[1\]"):
        bleucli.resegment("a b", ["a", 3])  # type: ignore[list-item]
    with pytest.raises(InputError, match="references: expected a list"):
        bleucli.resegment("a b", "a b")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown resegmentation tokenisation"):
        bleucli.resegment("a b", ["a", "b"], tokenize="spm")
    with pytest.raises(InputError, match="2 document ids for 3 reference lines"):
        bleucli.resegment(["a b"], ["a", "b", "c"], docids=["d", "d"])
    with pytest.raises(InputError, match="no reference lines"):
        bleucli.resegment("a", [])


def test_resegmentation_needs_no_optional_package() -> None:
    code = (
        "import sys; sys.modules['mweralign'] = None\n"
        "from bleucli.cli.launch import main\n"
        f"main(['resegment', {REF!r}, '-i', {UNSEGMENTED!r}])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == HYPS


ids = st.lists(st.integers(0, 5), max_size=25)


@pytest.mark.skipif(mwer._NATIVE is None, reason="the compiled core is not built")
@settings(max_examples=300, deadline=None)
@given(hyp=ids.filter(bool), lines=st.lists(ids, min_size=1, max_size=8))
def test_the_compiled_engine_is_the_python_specification(hyp, lines) -> None:
    assert mwer._segment_native(hyp, lines) == mwer.segment_python(hyp, lines)


@pytest.mark.skipif(mwer._NATIVE is None, reason="the compiled core is not built")
def test_the_compiled_engine_on_a_long_document() -> None:
    import random

    rng = random.Random(7)
    lines = [[rng.randrange(300) for _ in range(rng.randrange(0, 30))] for _ in range(60)]
    hyp = [w for line in lines for w in line if rng.random() < 0.9] + [5, 6, 7]
    assert mwer._segment_native(hyp, lines) == mwer.segment_python(hyp, lines)


def test_the_compiled_engine_refuses_malformed_input() -> None:
    if mwer._NATIVE is None:
        pytest.skip("the compiled core is not built")
    with pytest.raises(ValueError, match="int32"):
        mwer._NATIVE.mwer_segment(b"abc", b"", 1)
    with pytest.raises(ValueError, match="at least one word"):
        mwer._NATIVE.mwer_segment(b"", b"\xff\xff\xff\xff", 1)
    word, boundary = (3).to_bytes(4, "little"), (-1).to_bytes(4, "little", signed=True)
    for rows, n_lines in ((word, 1), (boundary, 2), (word + boundary + word, 1), (b"", 1)):
        with pytest.raises(ValueError):  # a line never closed, or more lines than rows say
            mwer._NATIVE.mwer_segment(word, rows, n_lines)


def test_a_named_test_set_resegments_against_its_first_reference(cache_dir) -> None:
    args = ["-t", "sample", "-l", "en-de", "-f", "json"]
    result = run_cli([*args, "-i", UNSEGMENTED, "--resegment"])
    assert result.exit_code == 0, result.stderr
    assert "against the first reference" in result.stderr
    got, want = json.loads(result.stdout), json.loads(run_cli([*args, "-i", HYP]).stdout)
    assert got["score"] == want["score"]
    assert got["reseg"] == "mwer-13a" and "test:sample" in got["signature"]
    refused = run_cli([*args, "-i", UNSEGMENTED, "--resegment", "--docids", "testset"])
    assert refused.exit_code == 1 and "no document ids" in refused.stderr
