"""``sacrebleu.dataset.base``: a test set as SacreBLEU's ``Dataset`` object, over bleucli's
registry and cache (downloads are md5-checked, locked and atomic as everywhere in bleucli).

SacreBLEU unpacks the raw data and writes one plain-text file per field
(``<langpair>.<field>``); here those files are written from bleucli's parsed segments into
``<cache>/<set>/text`` on first use, so ``get_source_file()`` and friends return real paths.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bleucli.testsets.registry import TestSet

SACREBLEU_DIR = os.environ.get("SACREBLEU", os.path.join(os.path.expanduser("~"), ".sacrebleu"))


def _test_sets():
    from bleucli.testsets import TestSets

    return TestSets()


class Dataset:
    """One named test set (``DATASETS[name]``)."""

    def __init__(self, testset: TestSet) -> None:
        self._testset = testset
        self.name = testset.name
        self.data = [d.url for d in testset.data]
        self.md5 = [d.md5 for d in testset.data]
        self.description = testset.description
        self.citation = testset.citation
        self.langpairs: dict[str, Any] = {
            pair: [spec.source, *spec.references] for pair, spec in testset.langpairs.items()
        }
        from bleucli.testsets.store import set_dir

        folder = set_dir(testset)
        self._rawdir = str(folder / "raw")
        self._outdir = str(folder / "text")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def _get_tarball_filename(self, url: str) -> str:
        return os.path.basename(url.split("?", 1)[0].rstrip("/"))

    def maybe_download(self) -> None:
        _test_sets().download(self.name)

    def fieldnames(self, langpair: str) -> list[str]:
        return _test_sets().fieldnames(self.name, langpair)

    def _get_langpair_allowed_refs(self, langpair: str) -> list[str]:
        translators = self._testset.langpairs[langpair].translators
        return [f"ref:{t}" for t in translators] if translators else ["ref"]

    def _fields(self, langpair: str) -> dict[str, list[str]]:
        data = _test_sets().load(self.name, langpair)
        return data.fields

    def process_to_text(self, langpair: str | None = None) -> None:
        """Write every field of ``langpair`` (or of every pair) as a plain-text file."""
        for pair in [langpair] if langpair else list(self.langpairs):
            fields = self._fields(pair)
            folder = Path(self._outdir)
            folder.mkdir(parents=True, exist_ok=True)
            for field, lines in fields.items():
                target = folder / f"{pair}.{field}"
                if not target.exists():
                    from bleucli.io import write_atomic

                    write_atomic(str(target), "".join(f"{line.rstrip()}\n" for line in lines))

    def get_files(self, langpair: str | None) -> list[str]:
        """Paths of the text files of ``langpair``'s fields, in ``fieldnames`` order."""
        if langpair is None:
            pairs = list(self.langpairs)
            return [path for pair in pairs for path in self.get_files(pair)]
        self.process_to_text(langpair)
        fields = self._fields(langpair)
        names = [name for name in self.fieldnames(langpair) if name in fields] or list(fields)
        return [os.path.join(self._outdir, f"{langpair}.{name}") for name in names]

    def get_source_file(self, langpair: str) -> str:
        return self.get_files(langpair)[0]

    def get_reference_files(self, langpair: str) -> list[str]:
        data = _test_sets().load(self.name, langpair)
        self.process_to_text(langpair)
        return [os.path.join(self._outdir, f"{langpair}.{name}") for name in data.reference_fields]

    def source(self, langpair: str) -> Iterator[str]:
        yield from _test_sets().load(self.name, langpair).source

    def references(self, langpair: str) -> Iterator[tuple[str, ...]]:
        yield from zip(*_test_sets().load(self.name, langpair).reference_streams)

    def docids(self, langpair: str) -> Iterator[str]:
        yield from self._fields(langpair).get("docid", [])

    def origlang(self, langpair: str) -> Iterator[str]:
        yield from self._fields(langpair).get("origlang", [])


def smart_open(file: str, mode: str = "rt", encoding: str = "utf-8"):
    """Open a plain or gzipped text file with ``\\n`` as the only line end."""
    if str(file).endswith(".gz"):
        return gzip.open(file, mode=mode, encoding=encoding, newline="\n")
    return open(file, mode=mode, encoding=encoding, newline="\n")  # noqa: SIM115


def download_file(
    source_path: str, dest_path: str, extract_to: str | None = None, expected_md5: str | None = None
) -> None:
    """Fetch ``source_path`` to ``dest_path`` through bleucli's downloader (md5-checked,
    atomic, locked), then unpack it into ``extract_to`` if given."""
    from pathlib import Path

    from filelock import FileLock

    from bleucli.testsets.download import fetch
    from bleucli.testsets.offline import offline_from_environment

    dest = Path(dest_path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(dest) + ".lock"):
        if not dest.exists():
            fetch([source_path], dest, expected_md5, offline=offline_from_environment())
    if extract_to is not None:
        extract_tarball(dest_path, extract_to)


def extract_tarball(filepath: str, destdir: str) -> None:
    from pathlib import Path

    from bleucli.testsets.extract import extract

    extract(Path(filepath), Path(destdir))


__all__ = ["Dataset", "SACREBLEU_DIR", "download_file", "extract_tarball", "smart_open"]
