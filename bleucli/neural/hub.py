"""Model files from a Hugging Face hub through ``huggingface_hub`` (which honours
``HF_ENDPOINT``, ``HF_HOME`` and ``HF_HUB_OFFLINE``, resumes interrupted downloads and keeps
its own cache), each checked against the registry's SHA-256 or, where the registry leaves
it open, against the hash recorded when it was first downloaded (the lock file in
bleucli's cache)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from bleucli.errors import BleucliError, InputError
from bleucli.neural.registry import ModelEntry, registry


class ModelUnavailable(BleucliError):
    """A model that is not on this machine and cannot be fetched now."""


def offline() -> bool:
    return any(
        os.environ.get(name, "").lower() in ("1", "true", "yes", "on")
        for name in ("HF_HUB_OFFLINE", "BLEUCLI_OFFLINE")
    )


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def lock_file() -> Path:
    from bleucli.testsets.store import cache_root

    return cache_root() / "models.lock.json"


def _read_lock() -> dict[str, dict[str, str]]:
    try:
        data = json.loads(lock_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _record(entry: ModelEntry, hashes: dict[str, str]) -> None:
    """Remember first-download hashes of files the registry does not pin (atomically, under
    a lock: concurrent runs may download at once)."""
    from filelock import FileLock

    from bleucli.io import atomic_replace

    path = lock_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=120):
        data = _read_lock()
        known = data.setdefault(f"{entry.repo}@{entry.revision or 'main'}", {})
        known.update(hashes)
        with atomic_replace(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)


def expected_hashes(entry: ModelEntry) -> dict[str, str | None]:
    """Each file's pinned hash: the registry's, else the lock file's, else None."""
    locked = _read_lock().get(f"{entry.repo}@{entry.revision or 'main'}", {})
    return {path: digest or locked.get(path) for path, digest in entry.files.items()}


def fetch(entry: ModelEntry, force: bool = False, show_progress: bool = False) -> Path:
    """The local folder holding ``entry``'s files (downloaded if needed), every file checked
    against its hash. Offline, only what the hub cache already holds."""
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        from bleucli.errors import MissingExtraError

        raise MissingExtraError("neural models", "neural", "huggingface_hub") from None
    if not show_progress:
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    expected = expected_hashes(entry)
    folder: Path | None = None
    new: dict[str, str] = {}
    for filename, digest in expected.items():
        if force:  # huggingface_hub keeps a snapshot's old link: start from nothing
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(entry.repo, filename, revision=entry.revision)
            if isinstance(cached, str):
                _discard(Path(cached))
        try:
            local = Path(
                hf_hub_download(
                    entry.repo,
                    filename,
                    revision=entry.revision,
                    local_files_only=offline() and not force,
                    force_download=force,
                )
            )
        except LocalEntryNotFoundError:
            raise ModelUnavailable(
                f"model {entry.name} is not downloaded and the hub is offline "
                f"(HF_HUB_OFFLINE/BLEUCLI_OFFLINE): run `bleucli models download {entry.name}` "
                f"where the hub is reachable"
            ) from None
        except Exception as err:  # noqa: BLE001 - network and hub errors come in many kinds
            text = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise ModelUnavailable(
                f"model {entry.name}: cannot fetch {filename} from {entry.repo}: {text}"
            ) from None
        actual = sha256(local)
        if digest is None:
            new[filename] = actual
        elif actual != digest:
            _discard(local)
            raise InputError(
                f"model {entry.name}: {filename} has SHA-256 {actual[:16]}…, the registry pins "
                f"{digest[:16]}…: the file is corrupt or another revision; run "
                f"`bleucli models download {entry.name} --force`"
            )
        root = local
        for _ in Path(filename).parts:
            root = root.parent
        folder = root
    if new:
        _record(entry, new)
    assert folder is not None
    return folder


def _discard(pointer: Path) -> None:
    """Remove a file that failed its hash from the hub cache (the snapshot's link and the
    blob it points to), so that no later run uses it and the next download starts clean."""
    try:
        blob = pointer.resolve()
        pointer.unlink(missing_ok=True)
        if blob != pointer:
            blob.unlink(missing_ok=True)
    except OSError:
        pass


def encoder_entry(pretrained_model: str) -> ModelEntry | None:
    """The registered encoder an ``hparams.yaml`` names (``xlm-roberta-large``)."""
    for entry in registry().values():
        if entry.model_class == "encoder" and pretrained_model in (entry.name, entry.repo):
            return entry
    return None
