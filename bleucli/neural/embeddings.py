"""Sentence embeddings kept for reuse: a source or reference sentence is encoded once per
model (per weights, precision and device type), in this process and across runs.

Each embedding is a function of its sentence alone: a sentence is padded to the next
multiple of 8 tokens and batched only with sentences padded to the same length, so the
same sentence gives the same bits whatever else is in the batch, and a stored embedding is
exactly what encoding it again would give.
On disk the store is one SQLite file per model configuration under bleucli's cache
(``neural/``), safe under concurrent runs (WAL, transactions), bounded in size (oldest
entries go first; ``BLEUCLI_NEURAL_CACHE_MB``, default 4096), and checked on reading (a
vector of the wrong size is a miss). ``BLEUCLI_NEURAL_CACHE=0`` keeps it in memory only.
The folder and files are their owner's only (0700/0600), and the keys are HMACs under a
secret of the cache (a file beside them), not bare hashes of the sentences: a guessed
reference line cannot be confirmed by reading the store."""

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
    """A sentence's key in memory (never written to disk as such)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


#: What the disk store's keys are: HMAC-SHA256 under the cache's own secret. A bare SHA-256
#: of each sentence let anyone who could read the file confirm a guessed reference line.
KEY_SCHEME = "hmac-sha256-v1"
SECRET_FILE = "cache.key"


def private_folder(folder: Path) -> None:
    """Create ``folder`` readable by its owner only (0700), or narrow it if it is ours."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = folder.stat()
    if info.st_mode & 0o077 and info.st_uid == os.geteuid():
        folder.chmod(0o700)


def cache_secret(folder: Path) -> bytes:
    """The secret the disk store's keys are made with: 32 random bytes in a file readable
    by its owner only, made once (atomically: concurrent first runs agree on one)."""
    path = folder / SECRET_FILE
    for _ in range(3):
        try:
            data = path.read_bytes()
            if len(data) == 32:
                return data
            path.unlink()  # a damaged secret: the entries it keyed are unreachable anyway
        except FileNotFoundError:
            pass
        import secrets

        temporary = folder / f".{SECRET_FILE}.{os.getpid()}"
        descriptor = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(secrets.token_bytes(32))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)  # the first to link wins; the others read its secret
        except FileExistsError:
            pass
        finally:
            temporary.unlink()
    raise OSError(f"{path}: cannot make the cache's secret")


def _private_files(path: Path) -> None:
    """The store's file (made 0600 before SQLite opens it) and its WAL and shared-memory
    files narrowed to their owner: they hold embeddings of the references."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    except OSError:
        return  # SQLite says what is wrong when it opens it
    for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            info = candidate.stat()
            if info.st_mode & 0o077 and info.st_uid == os.geteuid():
                candidate.chmod(0o600)
        except OSError:
            continue


class EmbeddingStore:
    """Embeddings of one model configuration, in memory and (optionally) on disk."""

    def __init__(self, identity: str, width: int) -> None:
        self.identity = identity
        self.width = width
        self.memory: dict[bytes, Any] = {}
        self.path: Path | None = None
        if os.environ.get("BLEUCLI_NEURAL_CACHE", "1") not in ("0", "no", "off", "false"):
            from bleucli.cache import cache_root

            self.path = cache_root() / "neural" / f"{identity}.sqlite"
        try:
            self.limit = int(os.environ.get("BLEUCLI_NEURAL_CACHE_MB", "4096")) * 1024 * 1024
        except ValueError:
            self.limit = 4096 * 1024 * 1024
        self._db: sqlite3.Connection | None = None
        self._secret: bytes | None = None

    @classmethod
    def transient(cls, width: int) -> EmbeddingStore:
        """A store in memory only, for one use (a confined run's hypotheses)."""
        store = cls.__new__(cls)
        store.identity, store.width, store.memory = "transient", width, {}
        store.path, store.limit, store._db = None, 0, None
        return store

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
                private_folder(self.path.parent)
                self._secret = cache_secret(self.path.parent)
                _private_files(self.path)
                db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                _private_files(self.path)
                db.execute("BEGIN IMMEDIATE")
                db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
                scheme = db.execute("SELECT v FROM meta WHERE k = 'keys'").fetchone()
                if scheme is None or scheme[0] != KEY_SCHEME:  # plain hashes of an older run
                    db.execute("DROP TABLE IF EXISTS e")
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('keys', ?)", (KEY_SCHEME,))
                db.execute("CREATE TABLE IF NOT EXISTS e (k BLOB PRIMARY KEY, v BLOB NOT NULL)")
                db.execute("COMMIT")
                self._db = db
            except (OSError, sqlite3.Error) as err:
                self._give_up(err)
        return self._db

    def _disk_key(self, key: bytes) -> bytes:
        """A memory key as the disk store keeps it (keyed with the cache's secret)."""
        import hmac

        assert self._secret is not None
        return hmac.new(self._secret, key, hashlib.sha256).digest()

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
        on_disk = {self._disk_key(key): key for key in keys}
        try:
            for start in range(0, len(keys), CHUNK):
                part = list(on_disk)[start : start + CHUNK]
                marks = ",".join("?" * len(part))
                for key, blob in db.execute(f"SELECT k, v FROM e WHERE k IN ({marks})", part):
                    if isinstance(blob, bytes) and len(blob) == size:
                        vector = numpy.frombuffer(blob, dtype="<f4").copy()
                        found[on_disk[key]] = torch.from_numpy(vector)
        except sqlite3.Error as err:
            self._give_up(err)
            return {}
        return found

    def _write(self, items: dict[bytes, Any]) -> None:
        db = self._connect()
        if db is None or not items:
            return
        rows = [
            (self._disk_key(k), v.float().cpu().numpy().astype("<f4").tobytes())
            for k, v in items.items()
        ]
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
