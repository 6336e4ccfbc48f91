"""Model files from a Hugging Face hub through ``huggingface_hub`` (which honours
``HF_ENDPOINT``, ``HF_HOME`` and ``HF_HUB_OFFLINE``, resumes interrupted downloads and keeps
its own cache), each checked against the registry's SHA-256 or, where the registry leaves
it open, against the hash recorded when it was first downloaded (the lock file in
bleucli's cache)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from bleucli.errors import BleucliError, InputError
from bleucli.hashing import file_digest
from bleucli.neural.registry import ModelEntry, registry


class ModelUnavailable(BleucliError):
    """A model that is not on this machine and cannot be fetched now."""


def offline() -> bool:
    return any(
        os.environ.get(name, "").lower() in ("1", "true", "yes", "on")
        for name in ("HF_HUB_OFFLINE", "BLEUCLI_OFFLINE")
    )


def lock_file() -> Path:
    from bleucli.cache import cache_root

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


#: Seconds to wait for the hub's first answer before saying it cannot be reached (its own
#: client retries for half a minute, printing "Retrying in 8s" ten times).
PROBE_SECONDS = 5.0


def endpoint() -> str:
    """The hub bleucli downloads from (``HF_ENDPOINT``, else Hugging Face's)."""
    return os.environ.get("HF_ENDPOINT", "").rstrip("/") or "https://huggingface.co"


def all_cached(entry: ModelEntry) -> bool:
    """Whether the hub cache holds every file of ``entry`` (no network needed)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        from bleucli.errors import MissingExtraError

        raise MissingExtraError("neural models", "neural", "huggingface_hub") from None
    return all(
        isinstance(try_to_load_from_cache(entry.repo, name, revision=entry.revision), str)
        for name in entry.files
    )


def advice(name: str, flag: str = "--comet-model") -> str:
    """What to do when a model cannot be fetched here (never "run the command you ran")."""
    return (
        f"use a mirror (HF_ENDPOINT=https://...), or fetch it where the hub is reachable "
        f"(bleucli models download {name}), copy the folder `bleucli models path {name}` "
        f"prints there to this machine and give it with {flag} DIR"
    )


def ensure_reachable(entry: ModelEntry, flag: str = "--comet-model") -> None:
    """Refuse at once, in one line, a model that is not here and cannot be fetched now:
    downloads switched off (``HF_HUB_OFFLINE``/``BLEUCLI_OFFLINE``), or the hub not
    answering within :data:`PROBE_SECONDS` (one request; the hub's own client retries for
    half a minute). ``flag``: the option that takes a local folder instead."""
    switched = [
        n for n in ("HF_HUB_OFFLINE", "BLEUCLI_OFFLINE")
        if os.environ.get(n, "").lower() in ("1", "true", "yes", "on")
    ]  # fmt: skip
    if switched:
        raise ModelUnavailable(
            f"model {entry.name} is not downloaded and downloads are off "
            f"({'/'.join(switched)}=1): unset {' and '.join(switched)} to download it here, "
            f"or {advice(entry.name, flag)}"
        )
    import requests

    url = endpoint()
    try:
        requests.head(url, timeout=PROBE_SECONDS, allow_redirects=False)
    except requests.RequestException as err:
        why = _reason(err)
        raise ModelUnavailable(
            f"model {entry.name}: the hub at {url} cannot be reached ({why}); "
            f"{advice(entry.name, flag)}"
        ) from None


#: What a connection error says, in its own words (the client's message wraps it in three
#: layers of class names).
_REASONS = ("connection refused", "name or service not known", "temporary failure in name "
            "resolution", "no route to host", "network is unreachable", "timed out",
            "connection reset", "certificate verify failed")  # fmt: skip


def _reason(err: Exception) -> str:
    text = str(err).lower()
    found = next((reason for reason in _REASONS if reason in text), None)
    return found or type(err).__name__


def fetch(
    entry: ModelEntry, force: bool = False, show_progress: bool = False, flag: str = "--comet-model"
) -> Path:
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
    # every file here: no network at all (the hashes below say they are the pinned ones)
    here = not force and all_cached(entry)
    if not here:
        ensure_reachable(entry, flag)
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
                    local_files_only=(offline() or here) and not force,
                    force_download=force,
                )
            )
        except LocalEntryNotFoundError:
            raise ModelUnavailable(
                f"model {entry.name}: {filename} is not downloaded and {entry.repo} could not "
                f"be fetched from {endpoint()}; {advice(entry.name, flag)}"
            ) from None
        except Exception as err:  # noqa: BLE001 - network and hub errors come in many kinds
            text = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise ModelUnavailable(
                f"model {entry.name}: cannot fetch {filename} from {entry.repo}: {text}"
            ) from None
        actual = file_digest(local)
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
