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
@pytest.mark.serial  # a wall-clock bound
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


# -- callers that change their arguments, extreme options (each case crashed once) ----------


def run_isolated(code: str, env: dict[str, str] | None = None) -> str:
    """``code`` in a fresh interpreter on this tree: a crash of the compiled core fails the
    test (with the signal) instead of taking the test run down."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    return proc.stdout


#: chrF options at their limits (orders of 0, beta 0, up to SacreBLEU's largest in use).
CHRF_LIMITS = [
    {"char_order": 0, "word_order": 2},
    {"char_order": 0, "word_order": 1},
    {"char_order": 1, "word_order": 0},
    {"char_order": 0, "word_order": 6, "beta": 0},
    {"char_order": 6, "word_order": 0, "beta": 0},
    {"char_order": 20, "word_order": 6, "beta": 1, "lowercase": True, "whitespace": True},
    {"char_order": 0, "word_order": 2, "eps_smoothing": True},
]


@pytest.mark.parametrize(
    "options", CHRF_LIMITS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items())
)
def test_chrf_options_at_their_limits_equal_sacrebleu_everywhere(options) -> None:
    """chrF with a zero order (``char_order=0`` crashed the aligned engine: its tables were
    grown to nothing and then written) through every public batch path, twice on one
    thread (the second job overflowed the heap), against SacreBLEU's sentence scores."""
    code = f"""
import json
from sacrebleu.metrics import CHRF
from bleucli.batch import mbr, pairwise, sentence_scores
from bleucli.rewards import reward
options = {options!r}
hyps = ["a b", "the cat sat on the mat", "x", "", "Der Hund bellt laut ."]
refs = ["a c", "the cat is on the mat", "y z", "w", "der Hund bellt ."]
oracle = CHRF(**options)
want = [oracle.sentence_score(h, [r]).score for h, r in zip(hyps, refs)]
got = [sentence_scores("chrf", hyps, [refs], threads=t, **options).tolist() for t in (1, 2, 1)]
grid = pairwise("chrf", [hyps], [refs], **options)[0]
cross = [[oracle.sentence_score(h, [r]).score for r in refs] for h in hyps]
rewarded = reward("chrf", **options)(hyps, references=refs)
chosen = mbr([hyps], "chrf", **options).best
among = [[oracle.sentence_score(h, [r]).score for r in hyps] for h in hyps]
print(json.dumps([want, got, grid.tolist(), cross, rewarded, chosen, among]))
"""
    want, got, grid, cross, rewarded, chosen, among = json.loads(run_isolated(code))
    assert got == [want, want, want]
    assert grid == cross
    assert rewarded == want
    utilities = [sum(row[k] for k in range(len(row)) if k != i) for i, row in enumerate(among)]
    assert chosen == [utilities.index(max(utilities))]


@needs_native
@pytest.mark.parametrize("entry", ["batch_aligned", "batch_pairwise"])
def test_lists_emptied_while_the_options_are_parsed(entry) -> None:
    """An option whose ``__index__`` empties the caller's lists: the engines read the list
    sizes after the options (they read items up to the old length before)."""
    code = f"""
import numpy as np
from bleucli.native import native
texts = [f"the cat {{i}} sat on the mat" for i in range(2000)]
hyps, refs = list(texts), list(texts)
class Order:
    def __index__(self):
        hyps.clear(); texts.clear()  # (an emptied reference stream is caught as too short)
        return 4
options = (Order(), 0, True, 0.0)
if {entry!r} == "batch_aligned":
    out = np.zeros(2000)
    try:
        native.batch_aligned(0, hyps, [refs], options, 0, 1, out)
    except ValueError as err:
        print("refused:", err)
else:
    groups = np.array([0, 1000, 1000, 1000], dtype=np.int64)
    members = np.arange(2000, dtype=np.int64)
    out = np.zeros(1000 * 1000)
    try:
        native.batch_pairwise(0, texts, groups, members, options, False, 1, out)
    except ValueError as err:
        print("refused:", err)
"""
    assert run_isolated(code).startswith("refused: batch:")


@needs_native
def test_pairwise_group_bounds_cannot_overflow() -> None:
    """A group whose start plus length overflows int64 is refused (the sum wrapped and the
    check passed, and the engine read wild memory)."""
    code = """
import numpy as np
from bleucli.native import native
members = np.array([0, 1], dtype=np.int64)
for group in ([2**63 - 1, 1, 0, 1], [0, 1, 2**63 - 1, 1], [1, 2**63 - 1, 0, 1]):
    try:
        native.batch_pairwise(0, ["a b", "a c"], np.array(group, dtype=np.int64), members,
                              (4, 0, True, 0.0), False, 1, np.zeros(1))
    except ValueError as err:
        print(err)
"""
    assert run_isolated(code).splitlines() == ["batch: group 0 is out of range"] * 3


