"""The compiled aligned batch engine (bleucli/_native_aligned.c) inside: its three ways of
scoring a job (bit-parallel match sets for sentences up to 512 positions, n-gram tables for
longer ones, the per-call API's statistics functions beyond both) give SacreBLEU's numbers on the same inputs; its
own lowercasing is str.lower() for every code point; its whitespace test is str.isspace()
for every code point; texts repeated as one object or as equal copies score alike."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

from bleucli import batch
from bleucli.native import native
from tests.conftest import sentences

pytestmark = pytest.mark.skipif(native is None, reason="the compiled core is not built")

#: batch_aligned's flags (bleucli/_native_batch.h)
TOK13A, LOWER, NO_SETS, GENERAL, PLAIN = 1, 2, 4, 8, 16

#: (metric name, bleucli options, the SacreBLEU object scoring the same)
CONFIGS = [
    ("bleu", {}, lambda: sacrebleu.BLEU(effective_order=True)),
    (
        "bleu",
        {"max_ngram_order": 6},
        lambda: sacrebleu.BLEU(effective_order=True, max_ngram_order=6),
    ),
    ("chrf", {}, lambda: sacrebleu.CHRF()),
    (
        "chrf",
        {"word_order": 2, "lowercase": True},
        lambda: sacrebleu.CHRF(word_order=2, lowercase=True),
    ),
    (
        "chrf",
        {"whitespace": True, "char_order": 8},
        lambda: sacrebleu.CHRF(whitespace=True, char_order=8),
    ),
    ("ter", {}, lambda: sacrebleu.TER()),
]
IDS = [f"{name}-{k}" for k, (name, _, _) in enumerate(CONFIGS)]

#: pieces that take 13a's rewriting path, cross string widths, repeat, or lowercase in Python
PIECES = [
    "&quot;",
    "&amp;",
    "&lt;b&gt;",
    "<skipped>",
    "-\n",
    "1,000.5",
    "..",
    ",,",
    " - ",
    "3-4",
    "ß",
    "中文",
    "\U0001f600",
    "\u00a0",
    "\u3000",
    "ΣΑΣ",
    "İstanbul",
    "Ǆ",
    "the",
    "the the",
]
short_texts = sentences | st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=14).map(
    " ".join
)
#: with long lines of few distinct words (the clipping and the tables' bound matter)
texts = short_texts | st.lists(
    st.sampled_from(["a", "b", "a b", ".", "ab"]), min_size=60, max_size=160
).map(" ".join)


def engine(
    name: str, options: dict, hyps: list[str], streams: list[list], flags: int
) -> list[float]:
    """batch_aligned's scores with extra flags (the scorer's own flags kept)."""
    metric = batch.scorer(name, dict(options))
    metric.num_refs = len(streams)
    spec = batch._native_spec(metric)
    assert spec is not None
    prepared, own = batch._for_engine(metric, [hyps, *streams], lowers=True)
    out = np.empty(len(hyps))
    native.batch_aligned(spec[0], prepared[0], prepared[1:], spec[1], own | flags, 2, out)
    return out.tolist()


@pytest.mark.parametrize(("name", "options", "make"), CONFIGS, ids=IDS)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_the_three_ways_give_sacrebleus_scores(name, options, make, data) -> None:
    n = data.draw(st.integers(1, 4))
    pick = short_texts if name == "ter" else texts  # SacreBLEU's TER of long lines is slow
    hyps = data.draw(st.lists(pick, min_size=n, max_size=n))
    k = data.draw(st.integers(1, 2))
    streams = [data.draw(st.lists(pick | st.none(), min_size=n, max_size=n)) for _ in range(k)]
    for i in range(n):
        if all(stream[i] is None for stream in streams):
            streams[0][i] = hyps[(i + 1) % n]  # the same object as another job's hypothesis
    expected = [make().sentence_score(h, [s[i] for s in streams]).score for i, h in enumerate(hyps)]
    for flags in (0, NO_SETS, GENERAL, PLAIN):
        assert engine(name, options, hyps, streams, flags) == expected, flags


#: pieces glued together without spaces: runs of '.' and ',' between digits and letters,
#: '<' and '&' with and without what 13a rewrites (the one-pass 13a's own rules)
GLUED = ["a", "b", "1", "7", ".", ",", "..", "-", "<", "&", "amp;", "lt;", "skipped>", " ", "é"]
glued = st.lists(st.sampled_from(GLUED), min_size=1, max_size=16).map("".join)


@settings(max_examples=150, deadline=None)
@given(pairs=st.lists(st.tuples(glued, glued, st.booleans()), min_size=1, max_size=6))
def test_13a_in_one_pass_splits_as_sacrebleu(pairs) -> None:
    """BLEU of a line against itself with a tail, or against another line, is sensitive to
    every token boundary: the one-pass 13a of the packed paths, the general path's 13a and
    SacreBLEU's agree on lines full of '.', ',', digits, '<' and '&'."""
    hyps = [h for h, _, _ in pairs]
    refs = [h + " a" if same else r for h, r, same in pairs]
    expected = [
        sacrebleu.BLEU(effective_order=True).sentence_score(h, [r]).score
        for h, r in zip(hyps, refs)
    ]
    for flags in (0, NO_SETS, GENERAL):
        assert engine("bleu", {}, hyps, [refs], flags) == expected, flags


