"""From a model name or folder to a ready model: resolve (registry or local checkpoint),
hash, load once per process, and the identity a signature states (``NAME@HASH``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bleucli.errors import ConfigError, InputError
from bleucli.neural import runtime

#: The identity field of a signature is the name and this many hex digits of the hash.
HASH_DIGITS = 8
_LOADED: dict[tuple[str, str, str], Loaded] = {}
_HASHES: dict[tuple[str, int, int], str] = {}


@dataclass
class Loaded:
    name: str  # registry name, or the checkpoint folder's name
    sha256: str  # of checkpoints/model.ckpt
    model_class: str
    model: Any  # bleucli.neural.models.CometModel

    @property
    def identity(self) -> str:
        return f"{self.name}@{self.sha256[:HASH_DIGITS]}"


def split_spec(spec: str) -> tuple[str, str | None]:
    """``NAME@HASH`` -> (NAME, HASH); a plain name or path -> (it, None)."""
    head, sep, tail = spec.rpartition("@")
    if (
        sep
        and tail
        and all(c in "0123456789abcdef" for c in tail.lower())
        and not Path(spec).exists()
    ):
        return head, tail.lower()
    return spec, None


def file_hash(path: Path) -> str:
    """SHA-256 of a local file, remembered per (path, size, mtime) in this process."""
    from bleucli.neural.hub import sha256

    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHES:
        _HASHES[key] = sha256(path)
    return _HASHES[key]


def resolve(spec: str) -> tuple[str, Path, str, bool]:
    """(name, checkpoint file, its SHA-256, trusted) of a registry name or a local folder."""
    from bleucli.neural.checkpoint import checkpoint_file

    name, wanted = split_spec(spec)
    path = Path(name).expanduser()
    if path.exists():
        file = checkpoint_file(path)
        folder = file.parents[1]
        digest, label, trusted = file_hash(file), folder.name, False
    elif "/" in name and name.count("/") != 1 or name.startswith((".", "~", "/")):
        from bleucli.neural.checkpoint import checkpoint_file as must_exist

        must_exist(path)  # a path, not a hub name: says there is no checkpoint there
        raise AssertionError("unreachable")
    else:
        from bleucli.neural.hub import fetch
        from bleucli.neural.registry import get

        entry = get(name)
        if entry.model_class == "encoder" or entry.checkpoint is None:
            raise ConfigError(f"{name} is an encoder, not a metric model")
        folder = fetch(entry)
        file = folder / entry.checkpoint
        digest, label, trusted = file_hash(file), entry.name, True
    if wanted is not None and not digest.startswith(wanted):
        raise InputError(
            f"model {label}: its checkpoint has SHA-256 {digest[:HASH_DIGITS]}…, the signature "
            f"asks for {wanted}…: these are other weights; scores would not be comparable"
        )
    return label, file, digest, trusted


def encoder_folder(hparams: dict[str, Any]) -> Path:
    """The encoder's config and tokenizer: the folder ``pretrained_model`` names, or the
    registered encoder of that name (fetched like a model)."""
    pretrained = str(hparams.get("pretrained_model", ""))
    local = Path(pretrained).expanduser()
    if local.is_dir():
        return local
    from bleucli.neural.hub import encoder_entry, fetch

    entry = encoder_entry(pretrained)
    if entry is None:
        raise ConfigError(
            f"the checkpoint's encoder {pretrained!r} is neither a folder nor a registered "
            f"encoder (bleucli models list)"
        )
    return fetch(entry)


def load(spec: str, device: str = "cpu", precision: str = "fp32") -> Loaded:
    """The model ``spec`` names on ``device`` in ``precision``, loaded once per process."""
    from bleucli.neural import checkpoint, models

    label, file, digest, trusted = resolve(spec)
    key = (digest, device, precision)
    if key not in _LOADED:
        where = runtime.device(device)
        dtype = runtime.dtype(precision, where)
        runtime.deterministic()
        stored = checkpoint.load(file, trusted=trusted)
        model = models.build(stored, encoder_folder(stored.hparams), where, dtype)
        model.cache_identity = f"{digest[:32]}-{precision}-{where.type}"
        _LOADED[key] = Loaded(label, digest, stored.class_identifier, model)
    loaded = _LOADED[key]
    return Loaded(label, loaded.sha256, loaded.model_class, loaded.model)