@needs_native
def test_writable_buffers_are_copied_before_the_gil_is_released() -> None:
    """Another thread writing into the caller's buffers while the engines run without the
    GIL changes nothing: the boundary rows of mwer_segment (``-1``s written into them made
    it write past its table) and the members of batch_pairwise are copies."""
    code = """
import threading
import numpy as np
from bleucli.native import native
hyp = np.arange(400, dtype=np.int32) % 37
rows = np.concatenate([np.append(np.arange(k, k + 20) % 37, -1) for k in range(0, 400, 20)]).astype(np.int32)
want = native.mwer_segment(hyp.tobytes(), rows.tobytes(), 20)
stop = threading.Event()
def scribble(buffer, value):
    while not stop.is_set():
        buffer[:] = value
        buffer[:] = saved[id(buffer)]
saved = {}
results = []
for _ in range(30):
    mutable = bytearray(rows.tobytes())
    view = np.frombuffer(mutable, dtype=np.int32)
    saved[id(view)] = view.copy()
    stop.clear()
    thread = threading.Thread(target=scribble, args=(view, -1))
    thread.start()
    try:
        results.append(native.mwer_segment(hyp.tobytes(), mutable, 20))
    except ValueError:
        results.append(None)  # the scribbler won before the copy: a clean refusal
    stop.set()
    thread.join()
assert all(r in (want, None) for r in results), results
texts = [f"w{i} x y" for i in range(50)]
members = np.arange(50, dtype=np.int64)
groups = np.array([0, 25, 25, 25], dtype=np.int64)
base = np.zeros(625)
native.batch_pairwise(0, texts, groups, members, (4, 0, True, 0.0), False, 2, base)
saved[id(members)] = members.copy()
stop.clear()
thread = threading.Thread(target=scribble, args=(members, 10**9))
thread.start()
for _ in range(30):
    out = np.zeros(625)
    try:
        native.batch_pairwise(0, texts, groups, members, (4, 0, True, 0.0), False, 2, out)
    except ValueError:
        continue
    assert (out == base).all()
stop.set()
thread.join()
print("ok")
"""
    assert run_isolated(code).strip() == "ok"


@needs_native
@pytest.mark.serial  # a wall-clock bound
def test_kendall_sizes_are_checked_before_anything_is_formed() -> None:
    """Sizes whose products overflowed (the metric's draws x n x 8, the groups' offsets)
    passed the length checks with empty buffers and read or wrote past them; absurd group
    counts looped for ever; an int64 buffer was read as doubles. Each is now one clean
    refusal, at once."""
    code = """
import sys, time
import numpy as np
from bleucli.native import native
n = 2**20
perm, run = np.arange(n, dtype=np.int64), np.ones(n, dtype=np.uint8)
small = (np.arange(4, dtype=np.int64), np.ones(4, dtype=np.uint8))
started = time.monotonic()
for call in (
    lambda: native.kendall_counts(np.empty(0), 2**41, n, perm, run, np.array([0, n], np.int64), 1, 1),
    lambda: native.kendall_counts(np.zeros(4), 1, 4, *small, np.empty(0, np.int64), 2**61 - 1, 1),
    lambda: native.kendall_counts(np.zeros(4), 1, 4, *small, np.array([0, 4], np.int64), sys.maxsize, 1),
    lambda: native.kendall_counts(np.empty(0), 2**40, 2**20, perm, run, np.zeros(2**20 + 1, np.int64), 2**20, 1),
    lambda: native.kendall_counts(np.zeros(4, np.int64), 1, 4, *small, np.array([0, 4], np.int64), 1, 1),
    lambda: native.kendall_counts(np.zeros(4), 1, 4, small[0].astype(np.float64), small[1], np.array([0, 4], np.int64), 1, 1),
):
    try:
        call()
        print("accepted")
    except ValueError as err:
        print(str(err).split(":")[0])
print(time.monotonic() - started < 5)
"""
    assert run_isolated(code).splitlines() == ["kendall_counts"] * 6 + ["True"]


@needs_native
def test_the_public_kendall_checks_shapes_and_groupings() -> None:
    """Through the public API: a metric matrix without one column per gold entry (the
    audit's 2**41 x 0 matrix against 2**20 gold entries) and groupings that do not cover the
    entries are refused before the core sees them."""
    code = """
import numpy as np
from bleucli.metaeval.groups import Groups
from bleucli.metaeval.stats import Kendall
n = 2**20
for make in (
    lambda: Kendall(Groups("item", np.arange(n), np.arange(n + 1)), np.arange(n, dtype=float))(np.empty((2**41, 0))),
    lambda: Kendall(Groups("item", np.arange(4), np.array([0, 2, 1, 4])), np.arange(4.0)),
    lambda: Kendall(Groups("item", np.arange(4), np.array([0, 9])), np.arange(4.0)),
    lambda: Kendall(Groups("item", np.arange(4), np.array([1, 4])), np.arange(4.0)),
):
    try:
        make()
        print("accepted")
    except ValueError as err:
        print(type(err).__name__)
"""
    assert run_isolated(code).splitlines() == ["ValueError"] * 4