@pytest.mark.parametrize("metric", ["bleu", "chrf", "chrf++"])
def test_long_sentences_take_the_tables_and_agree(metric) -> None:
    """Past the match sets' bound (512 words or characters) jobs take the n-gram tables;
    both, and SacreBLEU, agree on them (repeated words make the clipping matter). TER has
    one way only."""
    words = ["a", "b", "c", "the", ".", ",", "b c", "c a"]
    rng = np.random.default_rng(7)
    hyps = [" ".join(rng.choice(words, size=size)) for size in (150, 300, 40)]
    refs = [" ".join(rng.choice(words, size=size)) for size in (320, 180, 600)]
    make = {
        "bleu": lambda: sacrebleu.BLEU(effective_order=True),
        "chrf": sacrebleu.CHRF,
        "chrf++": lambda: sacrebleu.CHRF(word_order=2),
    }
    expected = [make[metric]().sentence_score(h, [r]).score for h, r in zip(hyps, refs)]
    name, options = ("chrf", {"word_order": 2}) if metric == "chrf++" else (metric, {})
    for flags in (0, NO_SETS, GENERAL):
        assert engine(name, options, hyps, [refs], flags) == expected


@pytest.mark.parametrize("metric", ["bleu", "chrf"])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_match_sets_across_words_of_64_positions(metric, data) -> None:
    """Sentences of 40..300 positions from a four-letter alphabet: n-grams recur across the
    64-position words of the match sets (the shift carries a bit from one word to the next),
    so every order's clipping is exercised; the sets, the tables and SacreBLEU agree."""
    letters = st.sampled_from("abcd")
    if metric == "bleu":
        line = st.lists(letters, min_size=40, max_size=300).map(" ".join)
    else:
        line = st.lists(letters, min_size=40, max_size=300).map("".join)
    hyps = [data.draw(line) for _ in range(2)]
    streams = [[data.draw(line) for _ in range(2)] for _ in range(data.draw(st.integers(1, 2)))]
    make = sacrebleu.BLEU(effective_order=True) if metric == "bleu" else sacrebleu.CHRF()
    expected = [make.sentence_score(h, [s[i] for s in streams]).score for i, h in enumerate(hyps)]
    for flags in (0, NO_SETS, GENERAL, PLAIN):
        assert engine(metric, {}, hyps, streams, flags) == expected, flags


def test_lowercasing_is_str_lower_for_every_code_point() -> None:
    """chrF with lowercase=True lowercases in the engine (Python only for capital sigma and
    U+0130): a text of every code point against its str.lower() scores 100 wherever
    str.lower() makes them equal, which it does for all."""
    chunks = [
        "".join(chr(c) for c in range(start, min(start + 64, sys.maxunicode + 1)))
        for start in range(0, sys.maxunicode + 1, 64)
    ]
    keep = [c for c in chunks if c.lower().split()]
    scores = batch.sentence_scores(
        "chrf", keep, [[c.lower() for c in keep]], lowercase=True, char_order=1
    )
    assert [k for k, s in enumerate(scores) if s != 100.0] == []
    # and the other way: upper-case references of lower-case hypotheses
    scores = batch.sentence_scores(
        "chrf", [c.lower() for c in keep], [keep], lowercase=True, char_order=1
    )
    assert [k for k, s in enumerate(scores) if s != 100.0] == []


