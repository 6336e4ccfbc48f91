"""Hostile servers, archives and registries: every one ends in one clear line, in bounded
time, with nothing unverified left in the cache and nothing touched outside it."""

from __future__ import annotations

import errno
import io
import os
import tarfile
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.testsets.conftest import make_tgz, md5, write_registry
from tests.testsets.test_download import news_archive, news_registry, score


def assert_one_line_error(result, code: int, *fragments: str) -> None:
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    # informational lines (downloading, retrying) may come first; the error is one line
    lines = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("bleucli: error: ") and "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.serial  # a wall-clock bound
def test_dripping_server_meets_the_overall_deadline(
    http_server, cache, tmp_path, monkeypatch
) -> None:
    archive = news_archive()
    url = http_server.serve("/drip/test.tgz", archive, drip=0.02)
    monkeypatch.setenv("BLEUCLI_DOWNLOAD_DEADLINE", "1")
    monkeypatch.setenv("BLEUCLI_MIN_RATE", "1")  # only the deadline can stop it
    started = time.monotonic()
    result = score(news_registry(tmp_path, url, md5(archive)), tmp_path)
    assert time.monotonic() - started < 15  # 3 attempts of about 1 s, not minutes
    assert_one_line_error(
        result,
        1,
        "not complete after 1 s",
        "(3 attempts)",
        "nothing was cached",
        "BLEUCLI_MIRROR",
        "--offline",
    )
    error = [line for line in result.stderr.splitlines() if "error" in line][0]
    assert error.count(url) == 1  # one reason per URL, not one per attempt
    assert not list((cache / "news" / "downloads").glob("*"))


def test_slow_server_fails_the_minimum_rate(http_server, cache, tmp_path, monkeypatch) -> None:
    archive = news_archive()
    url = http_server.serve("/slow/test.tgz", archive, drip=0.01)
    monkeypatch.setenv("BLEUCLI_DOWNLOAD_DEADLINE", "2")  # rate window: 0.5 s
    monkeypatch.setenv("BLEUCLI_MIN_RATE", "100000")
    result = score(news_registry(tmp_path, url, md5(archive)), tmp_path)
    assert_one_line_error(result, 1, "too slow")


def test_stalled_server_times_out(http_server, cache, tmp_path, monkeypatch) -> None:
    archive = news_archive()
    url = http_server.serve("/stall/test.tgz", archive, stall=5)
    monkeypatch.setenv("BLEUCLI_DOWNLOAD_DEADLINE", "0.5")
    started = time.monotonic()
    result = score(news_registry(tmp_path, url, md5(archive)), tmp_path)
    assert time.monotonic() - started < 12
    assert_one_line_error(result, 1, "timed out")


def test_server_lying_about_sizes(http_server, cache, tmp_path) -> None:
    archive = news_archive()
    short = http_server.serve("/short/test.tgz", archive, announce=len(archive) + 1000)
    result = score(news_registry(tmp_path, short, md5(archive)), tmp_path)
    assert_one_line_error(result, 1, "nothing was cached")
    huge = http_server.serve("/huge/test.tgz", archive, announce=10 << 30)
    result = score(news_registry(tmp_path, huge, md5(archive)), tmp_path)
    assert_one_line_error(result, 1, "announces 10737418240 bytes")


def _bomb_registry(tmp_path: Path, http_server, name: str, archive: bytes) -> Path:
    url = http_server.serve(f"/{name}", archive)
    return write_registry(
        tmp_path / "registry.json",
        "news",
        [{"url": url, "md5": md5(archive)}],
        {"de-en": {"format": "plain", "source": "a.txt", "references": ["a.txt"]}},
    )


@pytest.mark.parametrize("kind", ["tgz", "zip"])
def test_archive_bombs_are_refused(kind, http_server, cache, tmp_path, monkeypatch) -> None:
    zeros = bytes(3 << 20)  # 3 MiB of zeros pack into a few KiB
    if kind == "tgz":
        archive = make_tgz({"a.txt": zeros})
    else:
        buffer = io.BytesIO()
        import zipfile

        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("a.txt", zeros)
        archive = buffer.getvalue()
    assert len(archive) < 64 << 10
    monkeypatch.setenv("BLEUCLI_MAX_EXTRACTED_BYTES", str(1 << 20))
    registry = _bomb_registry(tmp_path, http_server, f"bomb.{kind}", archive)
    result = score(registry, tmp_path)
    assert_one_line_error(result, 1, "likely archive bomb", "BLEUCLI_MAX_EXTRACTED_BYTES")
    assert not (cache / "news" / "raw").exists()


def test_member_count_and_ratio_caps(tmp_path, monkeypatch) -> None:
    from bleucli.testsets import extract as module

    many = tmp_path / "many.tgz"
    many.write_bytes(make_tgz({f"f{i}.txt": b"x" for i in range(20)}))
    monkeypatch.setattr(module, "MAX_MEMBERS", 10)
    with pytest.raises(module.ArchiveError, match="20 members"):
        module.extract(many, tmp_path / "out")
    monkeypatch.setattr(module, "MAX_MEMBERS", 100)
    monkeypatch.setattr(module, "RATIO_FREE_BYTES", 1000)
    dense = tmp_path / "dense.tgz"
    dense.write_bytes(make_tgz({"a.txt": bytes(1 << 20)}))
    with pytest.raises(module.ArchiveError, match="at most 200x"):
        module.extract(dense, tmp_path / "out2")


