"""Sources and references are encoded once per model and kept (in memory, and on disk
across runs): a warm run gives the same bits as a cold one, a damaged entry is a miss,
the disk store stays within its bound, and concurrent runs share it safely."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest
import torch

from scripts.comet_fixtures import cases
from tests.neural_toy import ROOT


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch) -> None:
    """Each test its own cache: a test here replaces the store's file, and a warm run must
    find what its own cold run wrote, whatever ran before it in this process."""
    monkeypatch.setenv("BLEUCLI_CACHE", str(tmp_path / "own-cache"))


def columns(kind: str = "regression") -> dict[str, list[str]]:
    samples = cases()["example"] + cases()["hard"]
    keys = ("src", "mt") if kind == "referenceless" else ("src", "mt", "ref")
    return {k: [s[k] for s in samples] for k in keys}


def fresh_model(toys, kind: str = "regression"):
    """A model loaded anew (the process-wide model cache bypassed)."""
    from bleucli.neural import checkpoint, load
    from bleucli.neural.families import family

    stored = checkpoint.load(toys[kind])
    model = family(stored.class_identifier)(
        stored,
        load.encoder_folder(stored.hparams, stored.folder),
        torch.device("cpu"),
        torch.float32,
    )
    model.cache_identity = f"{load.file_hash(toys[kind])[:32]}-fp32-cpu"
    return model


def test_a_warm_run_reads_the_disk_and_gives_the_same_bits(toys) -> None:
    cold = fresh_model(toys)
    first = cold.predict(columns(), batch_size=8).scores
    warm = fresh_model(toys)
    encoded: list[int] = []
    original = warm._encode_ids
    warm._encode_ids = lambda ids, length=None: (encoded.append(len(ids)), original(ids, length))[1]  # type: ignore[method-assign]
    second = warm.predict(columns(), batch_size=8).scores
    assert [x.hex() for x in first] == [x.hex() for x in second]
    assert encoded == []  # everything came from the disk
    # a new system against the same sources and references encodes only its own lines
    other = columns()
    other["mt"] = [line[::-1] for line in other["mt"]]
    warm.predict(other, batch_size=8)
    assert 0 < sum(encoded) <= len(set(other["mt"]))


def test_one_sentence_gives_the_same_bits_alone_and_in_any_batch(toys) -> None:
    """The embedding of a sentence padded to its bucket does not depend on the batch."""
    from bleucli.neural.embeddings import padded_length

    model = fresh_model(toys, "referenceless")
    texts = columns("referenceless")["mt"]
    sequences = [list(e.ids) for e in model.encoder.encode(texts)]
    target = sequences[3]
    length = padded_length(len(target))
    company = [s for s in sequences if padded_length(len(s)) == length and s != target]
    assert company  # the bucket holds other sentences: the comparison means something
    with torch.inference_mode():
        alone = model._encode_ids([target], length)[0]
        for batch in ([target, *company], [*company, target], [*company[:1], target, *company] * 2):
            together = model._encode_ids(batch, length)
            assert torch.equal(together[batch.index(target)], alone)


def test_a_damaged_entry_is_a_miss_and_recomputed(toys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("BLEUCLI_CACHE", str(tmp_path))
    expected = fresh_model(toys).predict(columns(), 8).scores
    (database,) = (tmp_path / "neural").glob("*.sqlite")
    with sqlite3.connect(database) as db:
        db.execute("UPDATE e SET v = substr(v, 1, 10)")  # every vector cut short
    again = fresh_model(toys).predict(columns(), 8).scores
    assert [x.hex() for x in again] == [x.hex() for x in expected]


def test_the_disk_store_stays_within_its_bound(toys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("BLEUCLI_CACHE", str(tmp_path))
    monkeypatch.setenv("BLEUCLI_NEURAL_CACHE_MB", "0")  # every write over the bound
    model = fresh_model(toys)
    for k in range(4):
        data = columns()
        data["mt"] = [f"{k} {line}" for line in data["mt"]]
        model.predict(data, 8)
    (database,) = (tmp_path / "neural").glob("*.sqlite")
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT COUNT(*) FROM e").fetchone()[0]
    unique = len(set(columns()["src"])) + len(set(columns()["ref"])) + 4 * len(columns()["mt"])
    assert rows < unique  # the oldest entries went


def test_memory_only_when_turned_off(toys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("BLEUCLI_CACHE", str(tmp_path))
    monkeypatch.setenv("BLEUCLI_NEURAL_CACHE", "0")
    fresh_model(toys).predict(columns(), 8)
    assert not (tmp_path / "neural").exists()


PROGRAM = """
import json, sys, torch
from bleucli.neural.load import load
from tests.neural.test_embedding_cache import columns
print(json.dumps([x.hex() for x in load(sys.argv[1]).model.predict(columns(), 4).scores]))
"""


def test_concurrent_runs_share_the_store(toys, tmp_path) -> None:

    env = {**os.environ, "BLEUCLI_CACHE": str(tmp_path)}
    runs = [
        subprocess.Popen([sys.executable, "-c", PROGRAM, str(toys["regression"].parents[1])],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]  # fmt: skip
    outputs = [run.communicate(timeout=300) for run in runs]
    assert all(run.returncode == 0 for run in runs), [err for _, err in outputs]
    assert len({out for out, _ in outputs}) == 1
    assert all("not used" not in err for _, err in outputs)


def _distinct(n: int) -> dict[str, list[str]]:
    """``n`` segments, every source, reference and hypothesis a different sentence."""
    base = columns()
    k = len(base["mt"])
    return {key: [f"{texts[i % k]} {i}" for i in range(n)] for key, texts in base.items()}


def _memory_sizes(model, monkeypatch) -> list[int]:
    """The in-memory store's size after each chunk (filled as the model runs)."""
    sizes: list[int] = []
    original = model.store.trim

    def watched() -> None:
        original()
        sizes.append(len(model.store.memory))

    monkeypatch.setattr(model.store, "trim", watched)
    return sizes