def test_final_sigma_goes_through_python() -> None:
    """Texts only Python lowercases, as objects of one job and as objects several jobs
    share (a reference repeated for three hypotheses, a hypothesis that is also a
    reference), next to texts C lowercases."""
    shared = "ΣΑΣ ΟΔΟΣ İ"
    hyps = ["ΟΔΟΣ ΣΑΣ", "İSTANBUL", "ΣΑΣ", "σας οδος", "ΣΑΣ ΟΔΟΣ", shared, "Οδος Σας"]
    refs = ["οδος σας", "i̇stanbul", "σας", shared, shared, "ΣΑΣ", shared]
    for name, make in (("chrf", lambda: sacrebleu.CHRF(lowercase=True)), ("ter", sacrebleu.TER)):
        options = {"lowercase": True} if name == "chrf" else {}
        expected = [make().sentence_score(h, [r]).score for h, r in zip(hyps, refs)]
        assert batch.sentence_scores(name, hyps, [refs], **options).tolist() == expected


def test_whitespace_is_str_isspace_for_every_code_point() -> None:
    """The engine asks Python whether a character above ASCII is whitespace only inside
    the ranges that hold any; every whitespace character splits words, nothing else does."""
    ranges = [(0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x205F), (0x3000, 0x3000)]
    spaces = [c for c in range(128, sys.maxunicode + 1) if chr(c).isspace()]
    assert all(any(lo <= c <= hi for lo, hi in ranges) for c in spaces)
    candidates = sorted(
        set(range(0, 128)) | set(spaces) | {c for lo, hi in ranges for c in range(lo - 1, hi + 2)}
    )
    hyps = [f"ab{chr(c)}cd ef" for c in candidates]
    refs = ["ab cd ef"] * len(hyps)
    got = batch.sentence_scores("ter", hyps, [refs], case_sensitive=True)
    expected = [0.0 if chr(c).isspace() else 2 / 3 * 100 for c in candidates]
    assert got.tolist() == expected


def test_13a_classes_every_code_point_as_sacrebleu() -> None:
    """BLEU's 13a pass looks a character of a one- or two-byte string up in a table: an
    ASCII character as SacreBLEU's rules say, any other one a word character unless
    str.isspace() says whitespace (in strings of every width, against a one-byte reference)."""
    ref = "ab cd ef"
    bleu = sacrebleu.BLEU(effective_order=True)
    ascii_hyps = [f"ab{chr(c)}cd ef" for c in range(128)]
    expected = [bleu.sentence_score(h, [ref]).score for h in ascii_hyps]
    assert batch.sentence_scores("bleu", ascii_hyps, [[ref] * 128]).tolist() == expected
    word, space = (bleu.sentence_score(h, [ref]).score for h in ("abxcd ef", "ab cd ef"))
    codes = [*range(128, 0x10000), *range(0x10000, sys.maxunicode + 1, 997)]
    hyps = [f"ab{chr(c)}cd ef" for c in codes]
    got = batch.sentence_scores("bleu", hyps, [[ref] * len(hyps)])
    wrong = [hex(c) for c, g in zip(codes, got) if g != (space if chr(c).isspace() else word)]
    assert wrong == []


def test_equal_texts_score_alike_as_one_object_or_as_copies() -> None:
    ref = "the cat sat on the mat ."
    hyps = ["the cat sat on a mat .", "a cat sat", "the cat sat on the mat ."]
    same = batch.sentence_scores("bleu", hyps, [[ref] * 3])
    copies = batch.sentence_scores("bleu", hyps, [["".join(ref) + "" for _ in range(3)]])
    assert same.tolist() == copies.tolist()
    assert same.tolist() == [
        sacrebleu.BLEU(effective_order=True).sentence_score(h, [ref]).score for h in hyps
    ]


class Text(str):
    """A str subclass: scored by its characters like a str."""


def _copy(text: str, how: str) -> str:
    """text as another object: an equal copy, the same length with its last character
    changed (same width), or an equal str subclass."""
    if how == "copy":
        return "".join(list(text))
    if how == "subclass":
        return Text(text)
    if not text:
        return text
    last = text[-1]
    other = chr(ord(last) ^ 1) if ord(last) ^ 1 not in range(0xD800, 0xE000) else "b"
    return text[:-1] + other


