"""The compiled core gives exactly what the pure-Python engine (the specification) gives,
on generated and adversarial Unicode input, and the engine can be chosen."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bleucli.native import native
from bleucli.tokenizers.mteval import tokenize_13a_python
from tests.conftest import EXAMPLES, ROOT, sentences

needs_native = pytest.mark.skipif(
    native is None, reason="the compiled core is not built (no C compiler, or BLEUCLI_PUREPYTHON=1)"
)

#: Characters where engines could disagree: whitespace of every kind (str.split() splits on
#: them, the 13a rules do not), astral and combining characters, zero-width characters,
#: digits of other scripts (not [0-9]), markup the tokeniser rewrites.
EDGE = [
    "\u00a0",
    "\u3000",
    "\u2028",
    "\u200b",
    "\u200d",
    "\ufeff",
    "\u0301",
    "\U0001f600",
    "\U00020001",
    "\x1c",
    "\x85",
    "\t",
    "\n",
    "\r",
    " ",
    "٣",
    "1",
    "9",
    "0",
    ".",
    ",",
    "-",
    "&quot;",
    "&amp;",
    "&lt;",
    "&gt;",
    "&",
    "<skipped>",
    "-\n",
    "a",
    "Z",
    "é",
    "中",
    "'",
    "/",
    "@",
    "{",
    "~",
    "`",
    "^",
    "_",
    "\\",
    "$",
]
edge_text = st.lists(st.sampled_from(EDGE) | st.text(max_size=3), max_size=40).map("".join)


@needs_native
@settings(max_examples=600)
@given(line=edge_text | sentences)
def test_13a_native_equals_python(line) -> None:
    assert native.tokenize_13a(line) == tokenize_13a_python(line)


@needs_native
@settings(max_examples=600)
@given(
    line=st.text(alphabet=st.characters(max_codepoint=255), max_size=60)
    | st.lists(st.sampled_from([e for e in EDGE if max(map(ord, e)) < 256]), max_size=30).map(
        "".join
    )
)
def test_13a_one_byte_path_equals_python(line) -> None:
    """ASCII and Latin-1 lines take a path of their own (no widening to UCS4)."""
    result = native.tokenize_13a(line)
    assert result == tokenize_13a_python(line)
    assert result.isascii() == tokenize_13a_python(line).isascii()  # canonical kind


@needs_native
def test_13a_on_long_lines() -> None:
    line = ("Der Hund, 3.5-4 &amp; 1,000 (z.B.)\u00a0... " * 2000) + "\U0001f600"
    assert native.tokenize_13a(line) == tokenize_13a_python(line)


tokens = st.sampled_from(
    ["a", "b", "c", "the", "cat", "中", "\U0001f600", "é", "e\u0301"]
) | st.text(min_size=1, max_size=3).filter(lambda t: t.split() == [t])
separators = st.sampled_from([" ", "  ", "\u00a0", "\u3000", "\t", "\u2028", "\x1c"])


@st.composite
def tokenised(draw):
    words = draw(st.lists(tokens, max_size=30))
    out = ""
    for word in words:
        out += draw(separators) + word
    return out + draw(st.sampled_from(["", " ", "\u3000"]))


@needs_native
@settings(max_examples=400)
@given(hyp=tokenised(), refs=st.lists(tokenised(), min_size=1, max_size=4), order=st.integers(1, 6))
def test_bleu_stats_native_equals_python(hyp, refs, order) -> None:
    import bleucli

    metric = bleucli.BLEU(tokenize="none", max_ngram_order=order)
    expected = metric.sentence_stats(hyp, [ref.split() for ref in refs])
    assert native.bleu_stats([hyp], [list(refs)], order) == [expected]


@needs_native
def test_bleu_stats_rejects_bad_arguments() -> None:
    with pytest.raises(TypeError):
        native.bleu_stats(["a"], [[None]], 4)
    with pytest.raises(ValueError):
        native.bleu_stats(["a"], [], 4)
    with pytest.raises(ValueError):
        native.bleu_stats(["a"], [["a"]], 0)
    with pytest.raises(TypeError):
        native.tokenize_13a(b"bytes")


def _run(args: list[str], pure: bool) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("BLEUCLI_PUREPYTHON", None)
    if pure:
        env["BLEUCLI_PUREPYTHON"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "bleucli", *args], capture_output=True, text=True, env=env
    )


def test_engines_give_identical_output_and_say_which_runs() -> None:
    pure = _run(["--version"], pure=True)
    assert pure.stdout.strip().endswith("(python engine)")
    if native is not None:
        assert _run(["--version"], pure=False).stdout.strip().endswith("(native engine)")
    args = [
        str(EXAMPLES / "ref.de"),
        str(EXAMPLES / "ref2.de"),
        "-i",
        str(EXAMPLES / "hyp.de"),
        "-m",
        "bleu",
        "chrf",
        "ter",
        "-w",
        "10",
        "-f",
        "text",
    ]
    assert _run(args, pure=True).stdout == _run(args, pure=False).stdout
    sentence = [*args, "-sl"]
    assert _run(sentence, pure=True).stdout == _run(sentence, pure=False).stdout


@needs_native
@settings(max_examples=400)
@given(
    hyp=edge_text | sentences,
    refs=st.lists(edge_text | sentences, min_size=1, max_size=3),
    char_order=st.integers(0, 7),
    word_order=st.integers(0, 3),
    whitespace=st.booleans(),
)
def test_chrf_stats_native_equals_python(hyp, refs, char_order, word_order, whitespace) -> None:
    """Per reference, the compiled chrF statistics equal the pure-Python engine's."""
    import bleucli

    if char_order + word_order == 0:
        return
    metric = bleucli.CHRF(char_order=char_order, word_order=word_order, whitespace=whitespace)
    got = native.chrf_stats([hyp], [list(refs)], char_order, word_order, whitespace)[0]
    assert got == [metric.sentence_stats(hyp, metric.reference_info([ref])) for ref in refs]


