"""``flores101`` / ``flores200`` (and the old name ``spm``): SentencePiece tokenisation.

The models are listed in ``testsets/models/spm.json`` with their real URLs and fetched once
into ``<cache>/models`` by the test-set downloader (mirrors, offline mode, atomic writes, a
file lock). SacreBLEU publishes no checksums for them, so unless the registry gives one,
the md5 of the first download is recorded next to the model and every later use is checked
against it (trust on first use): a damaged model is reported and fetched again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bleucli.errors import ConfigError, MissingExtraError
from bleucli.log import logger
from bleucli.tokenizers.base import Tokenizer


def _models() -> dict:
    from bleucli.testsets.registry import builtin_registry_dir

    return json.loads((builtin_registry_dir() / "models" / "spm.json").read_text("utf-8"))


def model_path(key: str) -> Path:
    """The local, verified copy of SentencePiece model ``key``, downloading it if needed."""
    from bleucli.testsets.store import cache_failure, cache_root

    entry = _models().get(key)
    if entry is None:
        raise ConfigError(f"no SentencePiece model named {key!r}")
    folder = cache_root() / "models"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return _verified_model(entry, folder / Path(entry["url"]).name)
    except OSError as err:
        raise cache_failure(err, folder) from None


def _verified_model(entry: dict, dest: Path) -> Path:
    """Nothing unverified is trusted: a model is used when it matches the registry's md5, or
    the md5 recorded when it was first downloaded *and found to load as a SentencePiece
    model* (an HTML error page or a cut transfer never gets recorded)."""
    import os

    from filelock import FileLock

    from bleucli.testsets.download import DownloadError, apply_mirror, fetch, md5_of
    from bleucli.testsets.offline import offline_from_environment

    recorded = dest.with_name(dest.name + ".md5")
    with FileLock(str(dest) + ".lock"):
        expected = entry.get("md5") or (recorded.read_text().strip() if recorded.exists() else None)
        if dest.exists():
            if expected is not None and md5_of(dest) == expected:
                return dest
            if expected is None and _load_problem(dest) is None:  # cached before records
                recorded.write_text(md5_of(dest) + "\n")
                return dest
            logger.warning(f"cached model {dest} is corrupt; fetching it again")
            dest.unlink()
            recorded.unlink(missing_ok=True)
        show = (
            sys.stderr is not None and sys.stderr.isatty() and logger.isEnabledFor(20)
        )  # logging.INFO
        candidate = dest.with_name(dest.name + ".new")
        try:
            got = fetch(
                [apply_mirror(entry["url"])],
                candidate,
                entry.get("md5"),
                offline=offline_from_environment(),
                show_progress=show,
            )
        except DownloadError as err:
            raise type(err)(f"SentencePiece model {dest.name}: {err}") from None
        problem = _load_problem(candidate)
        if problem is not None:
            candidate.unlink(missing_ok=True)
            raise DownloadError(
                f"{entry['url']}: the download is not a SentencePiece model "
                f"({problem}); nothing was cached"
            )
        os.replace(candidate, dest)
        if not entry.get("md5"):
            recorded.write_text(got + "\n")
    return dest


def _load_problem(path: Path) -> str | None:
    """Why ``path`` does not load as a SentencePiece model, or None if it does."""
    try:
        import sentencepiece
    except ImportError:
        raise MissingExtraError("SentencePiece tokenisation", "spm", "sentencepiece") from None
    head = path.read_bytes()[:64].lstrip().lower()
    if head.startswith((b"<!doctype", b"<html", b"<?xml")):
        return "it is an HTML/XML page"
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.Load(str(path))
    except (OSError, RuntimeError, ValueError) as err:
        return " ".join(str(err).split())[:120] or "it does not load"
    return None if processor.GetPieceSize() > 0 else "it has no pieces"


class TokenizerFlores101(Tokenizer):
    """SentencePiece with the FLORES-101 model (spBLEU)."""

    name = "flores101"
    model = "flores101"

    def __init__(self) -> None:
        try:
            import sentencepiece
        except ImportError:
            raise MissingExtraError(f"tokenizer {self.name!r}", "spm", "sentencepiece") from None
        self.processor = sentencepiece.SentencePieceProcessor()
        self.processor.Load(str(model_path(self.model)))
        super().__init__()

    def tokenize(self, line: str) -> str:
        return " ".join(self.processor.EncodeAsPieces(line))

    def signature(self) -> str:
        return self.model


class TokenizerSpm(TokenizerFlores101):
    """The old name of ``flores101``; signatures say ``flores101``, as SacreBLEU's do."""

    name = "spm"

    def __init__(self) -> None:
        logger.warning("Tokenizer 'spm' has been renamed 'flores101'.")
        super().__init__()


class TokenizerFlores200(TokenizerFlores101):
    """SentencePiece with the FLORES-200 model."""

    name = "flores200"
    model = "flores200"


class TokenizerSpBLEU1K(TokenizerFlores101):
    """SentencePiece with the spBLEU-1K model (SacreBLEU 2.6's ``spBLEU-1K``)."""

    name = "spBLEU-1K"
    model = "spBLEU-1K"
