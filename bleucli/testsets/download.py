"""Fetching one file: mirrors, retries, md5 while streaming, atomic rename, progress bar.

A file is only ever visible under its final name after its md5 matched: it is streamed to a
temporary file in the same folder and renamed, so an interrupted or corrupt transfer leaves
nothing that a later run could mistake for the real thing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

from bleucli.errors import BleucliError

logger = logging.getLogger("bleucli")

ENV_OFFLINE = "BLEUCLI_OFFLINE"
ENV_MIRROR = "BLEUCLI_MIRROR"
RETRIES = 3
CONNECT_TIMEOUT = 15.0
READ_TIMEOUT = 60.0
CHUNK = 1 << 16


class DownloadError(BleucliError):
    """A file could not be fetched or did not match its checksum."""


class OfflineError(DownloadError):
    """The network is needed but offline mode is on."""


def offline_from_environment() -> bool:
    return os.environ.get(ENV_OFFLINE, "").strip().lower() not in ("", "0", "false", "no")


def is_remote(url: str) -> bool:
    return urlparse(url).scheme in ("http", "https")


def resolve(url: str, origin: Path) -> str:
    """Relative paths are relative to the registry file's folder; other URLs pass through."""
    scheme = urlparse(url).scheme
    if scheme in ("http", "https", "file"):
        return url
    return str((origin / url).resolve())


def apply_mirror(url: str, mirror: str | None = None) -> str:
    """``https://host/path`` -> ``MIRROR/host/path`` when a mirror is set (remote URLs only)."""
    mirror = mirror if mirror is not None else os.environ.get(ENV_MIRROR, "")
    if not mirror or not is_remote(url):
        return url
    parts = urlparse(url)
    rest = parts.netloc + parts.path + (f"?{parts.query}" if parts.query else "")
    return mirror.rstrip("/") + "/" + rest


def md5_of(path: Path) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _local_chunks(url: str) -> tuple[int | None, Iterator[bytes]]:
    path = Path(unquote(urlparse(url).path)) if url.startswith("file:") else Path(url)
    try:
        size = path.stat().st_size
    except OSError as err:
        raise DownloadError(f"{path}: cannot read ({err.strerror})") from None

    def chunks() -> Iterator[bytes]:
        try:
            with open(path, "rb") as handle:
                yield from iter(lambda: handle.read(CHUNK), b"")
        except OSError as err:
            raise DownloadError(f"{path}: cannot read ({err.strerror})") from None

    return size, chunks()


def _remote_chunks(url: str) -> tuple[int | None, Iterator[bytes]]:
    import requests

    try:
        response = requests.get(url, stream=True, timeout=(CONNECT_TIMEOUT, READ_TIMEOUT),
                                headers={"Accept-Encoding": "identity"})
        response.raise_for_status()
    except requests.RequestException as err:
        raise DownloadError(f"{url}: {err}") from None
    length = response.headers.get("Content-Length")

    def chunks() -> Iterator[bytes]:
        try:
            yield from response.iter_content(CHUNK)
        except requests.RequestException as err:
            raise DownloadError(f"{url}: transfer interrupted ({err})") from None
        finally:
            response.close()

    return (int(length) if length and length.isdigit() else None), chunks()


def _progress(total: int | None, label: str, show: bool):
    import click

    if not show:
        return None
    return click.progressbar(length=total or 0, label=label, file=sys.stderr,
                             show_pos=total is None, width=30)


def _fetch_once(url: str, tmp: Path, show_progress: bool) -> str:
    """Write ``url`` to ``tmp``; return its md5. Raises DownloadError on short transfers."""
    opener: Callable = _remote_chunks if is_remote(url) else _local_chunks
    total, chunks = opener(url)
    digest = hashlib.md5()
    received = 0
    bar = _progress(total, f"downloading {Path(urlparse(url).path).name}", show_progress)
    with open(tmp, "wb") as out:
        try:
            if bar is not None:
                bar.__enter__()
            for chunk in chunks:
                out.write(chunk)
                digest.update(chunk)
                received += len(chunk)
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
    if total is not None and received != total:
        raise DownloadError(f"{url}: transfer interrupted after {received} of {total} bytes")
    return digest.hexdigest()


def fetch(urls: list[str], dest: Path, md5: str | None, *, offline: bool = False,
          show_progress: bool = False) -> str:
    """Store the first of ``urls`` whose content has checksum ``md5`` at ``dest``, atomically;
    return the stored file's md5 (``md5=None`` accepts any complete transfer).

    Remote URLs are retried with back-off on transfer errors; a checksum mismatch moves on
    to the next URL (a mirror) and, if none matches, fails without leaving any file behind.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    for url in urls:
        if offline and is_remote(url):
            problems.append(f"{url}: not fetched, offline mode is on")
            continue
        attempts = RETRIES if is_remote(url) else 1
        for attempt in range(1, attempts + 1):
            fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.",
                                            suffix=".part")
            os.close(fd)
            tmp = Path(tmp_name)
            try:
                if is_remote(url):
                    logger.info(f"downloading {url}")
                got = _fetch_once(url, tmp, show_progress)
            except DownloadError as err:
                tmp.unlink(missing_ok=True)
                problems.append(str(err))
                if attempt < attempts:
                    time.sleep(0.5 * attempt)
                continue
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
            if md5 is not None and got != md5:
                tmp.unlink(missing_ok=True)
                problems.append(f"{url}: md5 is {got}, expected {md5}")
                break  # the same URL will serve the same bytes: try the next mirror
            os.replace(tmp, dest)
            return got
    if offline and all("offline mode" in p for p in problems):
        raise OfflineError(problems[0])
    raise DownloadError("; ".join(problems) + "; nothing was cached")


def copy_atomic(source: Path, dest: Path) -> None:
    """Copy a file so that ``dest`` appears complete or not at all."""
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    os.close(fd)
    try:
        shutil.copyfile(source, tmp_name)
        os.replace(tmp_name, dest)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