@needs_native
def test_chrf_stats_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        native.chrf_stats(["a"], [["a"]], 0, 0, False)
    with pytest.raises(TypeError):
        native.chrf_stats(["a"], [[3]], 6, 0, False)
    with pytest.raises(ValueError):
        native.chrf_stats(["a"], [], 6, 0, False)


ZH_EDGE = [
    "中",
    "文",
    "。",
    "，",
    "\u2014",
    "\u201c",
    "\u3000",
    "\uff0c",
    "\U00020001",
    "\u2e80",
    "\u33ff",
    "\u3400",
    ".",
    ",",
    "-",
    "1",
    "9",
    " ",
    "\t",
    "a",
    "&",
    "(",
    "/",
    "\u00a0",
    "\u2028",
    "é",
]


@needs_native
@settings(max_examples=800)
@given(line=st.lists(st.sampled_from(ZH_EDGE) | st.text(max_size=2), max_size=30).map("".join))
def test_zh_native_equals_python(line) -> None:
    """The one-pass zh tokeniser equals the rules applied in turn; it declines (None) only
    where two of '.' and ',' are adjacent."""
    from bleucli.tokenizers.zh import TokenizerZh, tokenize_zh_python

    got = native.tokenize_zh(line)
    stripped = line.strip()
    adjacent = any(pair in stripped for pair in ("..", ".,", ",.", ",,"))
    assert (got is None) == adjacent
    if got is not None:
        assert got == tokenize_zh_python(line)
    assert TokenizerZh()(line) == tokenize_zh_python(line)


@st.composite
def ter_pair(draw):
    """A reference and a hypothesis made from it by substitutions, insertions, deletions
    and block moves (the shifts TER looks for), or drawn independently; references long
    enough to span several 64-bit words of the bit-parallel distance."""
    vocabulary = draw(st.integers(1, 12))
    n_ref = draw(st.sampled_from([1, 3, 10, 40, 63, 64, 65, 90, 129, 200]))
    word = st.integers(0, vocabulary - 1).map(str)
    ref = draw(st.lists(word, min_size=n_ref, max_size=n_ref))
    if draw(st.booleans()):
        return draw(st.lists(st.integers(0, vocabulary).map(str), max_size=2 * n_ref + 3)), ref
    hyp = list(ref)
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["sub", "ins", "del", "move"]))
        at = draw(st.integers(0, len(hyp)))
        if kind == "ins" or not hyp:
            hyp.insert(at, draw(st.integers(0, vocabulary + 2).map(str)))
        elif kind == "sub":
            hyp[min(at, len(hyp) - 1)] = draw(st.integers(0, vocabulary + 2).map(str))
        elif kind == "del":
            del hyp[min(at, len(hyp) - 1)]
        else:
            block = hyp[at : at + draw(st.integers(1, 6))]
            del hyp[at : at + len(block)]
            to = draw(st.integers(0, len(hyp)))
            hyp[to:to] = block
    return hyp, ref


def assert_native_ter_is_specification(hyp: list[str], ref: list[str]) -> None:
    """The compiled search's edit count of hyp against ref (as word ids) is the
    pure-Python search's."""
    from bleucli.metrics.ter_edit import translation_edit_rate

    ids: dict[str, int] = {}
    ref_ids = [ids.setdefault(w, len(ids)) for w in ref]
    hyp_ids = [ids.setdefault(w, len(ids)) for w in hyp]
    assert native.ter_edits(hyp_ids, ref_ids) == translation_edit_rate(hyp, ref)[0]


def randomly_edited(rng, words, edits, kinds, new_words, longest_block) -> list[str]:
    """words after `edits` random edits of `kinds` (sub, ins, del, move): new words drawn
    from `new_words` ids, moved blocks of up to `longest_block` words."""
    hyp = list(words)
    for _ in range(edits):
        kind, at = rng.choice(kinds), rng.randrange(len(hyp))
        if kind == "sub":
            hyp[at] = str(rng.randrange(new_words))
        elif kind == "ins":
            hyp.insert(at, str(rng.randrange(new_words)))
        elif kind == "del":
            del hyp[at]
        else:
            block = hyp[at : at + rng.randint(1, longest_block)]
            del hyp[at : at + len(block)]
            to = rng.randint(0, len(hyp))
            hyp[to:to] = block
    return hyp


