"""``bleucli models list|download|verify|path``: the neural model registry on this machine."""

from __future__ import annotations

from pathlib import Path

from bleucli.errors import InputError
from bleucli.neural.registry import ModelEntry, get, registry


def _entries(names: tuple[str, ...]) -> list[ModelEntry]:
    return [get(n) for n in names] if names else list(registry().values())


def _local(entry: ModelEntry) -> Path | None:
    """Where the hub cache holds ``entry`` (None when it is not downloaded)."""
    import os

    from bleucli.neural.hub import fetch

    saved = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        return fetch(entry)
    except Exception:  # noqa: BLE001 - not downloaded, or damaged: "no" here, verify says why
        return None
    finally:
        if saved is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = saved


def list_models(fmt: str = "text") -> str:
    from bleucli.neural.hub import expected_hashes

    rows = []
    for entry in registry().values():
        hashes = expected_hashes(entry)
        ckpt = hashes.get(entry.checkpoint or "") if entry.checkpoint else None
        rows.append(
            {
                "name": entry.name,
                "metric": entry.metric or "(encoder)",
                "class": entry.model_class,
                "repository": entry.repo + (f"@{entry.revision[:12]}" if entry.revision else ""),
                "licence": entry.licence,
                "pinned": "yes" if all(hashes.values()) else "on first download",
                "checkpoint": (ckpt or "")[:16],
            }
        )
    if fmt == "json":
        import json

        return json.dumps(rows, indent=1)
    from tabulate import tabulate

    return tabulate(rows, headers="keys", tablefmt="simple")


def download(names: tuple[str, ...], force: bool = False, show_progress: bool = False) -> str:
    """Fetch models and their encoders' files; one line per model: name, folder, hash."""
    from bleucli.hashing import file_digest as sha256
    from bleucli.neural.hub import fetch

    if not names:
        raise InputError("name the models to download (bleucli models list)")
    lines = []
    for entry in _entries(names):
        folder = fetch(entry, force=force, show_progress=show_progress)
        if entry.encoder:
            fetch(get(entry.encoder), force=force, show_progress=show_progress)
        digest = sha256(folder / entry.checkpoint) if entry.checkpoint else ""
        lines.append(f"{entry.name}\t{folder}\t{digest}")
    return "\n".join(lines)


def verify(names: tuple[str, ...]) -> tuple[str, bool]:
    """Recompute every downloaded file's SHA-256 against its pin; (report, all good)."""
    from bleucli.hashing import file_digest as sha256
    from bleucli.neural.hub import expected_hashes

    lines, good = [], True
    for entry in _entries(names):
        folder = _local_folder(entry)
        if folder is None:
            lines.append(f"{entry.name}: not downloaded")
            if names:
                good = False
            continue
        for path, digest in expected_hashes(entry).items():
            file = folder / path
            if not file.is_file():
                lines.append(f"{entry.name}: {path}: missing")
                good = False
                continue
            actual = sha256(file)
            if digest is not None and actual != digest:
                lines.append(
                    f"{entry.name}: {path}: SHA-256 {actual[:16]}… but pinned {digest[:16]}…"
                )
                good = False
            else:
                lines.append(f"{entry.name}: {path}: ok ({actual[:16]}…)")
    return "\n".join(lines), good


def _local_folder(entry: ModelEntry) -> Path | None:
    """The snapshot folder of ``entry`` in the hub cache, without checking hashes."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        from bleucli.errors import MissingExtraError

        raise MissingExtraError("neural models", "neural", "huggingface_hub") from None
    first = next(iter(entry.files))
    found = try_to_load_from_cache(entry.repo, first, revision=entry.revision)
    if not isinstance(found, str):
        return None
    root = Path(found)
    for _ in Path(first).parts:
        root = root.parent
    return root


def path(name: str) -> str:
    entry = get(name)
    folder = _local(entry)
    if folder is None:
        raise InputError(
            f"model {entry.name} is not downloaded: run `bleucli models download {entry.name}`"
        )
    return str(folder)
