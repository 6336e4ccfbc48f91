"""Unpacking downloaded archives without letting them write outside the target folder.

Members with absolute paths or ``..`` components, links that point outside the target, and
device files are refused (tar/zip "slip"); nothing is extracted from a refused archive.
"""

from __future__ import annotations

import shutil
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

from bleucli.errors import BleucliError

ARCHIVE_SUFFIXES = (".tgz", ".tar.gz", ".tar", ".tar.bz2", ".tar.xz", ".zip")


class UnsafeArchiveError(BleucliError):
    """An archive member would land outside the extraction folder."""


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def _check_member_path(archive: Path, name: str) -> None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or name.startswith(("/", "\\")) or ".." in path.parts or (
            len(name) > 1 and name[1] == ":"):
        raise UnsafeArchiveError(f"{archive.name}: refusing unsafe member path {name!r}")


def _check_link_target(archive: Path, member: tarfile.TarInfo) -> None:
    """Links may only point down into the archive: no absolute targets, no ``..`` at all
    (a chain of in-archive links could otherwise climb out)."""
    link = PurePosixPath(member.linkname.replace("\\", "/"))
    if link.is_absolute() or ".." in link.parts:
        raise UnsafeArchiveError(
            f"{archive.name}: refusing link {member.name!r} -> {member.linkname!r} "
            f"pointing outside the archive")


def extract(archive: Path, target: Path) -> None:
    """Extract ``archive`` into ``target`` after checking every member."""
    target.mkdir(parents=True, exist_ok=True)
    name = archive.name.lower()
    if name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                _check_member_path(archive, info.filename)
            zf.extractall(target)
        return
    with tarfile.open(archive) as tf:
        members = tf.getmembers()
        for member in members:
            _check_member_path(archive, member.name)
            if member.issym() or member.islnk():
                _check_link_target(archive, member)
            elif not (member.isfile() or member.isdir()):
                raise UnsafeArchiveError(
                    f"{archive.name}: refusing special file {member.name!r}")
        for member in members:
            destination = target / member.name
            if member.isdir():
                destination.mkdir(parents=True, exist_ok=True)
            elif member.isfile():
                destination.parent.mkdir(parents=True, exist_ok=True)
                source = tf.extractfile(member)
                assert source is not None
                with source, open(destination, "wb") as out:
                    shutil.copyfileobj(source, out)
            elif member.issym():
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.symlink_to(member.linkname)
            else:  # hard link: copy the file it names
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(target / member.linkname, destination)