@needs_native
@settings(max_examples=1500)
@given(pair=ter_pair())
def test_ter_edits_native_equals_python(pair) -> None:
    """The compiled TER search (Myers bit vectors over several words, the beam fallback,
    tercom's tie-breaking) counts exactly the edits of the pure-Python search."""
    hyp, ref = pair
    assert_native_ter_is_specification(hyp, ref)


@needs_native
@pytest.mark.parametrize("seed", range(4))
def test_ter_edits_of_edited_long_references(seed) -> None:
    """References of 65..150 words (several 64-bit words: candidates end on the reversed
    hypothesis' distances) edited by substitutions, insertions, deletions and block moves:
    the compiled search counts the specification's edits on every pair."""
    import random

    rng = random.Random(seed)
    for _ in range(40):
        ref = [str(rng.randrange(25)) for _ in range(rng.randint(65, 150))]
        kinds = ["sub", "ins", "del", "move", "move"]
        hyp = randomly_edited(rng, ref, rng.randint(3, 12), kinds, 30, 8)
        assert_native_ter_is_specification(hyp, ref)


@needs_native
@pytest.mark.parametrize("seed", range(2))
def test_ter_edits_of_truncated_hypotheses(seed) -> None:
    """A hypothesis that translates only the first half of a long reference (or the
    reverse): the cheapest path runs far from the beam's diagonal, so Myers' distance is
    not the beam's. The compiled search proves Myers' distance only for traces that stay in
    the beam (of the hypothesis and of each shift candidate); trusting it for the others
    changes most of these counts."""
    import random

    rng = random.Random(seed)
    for _ in range(25):
        n_ref = rng.choice([50, 66, 70, 100, 130, 140])
        vocabulary = rng.randint(20, 60)
        ref = [str(rng.randrange(vocabulary)) for _ in range(n_ref)]
        first_half = ref[: int(n_ref * rng.uniform(0.3, 0.6))]
        kinds = ["sub", "ins", "del", "move"]
        hyp = randomly_edited(rng, first_half, rng.randint(0, 6), kinds, vocabulary + 5, 4)
        if rng.random() < 0.3:
            hyp, ref = ref, hyp
        assert_native_ter_is_specification(hyp, ref)


@needs_native
def test_ter_edits_on_long_sentences_and_bad_arguments() -> None:
    """Long lines take the beam matrix (distances past the bound) without crashing."""
    import random

    rng = random.Random(7)
    ref = [str(rng.randrange(30)) for _ in range(400)]
    hyp = ref[200:] + [str(rng.randrange(40)) for _ in range(50)] + ref[:150]
    assert_native_ter_is_specification(hyp, ref)
    with pytest.raises(ValueError):
        native.ter_edits([0], [])
    with pytest.raises(ValueError):
        native.ter_edits([-1], [0])
    with pytest.raises(TypeError):
        native.ter_edits(["a"], [0])


@pytest.mark.skipif(native is None, reason="needs the compiled core to copy")
def test_a_source_tree_finds_the_installed_core_or_says_why_it_cannot(tmp_path) -> None:
    """``python`` in a clone after ``pip install .``: the tree (no compiled module) shadows
    the installed package. It finds the installed core built from the same sources; with
    none, one line says which engine runs, why and what fixes it (it was silent)."""
    import glob
    import shutil

    src, site = tmp_path / "src", tmp_path / "site" / "bleucli"
    shutil.copytree(ROOT / "bleucli", src / "bleucli",
                    ignore=shutil.ignore_patterns("_native*.so", "_native*.pyd", "__pycache__"))  # fmt: skip
    site.mkdir(parents=True)
    for core in glob.glob(str(ROOT / "bleucli" / "_native*.so")):
        shutil.copy(core, site)
    code = "import bleucli; print(bleucli.ENGINE)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLEUCLI_")}

    def run(path: str) -> subprocess.CompletedProcess:  # -S: no site-packages, no editable hook
        return subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                              cwd=src, env={**env, "PYTHONPATH": path})  # fmt: skip

    found = run(f"{src}{os.pathsep}{site.parent}")
    assert found.stdout.strip() == "native" and found.stderr == ""
    alone = run(str(src))
    assert alone.stdout.strip() == "python"
    assert alone.stderr.count("\n") == 1
    assert "the pure-Python engine runs" in alone.stderr and "pip install -e ." in alone.stderr
    edited = src / "bleucli" / "_native.c"
    edited.write_text(edited.read_text() + "\n/* edited */\n")
    other = run(f"{src}{os.pathsep}{site.parent}")  # a core of other sources is not used
    assert other.stdout.strip() == "python"
