"""A real HTTP server on 127.0.0.1 for download tests, and builders for test-set archives."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache folder, with mirror/offline/registry variables cleared."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("BLEUCLI_CACHE", str(folder))
    for name in ("BLEUCLI_OFFLINE", "BLEUCLI_MIRROR", "BLEUCLI_TESTSETS"):
        monkeypatch.delenv(name, raising=False)
    return folder


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def make_tgz(members: dict[str, bytes | tuple[str, str]]) -> bytes:
    """A .tgz; a value ``("symlink", target)`` makes a symbolic link member."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            if isinstance(content, tuple):
                info.type = tarfile.SYMTYPE
                info.linkname = content[1]
                tf.addfile(info)
            else:
                info.size = len(content)
                tf.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def make_zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return buffer.getvalue()


def sgm(lines: list[str], docs: list[tuple[str, str, str, int]], kind: str = "srcset") -> bytes:
    """WMT fake SGML: ``docs`` are (docid, origlang, genre, n_segments) covering ``lines``."""
    out = [f'<{kind} setid="test" srclang="any">']
    i = 0
    for docid, origlang, genre, count in docs:
        out.append(f'<doc sysid="ref" docid="{docid}" genre="{genre}" origlang="{origlang}">')
        for _ in range(count):
            out.append(f'<seg id="{i + 1}">{lines[i]}</seg>')
            i += 1
        out.append("</doc>")
    out.append(f"</{kind}>")
    return ("\n".join(out) + "\n").encode()


def write_registry(path: Path, name: str, data: list[dict], langpairs: dict, **extra) -> Path:
    entry = {
        "description": f"test set {name}",
        "citation": "@misc{x}",
        "data": data,
        "langpairs": langpairs,
        **extra,
    }
    path.write_text(json.dumps({name: entry}), encoding="utf-8")
    return path


SOURCE = [
    "Guten Morgen.",
    "Wie geht es dir?",
    "Das Wetter ist schön.",
    "Ich lese ein Buch.",
    "Wir fahren morgen nach Berlin.",
    "Der Kaffee ist heiß.",
]
REFERENCE = [
    "Good morning.",
    "How are you?",
    "The weather is nice.",
    "I am reading a book.",
    "We are going to Berlin tomorrow.",
    "The coffee is hot.",
]
HYPOTHESIS = [
    "Good morning.",
    "How are you doing?",
    "The weather is beautiful.",
    "I read a book.",
    "Tomorrow we go to Berlin.",
    "The coffee is hot.",
]
DOCS = [("doc1", "de", "news", 2), ("doc2", "en", "news", 3), ("doc3", "de", "sport", 1)]
