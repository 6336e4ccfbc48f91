"""Batch and pairwise sentence scoring (bleucli.batch), MBR selection and reward functions:
every cell equals SacreBLEU 2.6.0's sentence_score; any thread count and the pure-Python
engine give the same arrays; the GIL is released; the call owns its inputs; MBR matches a
brute-force loop; every error is one clear exception before any work."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

import bleucli
from bleucli import batch
from bleucli.batch import mbr, pairwise, sentence_scores
from bleucli.native import native
from bleucli.rewards import reward
from tests.conftest import EXAMPLES, run_cli, sentences

#: (name, bleucli options, the SacreBLEU object scoring the same)
METRICS = [
    ("bleu", {}, lambda: sacrebleu.BLEU(effective_order=True)),
    (
        "bleu",
        {"smooth_method": "floor", "smooth_value": 0.2, "max_ngram_order": 3},
        lambda: sacrebleu.BLEU(
            effective_order=True, smooth_method="floor", smooth_value=0.2, max_ngram_order=3
        ),
    ),
    (
        "bleu",
        {"smooth_method": "add-k", "effective_order": False, "lowercase": True},
        lambda: sacrebleu.BLEU(smooth_method="add-k", lowercase=True),
    ),
    (
        "bleu",
        {"smooth_method": "none", "tokenize": "intl"},
        lambda: sacrebleu.BLEU(effective_order=True, smooth_method="none", tokenize="intl"),
    ),
    ("chrf", {}, lambda: sacrebleu.CHRF()),
    ("chrf", {"word_order": 2}, lambda: sacrebleu.CHRF(word_order=2)),
    (
        "chrf",
        {"word_order": 1, "whitespace": True, "lowercase": True, "beta": 3},
        lambda: sacrebleu.CHRF(word_order=1, whitespace=True, lowercase=True, beta=3),
    ),
    (
        "chrf",
        {"eps_smoothing": True, "char_order": 4},
        lambda: sacrebleu.CHRF(eps_smoothing=True, char_order=4),
    ),
    ("ter", {}, lambda: sacrebleu.TER()),
    (
        "ter",
        {"normalized": True, "case_sensitive": True},
        lambda: sacrebleu.TER(normalized=True, case_sensitive=True),
    ),
]
IDS = [f"{name}-{k}" for k, (name, _, _) in enumerate(METRICS)]

UNICODE = [
    "\u00a0",
    "\u3000",
    "\u200b",
    "e\u0301",
    "\U0001f600",
    "中文",
    "Ὀδυσσεύς",
    "ﬁ",
    "İ",
    "\t",
    "  ",
    "ß",
]
texts = (
    sentences
    | st.lists(st.sampled_from(UNICODE) | st.text(max_size=4), max_size=12).map("".join)
    | st.sampled_from(["", " ", "a " * 70 + "b", "x"])
)


def theirs(make, hyp: str, refs: list[str | None]) -> float:
    return make().sentence_score(hyp, refs).score


@pytest.mark.parametrize(("name", "options", "make"), METRICS, ids=IDS)
@settings(max_examples=40)
@given(data=st.data())
def test_every_cell_equals_sacrebleu(name, options, make, data) -> None:
    n = data.draw(st.integers(1, 5))
    hyps = data.draw(st.lists(texts, min_size=n, max_size=n))
    k = data.draw(st.integers(1, 3))
    streams = [data.draw(st.lists(texts | st.none(), min_size=n, max_size=n)) for _ in range(k)]
    for i in range(n):  # every hypothesis needs one reference
        if all(stream[i] is None for stream in streams):
            streams[0][i] = data.draw(texts)
    got = sentence_scores(name, hyps, streams, **options)
    expected = [theirs(make, h, [s[i] for s in streams]) for i, h in enumerate(hyps)]
    assert got.dtype == np.float64 and got.tolist() == expected
    groups = data.draw(st.lists(st.lists(texts, min_size=1, max_size=3), min_size=1, max_size=3))
    ref_groups = data.draw(
        st.lists(
            st.lists(texts, min_size=1, max_size=3), min_size=len(groups), max_size=len(groups)
        )
    )
    cells = pairwise(name, groups, ref_groups, **options)
    for b, (hs, rs) in enumerate(zip(groups, ref_groups)):
        matrix = cells[b]
        assert np.asarray(matrix).shape == (len(hs), len(rs))
        assert np.asarray(matrix).tolist() == [[theirs(make, h, [r]) for r in rs] for h in hs]


@pytest.fixture(scope="module")
def corpus() -> tuple[list[str], list[str], list[str]]:
    hyps = (EXAMPLES / "hyp.de").read_text(encoding="utf-8").splitlines()
    hyp2 = (EXAMPLES / "hyp2.de").read_text(encoding="utf-8").splitlines()
    refs = (EXAMPLES / "ref.de").read_text(encoding="utf-8").splitlines()
    return hyps, hyp2, refs


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter"])
def test_thread_counts_and_engines_give_identical_arrays(corpus, name, monkeypatch) -> None:
    hyps, hyp2, refs = corpus
    options = {"word_order": 2} if name == "chrf" else {}
    groups = [hyps[i : i + 6] for i in range(0, 24, 6)]
    ref_groups = [hyp2[i : i + 5] + refs[i : i + 1] for i in range(0, 24, 6)]
    aligned = [sentence_scores(name, hyps, [refs, hyp2], threads=t, **options) for t in (1, 2, 8)]
    matrices = [pairwise(name, groups, ref_groups, threads=t, **options) for t in (1, 2, 8)]
    monkeypatch.setattr(batch, "_NATIVE", None)  # the pure-Python engine, the specification
    aligned.append(sentence_scores(name, hyps, [refs, hyp2], **options))
    matrices.append(pairwise(name, groups, ref_groups, **options))
    assert all(a.tobytes() == aligned[0].tobytes() for a in aligned)
    assert all(m.tobytes() == matrices[0].tobytes() for m in matrices)
    assert matrices[0].shape == (4, 6, 6)


def test_ragged_groups_give_a_list_of_matrices(corpus) -> None:
    hyps, hyp2, refs = corpus
    got = pairwise("chrf", [hyps[:3], hyps[3:4], []], [refs[:2], refs[:5], refs[:1]])
    assert isinstance(got, list) and [m.shape for m in got] == [(3, 2), (1, 5), (0, 1)]
    assert got[1][0].tolist() == [
        sacrebleu.CHRF().sentence_score(hyps[3], [r]).score for r in refs[:5]
    ]


def _long_inputs() -> tuple[list[list[str]], list[list[str]]]:
    words = [f"w{i}" for i in range(400)]
    line = lambda k: " ".join(words[(k * 7 + j) % 400] for j in range(60))  # noqa: E731
    hyps = [[line(b * 64 + i) for i in range(64)] for b in range(12)]
    return hyps, hyps


@pytest.mark.skipif(native is None, reason="the compiled core is not built")
def test_the_gil_is_released_during_a_long_call() -> None:
    hyps, refs = _long_inputs()
    ticks = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            ticks[0] += 1

    start = time.perf_counter()
    pairwise("chrf", hyps, refs, threads=1)  # alone: how long the call takes
    alone = time.perf_counter() - start
    counter = threading.Thread(target=count)
    counter.start()
    time.sleep(0.02)
    before = ticks[0]
    start = time.perf_counter()
    pairwise("chrf", hyps, refs, threads=1)
    during = ticks[0] - before
    elapsed = time.perf_counter() - start
    stop.set()
    counter.join()
    # with the GIL held the counter would stand still for the whole call
    rate_alone = during / elapsed
    assert alone > 0.05 and during > 1000, (alone, during)
    assert rate_alone > 0


@pytest.mark.skipif(native is None, reason="the compiled core is not built")
@pytest.mark.parametrize("entry", ["pairwise", "sentence_scores"])
def test_clearing_the_inputs_from_another_thread_changes_nothing(entry) -> None:
    hyps, refs = _long_inputs()
    flat_hyps = [h for group in hyps for h in group]
    flat_refs = list(reversed(flat_hyps))

    def call(h, r):
        if entry == "pairwise":
            return pairwise("chrf", h, r, threads=2)
        return sentence_scores("chrf", h, [r], threads=2)

    args = (hyps, refs) if entry == "pairwise" else (flat_hyps, flat_refs)
    expected = call(*[[list(g) if isinstance(g, list) else g for g in a] for a in args])
    mine = [[list(g) if isinstance(g, list) else g for g in a] for a in args]
    go = threading.Event()

    def clear() -> None:
        go.wait()
        time.sleep(0.03)  # the call has copied its inputs; the engine is running
        for lists in mine:
            for group in lists:
                if isinstance(group, list):
                    group.clear()
            lists.clear()

    clearer = threading.Thread(target=clear)
    clearer.start()
    go.set()
    got = call(*mine)
    clearer.join()
    assert mine == [[], []]  # the caller's lists really were emptied meanwhile
    assert got.tobytes() == expected.tobytes()


def brute_force_mbr(samples, make, pseudo=None, lower=False):
    best, table = [], []
    for b, group in enumerate(samples):
        refs = pseudo[b] if pseudo is not None else group
        utilities = []
        for i, sample in enumerate(group):
            total, count = 0.0, 0
            for j, ref in enumerate(refs):
                if pseudo is None and i == j:
                    continue
                total += make().sentence_score(sample, [ref]).score
                count += 1
            utilities.append(total / count if count else float("nan"))
        table.append(utilities)
        keyed = [(-u if lower else u) if u == u else float("-inf") for u in utilities]
        best.append(keyed.index(max(keyed)))
    return best, table


@pytest.mark.parametrize(
    ("name", "options", "make"), [METRICS[0], METRICS[5], METRICS[8]], ids=["bleu", "chrf++", "ter"]
)
def test_mbr_matches_a_brute_force_loop(corpus, name, options, make) -> None:
    hyps, hyp2, refs = corpus
    samples = [[hyps[i], hyp2[i], refs[i], hyps[i]] for i in range(12)] + [[hyps[0]]]
    result = mbr(samples, name, **options)
    best, table = brute_force_mbr(samples, make, lower=name == "ter")
    assert result.best == best
    assert [np.asarray(u).tolist() for u in result.utilities][:-1] == table[:-1]
    assert np.isnan(result.utilities[-1][0]) and result.best[-1] == 0
    assert result.chosen == [group[k] for group, k in zip(samples, best)]
    pseudo = [[refs[i], hyp2[(i + 1) % 30]] for i in range(13)]
    given = mbr(samples, name, pseudo_references=pseudo, **options)
    assert (given.best, [np.asarray(u).tolist() for u in given.utilities]) == brute_force_mbr(
        samples, make, pseudo, lower=name == "ter"
    )
    assert "pseudo:given" in given.signature and "pseudo:others" in result.signature


def test_mbr_ties_take_the_first_sample() -> None:
    result = mbr([["same text", "same text", "other words"]], "chrf")
    assert result.best == [0]


def test_reward_function_plain_and_chat_completions(corpus) -> None:
    hyps, hyp2, refs = corpus
    chrf = reward("chrf", scale=0.01)
    plain = chrf(hyps[:4], references=refs[:4], prompts=["p"] * 4)
    expected = [
        sacrebleu.CHRF().sentence_score(h, [r]).score * 0.01 for h, r in zip(hyps[:4], refs[:4])
    ]
    assert plain == expected and all(isinstance(v, float) for v in plain)
    assert chrf(tuple(hyps[:4]), references=tuple(refs[:4])) == expected  # any sequence

    class Text(str):
        pass

    mixed = [Text(h) if k % 2 else h for k, h in enumerate(hyps[:4])]  # str subclasses too
    assert chrf(mixed, references=[Text(r) for r in refs[:4]]) == expected
    chat = [
        [{"role": "system", "content": "x"}, {"role": "assistant", "content": h}] for h in hyps[:4]
    ]
    assert chrf(chat, references=refs[:4]) == expected
    several = chrf(hyps[:2], references=[[refs[0], hyp2[0]], [refs[1]]])
    assert several[0] == sacrebleu.CHRF().sentence_score(hyps[0], [refs[0], hyp2[0]]).score * 0.01
    ter = reward("ter", references="target")
    assert ter([hyps[0]], target=[refs[0]]) == [
        -sacrebleu.TER().sentence_score(hyps[0], [refs[0]]).score
    ]
    bleu = reward("bleu")
    assert bleu.__name__ == "bleucli_bleu_reward"
    assert bleu([hyps[0]], references=[refs[0]]) == [
        sacrebleu.BLEU(effective_order=True).sentence_score(hyps[0], [refs[0]]).score
    ]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: sentence_scores("chrf", ["a", 3], [["a", "b"]]), TypeError, "hypotheses[1]"),
        (lambda: sentence_scores("chrf", "a b", [["a"]]), TypeError, "hypotheses should be a list"),
        (
            lambda: sentence_scores("chrf", ["a", "b"], [["a"]]),
            bleucli.InputError,
            "references[0] has 1 entries but there are 2",
        ),
        (
            lambda: sentence_scores("chrf", ["a", "b"], ["a", "b"]),
            bleucli.InputError,
            "flat list of 2 strings",
        ),
        (
            lambda: sentence_scores("chrf", ["a"], [[None]]),
            bleucli.InputError,
            "hypothesis 0 has no reference",
        ),
        (lambda: sentence_scores("chrf", ["a"], [["a"], [b"x"]]), TypeError, "references[1][0]"),
        (
            lambda: pairwise("bleu", [["a"], ["b"]], [["a"]]),
            bleucli.InputError,
            "2 groups of hypotheses but 1 groups of references",
        ),
        (lambda: pairwise("bleu", [["a", None]], [["a"]]), TypeError, "hypotheses[0][1]"),
        (lambda: pairwise("bleu", "abc", [["a"]]), TypeError, "list of groups"),
        (
            lambda: pairwise("ter", [["w " * 20000]], [["v " * 20000]]),
            bleucli.InputError,
            "20000 x 20000 words is more than 100000000 word pairs: beyond TER's limit",
        ),
        (
            lambda: sentence_scores("ter", ["a", "w " * 20000], [["b", "v " * 20000]]),
            bleucli.InputError,
            "item 1: 20000 x 20000 words",
        ),
        (
            lambda: sentence_scores("chrf", ["a"], [["a"]], threads=-1),
            bleucli.ConfigError,
            "threads must be",
        ),
        (lambda: sentence_scores("chrf", ["a"], [["a"]], colour=3), bleucli.ConfigError, "colour"),
        (lambda: sentence_scores("meteor", ["a"], [["a"]]), bleucli.UsageError, "unknown metric"),
        (lambda: mbr([["a"], []]), bleucli.InputError, "samples[1] is empty"),
        (
            lambda: mbr([["a"]], pseudo_references=[["a"], ["b"]]),
            bleucli.InputError,
            "1 sources of samples but 2",
        ),
        (lambda: reward("chrf")(["a"]), bleucli.InputError, "no 'references' column"),
        (
            lambda: reward("chrf")(["a", "b"], references=["a"]),
            bleucli.InputError,
            "2 completions but 1 entries",
        ),
        (
            lambda: reward("chrf")([{"role": "user"}], references=["a"]),
            bleucli.InputError,
            "completions[0]",
        ),
        (lambda: reward("chrf", scale="big"), bleucli.ConfigError, "scale"),
    ],
)
def test_errors_name_the_argument_and_index(call, error, message) -> None:
    with pytest.raises(error) as caught:
        call()
    assert message in str(caught.value)


def test_empty_inputs_give_empty_arrays() -> None:
    assert sentence_scores("bleu", [], [[]]).shape == (0,)
    assert pairwise("chrf", [], []).shape == (0, 0, 0)


# -- the command line ----------------------------------------------------------------------


def test_mbr_command_over_systems_and_samples(tmp_path, corpus) -> None:
    hyps, hyp2, refs = corpus
    files = [str(EXAMPLES / n) for n in ("hyp.de", "hyp2.de", "ref2.de")]
    result = run_cli(["mbr", "-i", *files])
    assert result.exit_code == 0, result.stderr
    outputs = [Path(f).read_text(encoding="utf-8").splitlines() for f in files]
    candidates = [list(c) for c in zip(*outputs)]
    expected = mbr(candidates, "chrf")
    assert result.stdout.splitlines() == expected.chosen
    assert result.stderr.startswith("bleucli: MBR|metric:chrF2|utility:mean|pseudo:others|")
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        "".join(json.dumps({"samples": c, "id": k}) + "\n" for k, c in enumerate(candidates)),
        encoding="utf-8",
    )
    as_json = run_cli(["mbr", "--samples", str(samples), "-m", "ter", "-f", "json"])
    assert as_json.exit_code == 0, as_json.stderr
    document = json.loads(as_json.stdout)
    ter = mbr(candidates, "ter")
    assert [c["candidate"] for c in document["choices"]] == [k + 1 for k in ter.best]
    assert [c["line"] for c in document["choices"]] == list(range(1, len(candidates) + 1))
    assert all(c["system"] is None for c in document["choices"])  # samples have no names
    assert document["lower_is_better"] is True and document["signature"].startswith("MBR|")
    assert document["choices"][0]["utilities"] == np.asarray(ter.utilities[0]).tolist()


@pytest.mark.parametrize(
    ("args", "content", "message"),
    [
        (["-i", str(EXAMPLES / "hyp.de")], None, "give two or more systems"),
        ([], None, "either as systems"),
        (
            ["-i", str(EXAMPLES / "hyp.de"), str(EXAMPLES / "src.en"), "--samples", "x"],
            None,
            "either as systems",
        ),
        (["--samples"], "not json\n", "line 1: not JSON"),
        (["--samples"], '{"other": ["a"]}\n', "line 1: no 'samples' list"),
        (["--samples"], '["a", 3]\n', "line 1: samples[1] is int"),
        (["--samples"], "", "empty file"),
        (["-m", "chrf", "-cc", "500", "--samples"], '["a"]\n', "-cc/--chrf-char-order"),
    ],
)
def test_mbr_command_errors_are_one_line(tmp_path, args, content, message) -> None:
    if content is not None:
        path = tmp_path / "s.jsonl"
        path.write_text(content, encoding="utf-8")
        args = [*args, str(path)]
    result = run_cli(["mbr", *args])
    assert result.exit_code in (1, 2)
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_mbr_command_reads_standard_input_for_dash() -> None:
    files = [str(EXAMPLES / n) for n in ("hyp.de", "hyp2.de", "ref2.de")]
    expected = run_cli(["mbr", "-i", *files, "-m", "bleu"])
    assert expected.exit_code == 0, expected.stderr
    piped = run_cli(
        ["mbr", "-i", files[0], "-", files[2], "-m", "bleu"],
        input=Path(files[1]).read_bytes(),
    )
    assert (piped.exit_code, piped.stdout) == (0, expected.stdout), piped.stderr
    samples = (EXAMPLES / "samples.jsonl").read_bytes()
    from_file = run_cli(["mbr", "--samples", str(EXAMPLES / "samples.jsonl"), "-f", "json"])
    from_stdin = run_cli(["mbr", "--samples", "-", "-f", "json"], input=samples)
    assert from_file.exit_code == 0 and from_stdin.stdout == from_file.stdout
    bad = run_cli(["mbr", "--samples", "-"], input=b'["a"]\nnot json\n')
    assert bad.exit_code == 1 and bad.stderr.startswith("bleucli: error: <stdin>: line 2: not JSON")
    twice = run_cli(["mbr", "-i", "-", "-"], input=b"a\n")
    assert twice.exit_code == 2 and "only one of the systems" in twice.stderr


def test_mbr_command_with_different_line_counts(tmp_path) -> None:
    short = tmp_path / "short.de"
    short.write_text("eins\n", encoding="utf-8")
    result = run_cli(["mbr", "-i", str(EXAMPLES / "hyp.de"), str(short)])
    assert result.exit_code == 1 and "differ in length" in result.stderr
    assert f"{short}: 1" in result.stderr