@settings(max_examples=60, deadline=None)
@given(
    runs=st.lists(
        st.tuples(
            short_texts,
            short_texts,
            st.lists(st.sampled_from(["same", "copy", "near", "subclass"]), max_size=4),
        ),
        min_size=1,
        max_size=5,
    ),
    with_none=st.booleans(),
)
def test_consecutive_equal_strings_score_as_themselves(runs, with_none) -> None:
    """A reference repeated for each completion of a prompt often arrives as equal strings,
    not one object: the engine prepares such neighbours once. Neighbours of the same length
    that differ (in the last character, in any width), str subclasses and missing
    references score as themselves; SacreBLEU agrees and the caller's lists are unchanged."""
    hyps: list[str] = []
    refs: list[str] = []
    for hyp, ref, variants in runs:
        hyps.append(hyp)
        refs.append(ref)
        for how in variants:
            hyps.append(hyp if how == "same" else _copy(hyp, how))
            refs.append(ref if how == "same" else _copy(ref, how))
    second = [None if with_none and i % 2 else _copy(r, "copy") for i, r in enumerate(refs)]
    before = [list(map(id, hyps)), list(map(id, refs)), list(map(id, second))]
    for name, options, make in CONFIGS:
        expected = [
            make().sentence_score(h, [r for r in (a, b) if r is not None]).score
            for h, a, b in zip(hyps, refs, second)
        ]
        for flags in (0, NO_SETS, GENERAL):
            assert engine(name, options, hyps, [refs, second], flags) == expected, (name, flags)
    assert [list(map(id, hyps)), list(map(id, refs)), list(map(id, second))] == before


def test_flags_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match="flags"):
        native.batch_aligned(2, ["a"], [["a"]], (), 32, 1, np.empty(1))
    with pytest.raises(ValueError, match="tok13a"):
        native.batch_aligned(2, ["a"], [["a"]], (), TOK13A, 1, np.empty(1))


def test_ter_of_long_repetitive_lines_equals_the_specification() -> None:
    """Lines past the beam's reach with many edits and shifts: the compiled search (beam rows
    only for candidates that could still win) gives the specification's edit counts."""
    from bleucli.metrics.ter_edit import translation_edit_rate

    rng = np.random.default_rng(11)
    vocab = "a b c d e f the of and to".split()
    pairs = [
        (list(rng.choice(vocab, size=n)), list(rng.choice(vocab, size=m)))
        for n, m in [(30, 70), (60, 40), (80, 80), (45, 45), (26, 90), (90, 26)]
    ]
    for size in (30, 50, 70):  # references that are the hypothesis with blocks moved and edited
        hyp = list(rng.choice(vocab, size=size))
        ref = hyp[:]
        for _ in range(12):
            at, length = int(rng.integers(0, len(ref))), int(rng.integers(1, 5))
            block = ref[at : at + length]
            del ref[at : at + length]
            to = int(rng.integers(0, len(ref) + 1))
            ref[to:to] = block if rng.random() < 0.7 else [str(rng.choice(vocab))]
        pairs.append((hyp, ref))
    ids = {word: k for k, word in enumerate(vocab)}
    for hyp, ref in pairs:
        expected = translation_edit_rate(hyp, ref)[0]
        assert native.ter_edits([ids[w] for w in hyp], [ids[w] for w in ref]) == expected
    hyps = [" ".join(h) for h, _ in pairs]
    refs = [" ".join(r) for _, r in pairs]
    expected = [100 * (translation_edit_rate(h, r)[0] / len(r)) for h, r in pairs]
    assert batch.sentence_scores("ter", hyps, [refs]).tolist() == expected


def test_more_than_64_reference_streams_is_one_clear_error() -> None:
    from bleucli.errors import InputError

    with pytest.raises(InputError, match="65 reference streams; at most 64"):
        batch.sentence_scores("bleu", ["a b"], [["a b"]] * 65)


def test_an_object_repeated_far_apart_scores_alike() -> None:
    """The engine recognises an object it saw a few thousand items ago; one seen again
    after 40,000 others is prepared again, and every job still gets its own score."""
    ref, hyp = "the cat sat on the mat .", "the cat sat on a mat ."
    fillers = [f"word{i} and more" for i in range(40_000)]
    hyps = [hyp, *fillers, hyp]
    refs = [ref, *[f"{f} here" for f in fillers], ref]
    for name in ("bleu", "chrf", "ter"):
        got = batch.sentence_scores(name, hyps, [refs]).tolist()
        make = {
            "bleu": lambda: sacrebleu.BLEU(effective_order=True),
            "chrf": sacrebleu.CHRF,
            "ter": sacrebleu.TER,
        }[name]()
        for i in (0, 1, 20_000, len(hyps) - 1):
            assert got[i] == make.sentence_score(hyps[i], [refs[i]]).score, (name, i)
