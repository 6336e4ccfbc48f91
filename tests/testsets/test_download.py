"""Downloads against a real loopback HTTP server: verify, cache, fail safely, share the work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu

from tests.conftest import ROOT, run_cli
from tests.testsets.conftest import (
    DOCS,
    HYPOTHESIS,
    REFERENCE,
    SOURCE,
    make_tgz,
    make_zip,
    md5,
    sgm,
    write_registry,
)

EXPECTED = sacrebleu.BLEU().corpus_score(HYPOTHESIS, [REFERENCE]).score


def news_archive() -> bytes:
    return make_tgz(
        {"test/src.de.sgm": sgm(SOURCE, DOCS), "test/ref.en.sgm": sgm(REFERENCE, DOCS, "refset")}
    )


def news_registry(
    tmp_path: Path, url: str, checksum: str, name: str = "news", **data_extra
) -> Path:
    return write_registry(
        tmp_path / "registry.json",
        name,
        [{"url": url, "md5": checksum, **data_extra}],
        {
            "de-en": {
                "format": "sgm",
                "source": "test/src.de.sgm",
                "references": ["test/ref.en.sgm"],
            }
        },
    )


def score(registry: Path, tmp_path: Path, *extra: str, name: str = "news"):
    hyp = tmp_path / "hyp.en"
    hyp.write_text("\n".join(HYPOTHESIS) + "\n", encoding="utf-8")
    return run_cli(
        [
            "-t",
            name,
            "-l",
            "de-en",
            "-i",
            str(hyp),
            "--testsets-file",
            str(registry),
            "-b",
            "-w",
            "6",
            *extra,
        ]
    )


def test_download_verify_cache_score(http_server, cache, tmp_path) -> None:
    archive = news_archive()
    url = http_server.serve("/news/test.tgz", archive)
    registry = news_registry(tmp_path, url, md5(archive))
    first = score(registry, tmp_path)
    assert first.exit_code == 0, first.stderr
    assert first.stdout.strip() == f"{EXPECTED:.6f}"
    assert http_server.hits["/news/test.tgz"] == 1
    assert (cache / "news" / "manifest.json").is_file()
    del http_server.routes["/news/test.tgz"]  # the second run must not need the server
    assert score(registry, tmp_path).stdout == first.stdout
    assert http_server.hits["/news/test.tgz"] == 1


def test_wrong_md5_fails_and_caches_nothing(http_server, cache, tmp_path) -> None:
    archive = news_archive()
    url = http_server.serve("/md5/test.tgz", archive)
    result = score(news_registry(tmp_path, url, "0" * 32), tmp_path)
    assert result.exit_code == 1
    assert f"md5 is {md5(archive)}, expected {'0' * 32}" in result.stderr
    assert "nothing was cached" in result.stderr
    leftovers = [p for p in (cache / "news").rglob("*") if p.is_file()]
    assert leftovers == []


def test_dropped_connection_leaves_no_partial_file(http_server, cache, tmp_path) -> None:
    archive = news_archive()
    url = http_server.serve(
        "/drop/test.tgz", archive, drop_after=len(archive) // 2, drops_left=3
    )  # every retry of the first run is cut short
    registry = news_registry(tmp_path, url, md5(archive))
    failed = score(registry, tmp_path)
    assert failed.exit_code == 1
    assert "transfer interrupted" in failed.stderr
    assert [p for p in (cache / "news").rglob("*") if p.is_file()] == []
    assert http_server.hits["/drop/test.tgz"] == 3
    again = score(registry, tmp_path)
    assert again.exit_code == 0, again.stderr
    assert again.stdout.strip() == f"{EXPECTED:.6f}"


def test_one_drop_is_retried_within_a_run(http_server, cache, tmp_path) -> None:
    archive = news_archive()
    url = http_server.serve("/retry/test.tgz", archive, drop_after=10, drops_left=1)
    result = score(news_registry(tmp_path, url, md5(archive)), tmp_path)
    assert result.exit_code == 0, result.stderr
    assert http_server.hits["/retry/test.tgz"] == 2


def test_four_processes_on_a_cold_cache_download_once(http_server, cache, tmp_path) -> None:
    archive = news_archive()
    url = http_server.serve("/parallel/test.tgz", archive, delay=1.0)
    registry = news_registry(tmp_path, url, md5(archive))
    hyp = tmp_path / "hyp.en"
    hyp.write_text("\n".join(HYPOTHESIS) + "\n", encoding="utf-8")
    env = {**os.environ, "BLEUCLI_CACHE": str(cache), "BLEUCLI_TESTSETS": str(registry)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bleucli",
                "-t",
                "news",
                "-l",
                "de-en",
                "-i",
                str(hyp),
                "-b",
                "-w",
                "6",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [e for _, e in outputs]
    assert {o.decode().strip() for o, _ in outputs} == {f"{EXPECTED:.6f}"}
    assert http_server.hits["/parallel/test.tgz"] == 1


def test_offline_mode(http_server, cache, tmp_path, monkeypatch) -> None:
    archive = news_archive()
    url = http_server.serve("/offline/test.tgz", archive)
    registry = news_registry(tmp_path, url, md5(archive))
    missing = score(registry, tmp_path, "--offline")
    assert missing.exit_code == 1
    assert "offline mode is on" in missing.stderr and "bleucli --download news" in missing.stderr
    assert http_server.hits["/offline/test.tgz"] == 0
    assert run_cli(["--download", "news", "--testsets-file", str(registry)]).exit_code == 0
    monkeypatch.setenv("BLEUCLI_OFFLINE", "1")
    cached = score(registry, tmp_path)
    assert cached.exit_code == 0 and cached.stdout.strip() == f"{EXPECTED:.6f}"
    assert http_server.hits["/offline/test.tgz"] == 1


def test_mirror_rewrites_the_host(http_server, cache, tmp_path, monkeypatch) -> None:
    archive = news_archive()
    http_server.serve("/mirror/data.example.org/wmt/test.tgz", archive)
    registry = news_registry(tmp_path, "https://data.example.org/wmt/test.tgz", md5(archive))
    monkeypatch.setenv("BLEUCLI_MIRROR", http_server.url("/mirror"))
    result = score(registry, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert http_server.hits["/mirror/data.example.org/wmt/test.tgz"] == 1


def test_per_entry_mirrors_are_tried_in_order(http_server, cache, tmp_path) -> None:
    archive = news_archive()
    good = http_server.serve("/good/test.tgz", archive)
    registry = news_registry(
        tmp_path, http_server.url("/gone/test.tgz"), md5(archive), mirrors=[good]
    )
    result = score(registry, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert http_server.hits["/gone/test.tgz"] >= 1 and http_server.hits["/good/test.tgz"] == 1


def test_custom_registry_with_relative_paths_and_zip(cache, tmp_path) -> None:
    folder = tmp_path / "private"
    folder.mkdir()
    archive = make_zip(
        {"data/src.de": "\n".join(SOURCE).encode(), "data/ref.en": "\n".join(REFERENCE).encode()}
    )
    (folder / "set.zip").write_bytes(archive)
    registry = write_registry(
        folder / "teams.json",
        "team/dev",
        [{"url": "set.zip", "md5": md5(archive)}],
        {"de-en": {"format": "plain", "source": "data/src.de", "references": ["data/ref.en"]}},
    )
    result = score(registry, tmp_path, "--offline", name="team/dev")  # local files need no network
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == f"{EXPECTED:.6f}"
    assert (cache / "team_dev" / "raw" / "data" / "ref.en").is_file()


@pytest.mark.parametrize(
    "archive",
    [
        make_tgz({"test/src.de.sgm": b"x", "../evil.txt": b"pwned"}),
        make_tgz({"/tmp/evil.txt": b"pwned"}),
        make_tgz({"test/link": ("symlink", "../../outside")}),
        make_zip({"test/src.de.sgm": b"x", "../evil.txt": b"pwned"}),
    ],
    ids=["tar-dotdot", "tar-absolute", "tar-symlink-out", "zip-dotdot"],
)
def test_traversal_members_are_refused(cache, tmp_path, archive) -> None:
    suffix = ".zip" if archive[:2] == b"PK" else ".tgz"
    path = tmp_path / f"evil{suffix}"
    path.write_bytes(archive)
    registry = news_registry(tmp_path, str(path), md5(archive))
    result = score(registry, tmp_path)
    assert result.exit_code == 1
    assert "refusing" in result.stderr
    assert not (tmp_path / "evil.txt").exists() and not (cache / "evil.txt").exists()
    assert not (cache / "news" / "manifest.json").exists()


def test_corrupt_cached_file_is_detected_and_rebuilt(http_server, cache, tmp_path) -> None:
    archive = news_archive()
    url = http_server.serve("/corrupt/test.tgz", archive)
    registry = news_registry(tmp_path, url, md5(archive))
    assert score(registry, tmp_path).exit_code == 0
    ref = cache / "news" / "raw" / "test" / "ref.en.sgm"
    ref.write_text(ref.read_text().replace("Good morning.", "Bad evening."))
    result = score(registry, tmp_path)
    assert "is corrupt; rebuilding news" in result.stderr
    assert result.stdout.strip() == f"{EXPECTED:.6f}"
    assert http_server.hits["/corrupt/test.tgz"] == 1  # re-extracted from the verified download
    download = cache / "news" / "downloads" / "test.tgz"
    download.write_bytes(b"garbage")
    ref.write_text("damaged")
    result = score(registry, tmp_path)
    assert result.stdout.strip() == f"{EXPECTED:.6f}"
    assert http_server.hits["/corrupt/test.tgz"] == 2  # the damaged download was fetched again


def test_download_only_and_quiet_pipes_show_no_progress(http_server, cache, tmp_path) -> None:
    archive = news_archive()
    url = http_server.serve("/quiet/test.tgz", archive)
    registry = news_registry(tmp_path, url, md5(archive))
    proc = subprocess.run(
        [sys.executable, "-m", "bleucli", "--download", "news", "-q"],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        env={**os.environ, "BLEUCLI_CACHE": str(cache), "BLEUCLI_TESTSETS": str(registry)},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"" and proc.stderr == b""
    manifest = json.loads((cache / "news" / "manifest.json").read_text())
    assert manifest["data"] == [md5(archive)]


def _format_fixture(fmt: str) -> tuple[dict[str, bytes], dict]:
    """Archive members and the langpair entry of a de-en test set in ``fmt``."""
    if fmt in ("sgm", "iwslt"):
        return (
            {
                "d/src.xml" if fmt == "iwslt" else "d/src.sgm": sgm(SOURCE, DOCS),
                "d/ref.xml" if fmt == "iwslt" else "d/ref.sgm": sgm(REFERENCE, DOCS, "refset"),
            },
            {
                "format": fmt,
                "source": f"d/src.{'xml' if fmt == 'iwslt' else 'sgm'}",
                "references": [f"d/ref.{'xml' if fmt == 'iwslt' else 'sgm'}"],
            },
        )
    if fmt == "plain":
        return (
            {
                "d/src.de": "\n".join(SOURCE).encode() + b"\n",
                "d/ref.en": "\n".join(REFERENCE).encode() + b"\n",
            },
            {"format": "plain", "source": "d/src.de", "references": ["d/ref.en"]},
        )
    if fmt == "tsv":
        rows = [f"{i}\t{s}\t{r}" for i, (s, r) in enumerate(zip(SOURCE, REFERENCE))]
        return (
            {"d/all.tsv": "\n".join(rows).encode() + b"\n"},
            {
                "format": "tsv",
                "source": "d/all.tsv",
                "source_column": 1,
                "references": ["d/all.tsv"],
                "reference_columns": [2],
            },
        )
    from xml.sax.saxutils import escape

    def segs(texts):
        return "".join(f'<seg id="{i + 1}">{escape(t)}</seg>' for i, t in enumerate(texts))

    doc = (
        f'<doc id="d1" origlang="de"><src lang="de"><p>{segs(SOURCE)}</p></src>'
        f'<ref lang="en" translator="A"><p>{segs(REFERENCE)}</p></ref></doc>'
    )
    return (
        {"d/t.xml": f"<dataset>{doc}</dataset>".encode()},
        {"format": "xml", "source": "d/t.xml", "references": ["d/t.xml"], "translators": ["A"]},
    )


@pytest.mark.parametrize("fmt", ["plain", "sgm", "iwslt", "xml", "tsv"])
@pytest.mark.parametrize("packing", ["tgz", "zip"])
def test_every_format_downloads_and_scores(http_server, cache, tmp_path, fmt, packing) -> None:
    members, pair = _format_fixture(fmt)
    archive = make_tgz(members) if packing == "tgz" else make_zip(members)
    url = http_server.serve(f"/formats/{fmt}/set.{packing}", archive)
    registry = write_registry(
        tmp_path / "r.json", "news", [{"url": url, "md5": md5(archive)}], {"de-en": pair}
    )
    result = score(registry, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == f"{EXPECTED:.6f}"
    src = run_cli(["-t", "news", "-l", "de-en", "--echo", "src", "--testsets-file", str(registry)])
    assert src.stdout.splitlines() == SOURCE