@needs_native
def test_chrf_orders_are_range_checked_before_their_sum() -> None:
    """Orders near the largest size summed into a signed overflow before the range check
    (UBSan); now the range check comes first, in chrf_stats and the batch engines."""
    code = """
import sys
import numpy as np
from bleucli.native import native
for call in (
    lambda: native.chrf_stats(["a"], [["a"]], sys.maxsize, sys.maxsize, False),
    lambda: native.batch_pairwise(1, ["a", "b"], np.array([0, 1, 1, 1], np.int64), np.arange(2, dtype=np.int64),
                                  (sys.maxsize, sys.maxsize, 2, False, False), False, 1, np.zeros(1)),
):
    try:
        call()
        print("accepted")
    except ValueError as err:
        print("refused")
"""
    assert run_isolated(code).splitlines() == ["refused", "refused"]


@needs_native
@pytest.mark.skipif(CHECKED, reason="sanitizers reserve terabytes of address space")
def test_a_huge_thread_count_costs_only_the_threads_that_run() -> None:
    """``threads=2**31-1`` allocated an arena per requested thread (16 GiB of address space)
    though at most 256 run; the aligned engine now keeps arenas for those only."""
    code = """
import resource
import numpy as np
from bleucli.native import native
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # 4 GiB of address space
hyps = ["the cat sat on the mat"] * 8
out = np.zeros(8)
native.batch_aligned(1, hyps, [hyps], (6, 0, 2, False, False), 0, 2**31 - 1, out)
print(bool((out > 0).all()))
"""
    assert run_isolated(code).strip() == "True"


@needs_native
def test_pairwise_groups_written_during_the_call_are_read_once() -> None:
    """Another process writes the groups buffer (shared memory) while batch_pairwise checks
    and copies it: each group is read once into a copy that is checked and used, so a value
    changed between the check and the use can no longer send it past the members."""
    code = """
import multiprocessing, time
from multiprocessing import shared_memory
import numpy as np
from bleucli.native import native

def scribble(name, stop):
    memory = shared_memory.SharedMemory(name=name)
    groups = np.ndarray((4,), dtype=np.int64, buffer=memory.buf)
    while not stop.is_set():
        groups[1] = 2**40
        groups[1] = 10
    memory.close()

if __name__ == "__main__":
    memory = shared_memory.SharedMemory(create=True, size=32)
    groups = np.ndarray((4,), dtype=np.int64, buffer=memory.buf)
    groups[:] = [0, 10, 0, 10]
    stop = multiprocessing.Event()
    writer = multiprocessing.Process(target=scribble, args=(memory.name, stop))
    writer.start()
    texts = [f"w{i} x y" for i in range(10)]
    members = np.arange(10, dtype=np.int64)
    done, refused, deadline = 0, 0, time.monotonic() + 2
    while time.monotonic() < deadline:
        out = np.zeros(100)
        try:
            native.batch_pairwise(0, texts, groups, members, (4, 0, True, 0.0), False, 1, out)
            done += 1
        except (ValueError, MemoryError):
            refused += 1
    stop.set()
    writer.join()
    memory.close()
    memory.unlink()
    print(done + refused > 0)
"""
    assert run_isolated(code).strip() == "True"


def test_nan_and_constant_metrics_give_one_answer_on_both_engines() -> None:
    """A NaN score makes its group's Kendall tau NaN on either engine (scipy's kendalltau
    propagates it; the engines used to disagree in most random cases), and a constant
    metric's z-scores are 0, so PERM-BOTH mixes no NaN (docs/meta-eval.md)."""
    code = """
import json
import numpy as np
from bleucli.metaeval.groups import grouping
from bleucli.metaeval.significance import TestSettings, pair_stream, perm_both
from bleucli.metaeval.stats import Correlation, Kendall
rng = np.random.default_rng(3)
rated = np.ones((4, 30), dtype=bool)
out = {}
for by in ("none", "item", "sys"):
    groups = grouping(rated, by)
    gold = groups.take(rng.integers(0, 5, (4, 30)).astype(float))
    metric = groups.take(rng.integers(0, 5, (3, 4, 30)).astype(float))
    metric[0, 3] = np.nan
    out[by] = np.nan_to_num(Kendall(groups, gold)(metric), nan=-9).round(12).tolist()
    constant = np.full(len(gold), 2.0)
    statistic = Correlation("kendall", groups, gold)
    p, used = perm_both(statistic, metric[1], constant, TestSettings(resamples=50), pair_stream(1, "s", "a", "b"))
    out[by + "-p"] = [p, used]
print(json.dumps(out))
"""
    native_run = json.loads(run_isolated(code))
    pure_run = json.loads(run_isolated(code, env={"BLEUCLI_PUREPYTHON": "1"}))
    assert native_run == pure_run
    assert native_run["none"][0] == [-9]  # the vector with a NaN
    assert all(0 <= value[0] <= 1 for key, value in native_run.items() if key.endswith("-p"))
