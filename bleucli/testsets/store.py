"""The local cache of test sets: one folder per set, prepared under a file lock.

Layout under the cache root (``BLEUCLI_CACHE`` or the platform's user cache folder)::

    <set>/downloads/<file>     downloaded files, md5-verified
    <set>/raw/...              archives extracted, plain files copied
    <set>/manifest.json        written last: data md5s and the md5 of every raw file

A set is ready when its manifest exists and matches the registry's md5s. Every file a
command reads is checked against the manifest first; a mismatch is reported and the set is
rebuilt (re-extracted, or re-downloaded if the download itself is damaged).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from bleucli.cache import ENV_CACHE, cache_root  # re-exported: callers of the test-set cache
from bleucli.errors import BleucliError
from bleucli.io import atomic_replace, copy_atomic
from bleucli.log import logger
from bleucli.testsets.download import (
    OfflineError,
    apply_mirror,
    fetch,
    md5_of,
    resolve,
)
from bleucli.testsets.extract import extract, is_archive
from bleucli.testsets.registry import TestSet

LOCK_TIMEOUT = 1800.0


class CacheError(BleucliError):
    """The cache cannot be used (not writable, corrupt beyond repair, lock timeout)."""


def set_dir(testset: TestSet) -> Path:
    """The set's cache folder; never outside the cache, whatever the registry says."""
    root = cache_root()
    folder = root / testset.name.replace("/", "_")
    if folder.resolve().parent != root.resolve() or testset.name in ("", ".", ".."):
        raise CacheError(f"test-set name {testset.name!r} would leave the cache folder {root}")
    return folder


def _write_json_atomic(path: Path, payload: dict) -> None:
    with atomic_replace(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, indent=1, sort_keys=True)


def _read_manifest(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def cache_failure(err: OSError, folder: Path) -> CacheError:
    """A file-system error in the cache as one actionable message."""
    import errno

    where = err.filename or folder
    if err.errno == errno.ENOSPC:
        return CacheError(
            f"{where}: no space left on the device; free some space or point "
            f"{ENV_CACHE} at another disk"
        )
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return CacheError(
            f"{where}: the cache is not writable ({err.strerror}); fix its "
            f"permissions or point {ENV_CACHE} at a writable folder"
        )
    return CacheError(f"{where}: {err.strerror or err} (cache folder {folder})")


def _unrepairable(err: OSError, damaged: Path, folder: Path) -> CacheError:
    """A corrupt cached file in a cache that cannot be written: one message that names the
    file and why it stays broken."""
    import errno

    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return CacheError(
            f"cached file {damaged} is corrupt, and the cache {folder} is "
            f"read-only ({err.strerror}), so it cannot be repaired; make the "
            f"cache writable or point {ENV_CACHE} at a writable folder"
        )
    return cache_failure(err, folder)


class TestSetStore:
    """Makes test sets available locally and hands out verified file paths."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(self, offline: bool = False, show_progress: bool = False) -> None:
        self.offline = offline
        self.show_progress = show_progress

    def raw_files(self, testset: TestSet, paths: list[str]) -> list[Path]:
        """Local paths of ``paths`` (relative to the set's raw folder), verified. File-system
        failures (a full disk, a read-only cache) become one :class:`CacheError` saying
        what to do."""
        folder = set_dir(testset)
        try:
            return self._raw_files(testset, paths, folder)
        except OSError as err:
            raise cache_failure(err, folder) from None

    def _raw_files(self, testset: TestSet, paths: list[str], folder: Path) -> list[Path]:
        for _attempt in range(2):
            self.prepare(testset)
            manifest = _read_manifest(folder) or {}
            files = manifest.get("files", {})
            bad = [p for p in paths if p not in files]
            if bad:
                raise CacheError(
                    f"{testset.name}: {bad[0]} is not in the downloaded data "
                    f"(the registry entry may be wrong)"
                )
            corrupt = [
                p
                for p in paths
                if not (folder / "raw" / p).is_file() or md5_of(folder / "raw" / p) != files[p]
            ]
            if not corrupt:
                return [folder / "raw" / p for p in paths]
            damaged = folder / "raw" / corrupt[0]
            try:
                (folder / "manifest.json").unlink(missing_ok=True)  # marks the set for a rebuild
            except OSError as err:
                raise _unrepairable(err, damaged, folder) from None
            logger.warning(f"cached file {damaged} is corrupt; rebuilding {testset.name}")
        raise CacheError(
            f"{testset.name}: cached files stay corrupt after a rebuild "
            f"(is {folder} being modified?)"
        )

    def prepare(self, testset: TestSet) -> Path:
        """Download and unpack ``testset`` unless a matching manifest says it is ready."""
        folder = set_dir(testset)
        expected = [d.md5 for d in testset.data]
        manifest = _read_manifest(folder)
        if manifest and manifest.get("data") == expected:
            return folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise CacheError(f"cannot create cache folder {folder}: {err.strerror}") from None
        from filelock import FileLock, Timeout

        lock = FileLock(str(folder) + ".lock")
        try:
            lock.acquire(timeout=0.05)
        except Timeout:
            logger.info(f"waiting for another bleucli process to prepare {testset.name}")
            try:
                lock.acquire(timeout=LOCK_TIMEOUT)
            except Timeout:
                raise CacheError(f"timed out waiting for the lock on {folder}") from None
        try:
            manifest = _read_manifest(folder)  # another process may have finished meanwhile
            if manifest and manifest.get("data") == expected:
                return folder
            self._build(testset, folder)
        finally:
            lock.release()
        return folder

    def _build(self, testset: TestSet, folder: Path) -> None:
        downloads = folder / "downloads"
        downloads.mkdir(exist_ok=True)
        (folder / "manifest.json").unlink(missing_ok=True)
        for item in testset.data:
            target = downloads / item.basename
            if target.is_file() and md5_of(target) == item.md5:
                continue
            if target.exists():
                logger.warning(f"cached download {target} is corrupt; fetching it again")
            urls = [apply_mirror(resolve(u, testset.origin)) for u in (item.url, *item.mirrors)]
            try:
                fetch(
                    urls, target, item.md5, offline=self.offline, show_progress=self.show_progress
                )
            except OfflineError:
                raise OfflineError(
                    f"test set {testset.name!r} is not in the cache ({folder}) and offline "
                    f"mode is on; fetch it once with network access: "
                    f"`bleucli --download {testset.name}`"
                ) from None
        staging = Path(tempfile.mkdtemp(dir=folder, prefix="raw.tmp."))
        try:
            for item in testset.data:
                source = downloads / item.basename
                if is_archive(item.basename):
                    extract(source, staging)
                else:
                    copy_atomic(source, staging / item.basename)
            files = {
                path.relative_to(staging).as_posix(): md5_of(path)
                for path in sorted(staging.rglob("*"))
                if path.is_file() and not path.is_symlink()
            }
            raw = folder / "raw"
            if raw.exists():
                old = Path(tempfile.mkdtemp(dir=folder, prefix="raw.old."))
                os.replace(raw, old / "raw")
                shutil.rmtree(old, ignore_errors=True)
            os.replace(staging, raw)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        _write_json_atomic(
            folder / "manifest.json", {"data": [d.md5 for d in testset.data], "files": files}
        )
