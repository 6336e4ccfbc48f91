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
    if (
        path.is_absolute()
        or name.startswith(("/", "\\"))
        or ".." in path.parts
        or (len(name) > 1 and name[1] == ":")
    ):
        raise UnsafeArchiveError(f"{archive.name}: refusing unsafe member path {name!r}")


def _check_link_target(archive: Path, member: tarfile.TarInfo) -> None:
    """Links may only point down into the archive: no absolute targets, no ``..`` at all
    (a chain of in-archive links could otherwise climb out)."""
    link = PurePosixPath(member.linkname.replace("\\", "/"))
    if link.is_absolute() or ".." in link.parts:
        raise UnsafeArchiveError(
            f"{archive.name}: refusing link {member.name!r} -> {member.linkname!r} "
            f"pointing outside the archive"
        )


#: Limits on what one archive may unpack to (a few MB of "zip bomb" can expand to GBs):
#: the sum of member sizes, the number of members, and the expansion ratio beyond
#: ``RATIO_FREE_BYTES``. Real test-set archives stay far below all three.
MAX_EXTRACTED_BYTES = 4 << 30
MAX_MEMBERS = 100_000
MAX_RATIO = 200
RATIO_FREE_BYTES = 64 << 20
ENV_MAX_EXTRACTED = "BLEUCLI_MAX_EXTRACTED_BYTES"


class ArchiveError(BleucliError):
    """A downloaded archive cannot be unpacked: damaged, not an archive, or too big."""


def _max_bytes() -> int:
    import os

    value = os.environ.get(ENV_MAX_EXTRACTED, "")
    return int(value) if value.isdigit() else MAX_EXTRACTED_BYTES


def _check_sizes(archive: Path, sizes: list[int]) -> None:
    if len(sizes) > MAX_MEMBERS:
        raise ArchiveError(
            f"{archive.name}: {len(sizes)} members, more than the "
            f"{MAX_MEMBERS} a test set may have; refusing to unpack it"
        )
    total = sum(sizes)
    limit = _max_bytes()
    packed = max(archive.stat().st_size, 1)
    if total > limit or (total > RATIO_FREE_BYTES and total > MAX_RATIO * packed):
        raise ArchiveError(
            f"{archive.name}: would unpack {packed} bytes into {total} bytes (limit "
            f"{limit} bytes, at most {MAX_RATIO}x); refusing it as a likely archive bomb "
            f"(raise {ENV_MAX_EXTRACTED} if the data is genuine)"
        )


def extract(archive: Path, target: Path) -> None:
    """Extract ``archive`` into ``target`` after checking every member; a damaged archive,
    a member that clashes with another (a file where a folder must go), or one past the
    size limits raises :class:`ArchiveError` or :class:`UnsafeArchiveError`."""
    import zlib

    target.mkdir(parents=True, exist_ok=True)
    try:
        if archive.name.lower().endswith(".zip"):
            _extract_zip(archive, target)
        else:
            _extract_tar(archive, target)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error) as err:
        raise ArchiveError(
            f"{archive.name}: not a valid archive or damaged ({err}); delete "
            f"it from the cache to fetch it again"
        ) from None
    except (FileExistsError, NotADirectoryError, IsADirectoryError) as err:
        raise ArchiveError(
            f"{archive.name}: members clash: {Path(err.filename or '').name!r} "
            f"is both a file and a folder"
        ) from None


def _extract_zip(archive: Path, target: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        for info in infos:
            _check_member_path(archive, info.filename)
        _check_sizes(archive, [info.file_size for info in infos])
        for info in infos:
            destination = target / info.filename
            if info.is_dir():
                destination.mkdir(parents=True, exist_ok=True)
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as source, open(destination, "wb") as out:
                shutil.copyfileobj(source, out)


def _extract_tar(archive: Path, target: Path) -> None:
    with tarfile.open(archive) as tf:
        members = tf.getmembers()
        files = {m.name.rstrip("/") for m in members if m.isfile()}
        for member in members:
            _check_member_path(archive, member.name)
            if member.issym():
                _check_link_target(archive, member)
            elif member.islnk():
                _check_link_target(archive, member)
                if member.linkname.rstrip("/") not in files:
                    raise UnsafeArchiveError(
                        f"{archive.name}: hard link {member.name!r} -> {member.linkname!r} "
                        f"does not name a file of the archive"
                    )
            elif not (member.isfile() or member.isdir()):
                raise UnsafeArchiveError(f"{archive.name}: refusing special file {member.name!r}")
        _check_sizes(archive, [m.size for m in members if m.isfile()])
        links = []
        for member in members:
            destination = target / member.name
            if member.isdir():
                destination.mkdir(parents=True, exist_ok=True)
            elif member.isfile():
                destination.parent.mkdir(parents=True, exist_ok=True)
                source = tf.extractfile(member)
                if source is None:
                    raise ArchiveError(f"{archive.name}: cannot read member {member.name!r}")
                with source, open(destination, "wb") as out:
                    shutil.copyfileobj(source, out)
            else:
                links.append(member)
        for member in links:  # after every file, so a link may name a later member
            destination = target / member.name
            destination.parent.mkdir(parents=True, exist_ok=True)
            if member.issym():
                destination.symlink_to(member.linkname)
            else:  # hard link: copy the file it names
                shutil.copyfile(target / member.linkname, destination)
