"""The compiled core under hostile callers and inputs: lists changed by Python code that a
garbage collection runs in the middle of a call, extreme n-gram orders, tokens that differ
only in high bits, huge and sparse TER inputs. Each case gives the pure-Python engine's
result or the same clear error, in bounded memory. ``scripts/memcheck.sh`` also runs this
file under valgrind and under an AddressSanitizer/UBSan build of the core."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time

import pytest

from bleucli.native import native
from tests.conftest import ROOT

needs_native = pytest.mark.skipif(
    native is None, reason="the compiled core is not built (no C compiler, or BLEUCLI_PUREPYTHON=1)"
)


class ShrinkOnCollect:
    """While active, every garbage collection empties the given lists (what a
    ``gc.callbacks`` hook, a ``__del__`` or another thread may do to a caller's lists)."""

    def __init__(self, *lists: list) -> None:
        self.lists = lists
        self.fired = 0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            for target in self.lists:
                target.clear()
            self.fired += 1

    def __enter__(self) -> ShrinkOnCollect:
        self.threshold = gc.get_threshold()
        gc.set_threshold(1, 1, 1)  # a collection at nearly every container allocation
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)
        gc.set_threshold(*self.threshold)


def sentences(n: int) -> list[str]:
    return [f"the cat {i} sat on the mat , said {i % 7} people ." for i in range(n)]


@needs_native
@pytest.mark.parametrize(
    "entry", ["bleu_stats", "chrf_stats", "tokenize_13a_many", "ter_edits", "sum_int_rows"]
)
def test_lists_emptied_during_the_call_change_nothing(entry) -> None:
    """Every entry point owns what it reads before it allocates a Python object (even
    CPython's PyList_AsTuple reads a list after allocating), so a collection that empties
    the caller's lists mid-call changes nothing: same result, no crash."""
    hyps = sentences(300)
    refs = [[line.replace("cat", "dog"), line] for line in hyps]
    ids = [len(line) for line in hyps]
    arguments = {
        "bleu_stats": lambda: (hyps, refs, 4),
        "chrf_stats": lambda: (hyps, refs, 6, 2, False),
        "tokenize_13a_many": lambda: (hyps,),
        "ter_edits": lambda: (ids, ids[::-1]),
        "sum_int_rows": lambda: ([[n, 1] for n in ids],),
    }
    function = getattr(native, entry)

    def fresh() -> tuple:  # deep copies: the originals stay for the expected result
        return tuple(
            [
                list(a) if isinstance(a, list) and a and isinstance(a[0], list) else a
                for a in (list(x) if isinstance(x, list) else x for x in arguments[entry]())
            ]
        )

    expected = function(*fresh())
    args = fresh()
    if entry in ("bleu_stats", "chrf_stats"):
        args = (args[0], [list(r) for r in args[1]], *args[2:])
    lists = [a for a in args if isinstance(a, list)]
    lists += [inner for a in lists for inner in a if isinstance(inner, list)]
    with ShrinkOnCollect(*lists) as hook:
        got = function(*args)
    assert got == expected
    if entry in ("bleu_stats", "chrf_stats"):  # they allocate per sentence: collections ran
        assert hook.fired > 0 and args[0] == []  # ... and emptied the caller's lists


#: Set by scripts/memcheck.sh: memory checkers inflate a process' memory many times over,
#: so the memory bounds are checked in ordinary runs only.
CHECKED = bool(os.environ.get("BLEUCLI_MEMCHECK"))