def test_a_large_set_streams_in_bounded_memory(toys, monkeypatch) -> None:
    """Segments go through the model a chunk at a time and the in-memory store keeps a
    bounded number of embeddings (the disk keeps the rest): the scores are the same bits
    as in one pass, and what stays in memory does not grow with the set."""
    from bleucli.neural import comet, embeddings

    monkeypatch.setenv("BLEUCLI_NEURAL_CACHE", "0")  # every sentence encoded, in chunks
    samples = _distinct(1500)
    whole = fresh_model(toys).predict(samples, batch_size=16).scores
    monkeypatch.setattr(comet, "SEGMENT_CHUNK", 256)  # the sentence-embedding family's chunks
    monkeypatch.setattr(embeddings, "MEMORY_ENTRIES", 400)
    streamed = fresh_model(toys)
    peak = _memory_sizes(streamed, monkeypatch)
    assert streamed.predict(samples, batch_size=16).scores == whole
    assert len(peak) == -(-1500 // 256) and max(peak) <= 400


@pytest.mark.slow  # ~300 CPU-seconds; the 1,500-segment test above proves the bound
def test_100k_segments_stream(toys, monkeypatch, tmp_path) -> None:
    """100,000 distinct segments (300,000 sentences) through the toy model: the in-memory
    store never holds more than its bound."""
    from bleucli.neural import embeddings

    monkeypatch.setenv("BLEUCLI_NEURAL_CACHE", "0")
    model = fresh_model(toys)
    sizes = _memory_sizes(model, monkeypatch)
    scores = model.predict(_distinct(100_000), batch_size=64).scores
    assert len(scores) == 100_000 and all(s == s for s in scores)
    assert max(sizes) <= embeddings.MEMORY_ENTRIES


def test_the_disk_store_is_private_and_its_keys_are_not_hashes_of_the_text(toys) -> None:
    """A reference line's plain SHA-256 in a world-readable file let any local user confirm
    a guessed line: the folder and files are the owner's alone, and keys are HMACs under a
    secret of the cache."""
    import hashlib
    import stat

    from bleucli.neural.embeddings import KEY_SCHEME, SECRET_FILE

    model = fresh_model(toys)
    texts = columns()
    model.predict(texts, batch_size=8)
    path = model.store.path
    assert path is not None and path.is_file()
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for candidate in (path, path.parent / SECRET_FILE, path.with_name(path.name + "-wal")):
        if candidate.exists():
            assert stat.S_IMODE(candidate.stat().st_mode) == 0o600, candidate
    with sqlite3.connect(path) as db:
        keys = {row[0] for row in db.execute("SELECT k FROM e")}
        assert db.execute("SELECT v FROM meta WHERE k = 'keys'").fetchone()[0] == KEY_SCHEME
    plain = {hashlib.sha256(t.encode()).digest() for column in texts.values() for t in column}
    assert keys and not keys & plain


def test_a_store_of_plain_hashes_is_emptied_not_read(toys) -> None:
    """A cache an earlier bleucli wrote (bare SHA-256 keys) is dropped on first use."""
    import hashlib

    model = fresh_model(toys)
    path = model.store.path
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.exists():
        path.unlink()
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE e (k BLOB PRIMARY KEY, v BLOB NOT NULL)")
        db.execute("INSERT INTO e VALUES (?, ?)", (hashlib.sha256(b"x").digest(), b"\0" * 4))
    model.predict(columns(), batch_size=8)
    with sqlite3.connect(path) as db:
        keys = {row[0] for row in db.execute("SELECT k FROM e")}
    assert hashlib.sha256(b"x").digest() not in keys and keys
