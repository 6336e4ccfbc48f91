"""Sentence embeddings kept for reuse: a source or reference sentence is encoded once per
model (per weights, precision and device type), in this process and across runs.

Each embedding is a function of its sentence alone: a sentence is padded to the next
multiple of 8 tokens and batched only with sentences padded to the same length, so the
same sentence gives the same bits whatever else is in the batch, and a stored embedding is
exactly what encoding it again would give.
On disk the store is one SQLite file per model configuration under bleucli's cache
(``neural/``), safe under concurrent runs (WAL, transactions), bounded in size (oldest
entries go first; ``BLEUCLI_NEURAL_CACHE_MB``, default 4096), and checked on reading (a
vector of the wrong size is a miss). ``BLEUCLI_NEURAL_CACHE=0`` keeps it in memory only."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bleucli.neural import runtime

#: Rows of the head (and of a disk query) at a time: fixed, so results do not depend on
#: the batch-size option.
CHUNK = 512


#: Embeddings kept in memory at most (oldest dropped first; the disk store keeps them):
#: ~256 MB at XLM-R large's width.
MEMORY_ENTRIES = 1 << 16


#: Sequences are padded to the next multiple of this many tokens: the padded length is a
#: function of the sentence alone (so is its embedding), and batches stay large.
BUCKET = 8


def padded_length(tokens: int) -> int:
    return -(-tokens // BUCKET) * BUCKET


def _key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingStore:
    """Embeddings of one model configuration, in memory and (optionally) on disk."""

    def __init__(self, identity: str, width: int) -> None:
        self.identity = identity
        self.width = width
        self.memory: dict[bytes, Any] = {}
        self.path: Path | None = None
        if os.environ.get("BLEUCLI_NEURAL_CACHE", "1") not in ("0", "no", "off", "false"):
            from bleucli.testsets.store import cache_root

            self.path = cache_root() / "neural" / f"{identity}.sqlite"
        try:
            self.limit = int(os.environ.get("BLEUCLI_NEURAL_CACHE_MB", "4096")) * 1024 * 1024
        except ValueError:
            self.limit = 4096 * 1024 * 1024
        self._db: sqlite3.Connection | None = None

    def trim(self) -> None:
        """Keep at most ``MEMORY_ENTRIES`` embeddings in memory, the newest."""
        excess = len(self.memory) - MEMORY_ENTRIES
        if excess > 0:
            for key in list(itertools.islice(self.memory, excess)):
                del self.memory[key]

    # -- disk --------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("CREATE TABLE IF NOT EXISTS e (k BLOB PRIMARY KEY, v BLOB NOT NULL)")
                self._db = db
            except (OSError, sqlite3.Error) as err:
                self._give_up(err)
        return self._db

    def _give_up(self, err: Exception) -> None:
        """A cache that cannot be used is skipped (scores are computed), with one notice."""
        from bleucli.log import logger

        logger.warning(f"neural embedding cache {self.path} not used: {err}")
        self.path = None
        self._db = None

    def _read(self, keys: list[bytes]) -> dict[bytes, Any]:
        import numpy

        db = self._connect()
        if db is None or not keys:
            return {}
        torch = runtime.torch()
        found: dict[bytes, Any] = {}
        size = self.width * 4
        try:
            for start in range(0, len(keys), CHUNK):
                part = keys[start : start + CHUNK]
                marks = ",".join("?" * len(part))
                for key, blob in db.execute(f"SELECT k, v FROM e WHERE k IN ({marks})", part):
                    if isinstance(blob, bytes) and len(blob) == size:
                        found[key] = torch.from_numpy(numpy.frombuffer(blob, dtype="<f4").copy())
        except sqlite3.Error as err:
            self._give_up(err)
            return {}
        return found

    def _write(self, items: dict[bytes, Any]) -> None:
        db = self._connect()
        if db is None or not items:
            return
        rows = [(k, v.float().cpu().numpy().astype("<f4").tobytes()) for k, v in items.items()]
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT OR IGNORE INTO e (k, v) VALUES (?, ?)", rows)
            pages, page_size = (
                db.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size")
            )
            if pages * page_size > self.limit:
                count = db.execute("SELECT COUNT(*) FROM e").fetchone()[0]
                db.execute(
                    "DELETE FROM e WHERE rowid IN (SELECT rowid FROM e ORDER BY rowid LIMIT ?)",
                    (max(1, count // 4),),
                )
            db.execute("COMMIT")
        except sqlite3.Error as err:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            self._give_up(err)

    # -- the embeddings ------------------------------------------------------------------------
    def embed(
        self,
        texts: Sequence[str],
        encode: Callable[[list[list[int]], int], Any],
        tokenize: Callable[[list[str]], list[list[int]]],
        batch_size: int,
        progress: Callable[[int], None] | None = None,
    ) -> Any:
        """The embeddings of ``texts`` (one row each), encoding only the sentences neither
        memory nor disk holds; ``encode(ids, length)`` runs the model on id lists padded to
        ``length``."""
        torch = runtime.torch()
        keys = [_key(t) for t in texts]
        unique: dict[bytes, str] = {}
        for key, text in zip(keys, texts):
            if key not in self.memory:
                unique.setdefault(key, text)
        stored = self._read(list(unique))
        self.memory.update(stored)
        wanted = {k: t for k, t in unique.items() if k not in stored}
        if wanted:
            ids = tokenize(list(wanted.values()))
            by_length: dict[int, list[tuple[bytes, list[int]]]] = {}
            for key, sequence in zip(wanted, ids):
                by_length.setdefault(padded_length(len(sequence)), []).append((key, sequence))
            fresh: dict[bytes, Any] = {}
            for length in sorted(by_length):
                group = sorted(by_length[length])
                for start in range(0, len(group), batch_size):
                    chunk = group[start : start + batch_size]
                    vectors = encode([sequence for _, sequence in chunk], length)
                    for (key, _), vector in zip(chunk, vectors):
                        fresh[key] = vector.float().cpu()
                    if progress is not None:
                        progress(len(chunk))
            self.memory.update(fresh)
            self._write(fresh)
        if progress is not None:
            progress(len(texts) - len(wanted))
        return torch.stack([self.memory[k] for k in keys]) if keys else torch.zeros(0, self.width)
