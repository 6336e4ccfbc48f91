"""Fetching one file: mirrors, retries, md5 while streaming, atomic rename, progress bar.

A file is only ever visible under its final name after its md5 matched: it is streamed to a
temporary file in the same folder and renamed, so an interrupted or corrupt transfer leaves
nothing that a later run could mistake for the real thing.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

from bleucli.errors import BleucliError
from bleucli.hashing import file_digest
from bleucli.log import logger

ENV_MIRROR = "BLEUCLI_MIRROR"
RETRIES = 3
CONNECT_TIMEOUT = 15.0
READ_TIMEOUT = 60.0
CHUNK = 1 << 16
#: A transfer is abandoned when it takes longer than this overall (seconds; env
#: ``BLEUCLI_DOWNLOAD_DEADLINE``) or, after ``RATE_WINDOW`` seconds, when it has averaged
#: less than ``MIN_RATE`` bytes a second over the last window (env ``BLEUCLI_MIN_RATE``): a
#: server that drips a byte at a time would otherwise hold the run for the read timeout
#: of every byte.
DEADLINE = 900.0
MIN_RATE = 1024
RATE_WINDOW = 30.0
#: (The rate window is a quarter of the deadline when that is shorter than 2 minutes.)
#: Larger downloads are refused (a server announcing or sending more is lying or wrong).
MAX_DOWNLOAD_BYTES = 4 << 30


class DownloadError(BleucliError):
    """A file could not be fetched or did not match its checksum."""


class OfflineError(DownloadError):
    """The network is needed but offline mode is on."""


def _env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


class TransferGuard:
    """Checks a running transfer against the overall deadline and the minimum rate."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.deadline = _env_number("BLEUCLI_DOWNLOAD_DEADLINE", DEADLINE)
        self.min_rate = _env_number("BLEUCLI_MIN_RATE", MIN_RATE)
        self.window = min(RATE_WINDOW, self.deadline / 4)
        self.start = time.monotonic()
        self.window_start, self.window_bytes = self.start, 0

    def check(self, received: int, new_bytes: int) -> None:
        now = time.monotonic()
        if received > MAX_DOWNLOAD_BYTES:
            raise DownloadError(f"{self.url}: more than {MAX_DOWNLOAD_BYTES} bytes; refusing")
        if now - self.start > self.deadline:
            raise DownloadError(
                f"{self.url}: not complete after {self.deadline:g} s ({received} bytes)"
            )
        self.window_bytes += new_bytes
        if now - self.window_start >= self.window:
            rate = self.window_bytes / (now - self.window_start)
            if rate < self.min_rate:
                raise DownloadError(
                    f"{self.url}: too slow ({rate:.0f} bytes/s over "
                    f"{now - self.window_start:.0f} s)"
                )
            self.window_start, self.window_bytes = now, 0


def describe_request_error(err: Exception) -> str:
    """A short reason for a requests exception (its own text repeats the whole URL and
    the exception chain)."""
    import requests

    response = getattr(err, "response", None)
    if isinstance(err, requests.HTTPError) and response is not None:
        return f"HTTP {response.status_code} {response.reason or ''}".strip()
    if isinstance(err, requests.Timeout):
        return "timed out"
    import urllib3

    if isinstance(err, urllib3.exceptions.ReadTimeoutError):
        return "timed out"
    if isinstance(err, (requests.ConnectionError, urllib3.exceptions.HTTPError)):
        text = str(err)
        for marker, reason in (
            ("NameResolution", "host name not found"),
            ("Name or service not known", "host name not found"),
            ("Connection refused", "connection refused"),
            ("timed out", "timed out"),
            ("reset", "connection reset"),
            ("IncompleteRead", "connection closed mid-transfer"),
            ("ProtocolError", "connection closed mid-transfer"),
        ):
            if marker in text:
                return reason
        return "cannot connect"
    return type(err).__name__


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
    return file_digest(path, "md5")


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

    read_timeout = min(READ_TIMEOUT, _env_number("BLEUCLI_DOWNLOAD_DEADLINE", DEADLINE))
    try:
        response = requests.get(
            url,
            stream=True,
            timeout=(CONNECT_TIMEOUT, read_timeout),
            headers={"Accept-Encoding": "identity"},
        )
        response.raise_for_status()
    except requests.RequestException as err:
        raise DownloadError(f"{url}: {describe_request_error(err)}") from None
    length = response.headers.get("Content-Length")
    size = int(length) if length and length.isdigit() else None
    if size is not None and size > MAX_DOWNLOAD_BYTES:
        response.close()
        raise DownloadError(f"{url}: announces {size} bytes, more than a test set may have")

    def chunks() -> Iterator[bytes]:
        """What arrives, as it arrives (``read1``: one receive at a time), so the transfer
        guard sees a dripping server instead of waiting for a full chunk."""
        import urllib3

        try:
            while True:
                block = response.raw.read1(CHUNK)
                if not block:
                    return
                yield block
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as err:
            raise DownloadError(
                f"{url}: transfer interrupted ({describe_request_error(err)})"
            ) from None
        finally:
            response.close()

    return size, chunks()


def _progress(total: int | None, label: str, show: bool):
    import click

    if not show:
        return None
    return click.progressbar(
        length=total or 0, label=label, file=sys.stderr, show_pos=total is None, width=30
    )


def _fetch_once(url: str, tmp: Path, show_progress: bool) -> str:
    """Write ``url`` to ``tmp``; return its md5. Raises DownloadError on short transfers."""
    opener: Callable = _remote_chunks if is_remote(url) else _local_chunks
    total, chunks = opener(url)
    digest = hashlib.md5()
    received = 0
    bar = _progress(total, f"downloading {Path(urlparse(url).path).name}", show_progress)
    guard = TransferGuard(url)
    with open(tmp, "wb") as out:
        try:
            if bar is not None:
                bar.__enter__()
            for chunk in chunks:
                out.write(chunk)
                digest.update(chunk)
                received += len(chunk)
                if is_remote(url):
                    guard.check(received, len(chunk))
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
    if total is not None and received != total:
        raise DownloadError(f"{url}: transfer interrupted after {received} of {total} bytes")
    return digest.hexdigest()


def fetch(
    urls: list[str],
    dest: Path,
    md5: str | None,
    *,
    offline: bool = False,
    show_progress: bool = False,
) -> str:
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
            fd, tmp_name = tempfile.mkstemp(
                dir=dest.parent, prefix=f".{dest.name}.", suffix=".part"
            )
            os.close(fd)
            tmp = Path(tmp_name)
            try:
                if is_remote(url):
                    logger.info(
                        f"downloading {url}"
                        if attempt == 1
                        else f"retrying {url} (attempt {attempt} of {attempts})"
                    )
                got = _fetch_once(url, tmp, show_progress)
            except DownloadError as err:
                tmp.unlink(missing_ok=True)
                if attempt == attempts:  # one line per URL: the last attempt's reason
                    tries = f" ({attempts} attempts)" if attempts > 1 else ""
                    problems.append(f"{err}{tries}")
                else:
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
    advice = ""
    if any(is_remote(u) for u in urls):
        advice = (
            f"; set {ENV_MIRROR}=https://your.mirror/ to fetch from a mirror, or copy "
            f"a filled cache here and run with --offline"
        )
    raise DownloadError("; ".join(problems) + "; nothing was cached" + advice)