def _tar(members: list[tarfile.TarInfo | tuple[tarfile.TarInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for member in members:
            if isinstance(member, tuple):
                tf.addfile(member[0], io.BytesIO(member[1]))
            else:
                tf.addfile(member)
    return buffer.getvalue()


def _file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE
    info.linkname = target
    return info


def test_hard_link_to_a_later_member_is_extracted(tmp_path) -> None:
    from bleucli.testsets.extract import extract

    archive = tmp_path / "a.tgz"
    archive.write_bytes(
        _tar([_link("copy.txt", "data/real.txt"), _file("data/real.txt", b"hello\n")])
    )
    extract(archive, tmp_path / "out")
    assert (tmp_path / "out" / "copy.txt").read_bytes() == b"hello\n"


@pytest.mark.parametrize(
    ("members", "error"),
    [
        ([_link("copy.txt", "missing.txt")], "does not name a file of the archive"),
        ([_file("a", b"file"), _file("a/b", b"then a folder")], "is both a file and a folder"),
    ],
)
def test_archive_path_tricks(members, error, tmp_path) -> None:
    from bleucli.errors import BleucliError
    from bleucli.testsets.extract import extract

    archive = tmp_path / "a.tgz"
    archive.write_bytes(_tar(members))
    with pytest.raises(BleucliError, match=error):
        extract(archive, tmp_path / "out")


@pytest.mark.parametrize("body", [b"not an archive at all", news_archive()[:200]])
def test_archive_with_matching_md5_but_broken(body, http_server, cache, tmp_path) -> None:
    url = http_server.serve(f"/broken{len(body)}/test.tgz", body)
    result = score(news_registry(tmp_path, url, md5(body)), tmp_path)
    assert_one_line_error(result, 1, "not a valid archive or damaged")


@pytest.mark.parametrize(
    ("name", "pair", "error"),
    [
        ("..", {"format": "plain", "source": "a", "references": ["a"]}, "is not allowed"),
        ("ok/../..", {"format": "plain", "source": "a", "references": ["a"]}, "is not allowed"),
        (
            "fine",
            {"format": "plain", "source": "../../etc/passwd", "references": ["a"]},
            "must be a relative path inside",
        ),
        (
            "fine",
            {"format": "plain", "source": "a", "references": ["/etc/passwd"]},
            "must be a relative path inside",
        ),
    ],
)
def test_registry_cannot_address_paths_outside_the_cache(
    name, pair, error, http_server, cache, tmp_path
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    registry = write_registry(
        tmp_path / "registry.json",
        name,
        [{"url": http_server.url("/x.txt"), "md5": "0" * 32}],
        {"de-en": pair},
    )
    result = run_cli(["-t", name, "-l", "de-en", "--testsets-file", str(registry)], input="x\n")
    assert_one_line_error(result, 1, error)
    assert (victim / "keep.txt").read_text() == "precious"


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (errno.ENOSPC, "no space left on the device"),
        (errno.EROFS, "the cache is not writable"),
    ],
)
def test_file_system_failures_are_one_line(
    code, message, http_server, cache, tmp_path, monkeypatch
) -> None:
    import bleucli.testsets.store as store

    def failing(*args, **kwargs):
        raise OSError(code, "simulated", str(cache / "news" / "raw"))

    monkeypatch.setattr(store, "extract", failing)
    archive = news_archive()
    url = http_server.serve("/fs/test.tgz", archive)
    result = score(news_registry(tmp_path, url, md5(archive)), tmp_path)
    assert_one_line_error(result, 1, message, "BLEUCLI_CACHE")


def test_corrupt_file_in_a_read_only_cache_is_one_error_naming_it(
    http_server, cache, tmp_path, monkeypatch
) -> None:
    """A damaged cached file that cannot be rebuilt because the cache is read-only: one
    error line that names the file and says why it stays broken (no "rebuilding" notice
    first, no message about a manifest the user never touched)."""
    archive = news_archive()
    url = http_server.serve("/readonly/test.tgz", archive)
    registry = news_registry(tmp_path, url, md5(archive))
    assert score(registry, tmp_path).exit_code == 0
    damaged = cache / "news" / "raw" / "test" / "ref.en.sgm"
    damaged.write_text("damaged", encoding="utf-8")
    folders = [p for p in cache.rglob("*") if p.is_dir()] + [cache]
    if os.geteuid() == 0:  # root writes through permissions: fail as a read-only mount does
        real_unlink = Path.unlink

        def read_only_unlink(self, *args, **kwargs):
            if cache in self.parents:
                raise OSError(errno.EROFS, "Read-only file system", str(self))
            return real_unlink(self, *args, **kwargs)

        monkeypatch.setattr(Path, "unlink", read_only_unlink)
    else:
        for folder in folders:
            folder.chmod(0o555)
    try:
        result = score(registry, tmp_path)
    finally:
        for folder in folders:
            folder.chmod(0o755)
    assert_one_line_error(
        result,
        1,
        f"cached file {damaged} is corrupt",
        "read-only",
        "cannot be repaired",
        "BLEUCLI_CACHE",
    )
    assert result.stderr.count("\n") == 1, result.stderr