def _subprocess(code: str, pure: bool) -> dict:
    path = [p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p]  # a memcheck build first
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    env.pop("BLEUCLI_PUREPYTHON", None)
    if pure:
        env["BLEUCLI_PUREPYTHON"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


#: Scores a line of WORDS tokens at an n-gram ORDER with both metrics; prints the
#: statistics, the engine and the peak of what the scoring allocated (MiB), as tracemalloc
#: counts it: Python objects and the compiled core's tables alike (it allocates with
#: PyMem_*). A process' peak RSS would not do: after fork and exec Linux reports the
#: parent's (pytest's) peak as the child's.
EXTREME = """
import json, random, sys, tracemalloc
import bleucli
rng = random.Random(3)
words, order = {words}, {order}
hyp = " ".join(str(rng.randrange(50)) for _ in range(words))
ref = " ".join(str(rng.randrange(50)) for _ in range(words))
tracemalloc.start()
bleu = bleucli.BLEU(tokenize="none", max_ngram_order=order, effective_order=True)
row = bleu.stats_rows([hyp], [bleu.reference_info([ref])])[0]
chrf = bleucli.CHRF(char_order=min(order, 1000), word_order=min(order, 1000))
stats = chrf.stats_rows([hyp], [chrf.reference_info([ref])])[0]
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({{"bleu": row, "chrf": stats, "engine": bleucli.ENGINE,
                  "mib": peak / 2**20}}))
"""


@needs_native
@pytest.mark.parametrize(("words", "order"), [(300, 1000), (12, 1000), (400, 60)])
def test_extreme_orders_agree_between_engines_in_bounded_memory(words, order) -> None:
    compiled = _subprocess(EXTREME.format(words=words, order=order), pure=False)
    python = _subprocess(EXTREME.format(words=words, order=order), pure=True)
    assert compiled["engine"] == "native" and python["engine"] == "python"
    assert compiled["bleu"] == python["bleu"] and compiled["chrf"] == python["chrf"]
    if not CHECKED:
        assert compiled["mib"] < 16 and python["mib"] < 64


@needs_native
def test_order_1000_on_a_2000_word_line() -> None:
    """It raised MemoryError at once in the compiled core (tables of characters x order x
    order); now it is scored in a few megabytes. (The pure engine gives the same numbers
    on the cases above; on this one it takes a minute, building every n-gram.)"""
    import random
    from collections import Counter

    compiled = _subprocess(EXTREME.format(words=2000, order=1000), pure=False)
    rng = random.Random(3)  # the script's two lines again, for an independent count
    hyp = [str(rng.randrange(50)) for _ in range(2000)]
    ref = [str(rng.randrange(50)) for _ in range(2000)]
    matches = []
    for n in (1, 2, 3):
        hyp_counts = Counter(tuple(hyp[i : i + n]) for i in range(2000 - n + 1))
        ref_counts = Counter(tuple(ref[i : i + n]) for i in range(2000 - n + 1))
        matches.append(sum(min(c, ref_counts[g]) for g, c in hyp_counts.items()))
    assert compiled["bleu"][:5] == [2000, 2000, *matches]
    assert len(compiled["bleu"]) == 2 + 2 * 1000 and len(compiled["chrf"]) == 3 * 2000
    assert compiled["bleu"][2 + 1000 : 2 + 1000 + 3] == [2000, 1999, 1998]  # totals per order
    if not CHECKED:
        assert compiled["mib"] < 16


@needs_native
@pytest.mark.skipif(CHECKED, reason="memory checkers inflate memory use")
def test_memory_does_not_grow_with_the_order() -> None:
    """Order 100 on a 50,000-word line costs the compiled core no more than order 4 (it
    took 8.5 GB); the statistics equal the pure engine's on a shorter line."""
    low = _subprocess(EXTREME.format(words=50_000, order=4), pure=False)["mib"]
    high = _subprocess(EXTREME.format(words=50_000, order=100), pure=False)["mib"]
    assert high < 1.5 * low + 1, (low, high)


def test_orders_beyond_the_limit_are_one_error_for_both_engines() -> None:
    import bleucli

    for make in (
        lambda: bleucli.BLEU(max_ngram_order=1001),
        lambda: bleucli.CHRF(char_order=1001),
        lambda: bleucli.CHRF(word_order=5000),
        lambda: bleucli.BLEU(max_ngram_order=0),
    ):
        with pytest.raises(bleucli.ConfigError, match="must be a whole number from"):
            make()


@needs_native
def test_tokens_that_differ_only_in_high_bits_do_not_collide() -> None:
    """Tokens 'a', U+1_0061, U+2_0061, ...: a hash of the low bits alone put them in one
    chain (13x slower); they hash apart and count correctly."""
    import bleucli

    high = [chr(0x61 | (k << 8)) for k in range(1, 0x10F0) if not 0xD8 <= k <= 0xDF]
    plain = [f"w{k}" for k in range(len(high))]

    def timed(tokens: list[str]) -> tuple[float, list]:
        line = " ".join(tokens)
        best, rows = float("inf"), None
        for _ in range(3):
            start = time.perf_counter()
            rows = native.bleu_stats([line], [[line]], 4)
            best = min(best, time.perf_counter() - start)
        return best, rows

    high_time, high_rows = timed(high)
    plain_time, _ = timed(plain)
    metric = bleucli.BLEU(tokenize="none")
    line = " ".join(high)
    assert high_rows == [metric.sentence_stats(line, [line.split()])]
    # not a benchmark: a chain of every token would be quadratic (seconds, not milliseconds)
    assert CHECKED or high_time < 5 * plain_time + 0.05, (high_time, plain_time)


def test_huge_ter_lines_are_refused_before_anything_is_allocated() -> None:
    """Two 100,000-word lines: one clear error (both engines), never the out-of-memory
    killer; the compiled search refuses the same pair by itself."""
    import bleucli

    line = " ".join(f"w{i % 1000}" for i in range(100_000))
    with pytest.raises(bleucli.InputError, match="beyond TER's limit of 100,000,000 word pairs"):
        bleucli.TER().sentence_score(line, [line + " x"])
    if native is not None:
        with pytest.raises(ValueError, match="more than 100000000 word pairs"):
            native.ter_edits(list(range(100_000)), list(range(100_001)))


@needs_native
def test_ter_accepts_sparse_word_ids() -> None:
    """Any non-negative ids: the tables are as large as the sentences, not the largest id."""
    from bleucli.metrics.ter_edit import translation_edit_rate

    hyp, ref = [10**15, 5, 7, 10**12, 5], [5, 10**15, 7, 5, 3]
    assert (
        native.ter_edits(hyp, ref)
        == translation_edit_rate([str(w) for w in hyp], [str(w) for w in ref])[0]
    )
    with pytest.raises(ValueError, match="non-negative"):
        native.ter_edits([-3], [1])
